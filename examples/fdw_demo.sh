#!/usr/bin/env bash
# Growing past one machine with an existing engine: a PostgreSQL 15
# coordinator whose partitioned table `sales` has its partitions on two
# `tusk serve` nodes, reached through postgres_fdw.
#
#   coordinator (PostgreSQL 15)          tusk node 1          tusk node 2
#   sales PARTITION BY LIST (region)
#     sales_east  FOREIGN TABLE  ------>  sales (east rows)
#     sales_west  FOREIGN TABLE  -------------------------->  sales (west rows)
#
# postgres_fdw talks to each node as to PostgreSQL: it sets its session up
# (search_path, TimeZone, DateStyle, IntervalStyle, extra_float_digits),
# opens a REPEATABLE READ transaction, reads through cursors (DECLARE,
# FETCH 100, CLOSE) and commits. With enable_partitionwise_aggregate, an
# aggregate grouped by the partition key runs on the nodes (the plan shows
# `Foreign Scan` with `Relations: Aggregate on ...` and a `Remote SQL` with
# GROUP BY), and only one row per group travels.
#
# The script builds tusk (release; set TUSK_BIN to use another binary),
# starts the two nodes and a PostgreSQL 15 cluster in a temporary directory,
# loads ROWS rows (default 200000) into the nodes and the same rows into a
# plain PostgreSQL table, runs the queries both ways, checks that the
# answers agree, and cleans up. PostgreSQL's programs are found in PG_BIN
# (default /usr/lib/postgresql/15/bin); as root, the PostgreSQL server runs
# as the `postgres` user. Exit status 0 means every answer matched; 77 means
# PostgreSQL 15 is not installed (nothing was run).
#
#   examples/fdw_demo.sh                # build, run, check
#   ROWS=1000 TUSK_BIN=target/debug/tusk examples/fdw_demo.sh

set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
ROWS=${ROWS:-200000}
QUIET=${QUIET:-}

say() { [ -n "$QUIET" ] || echo "$@"; }

if [ -z "${TUSK_BIN:-}" ]; then
    say "building tusk (release)..."
    (cd "$here" && cargo build --release -q -p tusk-cli)
    TUSK_BIN="$here/target/release/tusk"
fi
for tool in initdb pg_ctl psql; do
    if [ ! -x "$PG_BIN/$tool" ]; then
        echo "PostgreSQL 15 not found: $PG_BIN/$tool is missing (set PG_BIN)" >&2
        exit 77
    fi
done

work=$(mktemp -d /tmp/tusk-fdw-demo.XXXXXX)
node_pids=()
pg_started=
as_pg=()
if [ "$(id -u)" = 0 ]; then
    as_pg=(su postgres -s /bin/sh -c)
    chown postgres "$work"
fi

