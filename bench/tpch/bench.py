"""TPC-H: the 22 queries on tusk, PostgreSQL 15 and DuckDB, with tusk's answers
checked row by row against PostgreSQL's.

    python3 bench/run.py tpch [--sf 1] [--queries 1,3,6] [--runs 3] [--threads 1,2]
                              [--systems tusk,postgres,duckdb] [--data-dir DIR]
                              [--am heap|columnar]

What a run does, in order:

1. Data. `tpchgen-cli csv -s SF` (the Python package of the Rust port of
   dbgen, pinned in bench/requirements.txt) writes one CSV file per table,
   with a header line, under `--data-dir` (default `bench/.data`, ignored by
   git) in `sf<SF>/`. A finished directory carries a `.complete` marker, so a
   rerun at the same scale factor reuses the files.
2. Load. Each system gets the standard DDL of `schema.sql` beside this file
   (`date`, `decimal(15,2)`, `char(n)`, `varchar(n)`, primary keys declared in
   CREATE TABLE, so every load also builds its primary key index) and one
   `COPY t FROM 'file' (FORMAT csv, HEADER)` per table, timed per table: tusk
   and PostgreSQL read the files server-side (`\\timing` lines), DuckDB runs
   the same COPY with its CSV reader into an in-memory database, timed in
   Python, once per thread count. Then each builds the one secondary index
   of `indexes.sql` (lineitem's foreign key to partsupp, timed apart: without
   it PostgreSQL cannot answer Q17 and Q20 at SF 1 in hours). PostgreSQL then
   runs `VACUUM ANALYZE` and tusk `ANALYZE` (each timed apart, not part of
   the load), as every PostgreSQL TPC-H kit does.
3. Queries. `queries/qNN.sql` hold the specification's text with its
   validation substitution parameters, the row limits of Q2, Q3, Q10, Q18 and
   Q21 written as LIMIT, and Q15 as its three statements (create the view,
   query it, drop it; a run times all three). For each query and thread count
   a system runs one warm-up and `--runs` timed runs in one session, so tusk's
   and PostgreSQL's buffer pools are warm. Threads: tusk and PostgreSQL with
   `max_parallel_workers_per_gather` 0 (1 thread) or 2 (2 threads), DuckDB with
   `SET threads`. `statement_timeout` (`--query-timeout`) bounds one statement
   on tusk and PostgreSQL; a query that fails or times out is reported in the
   table and the run goes on.
4. Answers. PostgreSQL's warm-up answer at the first thread count is the
   reference. Each tusk answer (psql's unaligned text, `|` between fields, as
   both print it) is compared with it line by line: numerics exactly, rows in
   the same order (every query but Q6, Q14, Q17 and Q19 orders its result; a
   difference that is only in order is reported as such). DuckDB's answers are
   not compared (its decimal output differs in form from PostgreSQL's).

`--am columnar` stores tusk's tables as columnar tables (`SET
default_table_access_method = columnar` before the DDL). tusk has no indexes
on columnar tables, so its DDL then declares no primary keys and the
secondary index is not built (PostgreSQL and DuckDB keep theirs); the
results go to bench/results/tpch-columnar-*.

One deviation from the specification text: PostgreSQL 15 and DuckDB reject
the SQL-standard leading field precision of Q1's `interval '90' day (3)`, and
so does tusk, which follows PostgreSQL's grammar: all three get
`interval '90' day`.

Outputs: a markdown table on stdout and in bench/results/tpch-*.md, the raw
figures in tpch-*.json and a chart of median times in tpch-*.png.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import run
from run import Benchmark, Cell, PgCluster, Tusk, fmt_ms, log, parse_list, short_error

TPCH_DIR = Path(__file__).resolve().parent
QUERY_DIR = TPCH_DIR / "queries"
SCHEMA = TPCH_DIR / "schema.sql"
INDEXES = TPCH_DIR / "indexes.sql"
DEFAULT_DATA_DIR = run.BENCH_DIR / ".data"
# Load order: small tables first, lineitem last (reported apart).
TABLES = ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]
SYSTEMS = ["tusk", "postgres", "duckdb"]
SYSTEM_NAMES = {"tusk": "tusk", "postgres": "PostgreSQL 15", "duckdb": "DuckDB"}


# ---------------------------------------------------------------------------
# Queries and data
# ---------------------------------------------------------------------------


def split_statements(text: str) -> list:
    """Splits a query file into statements at a `;` that ends a line
    (the query files put no `;` inside a line)."""
    body = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", body) if s.strip()]


def postgres_text(sql: str) -> str:
    """The specification's text as PostgreSQL 15 and DuckDB accept it: without
    the leading field precision of `interval 'n' day (3)`."""
    return re.sub(r"(interval\s+'[^']*'\s+day)\s*\(\s*\d+\s*\)", r"\1", sql, flags=re.I)


def load_queries(numbers: list) -> dict:
    """{"q01": [statements...], ...} for the chosen query numbers."""
    out = {}
    for n in numbers:
        name = f"q{n:02d}"
        out[name] = split_statements((QUERY_DIR / f"{name}.sql").read_text())
    return out


def schema_statements() -> list:
    return split_statements(SCHEMA.read_text())


def index_statements() -> list:
    return split_statements(INDEXES.read_text())


def generate_data(data_dir: Path, sf: float) -> Path:
    """The CSV files for scale factor `sf` (generated once, then reused)."""
    out = data_dir / f"sf{sf:g}"
    if (out / ".complete").exists() and all((out / f"{t}.csv").exists() for t in TABLES):
        log(f"bench: reusing TPC-H data in {out}")
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    tool = Path(sys.executable).with_name("tpchgen-cli")
    log(f"bench: generating TPC-H SF {sf:g} into {out} ...")
    t0 = time.perf_counter()
    r = subprocess.run([str(tool), "csv", "-s", f"{sf:g}", "-o", str(out)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("tpchgen-cli failed: " + short_error(r.stderr or r.stdout))
    # The PostgreSQL server (the postgres OS user) reads these files itself.
    for p in [data_dir, out] + [out / f"{t}.csv" for t in TABLES]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    (out / ".complete").write_text(f"tpchgen-cli csv -s {sf:g}\n")
    size = sum((out / f"{t}.csv").stat().st_size for t in TABLES)
    log(f"bench: generated {size / 1e6:,.0f} MB in {time.perf_counter() - t0:.1f} s")
    return out


def without_primary_keys(stmt: str) -> str:
    """A CREATE TABLE of `schema.sql` without its `primary key (...)`."""
    return re.sub(r",\s*primary key\s*\([^)]*\)", "", stmt, flags=re.IGNORECASE)


def copy_statement(table: str, csv: Path) -> str:
    return f"copy {table} from '{csv}' with (format csv, header)"


# ---------------------------------------------------------------------------
# Scripts for the two psql-like clients (tusk and psql)
# ---------------------------------------------------------------------------


def query_script(statements: list, runs: int, workers: int, timeout_s: float,
                 work_mem: str | None = None) -> list:
    """One warm-up and `runs` timed runs of a query's statements."""
    lines = [f"set max_parallel_workers_per_gather = {workers};",
             f"set statement_timeout = {int(timeout_s * 1000)};"]
    if work_mem:
        lines.append(f"set work_mem = '{work_mem}';")
    lines.append("\\timing on")
    for _ in range(runs + 1):
        lines += [s + ";" for s in statements]
    return lines


