#!/usr/bin/env python3
"""GIL release: the wall time of one run, of two runs one after the other, of two runs in
two Python threads, and (the control) of two runs in two processes (docs/python.md). With
the GIL released while a simulation runs, two threads on two free cores take about the
time of one run, as two processes do.

    python python/benchmarks/gil.py [--scenario desktop] [--memory SIZE] [--repeat 3]

Each line is the best of --repeat. The machine's load average is printed with them, and
the CPU time each run got over its wall time: on a machine shared with other work, two
threads and two processes are slowed alike (the control tells the load from the GIL).
"""

import argparse
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import mmsim


def _run(scenario, kw):
    """One run; its wall and thread CPU time (in a worker process for the control)."""
    t0, c0 = time.perf_counter(), time.thread_time()
    r = mmsim.run(scenario, **kw)
    return r.event_hash, time.perf_counter() - t0, time.thread_time() - c0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="desktop", help="a built-in or a TOML file (default: desktop, ~5 s)")
    ap.add_argument("--memory", default=None, help="machine.memory_per_node (default: the scenario's)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    kw = dict(set={"machine.memory_per_node": a.memory} if a.memory else None)

    def one():
        return _run(a.scenario, kw)

    load0 = os.getloadavg()[0]
    ref = one()[0]  # warm up
    rows = []
    with ProcessPoolExecutor(max_workers=2) as procs:
        list(procs.map(_run, [a.scenario] * 2, [kw] * 2))  # start the workers, import mmsim
        for _ in range(a.repeat):
            h, t_one, c_one = one()
            assert h == ref

            t0 = time.perf_counter()
            one()
            one()
            t_seq = time.perf_counter() - t0

            out = [None, None]

            def work(i):
                out[i] = one()

            ths = [threading.Thread(target=work, args=(i,)) for i in range(2)]
            t0 = time.perf_counter()
            for t in ths:
                t.start()
            for t in ths:
                t.join()
            t_two = time.perf_counter() - t0
            assert out[0][0] == out[1][0] == ref
            cpu_two = sum(o[2] for o in out) / t_two

            t0 = time.perf_counter()
            res = list(procs.map(_run, [a.scenario] * 2, [kw] * 2))
            t_proc = time.perf_counter() - t0
            assert all(r[0] == ref for r in res)
            cpu_proc = sum(r[2] for r in res) / t_proc
            rows.append((t_one, t_seq, t_two, t_proc, c_one / t_one, cpu_two, cpu_proc))
    best = [min(c) for c in zip(*rows[:])][:4] + [max(c) for c in zip(*rows)][4:]
    t_one, t_seq, t_two, t_proc, u_one, u_two, u_proc = best
    print(f"scenario {a.scenario} memory {a.memory or '(its own)'}, {os.cpu_count()} CPUs, "
          f"best of {a.repeat}, load average before {load0:.2f}, after {os.getloadavg()[0]:.2f}")
    print(f"  one run                      {t_one:.3f} s   (CPU/wall {u_one:.2f})")
    print(f"  two runs, one after other    {t_seq:.3f} s")
    print(f"  two runs in two threads      {t_two:.3f} s   ({t_two / t_one:.2f}x one run, "
          f"{t_seq / t_two:.2f}x faster than one after other; CPU/wall {u_two:.2f})")
    print(f"  two runs in two processes    {t_proc:.3f} s   ({t_proc / t_one:.2f}x one run; CPU/wall {u_proc:.2f})")
    print("  (CPU/wall: CPU time of the runs over wall time; 1.0 one core busy, 2.0 both)")


if __name__ == "__main__":
    main()
