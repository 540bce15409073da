"""The exceptions of :mod:`mmsim`. Their messages are the CLI's (``mmsim: error: ...``
without the prefix): a scenario error names the file, line and field."""

from typing import Optional

__all__ = [
    "MmsimError",
    "ScenarioError",
    "OptionError",
    "HostMemoryError",
    "SimulationError",
    "DocumentError",
]


class MmsimError(Exception):
    """Base class of every mmsim error."""


class ScenarioError(MmsimError, ValueError):
    """Bad scenario input: an unknown built-in, an unreadable file, malformed TOML, an
    unknown or impossible field, a bad ``set`` override.

    Attributes (``None`` where the CLI's message has no such part):

    - ``file``: ``built-in:<name>``, the path, or ``--set`` for overrides;
    - ``line``: 1-based line of the offending key;
    - ``field``: dotted path of the offending field (``tasks.dd.size``);
    - ``message``: what is wrong and what is accepted.
    """

    file: Optional[str] = None
    line: Optional[int] = None
    field: Optional[str] = None
    message: Optional[str] = None


class OptionError(MmsimError, ValueError):
    """A bad run option (``preset``, ``features``, ``kernel``, ``policy``,
    ``max_host_mem``, a replay option), or a policy the kernel era does not have."""


class HostMemoryError(MmsimError, MemoryError):
    """The run's estimated host memory exceeds the host's available memory (or
    ``max_host_mem``); the message says how much it needs and how to shrink it."""


class SimulationError(MmsimError, RuntimeError):
    """The simulation could not be built or run."""


class DocumentError(MmsimError, ValueError):
    """A run document could not be compared: malformed JSON, another schema version, runs
    of different scenarios without ``force=True``."""
