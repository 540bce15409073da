"""Bad input raises mmsim exceptions whose message is the CLI's (`mmsim: error: MSG`,
exit status 2), with the file, line and field of scenario errors as attributes."""

import json
import time

import pytest

import mmsim
from conftest import SMALL_DD


def cli_error(run_cli, *args):
    p = run_cli(*args, check=False)
    assert p.returncode == 2, (p.returncode, p.stderr)
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("mmsim: error: "), line
    return line[len("mmsim: error: ") :]


BAD_TOML = """name = "bad"
description = "a typo on line 6"

[machine]
nodes = 1
cpus_per_nodes = 2
memory_per_node = "64MiB"

[[tasks]]
name = "t"
program = "anon"
size = "1MiB"
"""


def test_unknown_builtin(run_cli):
    with pytest.raises(mmsim.ScenarioError) as e:
        mmsim.run("no-such-scenario")
    assert isinstance(e.value, ValueError) and isinstance(e.value, mmsim.MmsimError)
    assert str(e.value) == cli_error(run_cli, "run", "no-such-scenario")
    assert e.value.file == "no-such-scenario" and e.value.line is None
    with pytest.raises(mmsim.ScenarioError):
        mmsim.load("no-such-scenario")


def test_file_line_and_field(tmp_path, run_cli):
    path = tmp_path / "bad.toml"
    path.write_text(BAD_TOML)
    with pytest.raises(mmsim.ScenarioError) as e:
        mmsim.load(str(path))
    assert str(e.value) == cli_error(run_cli, "run", path)
    assert e.value.file == str(path)
    assert e.value.line == 6
    assert e.value.field == "machine.cpus_per_nodes"
    assert e.value.message and e.value.message in str(e.value)
    with pytest.raises(mmsim.ScenarioError) as e2:
        mmsim.Scenario.from_toml(BAD_TOML, source="inline")
    assert e2.value.file == "inline" and e2.value.line == 6


def test_missing_file(tmp_path, run_cli):
    missing = tmp_path / "missing.toml"
    with pytest.raises(mmsim.ScenarioError) as e:
        mmsim.run(str(missing))
    assert str(e.value) == cli_error(run_cli, "run", missing)


@pytest.mark.parametrize(
    "kwargs, flags",
    [
        (dict(set={"machine.nodez": 1}), ["--set", "machine.nodez=1"]),
        (dict(set={"machine.memory_per_node": "lots"}), ["--set", "machine.memory_per_node=lots"]),
        (dict(set={"tasks.dd.iterations": -1}), ["--set", "tasks.dd.iterations=-1"]),
    ],
)
def test_bad_set(kwargs, flags, run_cli):
    with pytest.raises(mmsim.ScenarioError) as e:
        mmsim.run("dd-tmpfs", **kwargs)
    assert str(e.value) == cli_error(run_cli, "run", "dd-tmpfs", *flags)


@pytest.mark.parametrize(
    "kwargs, flags",
    [
        (dict(kernel="9.99"), ["--kernel", "9.99"]),
        (dict(preset="tuned"), ["--preset", "tuned"]),
        (dict(features="+no-such-feature"), ["--features", "+no-such-feature"]),
        (dict(features={"no-such-feature": False}), ["--features", "-no-such-feature"]),
        (dict(policy="lfu"), ["--policy", "lfu"]),
        (dict(policy="mglru"), ["--policy", "mglru"]),  # dd-tmpfs runs on 3.15
        (dict(max_host_mem="12 parsecs"), ["--max-host-mem", "12 parsecs"]),
    ],
)
def test_bad_options(kwargs, flags, run_cli):
    with pytest.raises(mmsim.OptionError) as e:
        mmsim.run("dd-tmpfs", set=SMALL_DD, **kwargs)
    assert isinstance(e.value, ValueError)
    assert str(e.value) == cli_error(
        run_cli, "run", "dd-tmpfs", "--set", "machine.memory_per_node=64MiB", *flags
    )


def test_host_memory(run_cli):
    with pytest.raises(mmsim.HostMemoryError) as e:
        mmsim.run("dd-tmpfs", max_host_mem="1MiB")
    assert isinstance(e.value, MemoryError)
    assert str(e.value) == cli_error(run_cli, "run", "dd-tmpfs", "--max-host-mem", "1MiB")


def test_set_values_that_python_cannot_express():
    with pytest.raises(mmsim.OptionError):
        mmsim.run("dd-tmpfs", set={"seed": object()})
    with pytest.raises(mmsim.OptionError):
        mmsim.run("dd-tmpfs", set="machine.nodes=1")


def test_compare_errors(tmp_path, run_cli):
    a = mmsim.run("dd-tmpfs", set=SMALL_DD)
    b = mmsim.run("hot-stream", set={"machine.memory_per_node": "32MiB"})
    a.save(tmp_path / "a.json")
    b.save(tmp_path / "b.json")
    with pytest.raises(mmsim.DocumentError) as e:
        mmsim.compare([tmp_path / "a.json", tmp_path / "b.json"])
    assert str(e.value) == cli_error(run_cli, "compare", tmp_path / "a.json", tmp_path / "b.json")
    assert len(mmsim.compare([a, b], force=True)) > 0
    doc = json.loads(a.json)
    doc["schema_version"] = 99
    (tmp_path / "v99.json").write_text(json.dumps(doc))
    with pytest.raises(mmsim.DocumentError) as e:
        mmsim.compare([tmp_path / "v99.json", tmp_path / "a.json"])
    assert str(e.value) == cli_error(run_cli, "compare", tmp_path / "v99.json", tmp_path / "a.json")
    with pytest.raises(mmsim.OptionError):
        mmsim.compare([a, a], names=["only-one"])


def test_sweep_checks_every_point_before_running(tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(mmsim.ScenarioError) as e:
        mmsim.sweep(
            "dd-tmpfs",
            grid={"machine.memory_per_node": ["64MiB", "1KiB"]},
            seeds=range(50),
            progress=False,
            out=tmp_path / "never",
        )
    assert "machine.memory_per_node" in str(e.value)
    assert not (tmp_path / "never").exists(), "runs started before the bad point was found"
    assert time.perf_counter() - t0 < 30
    with pytest.raises(mmsim.OptionError):
        mmsim.sweep("dd-tmpfs", executor="slurm")
    with pytest.raises(mmsim.OptionError):
        mmsim.sweep("dd-tmpfs", grid={"preset": []})
    with pytest.raises(mmsim.OptionError):
        mmsim.sweep("dd-tmpfs", grid={"kernel": ["1.0"]}, progress=False)
