"""Scans of one table stored as a heap and as columnar, in tusk.

    python3 bench/run.py scan [--rows 10000000] [--runs 5] [--threads 1,2]
                              [--queries count,sum-int,...]

One data directory, two tables of the same rows: `h` (heap) and `c` (`USING
columnar`, made by `CREATE TABLE c USING columnar AS SELECT * FROM h`):

    id int (1..N, in load order), grp int (id % 100), amount numeric(12,2),
    day date (N/10000 distinct, ascending), tag text (20 values), note text (unique)

Each query runs on both tables, at each thread count (1 thread:
`max_parallel_workers_per_gather = 0`, 2 threads: 2 workers, so the leader
and two workers share the scan), one warm-up and `--runs` timed runs in one
session (warm buffer pool: `shared_buffers` = 2GB holds both tables at 10 M
rows). The queries read different shares of the row:

| name | reads |
|---|---|
| count | no column (`count(*)`) |
| sum-int | one int column |
| sum-numeric | one numeric column |
| filter-text | a text column with 20 values, `=` |
| range-skip | `id BETWEEN` a 1 % range: row groups whose min/max rule it out are skipped |
| day-skip | `day =` one date (data sorted by day): skipping again |
| group | a GROUP BY over two columns |
| wide | every column |

Outputs: a markdown table (min and median ms per table, and the heap's
median over the columnar one's) on stdout and in bench/results/scan-*.md,
the raw figures in scan-*.json. Hold `flock /tmp/tusk-bench.lock` around the
run on a shared machine.
"""

from __future__ import annotations

import os
import time

import run
from run import Benchmark, Cell, Tusk, fmt_ms, log, parse_list, short_error

QUERIES = {
    "count": "select count(*) from {t}",
    "sum-int": "select sum(id) from {t}",
    "sum-numeric": "select sum(amount) from {t}",
    "filter-text": "select count(*) from {t} where tag = 'tag 7'",
    "range-skip": "select count(*), sum(amount) from {t} where id between {lo} and {hi}",
    "day-skip": "select count(*), max(note) from {t} where day = date '2000-01-01' + {day}",
    "group": "select grp, count(*), sum(amount) from {t} group by grp order by grp limit 3",
    "wide": "select max(id), max(grp), max(amount), max(day), max(tag), max(note) from {t}",
}
TABLES = {"heap": "h", "columnar": "c"}


def load_script(rows: int) -> list:
    return [
        "create table h (id int, grp int, amount numeric(12,2), day date, tag text, note text);",
        "\\timing on",
        "insert into h select g, g % 100, (g % 100000) * 0.01, date '2000-01-01' + g / 10000, "
        f"'tag ' || (g % 20), 'note ' || g from generate_series(1, {rows}) g;",
        "create table c using columnar as select * from h;",
        "vacuum h;",
        "checkpoint;",
    ]


