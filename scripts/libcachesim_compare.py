#!/usr/bin/env python3
"""Replay one trace under libCacheSim's textbook policies (LRU, 2Q, ARC, SIEVE, S3-FIFO)
and under mmsim's Linux page cache, at the same cache size in pages, and print the miss
ratios and the throughput side by side (measured in this run). docs/replay.md.

    scripts/libcachesim_compare.py TRACE [--format F] [--ram 64MiB] [--pages]
                                         [--memory-max 16MiB]
                                         [--cache-pages N] [--mmsim PATH] [--limit N]
                                         [--policies LRU,2Q,...] [--mmsim-policies classic,...]

The script creates its own virtual environment (scripts/.venv-libcachesim, or --venv)
and pip-installs `libcachesim` from PyPI into it on first use. mmsim runs first at --ram;
libCacheSim's cache is then the largest page cache mmsim had (nr_file_pages), unless
--cache-pages is given, so both hold the same number of pages (with --memory-max, mmsim
replays in a memory cgroup of that limit, and its page cache is bounded by it). Objects
are pages: give
one-page objects (the generator scripts/gen_trace.py writes such traces).

Block traces libCacheSim has no reader for (msr, alibaba, tencent, fiu, spc, arc,
blkparse; vscsi too with --pages) are compared page by page: `mmsim pages` writes the
pages each request touches as oracleGeneral records of 4 KiB objects, libCacheSim replays
those, and the table's miss ratios are page miss ratios on both sides (mmsim's
page_miss_ratio; libCacheSim's miss ratio over the page records). Throughput is trace
requests per second on both sides.
"""
import argparse, json, os, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def ensure_venv(venv):
    py = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if not os.path.exists(py):
        print(f"creating {venv} and installing libcachesim (once)", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", venv])
        subprocess.check_call([py, "-m", "pip", "install", "-q", "libcachesim"])
    os.execv(py, [py] + sys.argv)


def csv_params(lcs, fmt):
    """libCacheSim's reader parameters for mmsim's csv options (`csv:obj-id-col=2,...`, the
    same names as libCacheSim's -t options): columns, delimiter, header, string ids."""
    opts = {}
    spec = fmt.split(":", 1)[1] if ":" in fmt else ""
    spec = spec.replace("delimiter=,", "delimiter=comma")
    for kv in filter(None, (x.strip() for x in spec.split(","))):
        k, _, v = kv.partition("=")
        opts[k.strip()] = v.strip()
    p = lcs.ReaderInitParam()
    fields = {"time-col": "time_field", "obj-id-col": "obj_id_field",
              "obj-size-col": "obj_size_field", "op-col": "op_field"}
    p.obj_id_field = 1
    for k, attr in fields.items():
        if k in opts:
            setattr(p, attr, int(opts[k]))
    delim = opts.get("delimiter", "comma")
    p.delimiter = {"comma": ",", "tab": "\t", "\\t": "\t", "space": " "}.get(delim, delim)
    if "has-header" in opts:
        p.has_header = opts["has-header"] in ("true", "1", "yes")
        p.has_header_set = True
    if "obj-id-is-num" in opts:
        p.obj_id_is_num = opts["obj-id-is-num"] in ("true", "1", "yes")
        p.obj_id_is_num_set = True
    if "key-size-col" in opts:
        print("(key-size-col is mmsim's own: libCacheSim's objects are of the obj-size-col "
              "size alone)", file=sys.stderr)
    # mmsim replays requests of size 0 (an object of no pages: a hit); libCacheSim would
    # skip them by default.
    p.ignore_size_zero_req = False
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--format", help="mmsim's --format (default: mmsim guesses it from the name "
                                     "and first line); oracleGeneral, lcs, vscsi, txt and "
                                     "csv[:options] are read by libCacheSim itself, block "
                                     "formats page by page (--pages)")
    ap.add_argument("--pages", action="store_true",
                    help="compare a vscsi trace page by page too (the other block formats "
                         "always are)")
    ap.add_argument("--ram", help="mmsim's RAM (default 64MiB; with --memory-max, mmsim's own "
                                  "default: twice the limit, at least 256MiB)")
    ap.add_argument("--memory-max", help="replay in a memory cgroup of this memory.max (mmsim replay "
                                         "--memory-max)")
    ap.add_argument("--cache-pages", type=int, help="cache size in pages (default: mmsim's page cache)")
    ap.add_argument("--mmsim", default=os.path.join(ROOT, "target", "release", "mmsim"))
    ap.add_argument("--venv", default=os.path.join(HERE, ".venv-libcachesim"))
    ap.add_argument("--limit", type=int, help="replay at most N requests")
    ap.add_argument("--mmsim-args", default="", help="extra mmsim replay arguments (quoted)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="run each simulator this many times and keep its fastest run (short runs "
                         "are noisy; the miss ratios of every run are equal)")
    ap.add_argument("--policies", default="LRU,2Q,ARC,SIEVE,S3-FIFO",
                    help="libCacheSim policies, comma-separated (default: all five)")
    ap.add_argument("--mmsim-policies", default="classic,mglru",
                    help="mmsim reclaim policies, comma-separated (mglru needs kernel 6.1+)")
    a = ap.parse_args()
    if a.ram is None and a.memory_max is None:
        a.ram = "64MiB"
    ensure_venv(a.venv)
    import libcachesim as lcs

    if not os.path.exists(a.mmsim):
        subprocess.check_call(["cargo", "build", "--release", "-q"], cwd=ROOT)

    rows = []
    # mmsim: the Linux page cache, classic two-list LRU and MGLRU.
    pages = a.cache_pages
    n = 0
    deletes = 0
    for policy in a.mmsim_policies.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            cmd = [a.mmsim, "replay", a.trace, "--json", out, "--policy", policy]
            if a.format:
                cmd += ["--format", a.format]
            if a.ram:
                cmd += ["--ram", a.ram]
            if a.memory_max:
                cmd += ["--memory-max", a.memory_max]
            if a.limit:
                cmd += ["--limit", str(a.limit)]
            cmd += a.mmsim_args.split()
            host = wall = r = None  # the fastest run's replay time, the fastest wall time
            for _ in range(max(1, a.repeat)):
                t0 = time.time()
                if subprocess.call(cmd, stdout=subprocess.DEVNULL) != 0:
                    r = None
                    break
                w = time.time() - t0
                r = json.load(open(out))
                h = r["replay"]["host_seconds"]
                host = h if host is None else min(host, h)
                wall = w if wall is None else min(wall, w)
            if r is None:
                print(f"mmsim {policy}: failed (skipped)", file=sys.stderr)
                continue
        rp = r["replay"]
        t = rp["tasks"][0]
        pages = pages or rp["cache_pages_max"]
        n = t["requests"]
        deletes = t.get("deletes", 0)
        fmt = t["format"]
        rows.append((f"mmsim {r['kernel']} {policy}", t, n / host, n / wall))
    if not rows:
        sys.exit("mmsim failed on every policy (run its replay command alone to see why)")

    types = {
        "oraclegeneral": lcs.TraceType.ORACLE_GENERAL_TRACE,
        "lcs": lcs.TraceType.LCS_TRACE,
        "vscsi": lcs.TraceType.VSCSI_TRACE,
        "txt": lcs.TraceType.PLAIN_TXT_TRACE,
        "csv": lcs.TraceType.CSV_TRACE,
    }
    base = fmt.split(":")[0].lower()
    by_pages = base not in types or (a.pages and base == "vscsi")
    if a.pages and base in ("oraclegeneral", "lcs", "txt", "csv"):
        sys.exit(f"--pages: {fmt} is an object trace (its objects are what libCacheSim caches)")
    # The miss ratios the table shows: page miss ratios of a trace compared page by page,
    # else mmsim's request (object) miss ratio beside libCacheSim's.
    rows = [(name, t["page_miss_ratio"] if by_pages else t["request_miss_ratio"],
             t["byte_miss_ratio"], rate, wall_rate) for name, t, rate, wall_rate in rows]
    tt = lcs.TraceType.ORACLE_GENERAL_TRACE if by_pages else types[base]
    known = {"LRU": lcs.LRU, "2Q": lcs.TwoQ, "ARC": lcs.ARC, "SIEVE": lcs.Sieve, "S3-FIFO": lcs.S3FIFO}
    policies = []
    for name in a.policies.split(","):
        if name not in known:
            sys.exit(f"--policies: unknown policy {name!r} (one of {', '.join(known)})")
        policies.append((name, known[name]))
    # libCacheSim reads zstd-compressed traces itself, not gzip ones: a gzip trace is
    # decompressed into a temporary file for it (mmsim reads both).
    lcs_trace = a.trace
    with open(a.trace, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b" and not by_pages
    if by_pages:
        # The pages each request touches, as oracleGeneral records (mmsim's reader).
        tmp_trace = tempfile.NamedTemporaryFile(prefix="lcs-pages-", suffix=".oracleGeneral",
                                                delete=False)
        tmp_trace.close()
        cmd = [a.mmsim, "pages", a.trace, tmp_trace.name, "--format", fmt]
        if a.limit:
            cmd += ["--limit", str(a.limit)]
        subprocess.check_call(cmd, stdout=subprocess.DEVNULL)
        lcs_trace = tmp_trace.name
    elif gzipped:
        import gzip
        import shutil
        tmp_trace = tempfile.NamedTemporaryFile(prefix="lcs-trace-", delete=False)
        with gzip.open(a.trace, "rb") as src, tmp_trace:
            shutil.copyfileobj(src, tmp_trace)
        lcs_trace = tmp_trace.name
    params = None
    if tt == lcs.TraceType.CSV_TRACE:
        params = csv_params(lcs, fmt)
    for name, cls in policies:
        # libCacheSim's txt traces (and csv without a size column) have objects of size
        # 1: the cache size is then a number of objects, one per page.
        sized = tt in (lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.TraceType.LCS_TRACE, lcs.TraceType.VSCSI_TRACE) or "obj-size-col" in fmt
        dt = None
        for _ in range(max(1, a.repeat)):
            reader = lcs.TraceReader(trace=lcs_trace, trace_type=tt, reader_init_params=params)
            cache = cls(cache_size=pages * 4096 if sized else pages)
            t0 = time.time()
            obj_mr, byte_mr = cache.process_trace(reader, max_req=-1 if by_pages else a.limit or -1)
            d = time.time() - t0
            dt = d if dt is None else min(dt, d)
        rows.append((f"libCacheSim {name}", obj_mr, byte_mr, n / dt, n / dt))

    if gzipped or by_pages:
        os.unlink(lcs_trace)
    lru_rate = next((r[3] for r in rows if r[0] == "libCacheSim LRU"), rows[-1][3])
    bound = f"mmsim RAM {a.ram or 'default'}" + (f", memory.max {a.memory_max}" if a.memory_max else "")
    print(f"trace {a.trace}: {n} requests, cache {pages} pages ({pages * 4096 / 2**20:.1f} MiB), {bound}")
    print(f"{'policy':34} {'page miss' if by_pages else 'miss ratio':>10} {'byte miss':>10} "
          f"{'req/s':>12} {'vs LRU':>7}")
    for name, mr, bmr, rate, _ in rows:
        print(f"{name:34} {mr:10.4f} {bmr:10.4f} {rate:12.0f} {rate / lru_rate:6.2f}x")
    print("(mmsim req/s: the replay's own host time, without loading the trace; "
          f"with process start and the first pass: {rows[0][4]:.0f}/s. "
          f"Each simulator's fastest of {max(1, a.repeat)} runs.)")
    if by_pages:
        print(f"({fmt} compared page by page: libCacheSim replayed the 4 KiB pages each "
              "request touches (mmsim pages); its req/s are the trace's requests per second.)")
    if deletes:
        print(f"(The trace deletes objects {deletes} times: mmsim drops the object's pages and "
              "leaves the deletes out of its miss ratio; libCacheSim's process_trace reads "
              "a delete as a get. docs/replay.md, Deletes.)")


if __name__ == "__main__":
    main()