def parse_runs(stdout: str, statements: int) -> tuple[list, list]:
    """(per-run answers as lists of lines, per-run total ms) from a script's
    output: each statement's rows come before its `Time:` line."""
    answers, times, rows, current, ms = [], [], [], [], 0.0
    count = 0
    for line in stdout.splitlines():
        m = run.TIME_RE.match(line)
        if m is None:
            current.append(line)
            continue
        rows += current
        current = []
        ms += float(m.group(1))
        count += 1
        if count == statements:
            answers.append(rows)
            times.append(ms)
            rows, ms, count = [], 0.0, 0
    return answers, times


def compare(answer: list, reference: list) -> str:
    """'match', or what differs between an answer and PostgreSQL's."""
    if answer == reference:
        return "match"
    if sorted(answer) == sorted(reference):
        return "same rows, other order"
    if len(answer) != len(reference):
        return f"{len(answer)} rows, PostgreSQL {len(reference)}"
    for i, (a, r) in enumerate(zip(answer, reference)):
        if a != r:
            return f"row {i + 1}: `{a[:80]}` vs `{r[:80]}`"
    return "differs"


# ---------------------------------------------------------------------------
# DuckDB (a worker subprocess per thread count)
# ---------------------------------------------------------------------------


def duckdb_worker(spec: dict) -> dict:
    """Loads the CSV files into an in-memory DuckDB database at `threads`
    threads and runs each query: one warm-up, `runs` timed runs."""
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute(f"SET threads = {spec['threads']}")
    if spec.get("memory_limit"):
        con.execute(f"SET memory_limit = '{spec['memory_limit']}'")
    for stmt in spec["schema"]:
        con.execute(stmt)
    loads = {}
    for table in TABLES:
        t0 = time.perf_counter()
        con.execute(copy_statement(table, Path(spec["csv_dir"]) / f"{table}.csv"))
        loads[table] = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    for stmt in spec["indexes"]:
        con.execute(stmt)
    index_ms = (time.perf_counter() - t0) * 1e3
    results = {}
    for name, statements in spec["queries"].items():
        times = []
        try:
            for i in range(spec["runs"] + 1):
                t0 = time.perf_counter()
                for stmt in statements:
                    con.execute(stmt)
                    if con.description is not None:
                        con.fetchall()
                if i > 0:
                    times.append((time.perf_counter() - t0) * 1e3)
            results[name] = {"times_ms": times}
        except Exception as e:  # noqa: BLE001 - reported per query
            results[name] = {"error": short_error(f"{type(e).__name__}: {e}")}
            con.execute("drop view if exists revenue0")
    return {"loads_ms": loads, "index_ms": index_ms, "queries": results,
            "version": duckdb.__version__}


