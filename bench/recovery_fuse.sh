#!/usr/bin/env bash
# Recovery on storage with latency: mounts bench/latencyfs (tusk-latencyfs, a
# FUSE pass-through file system that answers every read a fixed latency
# after it arrived, any number at once — storage like the cloud block device
# of seed 001's measurements) and runs
#
#   recovery   recovery_bench, building the crashed data directory on the
#              local disk and recovering each copy on the mount (--run-dir)
#   probe      uring_probe with its file on the mount (what the layer itself
#              does: reads/s with pread and io_uring at several depths)
#
# then unmounts, also on error or Ctrl-C.
#
#   bench/recovery_fuse.sh [--latency-ms MS] [--fs-arg ARG]... recovery|probe [ARGS...]
#
# ARGS go to the example (e.g. --runs 3, --only O_DIRECT, --reads 4000);
# --fs-arg passes an option to tusk-latencyfs (e.g. --fs-arg --write-through).
# Time it under the benchmark lock, as every benchmark here:
#
#   flock /tmp/tusk-bench.lock bench/recovery_fuse.sh --latency-ms 1 recovery --runs 3
#
# Installs fuse3 (fusermount3) with apt-get when it is missing. Working
# files go to $TUSK_FUSE_WORK (default ${TMPDIR:-/tmp}/tusk-fuse-bench).
set -euo pipefail
cd "$(dirname "$0")/.."

latency=1
fs_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --latency-ms) latency=$2; shift 2 ;;
        --fs-arg) fs_args+=("$2"); shift 2 ;;
        *) break ;;
    esac
done
what=${1:-}
case "$what" in
    recovery|probe) shift ;;
    *) sed -n '2,/^set -e/p' "$0" | sed '$d' >&2; exit 2 ;;
esac

if [ ! -e /dev/fuse ]; then
    echo "recovery_fuse.sh: no /dev/fuse on this machine" >&2
    exit 1
fi
# As root the daemon mounts with mount(2); fusermount3 is what it falls back
# to (and what an unprivileged user needs).
if ! command -v fusermount3 >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y fuse3 >/dev/null 2>&1 ||
            { apt-get update >/dev/null && apt-get install -y fuse3 >/dev/null; }
    else
        echo "recovery_fuse.sh: fusermount3 missing; install the fuse3 package" >&2
        exit 1
    fi
fi

# Two builds: `--example` selects only examples in every package named
# with it, so one command would leave out the file system's binary.
cargo build --release -q -p tusk-latencyfs --bin tusk-latencyfs
cargo build --release -q -p tusk-storage --example recovery_bench --example uring_probe

work=${TUSK_FUSE_WORK:-${TMPDIR:-/tmp}/tusk-fuse-bench}
backing=$work/backing
mnt=$work/mnt
log=$work/latencyfs.log
mkdir -p "$work"

unmount() {
    if mountpoint -q "$mnt" 2>/dev/null; then
        umount "$mnt" 2>/dev/null || fusermount3 -u "$mnt" 2>/dev/null ||
            umount -l "$mnt" 2>/dev/null || fusermount3 -u -z "$mnt" || true
    fi
}
# A mount left behind by a killed run.
unmount
rm -rf "$backing"
mkdir -p "$backing" "$mnt"

target/release/tusk-latencyfs --backing "$backing" --mount "$mnt" \
    --read-latency-ms "$latency" "${fs_args[@]}" 2>"$log" &
daemon=$!
cleanup() {
    unmount
    wait "$daemon" 2>/dev/null || true
    cat "$log" >&2
    rm -rf "$backing"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for _ in $(seq 200); do
    mountpoint -q "$mnt" && break
    kill -0 "$daemon" 2>/dev/null || { echo "tusk-latencyfs did not start" >&2; exit 1; }
    sleep 0.05
done
mountpoint -q "$mnt" || { echo "tusk-latencyfs did not mount $mnt" >&2; exit 1; }
# What the kernel took from the daemon's INIT reply.
conn=/sys/fs/fuse/connections/$(stat -c %d "$mnt")
if [ -d "$conn" ]; then
    echo "fuse connection: max_background $(cat "$conn/max_background")," \
        "congestion_threshold $(cat "$conn/congestion_threshold")" >&2
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

case "$what" in
    recovery)
        target/release/examples/recovery_bench "$@" \
            --dir "$work/local" --run-dir "$mnt/run"
        rm -rf "$work/local"
        ;;
    probe)
        target/release/examples/uring_probe "$@" --file "$mnt/probe.dat"
        ;;
esac
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
