"""Sweeps: the same 16 points on local threads and on a local Ray of 2 CPUs give the same
DataFrame, and each row is the run mmsim.run gives for that point."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import mmsim
from conftest import REPO

GRID = {
    "machine.memory_per_node": ["24MiB", "32MiB", "48MiB", "64MiB"],
    "preset": ["vanilla", "patched"],
}
SEEDS = [1, 2]
BASE = "hot-stream"


def test_points_order():
    pts = mmsim.points(GRID, SEEDS)
    assert len(pts) == 16
    assert pts[0] == {"machine.memory_per_node": "24MiB", "preset": "vanilla", "seed": 1}
    assert pts[1]["seed"] == 2 and pts[2]["preset"] == "patched"
    assert pts[-1] == {"machine.memory_per_node": "64MiB", "preset": "patched", "seed": 2}
    assert mmsim.points() == [{"seed": None}]


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    out = tmp_path_factory.mktemp("local")
    return mmsim.sweep(BASE, grid=GRID, seeds=SEEDS, executor="local", jobs=2, progress=False, out=out)


@pytest.fixture(scope="module")
def ray_cluster():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_local_sweep(local):
    df = local
    assert len(df) == 16 and df.index.name == "point"
    assert list(df.index) == list(range(16))
    assert list(df.columns[:3]) == ["machine.memory_per_node", "preset", "seed"]
    assert df["complete"].all()
    # a sweep row is the run of that point
    p = 5
    pt = mmsim.points(GRID, SEEDS)[p]
    r = mmsim.run(BASE, preset=pt["preset"], seed=pt["seed"], set={"machine.memory_per_node": pt["machine.memory_per_node"]})
    assert df.loc[p, "event_hash"] == r.event_hash
    assert df.loc[p, "pgmajfault"] == r.vmstat.get("pgmajfault", 0)
    assert Path(df.loc[p, "json"]).read_text() == r.json
    # hot-stream draws nothing from its seed: both seeds of a point are the same run
    assert (df["event_hash"][::2].values == df["event_hash"][1::2].values).all()
    # RAM changes the run and its refaults
    assert df["event_hash"].nunique() >= 4
    assert df.groupby("machine.memory_per_node")["workingset_refault"].mean().nunique() > 1


def test_ray_sweep_equals_local(local, ray_cluster, tmp_path):
    df = mmsim.sweep(BASE, grid=GRID, seeds=SEEDS, executor="ray", progress=True, out=tmp_path)
    pd.testing.assert_frame_equal(df.drop(columns="json"), local.drop(columns="json"))
    for a, b in zip(df["json"], local["json"]):
        assert Path(a).read_text() == Path(b).read_text()
    # bad input fails before any task is submitted, as on the local executor
    with pytest.raises(mmsim.ScenarioError):
        mmsim.sweep(BASE, grid={"machine.memory_per_node": ["0"]}, executor="ray", progress=False)


def test_metrics_and_options(tmp_path):
    df = mmsim.sweep(
        "dd-tmpfs",
        grid={"features.accessed-init": [True, False]},
        set={"machine.memory_per_node": "64MiB"},
        preset="vanilla",
        metrics=["pgactivate", "no_such_counter"],
        progress=False,
        out=tmp_path,
    )
    assert list(df["features.accessed-init"]) == [True, False]
    assert df["no_such_counter"].isna().all()
    docs = [json.loads(Path(p).read_text()) for p in df["json"]]
    assert [d["features"]["accessed-init"] for d in docs] == [True, False]
    df2 = mmsim.sweep(
        "dd-tmpfs",
        set={"machine.memory_per_node": "64MiB"},
        metrics=lambda run: {"mark_page_accessed_ns": int(run.profile["ns"].get("mark_page_accessed", 0))},
        progress=False,
        out=tmp_path / "2",
    )
    assert len(df2) == 1 and df2.loc[0, "seed"] == 1 and "mark_page_accessed_ns" in df2


def test_example_script_writes_its_plot(tmp_path):
    png = tmp_path / "curve.png"
    csv = tmp_path / "curve.csv"
    subprocess.run(
        [sys.executable, str(REPO / "examples" / "fault_curve.py"), "--small", "--out", str(png), "--csv", str(csv)],
        check=True,
        cwd=tmp_path,
    )
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    table = pd.read_csv(csv)
    assert set(table["preset"]) == {"vanilla", "patched"}
    assert table["runs"].min() >= 2