def query_text(name: str, table: str, rows: int) -> str:
    lo = rows // 2
    return QUERIES[name].format(t=table, lo=lo, hi=lo + rows // 100, day=rows // 20000)


class ScanBench(Benchmark):
    name = "scan"
    help = "the same queries over a heap table and a columnar one in tusk (10 M rows)"
    needs_venv = False
    STARTUP = {"shared_buffers": "2GB", "huge_pages": "off", "max_wal_size": "8GB",
               "checkpoint_timeout": "1h", "autovacuum": "off"}

    def add_arguments(self, p):
        self.add_common_arguments(p)
        p.add_argument("--rows", type=int, default=10_000_000, help="rows per table (default 10M)")
        p.add_argument("--runs", type=int, default=5, help="timed runs per query (default 5)")
        p.add_argument("--threads", default="1,2", type=lambda s: [int(x) for x in parse_list(s)],
                       help="comma list of thread counts (default 1,2)")
        p.add_argument("--queries", default=",".join(QUERIES),
                       type=lambda s: parse_list(s, list(QUERIES)),
                       help="comma list from: " + ",".join(QUERIES))

    def run(self, args):
        meta = {"started": time.strftime("%Y-%m-%d %H:%M:%S"),
                "machine": run.machine_description(), "load_before": os.getloadavg()}
        tusk = Tusk(args.tusk_bin, args.timeout)
        tusk.startup = dict(self.STARTUP)
        tusk.build()
        meta["version"] = tusk.version()
        tusk.fresh_data_dir(args.workdir)
        log(f"bench: loading {args.rows:,} rows into a heap and a columnar table ...")
        times, _ = tusk.script(load_script(args.rows))
        meta["load_ms"] = {"heap insert": times[0], "columnar CREATE TABLE AS": times[1]}
        meta["bytes"] = self.sizes(tusk)
        cells: list[Cell] = []
        for threads in args.threads:
            workers = 0 if threads == 1 else threads
            for q in args.queries:
                for am, table in TABLES.items():
                    cell = Cell(am, q, threads)
                    sql = query_text(q, table, args.rows) + ";"
                    lines = [f"set max_parallel_workers_per_gather = {workers};", "\\timing on"]
                    lines += [sql] * (args.runs + 1)
                    try:
                        t, _ = tusk.script(lines)
                        cell.times_ms = t[1:]
                    except Exception as e:  # noqa: BLE001 - one query failing must not stop the rest
                        cell.error = short_error(str(e))
                    what = (f"min {fmt_ms(cell.min_ms)} ms, median {fmt_ms(cell.median_ms)} ms"
                            if cell.ok else f"FAILED {cell.error}")
                    log(f"bench: {q} on {am} ({threads} thread{'s' if threads > 1 else ''}): {what}")
                    cells.append(cell)
        meta["load_after"] = os.getloadavg()
        markdown = self.markdown(args, cells, meta)
        print(markdown)
        data = {"benchmark": self.name, "rows": args.rows, "runs": args.runs,
                "threads": args.threads, "meta": meta, "cells": [vars(c) for c in cells]}
        written = run.write_outputs(self.name, markdown, data, None)
        log("bench: wrote " + ", ".join(written))
        return 0 if all(c.ok for c in cells) else 1

    @staticmethod
    def sizes(tusk: Tusk) -> dict:
        """Bytes of each table's files (a columnar table has three forks)."""
        base = tusk.data_dir / "base"
        files = sorted(base.iterdir(), key=lambda p: p.name)
        out = {}
        for f in files:
            oid = f.name.split("_")[0]
            out[oid] = out.get(oid, 0) + f.stat().st_size
        return out

    def markdown(self, args, cells, meta) -> str:
        by = {(c.system, c.keys, c.threads): c for c in cells}
        lines = [
            f"# Scans: heap vs columnar ({args.rows:,} rows, {args.runs} runs)",
            "",
            f"{meta['started']}, {meta['machine']}, tusk {meta['version']}; "
            f"load average {meta['load_before'][0]:.1f} before, {meta['load_after'][0]:.1f} after.",
            f"Load: heap INSERT {fmt_ms(meta['load_ms']['heap insert'])} ms, columnar CREATE TABLE AS "
            f"{fmt_ms(meta['load_ms']['columnar CREATE TABLE AS'])} ms; files (bytes per oid): "
            + ", ".join(f"{k}: {v:,}" for k, v in meta["bytes"].items()),
            "",
            "| query | threads | heap min | heap median | columnar min | columnar median | heap / columnar |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for threads in args.threads:
            for q in args.queries:
                h, c = by.get(("heap", q, threads)), by.get(("columnar", q, threads))
                ratio = (f"{h.median_ms / c.median_ms:.1f}x" if h and c and h.ok and c.ok
                         and c.median_ms else "—")
                lines.append(
                    f"| {q} | {threads} | {fmt_ms(h.min_ms if h else None)} | "
                    f"{fmt_ms(h.median_ms if h else None)} | {fmt_ms(c.min_ms if c else None)} | "
                    f"{fmt_ms(c.median_ms if c else None)} | {ratio} |")
        lines += ["", "Queries:", ""]
        lines += [f"- {q}: `{query_text(q, '<t>', args.rows)}`" for q in args.queries]
        return "\n".join(lines) + "\n"
