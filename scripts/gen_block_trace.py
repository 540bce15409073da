#!/usr/bin/env python3
"""Write a synthetic MSR Cambridge block trace (Timestamp,Hostname,DiskNumber,Type,Offset,
Size,ResponseTime) over one disk of 256 MiB (65,536 pages): the traces of docs/replay.md,
"Against a real kernel".

  uniform  200,000 random 4 KiB reads
  zipf     300,000 4 KiB reads, Zipf(0.9) popularity over the pages in a shuffled order
  hotscan  300,000 requests: three in four a random 4 KiB read of the first 32 MiB, one in
           four the next 64 KiB of a cyclic sequential scan of the other 224 MiB

Usage: gen_block_trace.py uniform|zipf|hotscan OUT [--seed 1]"""
import argparse, bisect, random

PAGES = 65536  # 256 MiB


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["uniform", "zipf", "hotscan"])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = random.Random(a.seed)
    t = 128166372000000000
    with open(a.out, "w") as out:
        def rec(off, size):
            nonlocal t
            t += 1000
            out.write("%d,h,0,Read,%d,%d,100\n" % (t, off, size))

        if a.kind == "uniform":
            for _ in range(200000):
                rec(r.randrange(PAGES) * 4096, 4096)
        elif a.kind == "hotscan":
            scan = 8192
            for i in range(300000):
                if i % 4 == 3:
                    rec(scan * 4096, 65536)
                    scan += 16
                    if scan >= PAGES:
                        scan = 8192
                else:
                    rec(r.randrange(8192) * 4096, 4096)
        else:
            w = [1 / (k + 1) ** 0.9 for k in range(PAGES)]
            c, s = [], 0.0
            for x in w:
                s += x
                c.append(s)
            perm = list(range(PAGES))
            r.shuffle(perm)
            for _ in range(300000):
                rec(perm[bisect.bisect(c, r.random() * s)] * 4096, 4096)


if __name__ == "__main__":
    main()
