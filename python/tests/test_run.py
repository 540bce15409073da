"""mmsim.run against `mmsim run`: the same input gives the same document, byte for byte;
the pandas views show that document."""

import threading
import time

import pandas as pd
import pytest

import mmsim
from conftest import REPO, SMALL_DD

# (scenario, run kwargs, the CLI's flags): each must give the CLI's JSON exactly.
CASES = {
    "dd-vanilla-seed": (
        "dd-tmpfs",
        dict(preset="vanilla", seed=7, set=SMALL_DD),
        ["--preset", "vanilla", "--seed", "7", "--set", "machine.memory_per_node=64MiB"],
    ),
    "hot-stream-6.18-features": (
        "hot-stream",
        dict(
            kernel="6.18",
            features="-workingset",
            set={"machine.memory_per_node": "32MiB"},
        ),
        ["--kernel", "6.18", "--features", "-workingset", "--set", "machine.memory_per_node=32MiB"],
    ),
    "memcg-mglru": (
        "memcg-stream",
        dict(policy="mglru", set={"machine.memory_per_node": "512MiB", "tasks.app.size": "32MiB"}),
        ["--policy", "mglru", "--set", "machine.memory_per_node=512MiB", "--set", "tasks.app.size=32MiB"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_run_is_bit_identical_to_the_cli(case, run_cli, tmp_path):
    name, kwargs, flags = CASES[case]
    out = tmp_path / "cli.json"
    run_cli("run", name, *flags, "--json", out)
    r = mmsim.run(name, **kwargs)
    assert r.json == out.read_text(), "the document differs from `mmsim run --json`"
    assert r.complete
    # and a run from the TOML file of the same text is the same run (source differs)
    via_doc = mmsim.read_run(out)
    assert via_doc.event_hash == r.event_hash
    assert via_doc.vmstat.equals(r.vmstat)


def test_scenarios_match_the_cli(run_cli):
    listed = [line.split()[0] for line in run_cli("scenarios").stdout.splitlines() if line.strip()]
    assert list(mmsim.scenarios()) == listed
    assert "dd-tmpfs" in mmsim.scenarios()


def test_load_file_and_pickle(tmp_path, run_cli):
    import pickle

    toml = tmp_path / "small.toml"
    sc = mmsim.load("dd-tmpfs", set=SMALL_DD)
    toml.write_text(sc.text)
    from_file = mmsim.load(str(toml), set=SMALL_DD)
    assert from_file.source == str(toml) and from_file.name == "dd-tmpfs"
    assert from_file.spec["machine"]["memory_per_node_bytes"] == 64 << 20
    again = pickle.loads(pickle.dumps(from_file))
    assert again == from_file
    out = tmp_path / "cli.json"
    run_cli("run", toml, "--set", "machine.memory_per_node=64MiB", "--json", out)
    assert mmsim.run(again).json == out.read_text()


def test_pandas_views():
    r = mmsim.run("dd-tmpfs", set=SMALL_DD)
    vm = r.vmstat
    assert vm.dtype == "int64" and vm["pgfault"] == r.doc["vmstat"]["pgfault"]
    s = r.series
    assert s.index.name == "time_s" and s.index.is_monotonic_increasing
    assert list(s.columns[1:]) == r.doc["series_columns"]
    assert len(s) == len(r.doc["series"]) > 0
    assert (s["t_ns"] / 1e9 == s.index).all()
    p = r.profile
    assert list(p.columns) == ["ns", "percent"] and p["ns"].is_monotonic_decreasing
    assert abs(p["percent"].sum() - 100) < 1e-6
    t = r.tasks
    assert t.loc["dd", "kthread"] == False  # noqa: E712
    assert t.loc["dd", "write_bytes"] > 0
    sm = r.samples
    n = sum(len(v) for task in r.doc["tasks"] for v in task["samples"].values())
    assert len(sm) == n and set(sm.columns) == {"task", "label", "i", "ns", "majflt"}
    assert (sm[sm.task == "dd"].ns > 0).all()
    assert r.cgroups is None
    assert r.cpu_time["system"] > 0
    assert "dd-tmpfs" in repr(r)
    tp = r.tracepoints
    assert tp.dtype == "int64"
    si = r.doc["tracepoints"]["mm_vmscan_lru_shrink_inactive"]
    assert tp["mm_vmscan_lru_shrink_inactive.nr_reclaimed"] == si["nr_reclaimed"]
    assert tp["mm_vmscan_lru_shrink_inactive.by_priority.12"] == si["by_priority"][12]
    assert tp[[f"mm_vmscan_lru_shrink_inactive.by_priority.{i}" for i in range(13)]].sum() == si["events"]


def test_cgroups_and_mglru_views():
    r = mmsim.run("memcg-stream", policy="mglru", set={"machine.memory_per_node": "512MiB", "tasks.app.size": "32MiB"})
    cg = r.cgroups
    assert cg is not None and cg.index[0] == "/"
    assert {"current", "peak", "stat.pgscan", "events.oom_kill"} <= set(cg.columns)
    assert {"swap_peak", "swap_events.high", "swap_events.max", "swap_events.fail"} <= set(cg.columns)
    assert (cg["swap_peak"] >= cg["swap_current"]).all()
    # Without a [swap] device no swap series is sampled.
    assert not any(c.startswith("memory.swap.current:") for c in r.series.columns)
    s = r.series
    assert any(c.startswith("memory.current:") for c in s.columns)
    assert "lru_gen0_file" in s.columns and r.policy == "mglru"


def test_swap_series_and_swap_files():
    """A cgroup that swaps: memory.swap.current over time per cgroup, within memory.swap.peak."""
    r = mmsim.run(str(REPO / "examples" / "swap_high.toml"), set={"cgroups.box.swap_high": "max"})
    s = r.series["memory.swap.current:box"]
    cg = r.cgroups
    assert s.max() > 0 and s.max() <= cg.loc["box", "swap_peak"]
    assert (r.series["memory.swap.current:/"] == 0).all()
    assert cg.loc["box", "swap_events.high"] == 0
    assert pd.isna(cg.loc["box", "swap_high"])  # "max"


def test_pressure_view():
    """PSI: the machine and each cgroup, some and full, on an era with PSI only."""
    r = mmsim.run("memcg-stream", kernel="6.18", set={"machine.memory_per_node": "512MiB", "tasks.app.size": "32MiB"})
    p = r.pressure
    assert p is not None and p.index[0] == "/proc"
    assert set(r.cgroups.index[1:]) == set(p.index[1:])
    for res in ("memory", "io", "cpu"):
        assert (p[f"{res}.full.total_us"] <= p[f"{res}.some.total_us"]).all()
    assert p.loc["stream", "memory.some.total_us"] > 0
    assert p.loc["/proc", "cpu.full.total_us"] == 0
    assert (p["irq.some.total_us"] == 0).all() and (p["irq.full.total_us"] >= 0).all()
    assert "pressure.memory.some.avg10" in r.cgroups.columns
    assert mmsim.run("memcg-stream", kernel="4.14", set={"machine.memory_per_node": "512MiB", "tasks.app.size": "32MiB"}).pressure is None


def test_pressure_series():
    """PSI totals at each 2 s period's end: the throttled hog of swap_high.toml stalls."""
    r = mmsim.run(str(REPO / "examples" / "swap_high.toml"))
    ps = r.pressure_series
    assert ps is not None and len(ps) >= 100
    assert ps["memory.some:box"].is_monotonic_increasing
    assert (ps["memory.full:/proc"] <= ps["memory.some:/proc"]).all()
    assert ps["memory.some:box"].iloc[-1] <= r.pressure.loc["box", "memory.some.total_us"]
    assert mmsim.run("dd-tmpfs", set=SMALL_DD).pressure_series is None


def test_compare_matches_the_cli(run_cli, tmp_path):
    a = mmsim.run("dd-tmpfs", preset="vanilla", set=SMALL_DD)
    b = mmsim.run("dd-tmpfs", preset="patched", set=SMALL_DD)
    a.save(tmp_path / "a.json")
    b.save(tmp_path / "b.json")
    df = a.compare(b)
    cli_text = run_cli("compare", tmp_path / "a.json", tmp_path / "b.json").stdout
    assert df.attrs["text"] == cli_text
    assert df.attrs["names"] == ["vanilla", "patched"]
    assert list(df.columns) == ["vanilla", "vanilla %", "patched", "patched %", "direction"]
    elapsed = df.xs("Ops", level="table") if "Ops" in df.index.get_level_values(0) else None
    assert elapsed is None or len(elapsed) > 0
    # every vmstat row is a counter that differs, with both runs' values
    vm = df.loc[[t for t in df.index.get_level_values(0).unique() if t.startswith("vmstat")]]
    for (_, _, counter), row in vm.iterrows():
        assert row["vanilla"] == a.vmstat[counter] and row["patched"] == b.vmstat[counter]
        assert row["vanilla"] != row["patched"]
    assert (df["vanilla %"].dropna() == 0).all()
    # three runs, by path, named
    three = mmsim.compare([tmp_path / "a.json", b, a], names=["x", "y", "z"])
    assert three.attrs["names"] == ["x", "y", "z"]


def test_gil_is_released_while_a_simulation_runs():
    """While a simulation runs in another thread this thread keeps executing Python: if
    the GIL were held for the run, the counter below could not advance meanwhile."""
    done = threading.Event()
    result = {}

    def work():
        t0 = time.perf_counter()
        # 16 GiB: about 0.4 s of simulation here, well past the 0.05 s asserted below
        # even on a faster machine (the default 4 GiB took 0.1 s).
        result["run"] = mmsim.run("dd-tmpfs", set={"machine.memory_per_node": "16GiB"})
        result["s"] = time.perf_counter() - t0
        done.set()

    th = threading.Thread(target=work)
    th.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    th.join()
    assert result["run"].complete
    # about one tick per ms of the run (less on a loaded machine), never ~0
    assert result["s"] > 0.05, "the run is too short to tell"
    assert ticks >= 10, f"only {ticks} ticks in {result['s']:.3f} s: the GIL was held"
