"""Shared fixtures: the repository, the mmsim CLI binary (to check the package against),
small scenarios."""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: dd-tmpfs on 64 MiB: five dd passes of 6.4 MiB, well under a second of host time.
SMALL_DD = {"machine.memory_per_node": "64MiB"}


def _target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")


@pytest.fixture(scope="session")
def cli() -> str:
    """The `mmsim` binary of this checkout: MMSIM_BIN, else built with cargo in the `ci`
    profile (target/ci/mmsim: a no-op when `cargo test --profile ci` has just built it)."""
    explicit = os.environ.get("MMSIM_BIN")
    if explicit:
        return explicit
    subprocess.run(
        ["cargo", "build", "--profile", "ci", "-q", "-p", "mmsim", "--bin", "mmsim"],
        cwd=REPO,
        check=True,
    )
    path = _target_dir() / "ci" / "mmsim"
    assert path.exists(), path
    return str(path)


@pytest.fixture(scope="session")
def run_cli(cli):
    """Run the CLI; returns the CompletedProcess (text)."""

    def go(*args, check=True):
        p = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"mmsim {' '.join(map(str, args))}: exit {p.returncode}\n{p.stderr}")
        return p

    return go
