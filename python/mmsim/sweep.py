"""Parameter sweeps: one run per point of a grid x seeds, on local threads or on Ray.

See :func:`sweep` and docs/python.md.
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _mmsim
from ._core import Run, ScenarioLike, _as_scenario, _prepare, _run_kwargs
from ._errors import OptionError

__all__ = ["sweep", "points", "HEADLINE"]

#: Grid keys that are run options rather than scenario fields.
OPTION_KEYS = ("preset", "features", "kernel", "policy")

#: The headline metrics of a sweep row: (column, description).
HEADLINE: Tuple[Tuple[str, str], ...] = (
    ("scenario", "scenario name"),
    ("kernel", "kernel era of the run"),
    ("complete", "False when the run stopped early"),
    ("elapsed_s", "virtual time to the last user task's exit, s"),
    ("user_s", "user CPU time, s"),
    ("system_s", "system CPU time, s"),
    ("pgfault", "vmstat pgfault"),
    ("pgmajfault", "vmstat pgmajfault"),
    ("pgscan", "vmstat pgscan_kswapd + pgscan_direct"),
    ("pgsteal", "vmstat pgsteal_kswapd + pgsteal_direct"),
    ("workingset_refault", "vmstat workingset_refault_file + _anon (the eras that count only workingset_refault: that)"),
    ("pswpin", "vmstat pswpin"),
    ("pswpout", "vmstat pswpout"),
    ("oom_kill", "vmstat oom_kill"),
    ("steps", "simulation steps"),
    ("event_hash", "hash of the event stream"),
)

Metrics = Union[None, Sequence[str], Callable[[Run], Mapping[str, Any]]]


def points(grid: Optional[Mapping[str, Iterable[Any]]] = None, seeds: Optional[Iterable[Optional[int]]] = None) -> List[Dict[str, Any]]:
    """The points of a sweep in order: the Cartesian product of the grid's values (the
    first key varies slowest), seeds innermost. Each point is ``{key: value, ...,
    "seed": seed}``."""
    grid = dict(grid or {})
    keys = list(grid)
    values = [list(grid[k]) for k in keys]
    for k, v in zip(keys, values):
        if not v:
            raise OptionError(f"grid: `{k}` has no values")
        if k == "seed":
            raise OptionError("grid: give seeds with seeds=..., not as a grid key")
    seed_list = [None] if seeds is None else list(seeds)
    if not seed_list:
        raise OptionError("seeds: no seeds")
    out = []
    for combo in itertools.product(*values):
        for s in seed_list:
            p = dict(zip(keys, combo))
            p["seed"] = s
            out.append(p)
    return out


def _point_kwargs(base: ScenarioLike, point: Mapping[str, Any], fixed: Mapping[str, Any]) -> Dict[str, Any]:
    """``_mmsim.run`` arguments of one point: the fixed run options, then the point's
    option keys, its scenario keys as ``set`` overrides (after ``fixed["set"]``), its
    seed."""
    opts = dict(fixed)
    sets = dict(opts.pop("set", None) or {})
    for k, v in point.items():
        if k == "seed":
            if v is not None:
                opts["seed"] = v
        elif k in OPTION_KEYS:
            opts[k] = v
        else:
            sets[k] = v
    return _run_kwargs(base, set=sets, **opts)


def _row(point: Mapping[str, Any], run: Run, metrics: Metrics) -> Dict[str, Any]:
    vm = run.doc["vmstat"]
    ct = run.doc["cpu_time"]
    g = lambda k: int(vm.get(k, 0))  # noqa: E731
    row: Dict[str, Any] = {k: v for k, v in point.items() if k != "seed"}
    row["seed"] = run.seed
    row.update(
        scenario=run.scenario,
        kernel=run.kernel,
        complete=run.complete,
        elapsed_s=run.doc["elapsed_ns"] / 1e9,
        user_s=ct["user_ns"] / 1e9,
        system_s=ct["system_ns"] / 1e9,
        pgfault=g("pgfault"),
        pgmajfault=g("pgmajfault"),
        pgscan=g("pgscan_kswapd") + g("pgscan_direct"),
        pgsteal=g("pgsteal_kswapd") + g("pgsteal_direct"),
        workingset_refault=(g("workingset_refault_file") + g("workingset_refault_anon")) or g("workingset_refault"),
        pswpin=g("pswpin"),
        pswpout=g("pswpout"),
        oom_kill=g("oom_kill"),
        steps=int(run.doc["steps"]),
        event_hash=run.event_hash,
    )
    rp = run.replay
    if rp and rp.get("tasks"):
        t = rp["tasks"][0]
        row.update(
            page_miss_ratio=t.get("page_miss_ratio"),
            byte_miss_ratio=t.get("byte_miss_ratio"),
            object_miss_ratio=t.get("request_miss_ratio"),
        )
    if callable(metrics):
        row.update(metrics(run))
    elif metrics is not None:
        for name in metrics:
            row[name] = int(vm[name]) if name in vm else None
    return row


class _Progress:
    """tqdm when installed, else a one-line counter on stderr; nothing when disabled."""

    def __init__(self, total: int, enabled: bool, desc: str):
        self.total, self.n, self.t0 = total, 0, time.monotonic()
        self.bar: Any = None
        self.simple = False
        if not enabled:
            return
        try:
            from tqdm.auto import tqdm  # type: ignore

            self.bar = tqdm(total=total, desc=desc, unit="run")
        except ImportError:
            self.simple = True
            self.desc = desc

    def update(self) -> None:
        self.n += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.simple:
            rate = self.n / max(time.monotonic() - self.t0, 1e-9) * 60
            end = "\n" if self.n == self.total else ""
            print(f"\r{self.desc}: {self.n}/{self.total} runs ({rate:.1f}/min)", end=end, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _run_json(kw: Mapping[str, Any]) -> str:
    """One run, its JSON document (executed by a worker thread or a Ray task)."""
    return _mmsim.run(**kw)


def _local(kws: List[Dict[str, Any]], jobs: Optional[int]) -> Iterator[Tuple[int, str]]:
    """Run on a thread pool (the GIL is released while a simulation runs), yielding
    ``(index, json)`` as runs finish."""
    n = jobs or os.cpu_count() or 1
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="mmsim-sweep") as pool:
        futs = {pool.submit(_run_json, kw): i for i, kw in enumerate(kws)}
        pending = set(futs)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    yield futs[f], f.result()
        finally:
            for f in pending:
                f.cancel()


def _ray(
    kws: List[Dict[str, Any]],
    jobs: Optional[int],
    address: Optional[str],
    max_retries: int,
    ray_init: Optional[Mapping[str, Any]],
) -> Iterator[Tuple[int, str]]:
    """Run one Ray task per point on the cluster ``ray.init(address=...)`` connects to (a
    local Ray with ``jobs`` CPUs when not initialized and no address is given), yielding
    ``(index, json)`` as tasks finish (``ray.wait``). Tasks whose worker dies are retried
    up to ``max_retries`` times; an exception raised by a run (bad input) is not retried."""
    try:
        import ray  # type: ignore
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise OptionError('executor="ray" needs Ray: pip install "ray>=2.9"') from e
    if not ray.is_initialized():
        init: Dict[str, Any] = dict(ray_init or {})
        if address is not None:
            init.setdefault("address", address)
        elif jobs is not None:
            init.setdefault("num_cpus", jobs)
        init.setdefault("include_dashboard", False)
        init.setdefault("log_to_driver", False)
        ray.init(**init)
    task = ray.remote(num_cpus=1, max_retries=max_retries)(_run_json)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    window = max(4 * cpus, 16)  # tasks in flight: keeps every CPU busy, bounds the queue
    todo = iter(enumerate(kws))
    pending: Dict[Any, int] = {}

    def submit() -> None:
        for i, kw in todo:
            pending[task.remote(kw)] = i
            if len(pending) >= window:
                return

    submit()
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i = pending.pop(ref)
                yield i, ray.get(ref)
            submit()
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def sweep(
    base: ScenarioLike,
    grid: Optional[Mapping[str, Iterable[Any]]] = None,
    seeds: Optional[Iterable[Optional[int]]] = None,
    *,
    executor: str = "local",
    jobs: Optional[int] = None,
    progress: bool = True,
    out: Union[None, str, "os.PathLike[str]"] = None,
    metrics: Metrics = None,
    preset: str = "patched",
    features: Any = None,
    kernel: Optional[str] = None,
    policy: Optional[str] = None,
    set: Optional[Mapping[str, Any]] = None,
    check: bool = False,
    max_host_mem: Optional[Union[int, str]] = None,
    address: Optional[str] = None,
    max_retries: int = 3,
    ray_init: Optional[Mapping[str, Any]] = None,
) -> pd.DataFrame:
    """Run ``base`` at every point of ``grid`` x ``seeds`` and return one row per run.

    - ``base``: a built-in name, a TOML path or a :class:`mmsim.Scenario`;
    - ``grid``: ``{key: values}``. A dotted key is a scenario field, set as ``--set``
      would (``"machine.memory_per_node": ["64MiB", "128MiB"]``,
      ``"features.exec-protect": [True, False]``); ``preset``, ``features``, ``kernel``
      and ``policy`` are run options. Points are the Cartesian product, the first key
      varying slowest;
    - ``seeds``: seeds of every point (innermost); None runs the scenario's own seed;
    - ``executor``: ``"local"`` (a pool of ``jobs`` threads, default one per CPU; the
      GIL is released while a run runs) or ``"ray"`` (one Ray task per run on the cluster
      ``ray.init(address=address)`` connects to; without an address and with Ray not
      initialized, a local Ray of ``jobs`` CPUs, default all; ``ray_init`` adds
      ``ray.init`` arguments). Ray retries a task whose worker died up to
      ``max_retries`` times; results stream back as tasks finish;
    - ``progress``: a progress bar (tqdm when installed, else a line on stderr);
    - ``out``: the directory for each run's JSON document (``point-00042.json``; default
      a new temporary directory), named in the ``json`` column;
    - ``metrics``: extra columns: vmstat counter names, or a function ``Run -> dict``;
    - ``preset``, ``features``, ``kernel``, ``policy``, ``set``, ``check``,
      ``max_host_mem``: run options of every point (grid keys override them).

    Every point is checked before anything runs, so bad input raises ScenarioError or
    OptionError at once. The DataFrame is indexed by ``point`` (in grid order whatever
    order runs finish in) and has the grid's columns, ``seed``, the :data:`HEADLINE`
    metrics, any ``metrics`` and ``json``; it is the same for both executors.
    """
    if executor not in ("local", "ray"):
        raise OptionError(f'executor: `{executor}` (known: "local", "ray")')
    if jobs is not None and jobs < 1:
        raise OptionError(f"jobs: {jobs} (at least 1)")
    sc = _as_scenario(base)
    pts = points(grid, seeds)
    fixed = dict(
        preset=preset,
        features=features,
        kernel=kernel,
        policy=policy,
        set=set,
        check=check,
        max_host_mem=max_host_mem,
    )
    kws = [_point_kwargs(sc, p, fixed) for p in pts]
    checked = {}
    for kw in kws:  # bad input fails here, before anything runs
        key = repr(sorted((k, v) for k, v in kw.items() if k != "text"))
        if key not in checked:
            checked[key] = _prepare(kw)
    out_dir = os.fspath(out) if out is not None else tempfile.mkdtemp(prefix="mmsim-sweep-")
    os.makedirs(out_dir, exist_ok=True)
    width = max(5, len(str(len(pts) - 1)))
    rows: List[Optional[Dict[str, Any]]] = [None] * len(pts)
    bar = _Progress(len(pts), progress, f"mmsim sweep ({executor})")
    it = _local(kws, jobs) if executor == "local" else _ray(kws, jobs, address, max_retries, ray_init)
    try:
        for i, text in it:
            path = os.path.join(out_dir, f"point-{i:0{width}d}.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            row = _row(pts[i], Run(text, path=path), metrics)
            row["json"] = path
            rows[i] = row
            bar.update()
    finally:
        bar.close()
    df = pd.DataFrame(rows)
    df.index.name = "point"
    return df
