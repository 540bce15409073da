#!/usr/bin/env python3
"""A sweep of N small runs on the local executor (threads) and on a local Ray (docs/python.md):
wall time and points per minute of each, and a check that both give the same DataFrame.

    python python/benchmarks/ray_vs_local.py [--points 200] [--jobs 2]
"""

import argparse
import os
import time

import pandas as pd

import mmsim


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--scenario", default="hot-stream")
    a = ap.parse_args()
    sizes = ["24MiB", "32MiB", "40MiB", "48MiB", "64MiB"]
    presets = ["vanilla", "patched"]
    nseeds = -(-a.points // (len(sizes) * len(presets)))
    grid = {"machine.memory_per_node": sizes, "preset": presets}
    seeds = range(1, nseeds + 1)
    n = len(mmsim.points(grid, seeds))
    print(f"{n} points of {a.scenario} ({len(sizes)} sizes x {len(presets)} presets x {nseeds} seeds), "
          f"{a.jobs} jobs, {os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.2f}")
    res = {}
    for ex in ("local", "ray"):
        if ex == "ray":
            import ray

            t0 = time.perf_counter()
            ray.init(num_cpus=a.jobs, include_dashboard=False, log_to_driver=False)
            print(f"ray.init: {time.perf_counter() - t0:.1f} s (not counted)")
        t0 = time.perf_counter()
        df = mmsim.sweep(a.scenario, grid=grid, seeds=seeds, executor=ex, jobs=a.jobs, progress=False)
        wall = time.perf_counter() - t0
        res[ex] = (df, wall)
        print(f"{ex:5s}: {n} points in {wall:.1f} s = {n / wall * 60:.0f} points/minute")
    pd.testing.assert_frame_equal(res["local"][0].drop(columns="json"), res["ray"][0].drop(columns="json"))
    print(f"identical DataFrames; ray/local wall time {res['ray'][1] / res['local'][1]:.2f}; "
          f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
