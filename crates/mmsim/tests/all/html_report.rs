//! The HTML report end to end: `compare --html`, `report DIR --html` and
//! `reproduce --out DIR --html` on small runs, the page's numbers against the text
//! output, bad inputs, and then the pages opened in headless Chromium by
//! `tests/browser/check_report.py` (selenium with Debian's chromium and chromium-driver):
//! no console errors, every table and plot present and non-empty, a hover tooltip with a
//! value, a legend click hiding a run's line, zoom, sorting, and screenshots saved under
//! the target directory. Without Chromium, chromedriver or selenium the test fails saying
//! what to install, unless `MMSIM_SKIP_BROWSER=1`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mmsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .output()
        .expect("run mmsim")
}

fn ok(args: &[&str]) -> String {
    let out = mmsim(args);
    assert!(
        out.status.success(),
        "mmsim {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh directory for this test under the target directory (kept for inspection).
fn workdir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html_report");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// What the page must be: complete, self-contained (nothing fetched), with tables, plots
/// and the profile.
fn check_static(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    for bad in [
        "src=\"http",
        "href=\"http",
        "url(http",
        "@import",
        "<link ",
        "src=\"//",
    ] {
        assert!(!html.contains(bad), "the page fetches something: {bad}");
    }
    for want in [
        "<table",
        "class=\"plot\"",
        "class=\"bar c0\"",
        "id=\"mmsim-plots\"",
    ] {
        assert!(html.contains(want), "missing {want}");
    }
}

/// Every number of the text tables (`12.34`, `(  5.67%)`) appears in the page.
fn numbers_match(text: &str, html: &str) {
    let mut n = 0;
    for line in text.lines() {
        for tok in line.split(|c: char| c.is_whitespace() || c == '(' || c == ')') {
            let t = tok.trim_end_matches('%');
            let two_decimals = t.len() > 3
                && t.as_bytes()[t.len() - 3] == b'.'
                && t.trim_start_matches(['-', '+'])
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.');
            if two_decimals {
                assert!(
                    html.contains(tok),
                    "{tok} (from `{line}`) is not in the page"
                );
                n += 1;
            }
        }
    }
    assert!(n > 20, "only {n} numbers compared");
}

/// The browser check of one page; `section`: an element id to screenshot too.
fn browser(page: &Path, shots: &Path, name: &str, section: Option<&str>) -> Option<String> {
    if std::env::var("MMSIM_SKIP_BROWSER").is_ok_and(|v| v == "1") {
        eprintln!(
            "MMSIM_SKIP_BROWSER=1: not opening {} in a browser",
            page.display()
        );
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/check_report.py");
    let shot = shots.join(format!("{name}.png"));
    let mut cmd = Command::new("python3");
    cmd.arg(&script)
        .arg(page)
        .arg("--screenshot")
        .arg(&shot)
        .arg("--hover-screenshot")
        .arg(shots.join(format!("{name}-hover.png")));
    if let Some(id) = section {
        cmd.args(["--section", id, "--section-screenshot"])
            .arg(shots.join(format!("{name}-section.png")));
    }
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "cannot run python3 ({e}): the browser test needs python3 with selenium, and \
             Debian's chromium and chromium-driver: apt-get install -y python3 chromium \
             chromium-driver && pip install selenium (or MMSIM_SKIP_BROWSER=1)"
        )
    });
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(3) => panic!("the browser test cannot run: {stderr}"),
        _ => panic!(
            "browser check of {} failed:\n{stderr}\n{stdout}",
            page.display()
        ),
    }
    assert!(shot.exists(), "no screenshot {}", shot.display());
    let json = stdout.lines().last().unwrap_or_default().to_string();
    eprintln!("{name}: {json}");
    Some(json)
}

