"""Type stubs of the native module ``mmsim._mmsim`` (crates/mmsim-py). Use the public
API of :mod:`mmsim` instead; these functions take and return JSON text."""

from typing import List, Optional, Sequence, Tuple

__version__: str
SCHEMA_VERSION: int

def scenarios() -> List[Tuple[str, str]]:
    """Built-in scenarios: ``[(name, description), ...]``."""

def scenario_text(name_or_path: str) -> Tuple[str, str]:
    """``(toml_text, source)`` of a built-in or a TOML file; raises ScenarioError."""

def prepare(
    text: str,
    source: str,
    sets: Sequence[str] = ...,
    preset: str = ...,
    features: Optional[str] = ...,
    kernel: Optional[str] = ...,
    policy: Optional[str] = ...,
    seed: Optional[int] = ...,
    max_host_mem: Optional[str] = ...,
) -> str:
    """Check a run's input; JSON ``{"scenario", "features", "kernel", "policy"}``."""

def run(
    text: str,
    source: str,
    sets: Sequence[str] = ...,
    preset: str = ...,
    features: Optional[str] = ...,
    kernel: Optional[str] = ...,
    policy: Optional[str] = ...,
    seed: Optional[int] = ...,
    check: bool = ...,
    max_steps: Optional[int] = ...,
    max_host_mem: Optional[str] = ...,
) -> str:
    """Run (GIL released); the JSON document ``mmsim run --json`` writes."""

def replay(argv: Sequence[str]) -> str:
    """``mmsim replay ARGV`` at one RAM size (GIL released); the run's JSON document."""

def compare(
    docs: Sequence[Tuple[str, str]],
    names: Optional[Sequence[str]] = ...,
    force: bool = ...,
) -> Tuple[List[str], str, str]:
    """``(names, tables_json, text)`` of ``mmsim compare``."""
