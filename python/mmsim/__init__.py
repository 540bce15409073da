"""mmsim: a deterministic user-space simulator of the Linux kernel memory manager.

The same engine as the ``mmsim`` command line, from Python, with results as pandas
objects::

    import mmsim
    r = mmsim.run("dd-tmpfs", preset="vanilla", set={"machine.memory_per_node": "256MiB"})
    r.vmstat["pgmajfault"], r.series["nr_free_pages"], r.profile.head()
    df = mmsim.sweep("fileserver-hot10",
                     grid={"machine.memory_per_node": ["128MiB", "256MiB"],
                           "preset": ["vanilla", "patched"]},
                     seeds=range(4), executor="ray")

Simulations release the GIL. Errors are :class:`MmsimError` subclasses carrying the CLI's
message (:class:`ScenarioError` names the file, line and field). See docs/python.md.
"""

from . import _mmsim
from ._core import Run, Scenario, compare, load, read_run, replay, run, scenarios
from ._errors import (
    DocumentError,
    HostMemoryError,
    MmsimError,
    OptionError,
    ScenarioError,
    SimulationError,
)
from .sweep import HEADLINE, points, sweep

__version__: str = _mmsim.__version__
#: Version of the run documents' JSON schema (``schema_version``).
SCHEMA_VERSION: int = _mmsim.SCHEMA_VERSION

__all__ = [
    "Run",
    "Scenario",
    "scenarios",
    "load",
    "run",
    "replay",
    "compare",
    "read_run",
    "sweep",
    "points",
    "HEADLINE",
    "MmsimError",
    "ScenarioError",
    "OptionError",
    "HostMemoryError",
    "SimulationError",
    "DocumentError",
    "SCHEMA_VERSION",
    "__version__",
]