#[test]
fn html_report_end_to_end() {
    let dir = workdir();
    let runs = dir.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let p = |n: &str| runs.join(n);
    // Memory cgroups on two kernels (cgroup tables and usage plots), dd vanilla and patched.
    ok(&[
        "run",
        "memcg-stream",
        "--preset",
        "vanilla",
        "--json",
        s(&p("memcg-vanilla.json")),
    ]);
    ok(&[
        "run",
        "memcg-stream",
        "--kernel",
        "4.2",
        "--json",
        s(&p("memcg-patched.json")),
    ]);
    ok(&[
        "run",
        "dd-tmpfs",
        "--preset",
        "vanilla",
        "--json",
        s(&p("dd-vanilla.json")),
    ]);
    ok(&[
        "run",
        "dd-tmpfs",
        "--preset",
        "patched",
        "--json",
        s(&p("dd-patched.json")),
    ]);
    // MGLRU: the generation series.
    ok(&["run", "mglru-anon-stream", "--json", s(&p("mglru.json"))]);

    // compare --html: the same numbers as the text.
    let cmp = dir.join("compare.html");
    let text = ok(&[
        "compare",
        s(&p("memcg-vanilla.json")),
        s(&p("memcg-patched.json")),
        "--html",
        s(&cmp),
    ]);
    let html = std::fs::read_to_string(&cmp).unwrap();
    check_static(&html);
    let tables_text = text.split("\nhtml: ").next().unwrap();
    numbers_match(tables_text, &html);
    assert!(html.contains("cgroup stream"), "per-cgroup tables");
    assert!(
        html.contains("stream memory some"),
        "the pressure table (6.18 against 4.2, which has no PSI)"
    );
    assert!(
        html.contains("cgroup stream: memory.current"),
        "per-cgroup plots"
    );
    assert!(html.contains("mmsim run memcg-stream --kernel 4.2 --preset vanilla --features"));
    assert!(html.contains("[[cgroups]]"), "the scenario text");

    // report DIR: one comparison per scenario.
    let rep = dir.join("report.html");
    let out = ok(&["report", s(&runs), "--html", s(&rep)]);
    assert!(out.contains("5 runs in 3 comparisons"), "{out}");
    let html = std::fs::read_to_string(&rep).unwrap();
    check_static(&html);
    assert!(html.contains("dd-tmpfs: vanilla vs patched") && html.contains("memcg-stream: "));
    // Every plot `compare --plot` draws for each group is on the page.
    let docs = mmsim::report::html::collect_runs(&[s(&runs).to_string()]).unwrap();
    let want: usize = mmsim::report::html::group_runs(docs)
        .iter()
        .map(|g| mmsim::report::plot::plots(g, &mmsim::report::tables::default_names(g)).len())
        .sum();
    assert_eq!(html.matches("<figure class=\"plot\"").count(), want);

    // reproduce --out DIR --html: DIR/index.html with the summary and the experiment.
    let rdir = dir.join("reproduce");
    let out = mmsim(&[
        "reproduce",
        "accessed-init",
        "--scale",
        "small",
        "--out",
        s(&rdir),
        "--html",
    ]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{:?}", out);
    let index = rdir.join("index.html");
    let html = std::fs::read_to_string(&index).unwrap();
    check_static(&html);
    for want in [
        "id=\"summary-top\"",
        "href=\"#exp-accessed-init-dd\"",
        "seed vanilla",
        "How our runs differ from the seed",
        "class=\"verdict",
        "mmsim reproduce accessed-init --scale small",
    ] {
        assert!(html.contains(want), "reproduce page: missing {want}");
    }

    // Bad inputs: a clear message naming the file, exit status 2.
    let bad = mmsim(&[
        "report",
        s(&dir.join("nope.json")),
        "--html",
        s(&dir.join("x.html")),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("nope.json"));
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let bad = mmsim(&["report", s(&empty), "--html", s(&dir.join("x.html"))]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no run documents"));
    std::fs::write(empty.join("other.json"), "{\"a\": 1}").unwrap();
    let bad = mmsim(&["report", s(&empty), "--html", s(&dir.join("x.html"))]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("other.json"));
    let bad = mmsim(&["reproduce", "accessed-init", "--html"]);
    assert_eq!(bad.status.code(), Some(2), "--html needs --out");

    // The pages in a real browser.
    let shots = dir.join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    browser(&cmp, &shots, "compare", None);
    browser(&rep, &shots, "report", None);
    browser(&index, &shots, "reproduce", Some("exp-accessed-init-dd"));
}
