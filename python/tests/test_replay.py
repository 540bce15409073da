"""mmsim.replay against `mmsim replay`: the same trace and options give the document
`mmsim replay --json -` prints, byte for byte but for the host's timing (the replay
section's host_seconds and host_requests_per_s); bad options raise OptionError with the
CLI's message."""

import re

import pytest

import mmsim
from conftest import REPO
from test_errors import cli_error

TRACE = str(REPO / "docs" / "traces" / "loop.txt")

CASES = {
    "default": (dict(ram="16MiB"), ["--ram", "16MiB"]),
    "vanilla-mglru-no-readahead": (
        dict(ram="16MiB", preset="vanilla", policy="mglru", readahead="off", mmap=True),
        ["--ram", "16MiB", "--preset", "vanilla", "--policy", "mglru", "--readahead", "off", "--mmap"],
    ),
    "memcg": (
        dict(ram="64MiB", memory_max="16MiB", kernel="6.1"),
        ["--ram", "64MiB", "--memory-max", "16MiB", "--kernel", "6.1"],
    ),
    "memcg-v1": (
        dict(ram="64MiB", memory_max="16MiB", cgroup_version=1),
        ["--ram", "64MiB", "--memory-max", "16MiB", "--cgroup-version", "1"],
    ),
    "flash-queue": (
        dict(ram="16MiB", queue_depth=4, device="nvme"),
        ["--ram", "16MiB", "--queue-depth", "4", "--device", "nvme"],
    ),
    "keep-open": (dict(ram="16MiB", keep_open=True), ["--ram", "16MiB", "--keep-open"]),
    "old-kernel-set": (
        dict(ram="24MiB", kernel="4.2", set={"tasks.replay.limit": 2000}),
        ["--ram", "24MiB", "--kernel", "4.2", "--set", "tasks.replay.limit=2000"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_replay_is_the_cli_document(case, run_cli):
    kwargs, flags = CASES[case]
    out = run_cli("replay", TRACE, *flags, "--json", "-").stdout
    r = mmsim.replay(TRACE, **kwargs)
    host = re.compile(r'^\s*"host_(seconds|requests_per_s)": .*$', re.M)
    assert "host_seconds" in out
    assert host.sub("", r.json) == host.sub("", out)
    t = r.replay["tasks"][0]
    assert 0 < t["page_miss_ratio"] <= 1 and r.complete


@pytest.mark.parametrize(
    "kwargs, flags",
    [
        (dict(ram="16MiB,32MiB"), ["--ram", "16MiB,32MiB"]),
        (dict(ram="16MiB", kernel="4.2", policy="mglru"), ["--ram", "16MiB", "--kernel", "4.2", "--policy", "mglru"]),
        (dict(ram="16MiB", readahead="3KiB"), ["--ram", "16MiB", "--readahead", "3KiB"]),
        (dict(ram="16MiB", format="nope"), ["--ram", "16MiB", "--format", "nope"]),
        (dict(ram="16MiB", queue_depth=0), ["--ram", "16MiB", "--queue-depth", "0"]),
        (dict(ram="16MiB", queue_depth=2, device="hdd"), ["--ram", "16MiB", "--queue-depth", "2", "--device", "hdd"]),
        (dict(ram="16MiB", memory_max="32MiB"), ["--ram", "16MiB", "--memory-max", "32MiB"]),
        (dict(ram="64MiB", memory_max="8MiB,16MiB"), ["--ram", "64MiB", "--memory-max", "8MiB,16MiB"]),
        (dict(ram="16MiB", keep_open=True, mmap=True), ["--ram", "16MiB", "--keep-open", "--mmap"]),
    ],
)
def test_replay_errors(kwargs, flags, run_cli):
    with pytest.raises(mmsim.OptionError) as e:
        mmsim.replay(TRACE, **kwargs)
    if "," in kwargs["ram"] or "," in kwargs.get("memory_max", ""):
        # the CLI runs a miss-ratio curve; the package runs one size per call
        assert "one size per replay run" in str(e.value)
    else:
        assert str(e.value) == cli_error(run_cli, "replay", TRACE, *flags)
