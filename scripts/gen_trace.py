#!/usr/bin/env python3
"""Write a synthetic oracleGeneral trace (24-byte records: u32 time, u64 id, u32 size,
i64 next access): Zipf(alpha) popularity over N one-page objects, one request per ms.
Usage: gen_trace.py OUT [--requests 1000000] [--objects 100000] [--alpha 0.9] [--seed 1]"""
import argparse, bisect, random, struct

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--objects", type=int, default=100_000)
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    cum, total = [], 0.0
    for k in range(1, a.objects + 1):
        total += 1.0 / k ** a.alpha
        cum.append(total)
    rec = struct.Struct("<IQIq")
    with open(a.out, "wb") as f:
        buf = bytearray()
        for i in range(a.requests):
            obj = bisect.bisect_left(cum, rng.random() * total)
            # Scatter popular ids so that ids say nothing about popularity.
            oid = (obj * 2654435761) % (1 << 32)
            buf += rec.pack(i // 1000, oid, a.size, -1)
            if len(buf) > 1 << 20:
                f.write(buf)
                buf.clear()
        f.write(buf)

if __name__ == "__main__":
    main()
