#!/usr/bin/env python3
"""Open an mmsim HTML report in headless Chromium (selenium) and check it.

    check_report.py PAGE.html --screenshot OUT.png [--section ID --section-screenshot OUT2.png]

Checks: no console errors (browser log entries of level SEVERE), every table has rows,
every plot is drawn with a non-empty line, hovering a plot shows a tooltip with a value,
clicking a legend entry hides that run's line (and a second click shows it), dragging
across a plot zooms it, a sortable header sorts. Saves a screenshot of the top of the page
(and of the section with id ID). Prints one JSON object of measurements (page size, load
timing, plots, tables) on the last line of standard output; exits 1 on a failed check and
3 when Chromium, chromedriver or selenium is missing (with what to install).

Uses Debian's /usr/bin/chromium and /usr/bin/chromedriver (packages chromium and
chromium-driver) and the selenium package from PyPI; nothing is fetched from the network.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

CHROMIUM = os.environ.get("MMSIM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("MMSIM_CHROMEDRIVER", "/usr/bin/chromedriver")
INSTALL = (
    "install them with: apt-get install -y chromium chromium-driver && "
    "pip install selenium (or set MMSIM_SKIP_BROWSER=1 to skip the browser test)"
)


def missing():
    """What is missing to run the browser, as a list of names."""
    out = []
    if not os.access(CHROMIUM, os.X_OK):
        out.append(f"chromium ({CHROMIUM})")
    if not os.access(CHROMEDRIVER, os.X_OK):
        out.append(f"chromedriver ({CHROMEDRIVER})")
    try:
        import selenium  # noqa: F401
    except ImportError:
        out.append("the selenium Python package")
    return out


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def start_browser(profile):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
    ]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)


def run(args):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    page = os.path.abspath(args.page)
    result = {"page": page, "page_bytes": os.path.getsize(page)}
    profile = tempfile.mkdtemp(prefix="mmsim-chromium-")
    driver = start_browser(profile)
    try:
        t0 = time.monotonic()
        driver.get("file://" + page)
        for _ in range(200):
            if driver.execute_script("return !!window.mmsimReport"):
                break
            time.sleep(0.05)
        result["wall_get_s"] = round(time.monotonic() - t0, 3)
        check(driver.execute_script("return !!window.mmsimReport"), "the report script did not run")
        timing = driver.execute_script(
            """
            var n = performance.getEntriesByType('navigation')[0] || {};
            var p = {};
            performance.getEntriesByType('paint').forEach(function (e) { p[e.name] = e.startTime; });
            return {domContentLoaded_ms: n.domContentLoadedEventEnd, load_ms: n.loadEventEnd,
                    first_paint_ms: p['first-paint'], first_contentful_paint_ms: p['first-contentful-paint'],
                    script_done_ms: window.mmsimReport.renderedAt,
                    plots_drawn_at_load: window.mmsimReport.drawn()};
            """
        )
        result.update({k: (round(v, 1) if isinstance(v, float) else v) for k, v in timing.items()})
        result["render_all_ms"] = round(driver.execute_script("return window.mmsimReport.renderAll()"), 1)
        driver.execute_script("document.querySelectorAll('details').forEach(function (d) { d.open = true; });")

        # Every table has rows with text.
        tables = driver.find_elements(By.CSS_SELECTOR, "table")
        check(tables, "no tables")
        empty = driver.execute_script(
            """
            var bad = [];
            document.querySelectorAll('table').forEach(function (t, i) {
              var rows = t.tBodies.length ? t.tBodies[0].rows.length : 0;
              if (!rows || !t.tBodies[0].textContent.trim()) bad.push(i + ': ' + (t.caption ? t.caption.textContent : ''));
            });
            return bad;
            """
        )
        check(not empty, f"empty tables: {empty}")
        result["tables"] = len(tables)

        # Every plot drawn, with at least one non-empty line and axis titles.
        figs = driver.execute_script(
            """
            var out = {n: 0, bad: []};
            document.querySelectorAll('figure.plot').forEach(function (f) {
              out.n++;
              var lines = f.querySelectorAll('svg path.line');
              var ok = Array.prototype.some.call(lines, function (p) { return (p.getAttribute('d') || '').length > 3; });
              var titles = f.querySelectorAll('svg text.axis-title');
              if (!ok || titles.length < 2 || !titles[0].textContent || !titles[1].textContent) bad_push(f);
              function bad_push(f) { out.bad.push(f.id + ' ' + f.querySelector('figcaption').textContent); }
            });
            return out;
            """
        )
        check(figs["n"] > 0, "no plots")
        check(not figs["bad"], f"plots without a line or axis titles: {figs['bad'][:5]}")
        result["plots"] = figs["n"]
        result["profile_bars"] = len(driver.find_elements(By.CSS_SELECTOR, "figure.bars .bar"))
        check(result["profile_bars"] > 0, "no profile bars")

        # Hover: the first time-series plot with two lines shows a tooltip with a number.
        fig = driver.execute_script(
            """
            var figs = document.querySelectorAll('figure.plot');
            for (var i = 0; i < figs.length; i++)
              if (figs[i].querySelectorAll('path.line').length >= 2) return figs[i];
            return figs[0];
            """
        )
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", fig)
        overlay = fig.find_element(By.CSS_SELECTOR, "rect.overlay")
        ActionChains(driver).move_to_element(overlay).move_by_offset(5, 0).perform()
        tip = fig.find_element(By.CSS_SELECTOR, ".tip")
        time.sleep(0.1)
        check(tip.is_displayed(), "hovering a plot shows no tooltip")
        tip_text = tip.text
        check(any(c.isdigit() for c in tip_text), f"the tooltip shows no value: {tip_text!r}")
        result["tooltip"] = tip_text.replace("\n", " | ")
        if args.hover_screenshot:
            fig.screenshot(args.hover_screenshot)

        # Toggle: the second run's line hides and comes back.
        buttons = fig.find_elements(By.CSS_SELECTOR, ".legend button.toggle")
        check(len(buttons) >= 2, "the plot's legend has fewer than two runs")
        line = fig.find_element(By.CSS_SELECTOR, "path.line[data-run='1']")
        check(line.is_displayed(), "run 1's line is not shown")
        ActionChains(driver).move_to_element(buttons[1]).click().perform()
        line = fig.find_element(By.CSS_SELECTOR, "path.line[data-run='1']")
        check(not line.is_displayed(), "clicking the legend entry did not hide the run's line")
        check(fig.find_element(By.CSS_SELECTOR, "path.line[data-run='0']").is_displayed(), "the other run's line vanished")
        ActionChains(driver).move_to_element(buttons[1]).click().perform()
        line = fig.find_element(By.CSS_SELECTOR, "path.line[data-run='1']")
        check(line.is_displayed(), "a second click did not show the run's line again")

        # Zoom: drag across the middle third; the reset button appears, double-click resets.
        ticks_before = [t.text for t in fig.find_elements(By.CSS_SELECTOR, "svg text")]
        w = overlay.size["width"]
        (ActionChains(driver).move_to_element_with_offset(overlay, int(-w / 6), 0).click_and_hold()
         .move_by_offset(int(w / 3), 0).release().perform())
        reset = fig.find_element(By.CSS_SELECTOR, "button.reset")
        check(reset.is_displayed(), "dragging across the plot did not zoom")
        ticks_after = [t.text for t in fig.find_elements(By.CSS_SELECTOR, "svg text")]
        check(ticks_before != ticks_after, "zooming did not change the axis")
        ActionChains(driver).double_click(overlay).perform()
        check(not reset.is_displayed(), "double-click did not reset the zoom")

        # Sort: a numeric header sorts its table.
        th = driver.find_element(By.CSS_SELECTOR, "table.cmp th[data-sort='num']")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", th)
        th.click()
        check("sorted-asc" in th.get_attribute("class"), "clicking a header did not sort")

        # Screenshots: the top of the page, and a section.
        driver.execute_script("window.scrollTo(0, 0);")
        time.sleep(0.1)
        driver.save_screenshot(args.screenshot)
        result["screenshot"] = os.path.abspath(args.screenshot)
        if args.section:
            sec = driver.find_element(By.ID, args.section)
            driver.execute_script("arguments[0].scrollIntoView({block: 'start'});", sec)
            time.sleep(0.1)
            driver.save_screenshot(args.section_screenshot)
            result["section_screenshot"] = os.path.abspath(args.section_screenshot)

        # No console errors (after everything above ran).
        logs = driver.get_log("browser")
        severe = [e["message"] for e in logs if e.get("level") == "SEVERE"]
        check(not severe, f"console errors: {severe}")
        result["console_entries"] = len(logs)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page")
    ap.add_argument("--screenshot", required=True)
    ap.add_argument("--hover-screenshot")
    ap.add_argument("--section", help="id of an element to screenshot too")
    ap.add_argument("--section-screenshot")
    args = ap.parse_args()
    if args.section and not args.section_screenshot:
        ap.error("--section needs --section-screenshot")
    gone = missing()
    if gone:
        print(f"check_report.py: missing {', '.join(gone)}; {INSTALL}", file=sys.stderr)
        return 3
    try:
        result = run(args)
    except Failed as e:
        print(f"check_report.py: {args.page}: FAILED: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # selenium's errors: a script error, an element not found
        msg = str(e).split("\nStacktrace:")[0].strip()
        print(f"check_report.py: {args.page}: FAILED: {type(e).__name__}: {msg}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
