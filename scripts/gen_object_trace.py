#!/usr/bin/env python3
"""Write a synthetic object trace in libCacheSim's txt format (one object id per line):
Zipf(alpha) popularity over N objects in a shuffled order, the object trace of
docs/replay.md, "Against a real kernel" (200,000 objects, 1,000,000 requests, alpha 0.9:
149,249 objects touched).

Usage: gen_object_trace.py OUT [--objects 200000] [--requests 1000000] [--alpha 0.9]
       [--seed 1]"""
import argparse, bisect, random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--objects", type=int, default=200_000)
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = random.Random(a.seed)
    c, s = [], 0.0
    for k in range(a.objects):
        s += 1 / (k + 1) ** a.alpha
        c.append(s)
    perm = list(range(a.objects))
    r.shuffle(perm)
    with open(a.out, "w") as out:
        for _ in range(a.requests):
            out.write("%d\n" % perm[bisect.bisect(c, r.random() * s)])


if __name__ == "__main__":
    main()
