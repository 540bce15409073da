"""Scenarios, runs and their results as pandas objects (see docs/python.md)."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _mmsim
from ._errors import OptionError

__all__ = [
    "Scenario",
    "Run",
    "scenarios",
    "load",
    "run",
    "replay",
    "compare",
    "read_run",
]

SetValues = Optional[Mapping[str, Any]]
SizeLike = Union[int, str]


def _toml_value(v: Any) -> str:
    """A Python value as the right-hand side of ``--set key=value``.

    Strings are passed as typed on a command line (``"64MiB"``, ``"ram/2"``, ``"true"``),
    so ``set={"k": "64MiB"}`` is ``--set k=64MiB``; booleans and numbers are TOML literals;
    lists become TOML arrays.
    """
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(json.dumps(x) if isinstance(x, str) else _toml_value(x) for x in v) + "]"
    raise OptionError(f"set: cannot express {v!r} ({type(v).__name__}) as a scenario value")


def _set_list(values: SetValues) -> List[str]:
    """``{"machine.memory_per_node": "64MiB"}`` -> ``["machine.memory_per_node=64MiB"]``."""
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not isinstance(values, Mapping):
        raise OptionError(f"set: expected a mapping of dotted keys to values, got {values!r}")
    return [f"{k}={_toml_value(v)}" for k, v in values.items()]


def _features_arg(features: Union[None, str, Mapping[str, bool], Iterable[str]]) -> Optional[str]:
    """``features`` as ``--features``: a string (``"+a,-b"``), a mapping name -> bool, or
    an iterable of ``+name``/``-name`` items."""
    if features is None or isinstance(features, str):
        return features
    if isinstance(features, Mapping):
        return ",".join(("+" if on else "-") + name for name, on in features.items())
    return ",".join(features)


def scenarios() -> Dict[str, str]:
    """The built-in scenarios, name -> description (``mmsim scenarios``)."""
    return dict(_mmsim.scenarios())


class Scenario:
    """A scenario ready to run: its TOML text, where it came from and ``--set`` overrides.

    Made by :func:`load` (a built-in name or a TOML path) or :meth:`from_toml`. It carries
    the text, not a path, so it can be pickled and run on another machine (a Ray worker).
    ``spec`` is the validated scenario (the machine, devices, files, tasks, ...) as a dict.
    """

    __slots__ = ("text", "source", "sets", "_spec")

    def __init__(self, text: str, source: str = "<string>", sets: Sequence[str] = ()):
        self.text = text
        self.source = source
        self.sets: Tuple[str, ...] = tuple(sets)
        self._spec: Optional[Dict[str, Any]] = None

    @classmethod
    def from_toml(cls, text: str, source: str = "<string>", set: SetValues = None) -> "Scenario":
        """A scenario from TOML text; ``source`` names it in errors. Raises ScenarioError."""
        sc = cls(text, source, _set_list(set))
        sc.check()
        return sc

    def with_set(self, set: SetValues = None) -> "Scenario":
        """A copy with more overrides (applied after this scenario's own)."""
        sc = Scenario(self.text, self.source, self.sets + tuple(_set_list(set)))
        sc.check()
        return sc

    def check(self) -> None:
        """Validate the scenario with its overrides (raises ScenarioError)."""
        self._spec = json.loads(_mmsim.prepare(self.text, self.source, list(self.sets)))["scenario"]

    @property
    def spec(self) -> Dict[str, Any]:
        """The validated scenario as a dict (sizes in bytes, times in ns)."""
        if self._spec is None:
            self.check()
        assert self._spec is not None
        return self._spec

    @property
    def name(self) -> str:
        """The scenario's ``name``."""
        return str(self.spec["name"])

    @property
    def description(self) -> str:
        """The scenario's ``description``."""
        return str(self.spec["description"])

    @property
    def seed(self) -> int:
        """The scenario's ``seed``."""
        return int(self.spec["seed"])

    def __getstate__(self) -> Tuple[str, str, Tuple[str, ...]]:
        return (self.text, self.source, self.sets)

    def __setstate__(self, state: Tuple[str, str, Tuple[str, ...]]) -> None:
        self.text, self.source, self.sets = state
        self._spec = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self.__getstate__() == other.__getstate__()

    def __hash__(self) -> int:
        return hash(self.__getstate__())

    def __repr__(self) -> str:
        sets = f", sets={list(self.sets)!r}" if self.sets else ""
        return f"Scenario({self.source!r}{sets})"


ScenarioLike = Union[str, "os.PathLike[str]", Scenario]


def load(name_or_path: ScenarioLike, set: SetValues = None) -> Scenario:
    """Load a built-in scenario by name, or a TOML file (a name ending in ``.toml`` or
    containing ``/``), with ``set`` overrides (``{"machine.memory_per_node": "64MiB"}``,
    the CLI's ``--set``). Raises ScenarioError naming the file, line and field."""
    if isinstance(name_or_path, Scenario):
        return name_or_path.with_set(set) if set else name_or_path
    text, source = _mmsim.scenario_text(os.fspath(name_or_path))
    sc = Scenario(text, source, _set_list(set))
    sc.check()
    return sc


def _as_scenario(scenario: ScenarioLike) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    text, source = _mmsim.scenario_text(os.fspath(scenario))
    return Scenario(text, source)


def _run_kwargs(
    scenario: ScenarioLike,
    preset: str = "patched",
    features: Union[None, str, Mapping[str, bool], Iterable[str]] = None,
    kernel: Optional[str] = None,
    policy: Optional[str] = None,
    seed: Optional[int] = None,
    set: SetValues = None,
    check: bool = False,
    max_steps: Optional[int] = None,
    max_host_mem: Optional[SizeLike] = None,
) -> Dict[str, Any]:
    """The arguments of ``_mmsim.run`` for one run (no simulation yet)."""
    sc = _as_scenario(scenario)
    return dict(
        text=sc.text,
        source=sc.source,
        sets=list(sc.sets) + _set_list(set),
        preset=preset,
        features=_features_arg(features),
        kernel=None if kernel is None else str(kernel),
        policy=policy,
        seed=seed,
        check=check,
        max_steps=max_steps,
        max_host_mem=None if max_host_mem is None else str(max_host_mem),
    )


def _prepare(kw: Mapping[str, Any]) -> Dict[str, Any]:
    """Check a run's input as ``mmsim run`` does, without running it."""
    args = {k: v for k, v in kw.items() if k not in ("check", "max_steps")}
    return json.loads(_mmsim.prepare(**args))


def run(
    scenario: ScenarioLike,
    preset: str = "patched",
    features: Union[None, str, Mapping[str, bool], Iterable[str]] = None,
    kernel: Optional[str] = None,
    policy: Optional[str] = None,
    seed: Optional[int] = None,
    set: SetValues = None,
    check: bool = False,
    max_steps: Optional[int] = None,
    max_host_mem: Optional[SizeLike] = None,
) -> "Run":
    """Run a scenario, as ``mmsim run`` does, and return its :class:`Run`.

    - ``scenario``: a built-in name, a TOML path or a :class:`Scenario`;
    - ``preset``: ``"vanilla"`` (the studied changes off) or ``"patched"`` (on);
    - ``features``: overrides, ``"+accessed-init,-workingset"``, ``{"workingset": False}``
      or ``["-workingset"]``;
    - ``kernel``: the kernel whose rules the run follows, any release from 2.6.30 to 6.18
      (``"4.2"``, ``"6.8"``, ``"6.18"``, ...);
    - ``policy``: ``"classic"`` or ``"mglru"``;
    - ``seed``: the scenario's seed (``--seed``);
    - ``set``: overrides by dotted key (``--set``), after the scenario's own;
    - ``check``: run the invariant checker after every step (slow);
    - ``max_steps``, ``max_host_mem``: as the CLI's ``--max-steps``, ``--max-host-mem``.

    The GIL is released while the simulation runs. Bad input raises ScenarioError or
    OptionError with the CLI's message; a run that ends early (OOM of every task, step
    limit) is returned with ``complete == False``.
    """
    kw = _run_kwargs(scenario, preset, features, kernel, policy, seed, set, check, max_steps, max_host_mem)
    return Run(_mmsim.run(**kw))


def replay(
    trace: Union[str, "os.PathLike[str]"],
    ram: Optional[SizeLike] = None,
    *,
    memory_max: Optional[SizeLike] = None,
    cgroup_version: Optional[int] = None,
    format: Optional[str] = None,
    scenario: Optional[Union[str, "os.PathLike[str]"]] = None,
    preset: str = "patched",
    features: Union[None, str, Mapping[str, bool], Iterable[str]] = None,
    kernel: Optional[str] = None,
    policy: Optional[str] = None,
    readahead: Optional[SizeLike] = None,
    queue_depth: Optional[int] = None,
    set: SetValues = None,
    mmap: bool = False,
    keep_open: bool = False,
    pace: bool = False,
    object_map: Optional[str] = None,
    object_size: Optional[SizeLike] = None,
    size: Optional[SizeLike] = None,
    limit: Optional[int] = None,
    device: str = "ssd",
) -> "Run":
    """Replay an I/O trace through the page cache at one RAM size (``mmsim replay``;
    docs/replay.md). The options are the CLI's: ``ram`` (one size), ``memory_max``
    (one size: the trace runs in a memory cgroup with that memory.max),
    ``cgroup_version`` (1: the memory controller on cgroup v1's legacy hierarchy, no
    cgroup writeback; default 2), ``format``,
    ``scenario`` (a TOML to run the trace in), ``preset``, ``features``, ``kernel``,
    ``policy`` (``"classic"`` or ``"mglru"``, 6.1 on), ``readahead`` (the device's
    read_ahead_kb as a size, or ``"off"``), ``queue_depth`` (the device modelled as flash
    with that many requests at once), ``set``, ``mmap``, ``keep_open`` (an object's file
    stays open after its first request), ``pace``, ``object_map``,
    ``object_size``, ``size``, ``limit``, ``device``. The :class:`Run` has a ``replay``
    section (page, byte and object miss ratios, readahead, refaults). The GIL is
    released; bad options raise OptionError with the CLI's message."""
    argv = [os.fspath(trace)]
    opt = {
        "--ram": ram,
        "--memory-max": memory_max,
        "--cgroup-version": cgroup_version,
        "--format": format,
        "--scenario": None if scenario is None else os.fspath(scenario),
        "--preset": preset,
        "--features": _features_arg(features),
        "--kernel": kernel,
        "--policy": policy,
        "--readahead": readahead,
        "--queue-depth": queue_depth,
        "--object-map": object_map,
        "--object-size": object_size,
        "--size": size,
        "--limit": limit,
        "--device": device,
    }
    for k, v in opt.items():
        if v is not None:
            argv += [k, str(v)]
    for s in _set_list(set):
        argv += ["--set", s]
    if mmap:
        argv.append("--mmap")
    if keep_open:
        argv.append("--keep-open")
    if pace:
        argv.append("--pace")
    return Run(_mmsim.replay(argv))


def read_run(path: Union[str, "os.PathLike[str]"]) -> "Run":
    """A :class:`Run` from a document written by ``mmsim run --json PATH`` (or
    :meth:`Run.save`)."""
    with open(path, encoding="utf-8") as f:
        return Run(f.read(), path=os.fspath(path))


def _flatten(d: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    """Nested dicts as one level of ``a.b.c`` keys."""
    out: Dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _frame_of_rows(rows: List[Dict[str, Any]], index: str) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    return df.set_index(index) if len(df) else df


class Run:
    """The results of one run: the JSON document of ``mmsim run --json`` and views of it
    as pandas objects.

    ``json`` is the document's text, byte for byte what the CLI writes for the same input;
    ``doc`` the parsed dict. The pandas views are built on first use.
    """

    def __init__(self, json_text: str, path: Optional[str] = None):
        self.json: str = json_text
        self.doc: Dict[str, Any] = json.loads(json_text)
        self.path = path

    # -- headline figures -------------------------------------------------------------
    @property
    def scenario(self) -> str:
        """Scenario name."""
        return str(self.doc["scenario"])

    @property
    def kernel(self) -> str:
        """The kernel era whose rules the run followed."""
        return str(self.doc.get("kernel", ""))

    @property
    def policy(self) -> str:
        """Reclaim policy (``classic`` or ``mglru``)."""
        return str(self.doc.get("policy", "classic"))

    @property
    def features(self) -> Dict[str, bool]:
        """Feature switches in force."""
        return dict(self.doc["features"])

    @property
    def seed(self) -> int:
        """The scenario's seed."""
        return int(self.doc["seed"])

    @property
    def complete(self) -> bool:
        """False when the run stopped early (partial results)."""
        return bool(self.doc["complete"])

    @property
    def end(self) -> Any:
        """How the run ended (``"Completed"``, ...)."""
        return self.doc["end"]

    @property
    def elapsed_s(self) -> float:
        """Virtual time from start to the last user task's exit, seconds."""
        return self.doc["elapsed_ns"] / 1e9

    @property
    def event_hash(self) -> str:
        """Running hash of the event stream (equal hashes: the same run)."""
        return str(self.doc["event_hash"])

    @property
    def cpu_time(self) -> pd.Series:
        """User, system, interrupt and idle time summed over CPUs, seconds."""
        ct = self.doc["cpu_time"]
        return pd.Series({k[: -len("_ns")]: v / 1e9 for k, v in ct.items()}, name="cpu_time_s")

    # -- tables -----------------------------------------------------------------------
    @property
    def vmstat(self) -> pd.Series:
        """/proc/vmstat at the end of the run (int64, by counter name)."""
        return pd.Series(self.doc["vmstat"], dtype="int64", name="vmstat")

    @property
    def tracepoints(self) -> pd.Series:
        """Totals of the reclaim tracepoints (int64), by ``<tracepoint>.<field>``: e.g.
        ``mm_vmscan_lru_shrink_inactive.nr_scanned``, ``mm_vmscan_throttled.writeback``,
        ``mm_vmscan_lru_shrink_inactive.by_priority.7`` (events at priority 7); the shape
        ``examples/host_replay.rs --tracepoints`` reports for a real kernel."""
        flat: Dict[str, int] = {}

        def walk(prefix: str, v: Any) -> None:
            if isinstance(v, dict):
                for k, x in v.items():
                    walk(f"{prefix}.{k}" if prefix else k, x)
            elif isinstance(v, list):
                for i, x in enumerate(v):
                    walk(f"{prefix}.{i}", x)
            else:
                flat[prefix] = int(v)

        walk("", self.doc.get("tracepoints", {}))
        return pd.Series(flat, dtype="int64", name="tracepoints")

    @property
    def pressure_series(self) -> Optional[pd.DataFrame]:
        """PSI stall totals at the end of each 2 s aggregation period (None on kernel eras
        without PSI or a run shorter than a period): one row per period, indexed by
        simulated time (``time_s``), columns ``<memory|io>.<some|full>:<group>`` (total
        stall, microseconds; the group ``/proc`` is /proc/pressure, the others the
        cgroups' files)."""
        rows = self.doc.get("pressure_series") or []
        if not rows:
            return None
        names = [c["name"] for c in self.doc.get("cgroups", [])]
        groups = ["/proc"] + names[1:] if names else ["/proc"]
        data: Dict[str, Any] = {"t_ns": [r["t_ns"] for r in rows]}
        for i, g in enumerate(groups):
            for j, key in enumerate(("memory.some", "memory.full", "io.some", "io.full")):
                data[f"{key}:{g}"] = [r["totals"][i][j] if i < len(r["totals"]) else None for r in rows]
        df = pd.DataFrame(data)
        df.index = pd.Index(df["t_ns"] / 1e9, name="time_s")
        return df

    @property
    def series(self) -> pd.DataFrame:
        """The time series: one row per sample, indexed by simulated time (``time_s``,
        seconds; ``t_ns`` is the exact time), one column per sampled counter; with
        cgroups, ``memory.current:<cgroup>`` (bytes), and with swap too
        ``memory.swap.current:<cgroup>`` (bytes); under MGLRU, ``lru_gen<i>_anon`` and
        ``lru_gen<i>_file`` (pages, youngest generation first)."""
        cols = list(self.doc["series_columns"])
        samples = self.doc["series"]
        data: Dict[str, Any] = {"t_ns": [s["t_ns"] for s in samples]}
        for i, c in enumerate(cols):
            data[c] = [s["values"][i] for s in samples]
        names = [c["name"] for c in self.doc.get("cgroups", [])]
        if names and any(s.get("cgroups") for s in samples):
            for i, n in enumerate(names):
                data[f"memory.current:{n}"] = [
                    s["cgroups"][i] * 4096 if i < len(s.get("cgroups", [])) else None for s in samples
                ]
        if names and any(s.get("cgroups_swap") for s in samples):
            for i, n in enumerate(names):
                data[f"memory.swap.current:{n}"] = [
                    s["cgroups_swap"][i] * 4096 if i < len(s.get("cgroups_swap", [])) else None
                    for s in samples
                ]
        ngen = max((len(s.get("lru_gen", [])) for s in samples), default=0)
        for g in range(ngen):
            for j, kind in enumerate(("anon", "file")):
                data[f"lru_gen{g}_{kind}"] = [
                    s["lru_gen"][g][j] if g < len(s.get("lru_gen", [])) else None for s in samples
                ]
        df = pd.DataFrame(data)
        df.index = pd.Index(df["t_ns"] / 1e9, name="time_s")
        return df

    @property
    def profile(self) -> pd.DataFrame:
        """The cost profile: busy CPU time by kernel function (``ns``) and its share of all
        busy time (``percent``), most expensive first."""
        rows = self.doc["profile_top"]
        df = pd.DataFrame(rows, columns=["function", "ns", "percent"])
        return df.set_index("function")

    @property
    def tasks(self) -> pd.DataFrame:
        """One row per task (kernel threads included, ``kthread``): CPU, elapsed time,
        faults, context switches, syscalls, cache misses, bytes read and written and
        ``errors.<errno>`` counts."""
        rows = []
        for t in self.doc["tasks"]:
            r = {k: v for k, v in t.items() if k not in ("samples", "region_majflt", "errors")}
            for e, n in t.get("errors", {}).items():
                r[f"errors.{e}"] = n
            rows.append(r)
        return _frame_of_rows(rows, "name")

    @property
    def samples(self) -> pd.DataFrame:
        """Every timed sample, one row each: ``task``, ``label``, ``i`` (order) and ``ns``;
        ``majflt`` is the major faults inside the timed region where recorded."""
        rows = []
        for t in self.doc["tasks"]:
            for label, values in t.get("samples", {}).items():
                faults = t.get("region_majflt", {}).get(label, [])
                for i, ns in enumerate(values):
                    rows.append(
                        {
                            "task": t["name"],
                            "label": label,
                            "i": i,
                            "ns": ns,
                            "majflt": faults[i] if i < len(faults) else None,
                        }
                    )
        return pd.DataFrame(rows, columns=["task", "label", "i", "ns", "majflt"])

    @property
    def cgroups(self) -> Optional[pd.DataFrame]:
        """Memory cgroups (root ``/`` first), or None when the scenario declares none: the
        limits, ``current``, ``peak``, ``swap_current``, ``swap_peak`` (bytes), ``events.*``,
        ``events_local.*``, ``swap_events.*`` (memory.swap.events) and ``stat.*``
        (memory.stat) columns; on cgroup v1 also ``v1.*`` (the v1 files, ``v1.stat.*``
        memory.stat under its v1 names)."""
        cgs = self.doc.get("cgroups")
        if not cgs:
            return None
        return _frame_of_rows([_flatten(c) for c in cgs], "name")

    @property
    def pressure(self) -> Optional[pd.DataFrame]:
        """Pressure stall information at the end of the run, or None on a kernel era without
        PSI (before 4.20): one row per scope, the machine (``/proc``: /proc/pressure) first,
        then each cgroup (its memory/io/cpu/irq.pressure); columns ``<resource>.<some|full>.<field>``
        with ``avg10``, ``avg60``, ``avg300`` (percent) and ``total_us`` (``irq`` has a
        ``full`` line only: its ``some`` columns are 0; before 6.1 there is no irq file and
        no ``irq`` columns)."""
        system = self.doc.get("pressure")
        if system is None:
            return None
        rows = [dict(_flatten(system), scope="/proc")]
        for c in self.doc.get("cgroups", [])[1:]:
            if c.get("pressure") is not None:
                rows.append(dict(_flatten(c["pressure"]), scope=c["name"]))
        return _frame_of_rows(rows, "scope")

    @property
    def replay(self) -> Optional[Dict[str, Any]]:
        """The trace-replay section (docs/replay.md), or None."""
        return self.doc.get("replay")

    # -- comparing and saving ---------------------------------------------------------
    def compare(self, other: "Run", names: Optional[Sequence[str]] = None, force: bool = False) -> pd.DataFrame:
        """``mmsim compare`` of this run (the baseline) and ``other``: see :func:`compare`."""
        return compare([self, other], names=names, force=force)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the JSON document (as ``mmsim run --json PATH`` does); ``path`` becomes
        this run's name in comparisons' headers and errors, as for the CLI."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.json)
        self.path = os.fspath(path)

    def __repr__(self) -> str:
        on = [k for k, v in self.features.items() if v]
        return (
            f"<mmsim.Run {self.scenario} kernel {self.kernel} elapsed {self.elapsed_s:.6f} s "
            f"{'complete' if self.complete else 'INCOMPLETE'} features {','.join(on) or '(none)'}>"
        )


def compare(
    runs: Sequence[Union[Run, str, "os.PathLike[str]"]],
    names: Optional[Sequence[str]] = None,
    force: bool = False,
) -> pd.DataFrame:
    """The mmtests-style tables of ``mmsim compare`` as one DataFrame; the first run is
    the baseline.

    ``runs`` are :class:`Run` objects or paths of run documents. Rows are indexed by
    ``(table, stat, metric)``; for each run name there is a value column and a
    ``<name> %`` column, its change against the baseline (positive is better; for sizes,
    positive is larger); ``direction`` says which way is better. ``df.attrs["text"]`` is
    the text ``mmsim compare`` prints, ``df.attrs["names"]`` the column names.
    """
    docs: List[Tuple[str, str]] = []
    for i, run_or_path in enumerate(runs):
        if isinstance(run_or_path, Run):
            docs.append((run_or_path.json, run_or_path.path or f"run[{i}]"))
        else:
            p = os.fspath(run_or_path)
            with open(p, encoding="utf-8") as f:
                docs.append((f.read(), p))
    col_names, tables_json, text = _mmsim.compare(docs, None if names is None else list(names), force)
    rows = []
    for t in json.loads(tables_json):
        for row in t["rows"]:
            r: Dict[str, Any] = {"table": t["title"], "stat": row["stat"], "metric": row["name"]}
            for i, n in enumerate(col_names):
                r[n] = row["values"][i]
                r[f"{n} %"] = row["pct"][i]
            r["direction"] = "neutral" if row.get("neutral") else row["direction"]
            rows.append(r)
    cols = ["table", "stat", "metric"] + [c for n in col_names for c in (n, f"{n} %")] + ["direction"]
    df = pd.DataFrame(rows, columns=cols).set_index(["table", "stat", "metric"])
    df.attrs["text"] = text
    df.attrs["names"] = list(col_names)
    return df
