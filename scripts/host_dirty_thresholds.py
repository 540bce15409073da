#!/usr/bin/env python3
"""Check the kernel's dirty thresholds against the formula mmsim models.

Reads /proc/vmstat (nr_dirty_threshold, nr_dirty_background_threshold, nr_free_pages and
the file LRU) and /proc/zoneinfo (totalreserve_pages: each zone's high watermark plus the
largest entry of its protection, at most its managed pages), and prints the thresholds
the running kernel reports beside global_dirty_limits of 4.2 and later (free less the
reserve, plus the file LRU, plus one; the ratios in 1/4096 units) and beside a plain
percentage of free + file pages. Byte settings (vm.dirty_bytes) are taken as the kernel
takes them. No root needed to read; set the sysctls first to check other ratios:

    echo 2 | sudo tee /proc/sys/vm/dirty_ratio
    echo 1 | sudo tee /proc/sys/vm/dirty_background_ratio
    python3 scripts/host_dirty_thresholds.py

docs/EXPERIMENTS.md, "Dirty thresholds against a real kernel".
"""
import re
import sys

PAGE_SIZE = 4096


def read_int(path):
    with open(path) as f:
        return int(f.read())


def vmstat():
    with open("/proc/vmstat") as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def totalreserve_pages():
    """calculate_totalreserve_pages from /proc/zoneinfo."""
    with open("/proc/zoneinfo") as f:
        text = f.read()
    total = 0
    for block in re.split(r"\nNode ", "\n" + text):
        high = re.search(r"\n\s+high\s+(\d+)", block)
        managed = re.search(r"\n\s+managed\s+(\d+)", block)
        prot = re.search(r"protection: \(([^)]*)\)", block)
        if not (high and managed and prot):
            continue
        # lowmem_reserve[j] of the zones above this one (the entries below it are 0).
        reserve = max(int(x) for x in prot.group(1).split(",")) + int(high.group(1))
        total += min(reserve, int(managed.group(1)))
    return total


def threshold(bytes_, ratio, avail):
    if bytes_:
        return -(-bytes_ // PAGE_SIZE)
    return (ratio * PAGE_SIZE // 100) * avail // PAGE_SIZE


def main():
    try:
        v = vmstat()
        reserve = totalreserve_pages()
        sysctl = {
            k: read_int(f"/proc/sys/vm/{k}")
            for k in ("dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes")
        }
    except (OSError, ValueError) as e:
        print(f"host_dirty_thresholds: {e}", file=sys.stderr)
        return 2
    free = v["nr_free_pages"]
    file_lru = v["nr_inactive_file"] + v["nr_active_file"]
    avail = free - min(free, reserve) + file_lru + 1
    thresh = threshold(sysctl["dirty_bytes"], sysctl["dirty_ratio"], avail)
    bg = threshold(sysctl["dirty_background_bytes"], sysctl["dirty_background_ratio"], avail)
    if bg >= thresh:
        bg = thresh // 2
    plain = (free + file_lru) * sysctl["dirty_ratio"] // 100
    print(f"vm.dirty_ratio {sysctl['dirty_ratio']}, dirty_background_ratio {sysctl['dirty_background_ratio']}, "
          f"dirty_bytes {sysctl['dirty_bytes']}, dirty_background_bytes {sysctl['dirty_background_bytes']}")
    print(f"totalreserve_pages {reserve}, free {free}, file LRU {file_lru}, dirtyable {avail}")
    print(f"host   nr_dirty_threshold {v['nr_dirty_threshold']}, nr_dirty_background_threshold {v['nr_dirty_background_threshold']}")
    print(f"4.2+   nr_dirty_threshold {thresh}, nr_dirty_background_threshold {bg}")
    print(f"plain  nr_dirty_threshold {plain} (dirty_ratio % of free + file, no reserve)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