# Runs a PostgreSQL server program as the cluster's owner.
pg_run() {
    if [ ${#as_pg[@]} -gt 0 ]; then
        local line
        printf -v line '%q ' "$@"
        "${as_pg[@]}" "$line"
    else
        "$@"
    fi
}

cleanup() {
    set +e
    [ -n "$pg_started" ] && pg_run "$PG_BIN/pg_ctl" -D "$work/coordinator" -m fast -w stop >/dev/null 2>&1
    for p in "${node_pids[@]}"; do
        kill -TERM "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT

# Starts `tusk serve` on data directory $1 on a port the system picks;
# sets $node_port.
start_node() {
    local dir=$1 log=$1.log
    mkdir -p "$dir"
    echo "shared_buffers = 64MB" > "$dir/tusk.conf"
    "$TUSK_BIN" serve -D "$dir" --listen 127.0.0.1 --port 0 2> "$log" &
    node_pids+=($!)
    for _ in $(seq 1 600); do
        if grep -q "ready to accept connections" "$log" 2>/dev/null; then
            node_port=$(sed -n 's/.*listening on IPv4 address "127.0.0.1", port \([0-9]*\).*/\1/p' "$log" | head -1)
            return 0
        fi
        sleep 0.1
    done
    echo "tusk serve on $dir did not start:" >&2
    cat "$log" >&2
    exit 1
}

node_psql() {
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U tusk -d tusk "${@:2}"
}

say "starting two tusk nodes..."
start_node "$work/node1"
port1=$node_port
start_node "$work/node2"
port2=$node_port
say "  node 1 on port $port1, node 2 on port $port2"

# The rows of one region, the same on the node and in the check table.
rows_sql() {
    local region=$1 first=$2
    cat <<SQL
insert into sales
select '$region', g, ((g * 7919) % 100000) / 100.0, date '2024-01-01' + (g % 366),
       'customer ' || (g % 1000)
from generate_series($first, $first + $ROWS / 2 - 1) g;
SQL
}

table_ddl="create table sales (region text not null, id int not null, amount numeric(10,2), sold date, customer text)"
say "loading $ROWS rows into the nodes..."
node_psql "$port1" -c "$table_ddl" -c "$(rows_sql east 1)" -c "vacuum analyze sales"
node_psql "$port2" -c "$table_ddl" -c "$(rows_sql west $((ROWS / 2 + 1)))" -c "vacuum analyze sales"

say "starting the PostgreSQL 15 coordinator..."
pg_run "$PG_BIN/initdb" -D "$work/coordinator" -U tusk -A trust -E UTF8 --locale=C --no-sync >/dev/null
cat >> "$work/coordinator/postgresql.conf" <<CONF
port = 5432
listen_addresses = ''
unix_socket_directories = '$work'
huge_pages = off
shared_buffers = 64MB
fsync = off
CONF
pg_run "$PG_BIN/pg_ctl" -D "$work/coordinator" -l "$work/coordinator.log" -w -t 60 start >/dev/null
pg_started=1

coord() {
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$work" -p 5432 -U tusk -d postgres "$@"
}

coord <<SQL
create extension postgres_fdw;
create server node1 foreign data wrapper postgres_fdw
    options (host '127.0.0.1', port '$port1', dbname 'tusk', fetch_size '1000');
create server node2 foreign data wrapper postgres_fdw
    options (host '127.0.0.1', port '$port2', dbname 'tusk', fetch_size '1000');
create user mapping for current_user server node1 options (user 'tusk');
create user mapping for current_user server node2 options (user 'tusk');

create table sales (region text not null, id int not null, amount numeric(10,2),
                    sold date, customer text) partition by list (region);
create foreign table sales_east partition of sales for values in ('east')
    server node1 options (table_name 'sales');
create foreign table sales_west partition of sales for values in ('west')
    server node2 options (table_name 'sales');

-- The same rows in a plain table, to check the answers.
create table sales_check (region text not null, id int not null, amount numeric(10,2),
                          sold date, customer text);
insert into sales_check
select 'east', g, ((g * 7919) % 100000) / 100.0, date '2024-01-01' + (g % 366),
       'customer ' || (g % 1000)
from generate_series(1, $ROWS / 2) g;
insert into sales_check
select 'west', g, ((g * 7919) % 100000) / 100.0, date '2024-01-01' + (g % 366),
       'customer ' || (g % 1000)
from generate_series($ROWS / 2 + 1, $ROWS) g;
analyze sales_check;
analyze sales_east;
analyze sales_west;
SQL

# Each query runs over the foreign partitions (TABLE = sales) and over the
# check table (TABLE = sales_check); the answers must be the same.
queries=(
    "select region, count(*), sum(amount), min(amount), max(amount), round(avg(amount), 6) from TABLE group by region order by region"
    "select region, sold, count(*), sum(amount) from TABLE where sold between date '2024-03-01' and date '2024-03-05' group by region, sold order by region, sold"
    "select count(*), sum(amount), count(distinct customer) from TABLE"
    "select region, customer, sum(amount) as total from TABLE group by region, customer order by total desc, customer, region limit 5"
    "select id, region, amount, sold, customer from TABLE where id % 9973 = 0 order by id"
)

failed=0
for q in "${queries[@]}"; do
    fdw=${q//TABLE/sales}
    local_q=${q//TABLE/sales_check}
    got=$(coord -A -t -c "set enable_partitionwise_aggregate = on" -c "$fdw")
    want=$(coord -A -t -c "$local_q")
    if [ "$got" == "$want" ]; then
        say "ok:   $fdw"
    else
        echo "FAIL: $fdw" >&2
        diff <(echo "$want") <(echo "$got") >&2 || true
        failed=1
    fi
done

say
say "The grouped aggregate runs on the nodes:"
plan=$(coord -c "set enable_partitionwise_aggregate = on" \
    -c "explain (verbose, costs off) ${queries[0]//TABLE/sales}")
say "$plan"
if ! grep -q "Relations: Aggregate on" <<<"$plan" || ! grep -q "GROUP BY" <<<"$plan"; then
    echo "FAIL: the aggregate was not pushed down to the nodes" >&2
    failed=1
fi

say
say "The nodes saw postgres_fdw's cursors:"
say "$(grep -c "" "$work/node1.log") log lines on node 1 (see the node logs for errors)"
if grep -q "ERROR" "$work/node1.log" "$work/node2.log"; then
    grep "ERROR" "$work/node1.log" "$work/node2.log" >&2
fi

if [ "$failed" != 0 ]; then
    echo "fdw demo: answers differ" >&2
    exit 1
fi
say "fdw demo: every answer matches PostgreSQL's"
