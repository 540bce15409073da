#!/bin/bash
# Two trace replays on this machine's kernel at once, each in a memory cgroup of its own
# below a parent that holds one limit (docs/replay.md, "Two cgroups under one limit").
#
#   scripts/host_pair.sh [options] TRACE_A TRACE_B OUT_PREFIX
#
#   --limit SIZE          the parent's limit (default 64MiB)
#   --readahead-kb N      the directory's device's read_ahead_kb for the run (default 0;
#                         restored after)
#   --dir DIR             where the replays' files go: DIR/a and DIR/b (default
#                         /var/tmp/mmsim-pair)
#   --a "ARGS" / --b "ARGS"  more host_replay arguments for one side (e.g. "--format txt
#                         --limit 300000", "--memory-max 24MiB"); the format is guessed from
#                         the file name otherwise
#
# Writes OUT_PREFIX-a.json and OUT_PREFIX-b.json (host_replay's reports). Needs root,
# Linux, a memory cgroup hierarchy (v2, or v1's memory controller) and
# `cargo build --release --example host_replay`. Run it on an idle machine.
set -euo pipefail

limit=64MiB ra=0 dir=/var/tmp/mmsim-pair a_args="" b_args=""
while [[ $# -gt 0 && $1 == --* ]]; do
    case $1 in
        --limit) limit=$2; shift 2 ;;
        --readahead-kb) ra=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --a) a_args=$2; shift 2 ;;
        --b) b_args=$2; shift 2 ;;
        *) echo "host_pair.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
if [[ $# -ne 3 ]]; then
    sed -n '2,20p' "$0" >&2
    exit 2
fi
trace_a=$1 trace_b=$2 out=$3
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${HOST_REPLAY:-$here/target/release/examples/host_replay}
[[ -x $bin ]] || { echo "host_pair.sh: $bin: build it with cargo build --release --example host_replay" >&2; exit 2; }

bytes=$(python3 - "$limit" <<'PY'
import re, sys
m = re.fullmatch(r"(\d+)\s*(KiB|MiB|GiB|K|M|G)?", sys.argv[1].strip())
if not m:
    print(f"host_pair.sh: --limit {sys.argv[1]}: a size like 64MiB (or 64M, or bytes)", file=sys.stderr)
    sys.exit(2)
unit = {"K": 10, "M": 20, "G": 30}
print(int(m.group(1)) << unit.get((m.group(2) or " ")[0], 0))
PY
)
if [[ -e /sys/fs/cgroup/cgroup.controllers ]]; then
    root=/sys/fs/cgroup limit_file=memory.max
    echo +memory > $root/cgroup.subtree_control 2>/dev/null || true
else
    root=/sys/fs/cgroup/memory limit_file=memory.limit_in_bytes
fi
parent=mmsim-pair-$$
old_ra="" ra_file="" go=""
cleanup() {
    [[ -n $old_ra ]] && echo "$old_ra" > "$ra_file"
    [[ -n $go ]] && rm -f "$go"
    rmdir "$root/$parent" 2>/dev/null || true
}
trap cleanup EXIT
mkdir "$root/$parent"
echo "$bytes" > "$root/$parent/$limit_file"
[[ -e /sys/fs/cgroup/cgroup.controllers ]] && echo +memory > "$root/$parent/cgroup.subtree_control"
mkdir -p "$dir/a" "$dir/b"
dev=$(stat -c '%d' "$dir")
sys=/sys/dev/block/$((dev >> 8)):$((dev & 255))
ra_file=$sys/queue/read_ahead_kb
[[ -e $ra_file ]] || ra_file=$sys/../queue/read_ahead_kb
old_ra=$(cat "$ra_file")
go=$(mktemp -u /tmp/host-pair-go.XXXXXX)
echo "$ra" > "$ra_file"

# shellcheck disable=SC2086
"$bin" "$trace_a" $a_args --parent "$parent" --no-drop-caches --wait-for "$go" \
    --dir "$dir/a" --json "$out-a.json" > /dev/null &
pa=$!
# shellcheck disable=SC2086
"$bin" "$trace_b" $b_args --parent "$parent" --no-drop-caches --wait-for "$go" \
    --dir "$dir/b" --json "$out-b.json" > /dev/null &
pb=$!
# Both set up (files written, trace read, cgroup made): one sync and drop for both, go.
while [[ $(find "$root/$parent" -maxdepth 1 -name 'mmsim-host-*' | wc -l) -lt 2 ]]; do
    kill -0 $pa 2>/dev/null && kill -0 $pb 2>/dev/null || { echo "host_pair.sh: a replay failed to start" >&2; exit 1; }
    sleep 0.5
done
sync
echo 3 > /proc/sys/vm/drop_caches
touch "$go"
wait $pa
wait $pb
python3 - "$out" <<'EOF'
import json, sys
for side in "ab":
    d = json.load(open(f"{sys.argv[1]}-{side}.json"))
    cg = d["cgroup_stat"]
    print(f"{side}: {d['trace']}: page miss ratio {d['page_miss_ratio']:.4f}, "
          f"refaults {cg.get('workingset_refault_file', 0)}, {d['host_seconds']:.2f} s")
EOF
