#!/usr/bin/env python3
"""GIL release: the wall time of one run, of two runs one after the other, and of two runs
in two Python threads (docs/python.md). With the GIL released while a simulation runs, two
threads on two free cores take about the time of one run.

    python python/benchmarks/gil.py [--scenario dd-tmpfs] [--memory 1GiB] [--repeat 3]
"""

import argparse
import os
import threading
import time

import mmsim


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="dd-tmpfs")
    ap.add_argument("--memory", default="1GiB")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    kw = dict(set={"machine.memory_per_node": a.memory})

    def one():
        return mmsim.run(a.scenario, **kw)

    one()  # warm up
    rows = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        r1 = one()
        t_one = time.perf_counter() - t0

        t0 = time.perf_counter()
        one()
        one()
        t_seq = time.perf_counter() - t0

        out = [None, None]
        cpu = [0.0, 0.0]

        def work(i):
            c0 = time.thread_time()
            out[i] = one()
            cpu[i] = time.thread_time() - c0

        ths = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        t0 = time.perf_counter()
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        t_two = time.perf_counter() - t0
        assert out[0].json == out[1].json == r1.json
        rows.append((t_one, t_seq, t_two, sum(cpu) / t_two))
    best = [min(c) for c in zip(*rows)]
    par = max(r[3] for r in rows)
    print(f"scenario {a.scenario} memory {a.memory}, {os.cpu_count()} CPUs, best of {a.repeat}, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"  one run                    {best[0]:.3f} s")
    print(f"  two runs, one after other  {best[1]:.3f} s")
    print(f"  two runs in two threads    {best[2]:.3f} s  ({best[2] / best[0]:.2f}x one run, "
          f"speed-up {best[1] / best[2]:.2f}x over sequential)")
    print(f"  CPU time of the two threads / wall time: {par:.2f} (1.0: one at a time; 2.0: both all along)")


if __name__ == "__main__":
    main()
