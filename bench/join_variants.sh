#!/usr/bin/env bash
# Every variant issue 5 asks for, each as one `bench/run.py join` run (reports
# land in bench/results/join-<label>-*.md):
#   all-systems      tusk, PostgreSQL 15, DuckDB, DataFusion, Polars; dense and
#                    sparse keys; 1 and 2 threads
#   prefetch-off     tusk with tusk.hash_join_prefetch = off
#   chunk-32kB/128kB tusk with tusk.hash_chunk_size = 32kB / 128kB
#   fresh-segments   tusk without the min_dynamic_shared_memory pool (every
#                    query maps, and faults in, fresh segments)
#   huge-pages       tusk with huge_pages = try and HUGEPAGES huge pages reserved
#                    for the run (needs root; skipped when HUGEPAGES is unset;
#                    shared_buffers 2GB + the 1GB pool need 1536)
#   skew             Zipf(1.0) build keys and one key repeated 1M times, tusk and PostgreSQL
#
# Usage: bench/join_variants.sh [extra run.py join options, e.g. --tusk-bin PATH]
# Environment: ROWS (default 10000000), RUNS (default 5), HUGEPAGES (e.g. 2048).
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS="${ROWS:-10000000}"
RUNS="${RUNS:-5}"
run() { python3 bench/run.py join --rows "$ROWS" --runs "$RUNS" "$@"; }

run --label all-systems "$@"
run --systems tusk --label prefetch-off --tusk-set tusk.hash_join_prefetch=off "$@"
run --systems tusk --label chunk-32kB --tusk-set tusk.hash_chunk_size=32kB "$@"
run --systems tusk --label chunk-128kB --tusk-set tusk.hash_chunk_size=128kB "$@"
run --systems tusk --label fresh-segments --tusk-conf min_dynamic_shared_memory=0 "$@"
if [ -n "${HUGEPAGES:-}" ]; then
    before="$(cat /proc/sys/vm/nr_hugepages)"
    trap 'echo "$before" > /proc/sys/vm/nr_hugepages' EXIT
    echo "$HUGEPAGES" > /proc/sys/vm/nr_hugepages
    run --systems tusk --label huge-pages --tusk-conf huge_pages=try "$@"
    echo "$before" > /proc/sys/vm/nr_hugepages
    trap - EXIT
else
    echo "join_variants: HUGEPAGES not set, huge-page variants skipped" >&2
fi
run --systems tusk,postgres --keys zipf,hot --label skew "$@"
