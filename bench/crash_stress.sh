#!/bin/sh
# Crash stress: TRIALS fresh data directories (default 100), each crashed
# ROUNDS times (default 3) by SIGKILL at a random moment of a random
# workload (bulk load, INSERT, DELETE, CREATE TABLE AS, DROP TABLE,
# CREATE INDEX, VACUUM, CHECKPOINT), restarted and checked. See
# crates/tusk-cli/tests/crash.rs.
#   bench/crash_stress.sh [TRIALS] [ROUNDS] [SEED]
set -e
cd "$(dirname "$0")/.."
TUSK_CRASH_TRIALS=${1:-100} TUSK_CRASH_ROUNDS=${2:-3} TUSK_CRASH_SEED=${3:-1000} \
    cargo test --release -p tusk-cli --test crash -- --nocapture 2>&1 | grep -v '^LOG:'
