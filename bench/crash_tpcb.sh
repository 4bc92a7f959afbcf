#!/bin/sh
# Crash test under load (issue 20): clients run pgbench's TPC-B transaction
# against `tusk serve`, recording each acknowledged commit; the server is
# SIGKILLed at a random moment KILLS times (default 20) and checked after
# each restart: every acknowledged commit present, every balance equal to
# the sum of its history rows, sum(abalance) = sum(tbalance) = sum(bbalance)
# = sum(delta). See crates/tusk-cli/tests/crash_tpcb.rs.
#   bench/crash_tpcb.sh [KILLS] [SEED]
set -e
cd "$(dirname "$0")/.."
TUSK_CRASH_TPCB_KILLS=${1:-20} TUSK_CRASH_TPCB_SEED=${2:-20} \
    cargo test --release -p tusk-cli --test crash_tpcb -- --nocapture 2>&1 | grep -v '^LOG:'
