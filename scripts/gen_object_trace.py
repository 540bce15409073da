#!/usr/bin/env python3
"""Write a synthetic object trace: Zipf(alpha) popularity over N objects in a shuffled
order, the object trace of docs/replay.md, "Against a real kernel" (200,000 objects,
1,000,000 requests, alpha 0.9: 149,249 objects touched).

By default libCacheSim's txt format (one object id per line). With --sets or --deletes,
a key-value cache's trace instead: csv lines `id,size,op` (op `get`, `set` or `delete`,
each request drawn with those probabilities; size --size bytes), read with
`--format csv:obj-id-col=1,obj-size-col=2,op-col=3` (docs/replay.md, Deletes).

Usage: gen_object_trace.py OUT [--objects 200000] [--requests 1000000] [--alpha 0.9]
       [--seed 1] [--sets 0.05] [--deletes 0.05] [--size 4096]"""
import argparse, bisect, random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--objects", type=int, default=200_000)
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sets", type=float, default=None, help="fraction of set requests (csv)")
    ap.add_argument("--deletes", type=float, default=None, help="fraction of deletes (csv)")
    ap.add_argument("--size", type=int, default=4096, help="object size in bytes (csv)")
    a = ap.parse_args()
    kv = a.sets is not None or a.deletes is not None
    sets, deletes = a.sets or 0.0, a.deletes or 0.0
    if not (0 <= sets and 0 <= deletes and sets + deletes <= 1):
        ap.error("--sets and --deletes are fractions summing to at most 1")
    if a.size < 1:
        ap.error("--size must be at least 1 byte")
    r = random.Random(a.seed)
    c, s = [], 0.0
    for k in range(a.objects):
        s += 1 / (k + 1) ** a.alpha
        c.append(s)
    perm = list(range(a.objects))
    r.shuffle(perm)
    with open(a.out, "w") as out:
        for _ in range(a.requests):
            obj = perm[bisect.bisect(c, r.random() * s)]
            if not kv:
                out.write("%d\n" % obj)
                continue
            u = r.random()
            op = "delete" if u < deletes else "set" if u < deletes + sets else "get"
            out.write("%d,%d,%s\n" % (obj, a.size, op))


if __name__ == "__main__":
    main()
