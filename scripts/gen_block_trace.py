#!/usr/bin/env python3
"""Write a synthetic MSR Cambridge block trace (Timestamp,Hostname,DiskNumber,Type,Offset,
Size,ResponseTime) over one disk of 256 MiB (65,536 pages): the traces of docs/replay.md,
"Against a real kernel".

  uniform  200,000 random 4 KiB reads
  zipf     300,000 4 KiB reads, Zipf(0.9) popularity over the pages in a shuffled order
  hotscan  300,000 requests: three in four a random 4 KiB read of the first 32 MiB, one in
           four the next 64 KiB of a cyclic sequential scan of the other 224 MiB
  zipfw    200,000 4 KiB requests, Zipf(0.9) over the first 64 MiB in a shuffled order,
           30 % of them writes
  unifw    150,000 random 4 KiB requests over the first 32 MiB, half of them writes
  seqw     150,000 requests: one in three the next 64 KiB write of a stream cycling over
           128 MiB from 256 MiB, two in three a random 4 KiB read of the first 16 MiB

(The write mixes of docs/replay.md, "cgroup v1" and "Through a shared mapping", were
written with --seed 7.)

Usage: gen_block_trace.py uniform|zipf|hotscan|zipfw|unifw|seqw OUT [--seed 1]"""
import argparse, bisect, random

PAGES = 65536  # 256 MiB


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["uniform", "zipf", "hotscan", "zipfw", "unifw", "seqw"])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = random.Random(a.seed)
    t = 128166372000000000
    with open(a.out, "w") as out:
        def rec(off, size, write=False):
            nonlocal t
            t += 1000
            op = "Write" if write else "Read"
            out.write("%d,h,0,%s,%d,%d,100\n" % (t, op, off, size))

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
        elif a.kind == "zipfw":
            n = 16384
            perm = list(range(n))
            r.shuffle(perm)
            c, s = [], 0.0
            for k in range(n):
                s += 1 / (k + 1) ** 0.9
                c.append(s)
            for _ in range(200000):
                k = bisect.bisect(c, r.random() * s)
                write = r.random() < 0.3
                rec(perm[min(k, n - 1)] * 4096, 4096, write)
        elif a.kind == "unifw":
            for _ in range(150000):
                write = r.random() < 0.5
                rec(r.randrange(8192) * 4096, 4096, write)
        elif a.kind == "seqw":
            pos = 0
            for i in range(150000):
                if i % 3 == 0:
                    rec((1 << 28) + pos, 65536, True)
                    pos = (pos + 65536) % (128 << 20)
                else:
                    rec(r.randrange(4096) * 4096, 4096)
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