# ---------------------------------------------------------------------------
# The benchmark
# ---------------------------------------------------------------------------


class TpchBench(Benchmark):
    name = "tpch"
    help = "TPC-H's 22 queries: tusk vs PostgreSQL 15 vs DuckDB, answers checked against PostgreSQL"
    PG_SETTINGS = {"shared_buffers": "2GB", "huge_pages": "off", "max_wal_size": "8GB",
                   "checkpoint_timeout": "1h", "autovacuum": "off", "jit": "off"}
    TUSK_STARTUP = {"shared_buffers": "2GB", "huge_pages": "off", "max_wal_size": "8GB",
                    "checkpoint_timeout": "1h"}

    def add_arguments(self, p):
        self.add_common_arguments(p)
        p.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
        p.add_argument("--queries", default="1-22", type=parse_queries,
                       help="comma list of query numbers or ranges (default 1-22)")
        p.add_argument("--runs", type=int, default=3, help="timed runs per query (default 3)")
        p.add_argument("--threads", default="1,2", type=lambda s: [int(x) for x in parse_list(s)],
                       help="comma list of thread counts (default 1,2)")
        p.add_argument("--systems", default=",".join(SYSTEMS), type=lambda s: parse_list(s, SYSTEMS),
                       help="comma list from: " + ",".join(SYSTEMS))
        p.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                       help="where generated data is kept between runs (default %(default)s)")
        p.add_argument("--work-mem", default=None,
                       help="work_mem for tusk and PostgreSQL (e.g. 4MB; default: the servers' "
                            "default, 4MB)")
        p.add_argument("--duckdb-memory-limit", default=None,
                       help="DuckDB's memory_limit (e.g. 100MB; default: DuckDB's own)")
        p.add_argument("--query-timeout", type=float, default=600,
                       help="statement_timeout in seconds for one tusk or PostgreSQL statement "
                            "(default %(default)s)")
        p.add_argument("--am", default="heap", choices=["heap", "columnar"],
                       help="tusk's table access method (default heap; see the module doc)")

    # -- per system ---------------------------------------------------------

    def load_psql_like(self, client, csv_dir: Path, columnar: bool = False) -> tuple[dict, float]:
        """Creates the tables, COPYs each file and builds the secondary
        indexes; ({table: ms}, index ms). `columnar`: tusk's columnar tables
        (see the module doc)."""
        if columnar:
            lines = ["set default_table_access_method = columnar;"]
            lines += [without_primary_keys(s) + ";" for s in schema_statements()]
            indexes = []
        else:
            lines = [s + ";" for s in schema_statements()]
            indexes = index_statements()
        lines += ["\\timing on"]
        lines += [copy_statement(t, csv_dir / f"{t}.csv") + ";" for t in TABLES]
        lines += [s + ";" for s in indexes]
        _, times = parse_runs(client(lines), 1)
        if len(times) != len(TABLES) + len(indexes):
            raise RuntimeError(f"expected {len(TABLES)} COPY timings, got {len(times)}")
        return dict(zip(TABLES, times)), sum(times[len(TABLES):])

    def run_queries_psql_like(self, system: str, client, args, queries: dict, cells: list,
                              answers: dict) -> None:
        for threads in args.threads:
            workers = 0 if threads == 1 else threads
            for name, statements in queries.items():
                cell = Cell(system, name, threads)
                statements = [postgres_text(s) for s in statements]
                try:
                    out = client(query_script(statements, args.runs, workers, args.query_timeout,
                                              args.work_mem))
                    runs_answers, times = parse_runs(out, len(statements))
                    cell.times_ms = times[1:]
                    answers[(system, name, threads)] = runs_answers[0] if runs_answers else []
                except Exception as e:  # noqa: BLE001 - one query failing must not stop the rest
                    cell.error = short_error(str(e))
                self.progress(cell)
                cells.append(cell)

    def bench_tusk(self, args, csv_dir, queries, cells, loads, answers, meta):
        tusk = Tusk(args.tusk_bin, args.timeout)
        tusk.startup = dict(self.TUSK_STARTUP)
        tusk.build()
        meta["versions"]["tusk"] = tusk.version()
        try:
            tusk.fresh_data_dir(args.workdir)
            loads["tusk"], meta["index_ms"]["tusk"] = self.load_psql_like(
                tusk.output, csv_dir, columnar=args.am == "columnar")
        except Exception as e:  # noqa: BLE001
            meta["load_errors"]["tusk"] = short_error(str(e))
            log(f"bench: tusk load failed: {e}")
            return
        self.log_load("tusk", loads["tusk"])
        _, t = parse_runs(tusk.output(["\\timing on", "analyze;"]), 1)
        meta["tusk_analyze_ms"] = t[0] if t else None
        self.run_queries_psql_like("tusk", tusk.output, args, queries, cells, answers)
        meta["tusk_data_bytes"] = dir_size(tusk.data_dir)

    def bench_postgres(self, args, csv_dir, queries, cells, loads, answers, meta):
        cluster = PgCluster(args.pg_bin, self.PG_SETTINGS)
        try:
            cluster.start()

            def client(lines):
                return run.CopyBench.psql(cluster, lines, args.timeout)

            meta["versions"]["postgres"] = "PostgreSQL " + client(["show server_version;"]).strip()
            loads["postgres"], meta["index_ms"]["postgres"] = self.load_psql_like(client, csv_dir)
            self.log_load("postgres", loads["postgres"])
            _, t = parse_runs(client(["\\timing on", "vacuum analyze;"]), 1)
            meta["postgres_vacuum_analyze_ms"] = t[0] if t else None
            self.run_queries_psql_like("postgres", client, args, queries, cells, answers)
        except Exception as e:  # noqa: BLE001
            meta["load_errors"]["postgres"] = short_error(str(e))
            log(f"bench: postgres failed: {e}")
        finally:
            cluster.stop()

    def bench_duckdb(self, args, csv_dir, queries, cells, loads, meta):
        pg_queries = {n: [postgres_text(s) for s in st] for n, st in queries.items()}
        for threads in args.threads:
            r = run.run_worker({"bench": "tpch", "system": "duckdb", "threads": threads,
                                "runs": args.runs, "csv_dir": str(csv_dir),
                                "schema": schema_statements(), "indexes": index_statements(),
                                "queries": pg_queries, "memory_limit": args.duckdb_memory_limit},
                               args.timeout)
            if "error" in r:
                meta["load_errors"][f"duckdb-{threads}"] = r["error"]
                log(f"bench: duckdb ({threads} threads) failed: {r['error']}")
                continue
            meta["versions"]["duckdb"] = r["version"]
            loads[f"duckdb-{threads}"] = r["loads_ms"]
            meta["index_ms"][f"duckdb-{threads}"] = r["index_ms"]
            self.log_load(f"duckdb ({threads} threads)", r["loads_ms"])
            for name in queries:
                q = r["queries"].get(name, {"error": "not run"})
                cell = Cell("duckdb", name, threads, times_ms=q.get("times_ms", []),
                            error=q.get("error"))
                self.progress(cell)
                cells.append(cell)

    # -- reporting ------------------------------------------------------------

    @staticmethod
    def progress(cell: Cell) -> None:
        what = (f"min {fmt_ms(cell.min_ms)} ms, median {fmt_ms(cell.median_ms)} ms" if cell.ok
                else f"FAILED {cell.error}")
        log(f"bench: {cell.system} {cell.keys} ({cell.threads} thread"
            f"{'s' if cell.threads > 1 else ''}): {what}")

    @staticmethod
    def log_load(label: str, loads: dict) -> None:
        log(f"bench: {label} load: lineitem {fmt_ms(loads.get('lineitem'))} ms, "
            f"total {fmt_ms(sum(loads.values()))} ms")

    def run(self, args):
        meta: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"),
                      "machine": run.machine_description(), "load_before": os.getloadavg(),
                      "versions": {}, "load_errors": {}, "index_ms": {}}
        queries = load_queries(args.queries)
        csv_dir = generate_data(Path(args.data_dir).resolve(), args.sf)
        meta["csv_bytes"] = {t: (csv_dir / f"{t}.csv").stat().st_size for t in TABLES}
        cells: list[Cell] = []
        loads: dict = {}
        answers: dict = {}
        if "postgres" in args.systems:
            self.bench_postgres(args, csv_dir, queries, cells, loads, answers, meta)
        if "tusk" in args.systems:
            self.bench_tusk(args, csv_dir, queries, cells, loads, answers, meta)
        if "duckdb" in args.systems:
            self.bench_duckdb(args, csv_dir, queries, cells, loads, meta)
        checks = self.check_answers(args, queries, answers)
        meta["load_after"] = os.getloadavg()
        markdown = self.markdown(args, queries, cells, loads, checks, meta)
        print(markdown)
        data = {"benchmark": self.name, "sf": args.sf, "runs": args.runs, "threads": args.threads,
                "meta": meta, "loads_ms": loads, "checks": checks,
                "pg_settings": self.PG_SETTINGS, "tusk_startup": self.TUSK_STARTUP,
                "cells": [vars(c) for c in cells]}
        data["am"] = args.am
        name = self.name if args.am == "heap" else f"{self.name}-{args.am}"
        written = run.write_outputs(name, markdown, data,
                                    lambda p: self.chart(p, args, queries, cells))
        log("bench: wrote " + ", ".join(written))
        return 0 if all(c.ok for c in cells) and all(v == "match" for v in checks.values()) else 1

    @staticmethod
    def check_answers(args, queries: dict, answers: dict) -> dict:
        """{"q01@1": "match" | what differs} for each tusk answer."""
        checks = {}
        first = args.threads[0]
        for name in queries:
            reference = answers.get(("postgres", name, first))
            for threads in args.threads:
                answer = answers.get(("tusk", name, threads))
                if answer is None:
                    continue
                checks[f"{name}@{threads}"] = ("no PostgreSQL answer" if reference is None
                                               else compare(answer, reference))
        return checks

    def markdown(self, args, queries, cells, loads, checks, meta) -> str:
        versions = ", ".join(f"{k} {v}" for k, v in sorted(meta["versions"].items()))
        csv_mb = sum(meta["csv_bytes"].values()) / 1e6
        am = "" if args.am == "heap" else f", tusk's tables {args.am}"
        out = [f"# TPC-H SF {args.sf:g}{am}, {meta['started']}", "",
               f"Data: `tpchgen-cli csv -s {args.sf:g}` ({csv_mb:,.0f} MB of CSV). Machine: "
               f"{meta['machine']}; load average before {meta['load_before'][0]:.2f}, after "
               f"{meta['load_after'][0]:.2f}. Versions: {versions or 'n/a'}.", "",
               "## Load (COPY FROM the CSV files, primary keys built during the load)", "",
               "| system | lineitem ms | lineitem rows/s | all 8 tables ms | then the index on "
               "lineitem (l_partkey, l_suppkey) ms |", "|---|---:|---:|---:|---:|"]
        rows_sf1 = 6_001_215 * args.sf
        for key, ms in loads.items():
            system, _, threads = key.partition("-")
            label = SYSTEM_NAMES[system] + (f", {threads} thread{'s' if threads != '1' else ''}"
                                            if threads else "")
            out.append(f"| {label} | {fmt_ms(ms['lineitem'])} | "
                       f"{rows_sf1 / ms['lineitem'] * 1e3:,.0f} | {fmt_ms(sum(ms.values()))} | "
                       f"{fmt_ms(meta['index_ms'].get(key))} |")
        for key, err in meta["load_errors"].items():
            out.append(f"| {key} | failed: {err} | | | |")
        if meta.get("postgres_vacuum_analyze_ms") is not None:
            out += ["", f"PostgreSQL's `VACUUM ANALYZE` after the load (not counted above): "
                        f"{fmt_ms(meta['postgres_vacuum_analyze_ms'])} ms."]
        if meta.get("tusk_analyze_ms") is not None:
            out += ["", f"tusk's `ANALYZE` after the load (not counted above): "
                        f"{fmt_ms(meta['tusk_analyze_ms'])} ms."]
        out += ["", f"## Queries: min / median ms of {args.runs} runs after a warm-up", ""]
        columns = [(s, t) for s in SYSTEMS if s in args.systems for t in args.threads]
        head = [f"{SYSTEM_NAMES[s]} {t}T" for s, t in columns]
        out.append("| query | " + " | ".join(head) + " | tusk = PostgreSQL |")
        out.append("|---|" + "---:|" * len(columns) + "---|")
        errors = []
        for name in queries:
            row = [name.upper()]
            for s, t in columns:
                cell = next((c for c in cells if (c.system, c.keys, c.threads) == (s, name, t)), None)
                if cell is None:
                    row.append("—")
                elif cell.ok:
                    row.append(f"{fmt_ms(cell.min_ms)} / {fmt_ms(cell.median_ms)}")
                else:
                    errors.append(f"{name.upper()} {SYSTEM_NAMES[s]} {t}T: {cell.error}")
                    row.append(f"error [{len(errors)}]")
            verdicts = {checks[f"{name}@{t}"] for t in args.threads if f"{name}@{t}" in checks}
            row.append("; ".join(sorted(verdicts)) if verdicts else "—")
            out.append("| " + " | ".join(row) + " |")
        out += ["", "Threads: tusk and PostgreSQL with `max_parallel_workers_per_gather` = 0 at 1T "
                "and = threads at more; DuckDB with `SET threads`. tusk and PostgreSQL: times are "
                "`\\timing` lines of one session; DuckDB: in-memory database, timed in Python. "
                "All three get Q1 as `interval '90' day` (they reject `day (3)`)."
                + (f" work_mem = {args.work_mem} (tusk, PostgreSQL)." if args.work_mem else "")
                + (f" DuckDB memory_limit = {args.duckdb_memory_limit}."
                   if args.duckdb_memory_limit else "")]
        if errors:
            out += ["", "## Errors", ""] + [f"{i + 1}. {e}" for i, e in enumerate(errors)]
        out += ["", "## Settings", "",
                "- tusk (tusk.conf): " + ", ".join(f"{k}={v}" for k, v in self.TUSK_STARTUP.items()),
                "- PostgreSQL 15: " + ", ".join(f"{k}={v}" for k, v in self.PG_SETTINGS.items())
                + ", other settings default."]
        return "\n".join(out) + "\n"

    def chart(self, path: Path, args, queries, cells) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        series = [(s, t) for s in SYSTEMS if s in args.systems for t in args.threads]
        names = list(queries)
        width = 0.8 / max(1, len(series))
        fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(names) * max(1, len(series)) / 2), 5))
        for si, (s, t) in enumerate(series):
            xs, med = [], []
            for qi, name in enumerate(names):
                cell = next((c for c in cells if (c.system, c.keys, c.threads) == (s, name, t)), None)
                x = qi + (si - (len(series) - 1) / 2) * width
                if cell is not None and cell.ok:
                    xs.append(x)
                    med.append(max(cell.median_ms, 0.01))
                elif cell is not None:
                    ax.text(x, 1, "×", ha="center", va="bottom", fontsize=7, color="red")
            ax.bar(xs, med, width, label=f"{SYSTEM_NAMES[s]}, {t} thread{'s' if t > 1 else ''}")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([n.upper() for n in names], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("median ms, log scale (lower is better; × = error)")
        ax.set_title(f"TPC-H SF {args.sf:g}: {args.runs} runs after a warm-up")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, format="png", dpi=120)
        plt.close(fig)


def parse_queries(text: str) -> list:
    """'1,3,6' or '1-22' or '2-5,9' -> sorted query numbers in 1..22."""
    numbers = set()
    for item in parse_list(text):
        lo, _, hi = item.partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a query number: {item!r}")
        if not 1 <= a <= b <= 22:
            raise argparse.ArgumentTypeError(f"queries are numbered 1 to 22: {item!r}")
        numbers.update(range(a, b + 1))
    return sorted(numbers)


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())
