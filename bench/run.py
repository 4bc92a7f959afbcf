#!/usr/bin/env python3
"""Benchmark harness: runs tusk beside PostgreSQL, DuckDB, DataFusion and Polars.

    python3 bench/run.py join [--rows N] [--runs N] [--systems ...] [--threads 1,2]
    python3 bench/run.py spill [--rows 1000000,5000000,...] [--work-mem 4MB] [--systems ...]
    python3 bench/run.py vacuum [--rows 20000000] [--runs N] [--maintenance-work-mem 16MB]
    python3 bench/run.py copy [--rows 1000000] [--runs N] [--systems tusk,postgres,duckdb]
    python3 bench/run.py pgbench [--scale 10] [--clients 8] [--jobs 2] [--duration 30] [--rounds N]
                                 [--workloads select,tpcb,mixed] [--tpcb-duration 60]
    python3 bench/run.py tpch [--sf 1] [--queries 1,3,6] [--runs 3] [--threads 1,2] [--am heap|columnar]
                              (see bench/tpch/bench.py)
    python3 bench/run.py scan [--rows 10000000] [--runs 5] [--threads 1,2] (see bench/scan/bench.py)
    python3 bench/run.py recovery-tpcb [--duration 60] [--rounds 3] [--systems tusk,postgres]
                                       (see bench/recovery_tpcb/bench.py)

The script bootstraps itself: it creates (or refreshes, when
bench/requirements.txt changed) the virtual environment bench/.venv and
re-executes itself inside it. It builds tusk in release mode, starts a private
PostgreSQL 15 cluster in a temporary directory (removed again at exit, also on
error or Ctrl-C), runs the benchmark and writes a markdown report, a JSON file
and a PNG chart to bench/results/ (timestamped, plus a `*-latest.*` copy).

Each benchmark is a subcommand (a `Benchmark` subclass registered in
BENCHMARKS): `join`, `spill`, `copy`, `vacuum`, `pgbench`, `tpch` (in
bench/tpch/), `scan` (bench/scan/) and `recovery-tpcb` (bench/recovery_tpcb/)
(`vacuum`, `pgbench`, `scan` and `recovery-tpcb` need no venv:
they drive the systems through their command-line clients, psql and tusk). The machinery they share lives at module
level: the venv bootstrap, `PgCluster`, `Tusk`, the worker subprocesses for the
in-process engines, and the report writer.

Only the standard library may be imported at module level: the venv packages
are imported inside the functions that need them.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
VENV_DIR = BENCH_DIR / ".venv"
REQUIREMENTS = BENCH_DIR / "requirements.txt"
RESULTS_DIR = BENCH_DIR / "results"
STAMP_FILE = VENV_DIR / ".requirements.sha256"
DEFAULT_PG_BIN = "/usr/lib/postgresql/15/bin"
WORKER_MARK = "@@tusk-bench-result@@ "

ALL_SYSTEMS = ["tusk", "postgres", "duckdb", "datafusion", "polars"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Virtual environment
# ---------------------------------------------------------------------------


def requirements_digest() -> str:
    h = hashlib.sha256(REQUIREMENTS.read_bytes())
    h.update(f"python {sys.version_info.major}.{sys.version_info.minor}".encode())
    return h.hexdigest()


def ensure_venv() -> None:
    """Re-executes this script inside bench/.venv, building the venv first
    when it is missing or older than requirements.txt."""
    if os.environ.get("TUSK_BENCH_IN_VENV") == "1":
        return
    python = VENV_DIR / "bin" / "python"
    digest = requirements_digest()
    stamp = STAMP_FILE.read_text().strip() if STAMP_FILE.exists() else ""
    if not python.exists() or stamp != digest:
        log(f"bench: creating {VENV_DIR} from {REQUIREMENTS.name} ...")
        shutil.rmtree(VENV_DIR, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV_DIR)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
            check=True,
        )
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)],
            check=True,
        )
        STAMP_FILE.write_text(digest + "\n")
    env = dict(os.environ, TUSK_BENCH_IN_VENV="1")
    os.execve(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]], env)


# ---------------------------------------------------------------------------
# Clean-up on exit, error and signals
# ---------------------------------------------------------------------------

_cleanups: list = []


def on_exit(fn) -> None:
    """Registers `fn` to run once at exit (most recent first)."""
    _cleanups.append(fn)


def run_cleanups() -> None:
    while _cleanups:
        fn = _cleanups.pop()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - clean-up must go on
            log(f"bench: clean-up failed: {e}")


def _terminate(signum, _frame):
    raise SystemExit(128 + signum)


def install_signal_handlers() -> None:
    # SIGINT raises KeyboardInterrupt (set explicitly: a non-interactive parent
    # shell may have started us with SIGINT ignored); SIGTERM/SIGHUP unwind the
    # stack the same way, so `finally` blocks and atexit clean up.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    atexit.register(run_cleanups)


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass
class Cell:
    """One timed configuration: a system on a key set at a thread count."""

    system: str
    keys: str
    threads: int
    times_ms: list = field(default_factory=list)
    count: int | None = None
    error: str | None = None
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.times_ms)

    @property
    def min_ms(self) -> float | None:
        return min(self.times_ms) if self.times_ms else None

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.times_ms) if self.times_ms else None


@dataclass
class Load:
    """Time to create the table (CREATE TABLE AS or equivalent)."""

    system: str
    keys: str
    ms: float | None
    note: str = ""


def short_error(text: str, limit: int = 300) -> str:
    lines = [l.strip() for l in str(text).strip().splitlines() if l.strip()]
    # Prefer the last ERROR/Error line: that is where tools put the cause.
    for line in reversed(lines):
        if re.search(r"\b(error|panicked)\b", line, re.I):
            return line[:limit]
    return (lines[-1] if lines else "failed")[:limit]


# ---------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------


class PgCluster:
    """A private PostgreSQL cluster in a temporary directory.

    Runs as the `postgres` OS user when we are root (initdb refuses root),
    otherwise as ourselves. Listens only on a Unix socket in its own
    directory. `stop()` (registered for exit) stops it and deletes it."""

    def __init__(self, bin_dir: str, settings: dict):
        self.bin = Path(bin_dir)
        self.settings = dict(settings)
        self.root: Path | None = None
        self.started = False
        self.port = self._free_port()

    @staticmethod
    def _free_port() -> int:
        # There is no TCP listener; the port only names the socket file. Take
        # one the OS says is free anyway, so that a stray TCP setting is harmless.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _as_owner(self, args: list, **kw) -> subprocess.CompletedProcess:
        if os.geteuid() == 0:
            cmd = ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(args)]
        else:
            cmd = args
        return subprocess.run(cmd, cwd="/", capture_output=True, text=True, **kw)

    def start(self) -> None:
        for tool in ("initdb", "pg_ctl"):
            if not (self.bin / tool).exists():
                raise RuntimeError(f"PostgreSQL not found: {self.bin / tool} is missing")
        self.root = Path(tempfile.mkdtemp(prefix="tusk-bench-pg-"))
        on_exit(self.stop)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        r = self._as_owner(
            [str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
             "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]
        )
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed: {r.stdout}{r.stderr}")
        conf = ["", "# tusk bench"]
        conf += [f"port = {self.port}", "listen_addresses = ''",
                 f"unix_socket_directories = '{self.root}'"]
        conf += [f"{k} = '{v}'" for k, v in self.settings.items()]
        with open(self.data / "postgresql.conf", "a") as f:
            f.write("\n".join(conf) + "\n")
        r = self._as_owner(
            [str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
             "-w", "-t", "120", "start"]
        )
        self.started = True
        if r.returncode != 0:
            log_text = (self.root / "server.log").read_text(errors="replace")
            raise RuntimeError(f"pg_ctl start failed: {r.stdout}{r.stderr}\n{log_text}")

    def stop(self) -> None:
        if self.root is None:
            return
        if self.started:
            for mode in ("fast", "immediate"):
                r = self._as_owner(
                    [str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"]
                )
                if r.returncode == 0:
                    break
            self.started = False
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def connect(self):
        import psycopg

        return psycopg.connect(
            host=str(self.root), port=self.port, user="postgres", dbname="postgres",
            autocommit=True,
        )


# ---------------------------------------------------------------------------
# tusk
# ---------------------------------------------------------------------------

TIME_RE = re.compile(r"^Time: ([0-9.]+) ms")


class Tusk:
    """The tusk binary, driven through `-f` scripts with `\\timing on`."""

    def __init__(self, binary: str | None, timeout: float):
        self.binary = binary
        self.timeout = timeout
        self.build_error: str | None = None
        self.data_dir: Path | None = None
        self.startup = dict(self.STARTUP)

    def build(self) -> None:
        if self.binary:
            return
        log("bench: cargo build --release -p tusk-cli ...")
        r = subprocess.run(
            ["cargo", "build", "--release", "-p", "tusk-cli"], cwd=REPO_DIR,
            capture_output=True, text=True,
        )
        binary = REPO_DIR / "target" / "release" / "tusk"
        if r.returncode != 0 or not binary.exists():
            # rustc's first `error[...]` line names the cause; the last one only
            # says which crate did not compile.
            first = next((l for l in r.stderr.splitlines()
                          if re.match(r"error(\[E\d+\])?:", l) and "could not compile" not in l), "")
            self.build_error = "build failed: " + (first.strip()[:300] or short_error(r.stderr))
            log(f"bench: tusk {self.build_error}")
            return
        self.binary = str(binary)

    # Startup settings written to the data directory's tusk.conf; they match
    # the PostgreSQL cluster's shared_buffers and huge_pages.
    STARTUP = {"shared_buffers": "2GB", "huge_pages": "off"}

    def fresh_data_dir(self, parent: str | None) -> None:
        root = Path(tempfile.mkdtemp(prefix="tusk-bench-data-", dir=parent))
        on_exit(lambda: shutil.rmtree(root, ignore_errors=True))
        self.data_dir = root / "data"
        self.data_dir.mkdir()
        (self.data_dir / "tusk.conf").write_text(
            "".join(f"{k} = {v}\n" for k, v in self.startup.items()))

    def script(self, lines: list) -> tuple[list, list]:
        """Runs a -f script; returns (Time: values in ms, integer result lines)."""
        times, values = [], []
        for line in self.output(lines).splitlines():
            m = TIME_RE.match(line.strip())
            if m:
                times.append(float(m.group(1)))
            elif re.fullmatch(r"-?\d+", line.strip()):
                values.append(int(line.strip()))
        return times, values

    def output(self, lines: list) -> str:
        """Runs a -f script (`-A -t -q`) and returns its standard output."""
        return self.run_script(lines).stdout

    def run_script(self, lines: list) -> subprocess.CompletedProcess:
        """Runs a -f script (`-A -t -q`); fails unless it exits 0."""
        if self.build_error:
            raise RuntimeError(self.build_error)
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
            f.write("\n".join(lines) + "\n")
            path = f.name
        try:
            r = subprocess.run(
                [self.binary, "-D", str(self.data_dir), "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1",
                 "-f", path],
                capture_output=True, text=True, timeout=self.timeout,
                env={k: v for k, v in os.environ.items() if k != "TUSKDATA"},
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"timed out after {self.timeout:.0f} s")
        finally:
            os.unlink(path)
        if r.returncode != 0:
            raise RuntimeError(short_error(r.stderr or r.stdout or f"exit {r.returncode}"))
        return r

    def version(self) -> str:
        if self.binary and Path(self.binary).resolve() != (REPO_DIR / "target" / "release" / "tusk").resolve():
            return f"binary {self.binary}"
        try:
            rev = subprocess.run(
                ["git", "-C", str(REPO_DIR), "rev-parse", "--short", "HEAD"],
                capture_output=True, text=True,
            ).stdout.strip()
            dirty = subprocess.run(
                ["git", "-C", str(REPO_DIR), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True, text=True,
            ).stdout.strip()
        except OSError:
            return "unknown"
        return (rev or "no commit") + ("+dirty" if dirty else "")


# ---------------------------------------------------------------------------
# In-process engines, each run in a worker subprocess
# ---------------------------------------------------------------------------
# A worker loads the table, does one warm-up run and `runs` timed runs of the
# query at one thread count, and prints one JSON line. A subprocess per
# configuration isolates crashes and lets Polars read POLARS_MAX_THREADS at
# import time.


def worker_main(spec: dict) -> dict:
    if spec.get("bench") == "spill":
        return spill_duckdb_worker(spec)
    if spec.get("bench") == "copy":
        return copy_duckdb_worker(spec)
    if spec.get("bench") == "tpch":
        from tpch.bench import duckdb_worker

        return duckdb_worker(spec)
    system, keys, threads = spec["system"], spec["keys"], spec["threads"]
    rows, runs, query = spec["rows"], spec["runs"], spec["query"]
    notes = []
    if system == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute(f"SET threads = {threads}")
        t0 = time.perf_counter()
        con.execute(spec["load_sql"]["duckdb"])
        load_ms = (time.perf_counter() - t0) * 1e3

        def once():
            return con.execute(query).fetchone()[0]

        version = duckdb.__version__
        setting = con.execute("select current_setting('threads')").fetchone()[0]
        notes.append(f"threads setting {setting}")
    elif system == "datafusion":
        import datafusion
        from datafusion import SessionConfig, SessionContext

        ctx = SessionContext(SessionConfig().with_target_partitions(threads))
        t0 = time.perf_counter()
        ctx.sql(spec["load_sql"]["datafusion"]).collect()
        load_ms = (time.perf_counter() - t0) * 1e3

        def once():
            return ctx.sql(query).collect()[0].column(0)[0].as_py()

        version = datafusion.__version__
    elif system == "polars":
        import polars as pl

        t0 = time.perf_counter()
        g = pl.int_range(1, rows + 1, dtype=pl.Int64, eager=True).alias("g")
        if keys == "dense":
            col = g.cast(pl.Int32)
        else:
            col = ((g * 48271) % 2147483647).cast(pl.Int32)
        df = pl.DataFrame({"i": col})
        load_ms = (time.perf_counter() - t0) * 1e3

        def once():
            lf = df.lazy()
            return lf.join(lf, on="i", how="inner").select(pl.len()).collect().item()

        version = pl.__version__
        notes.append(f"thread_pool_size={pl.thread_pool_size()}")
    else:
        raise ValueError(f"unknown worker system {system}")
    once()  # warm-up
    times, counts = [], set()
    for _ in range(runs):
        t0 = time.perf_counter()
        counts.add(int(once()))
        times.append((time.perf_counter() - t0) * 1e3)
    if len(counts) > 1:
        notes.append(f"count varies between runs: {sorted(counts)}")
    return {"load_ms": load_ms, "times_ms": times, "count": min(counts),
            "version": version, "notes": notes}


def run_worker(spec: dict, timeout: float) -> dict:
    env = dict(os.environ)
    n = str(spec["threads"])
    if spec["system"] == "polars":
        env["POLARS_MAX_THREADS"] = n
    if spec["system"] == "datafusion":
        env["TOKIO_WORKER_THREADS"] = n
    try:
        r = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "_worker", json.dumps(spec)],
            capture_output=True, text=True, timeout=timeout, env=env,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in r.stdout.splitlines():
        if line.startswith(WORKER_MARK):
            return json.loads(line[len(WORKER_MARK):])
    return {"error": short_error(r.stderr or f"worker exit {r.returncode}")}


# ---------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------


def machine_description() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{mem_kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, AttributeError):
        mem = "unknown RAM"
    return f"{os.cpu_count()} cores ({cpu}), {mem}, {platform.system()} {platform.release()}"


def fmt_ms(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def write_outputs(name: str, markdown: str, data: dict, chart) -> list:
    """Writes NAME-<timestamp>.{md,json,png} and NAME-latest.* under results/."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    written = []

    def put(suffix: str, writer) -> None:
        path = RESULTS_DIR / f"{name}-{stamp}.{suffix}"
        tmp = path.with_name(path.name + ".tmp")
        writer(tmp)
        os.replace(tmp, path)
        latest = RESULTS_DIR / f"{name}-latest.{suffix}"
        shutil.copyfile(path, latest.with_name(latest.name + ".tmp"))
        os.replace(latest.with_name(latest.name + ".tmp"), latest)
        written.append(str(path.relative_to(REPO_DIR)))

    put("md", lambda p: p.write_text(markdown))
    put("json", lambda p: p.write_text(json.dumps(data, indent=2) + "\n"))
    if chart is not None:
        try:
            put("png", chart)
        except Exception as e:  # noqa: BLE001 - a chart failure must not lose the table
            log(f"bench: chart failed: {e}")
    return written


# ---------------------------------------------------------------------------
# Benchmarks
# ---------------------------------------------------------------------------


class Benchmark:
    """A subcommand. Subclasses set `name` and `help`, and implement
    `add_arguments` and `run`."""

    name = ""
    help = ""
    # Whether the benchmark needs the venv's packages (psycopg, engines, charts).
    needs_venv = True

    @staticmethod
    def add_common_arguments(p: argparse.ArgumentParser) -> None:
        p.add_argument("--pg-bin", default=os.environ.get("TUSK_PG_BIN", DEFAULT_PG_BIN),
                       help="PostgreSQL 15 bin directory (default %(default)s)")
        p.add_argument("--tusk-bin", default=None,
                       help="use this tusk binary instead of building target/release/tusk")
        p.add_argument("--workdir", default=None,
                       help="parent directory for tusk's temporary data directory")
        p.add_argument("--timeout", type=float, default=3600,
                       help="seconds allowed for one system at one configuration")

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        raise NotImplementedError

    def run(self, args: argparse.Namespace) -> int:
        raise NotImplementedError


def parse_list(text: str, allowed=None) -> list:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if allowed is not None:
        bad = [x for x in items if x not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown: {', '.join(bad)} (choose from {', '.join(allowed)})")
    return items


class JoinBench(Benchmark):
    name = "join"
    help = "self-join count(*) on 10M dense and sparse int keys"

    QUERY = "select count(*) from t t1 join t t2 using (i)"
    KEYS = ["dense", "sparse"]
    PG_SETTINGS = {
        "huge_pages": "off",
        "shared_buffers": "2GB",
        "work_mem": "1GB",
        "hash_mem_multiplier": "2.0",
        "max_worker_processes": "8",
        "max_parallel_workers": "8",
        "jit": "off",
        "autovacuum": "off",
        "max_wal_size": "8GB",
        "min_dynamic_shared_memory": "1GB",
    }
    # tusk's tables here are never analyzed, where PostgreSQL's costs (and
    # so tusk's) choose a merge join; the benchmark measures hash joins, as
    # PostgreSQL runs them on its analyzed tables.
    TUSK_SETTINGS = {"work_mem": "1GB", "enable_mergejoin": "off"}
    # Both PostgreSQL-shaped systems get the same preallocated pool for the
    # parallel hash join's dynamic shared memory (seed 000), so that neither
    # pays for fresh OS memory on every query; DuckDB, DataFusion and Polars
    # keep their allocations across queries on their own.
    TUSK_STARTUP = {"min_dynamic_shared_memory": "1GB"}

    def add_arguments(self, p):
        self.add_common_arguments(p)
        p.add_argument("--rows", type=int, default=10_000_000, help="rows in t (default 10M)")
        p.add_argument("--runs", type=int, default=5, help="timed runs per configuration (default 5)")
        p.add_argument("--systems", default=",".join(ALL_SYSTEMS),
                       type=lambda s: parse_list(s, ALL_SYSTEMS),
                       help="comma list from: " + ",".join(ALL_SYSTEMS))
        p.add_argument("--threads", default="1,2",
                       type=lambda s: [int(x) for x in parse_list(s)],
                       help="comma list of thread counts (default 1,2)")
        p.add_argument("--keys", default="dense,sparse",
                       type=lambda s: parse_list(s, self.ALL_KEYS),
                       help="comma list from: " + ",".join(self.ALL_KEYS) + " (default dense,sparse); "
                            "zipf and hot are the skew cases, run on tusk and PostgreSQL only")
        p.add_argument("--tusk-set", action="append", default=[], metavar="NAME=VALUE",
                       help="extra SET for tusk's runs, e.g. tusk.hash_join_prefetch=off or "
                            "tusk.hash_chunk_size=128kB (repeatable)")
        p.add_argument("--tusk-conf", action="append", default=[], metavar="NAME=VALUE",
                       help="extra tusk.conf startup setting, e.g. huge_pages=on or "
                            "min_dynamic_shared_memory=2GB (repeatable)")
        p.add_argument("--label", default="",
                       help="text added to the report's title and file names (for variant runs)")

    # Skew cases: `s` is the hashed side, `t` the probe side (dense keys).
    # zipf: keys 1..K, key r ⌊C/r⌋ times (Zipf 1.0), about rows/10 rows in
    # all; hot: one key 1,000,000 times.
    ALL_KEYS = ["dense", "sparse", "zipf", "hot"]
    SKEW_QUERY = "select count(*) from t join s using (i)"

    @staticmethod
    def zipf_counts(rows: int) -> list:
        keys = max(10, rows // 100)
        harmonic = sum(1.0 / r for r in range(1, keys + 1))
        scale = max(1, int(rows / 10 / harmonic))
        return [(r, scale // r) for r in range(1, keys + 1) if scale // r > 0]

    def query(self, keys: str) -> str:
        return self.SKEW_QUERY if keys in ("zipf", "hot") else self.QUERY

    def load_sql(self, keys: str, rows: int) -> dict:
        """Table creation per SQL dialect (several statements for the skew cases)."""
        if keys in ("zipf", "hot"):
            probe = f"create table t as select generate_series(1, {rows})::int i"
            if keys == "hot":
                build = "create table s as select 1 as i from generate_series(1, 1000000) g"
                return {"postgres": [probe, build], "tusk": [probe, build]}
            counts = self.zipf_counts(rows)
            pg = ("create table s as select r as i from (values "
                  + ",".join(f"({r},{c})" for r, c in counts)
                  + ") v(r, c), generate_series(1, v.c) g")
            tusk = [probe, "create table s (i int)"]
            keys_flat = [r for r, c in counts for _ in range(c)]
            for at in range(0, len(keys_flat), 50_000):
                tusk.append("insert into s values "
                            + ",".join(f"({k})" for k in keys_flat[at:at + 50_000]))
            return {"postgres": [probe, pg], "tusk": tusk}
        if keys == "dense":
            pg = f"create table t as select generate_series(1, {rows})::int i"
            duck = f"create table t as select g::int as i from generate_series(1, {rows}) s(g)"
            df = f"create table t as select cast(value as int) as i from generate_series(1, {rows})"
        else:
            pg = ("create table t as select ((g * 48271::bigint) % 2147483647)::int i "
                  f"from generate_series(1, {rows}) g")
            duck = ("create table t as select ((g * 48271::bigint) % 2147483647)::int as i "
                    f"from generate_series(1, {rows}) s(g)")
            df = ("create table t as select cast((value * 48271) % 2147483647 as int) as i "
                  f"from generate_series(1, {rows})")
        return {"postgres": pg, "tusk": pg, "duckdb": duck, "datafusion": df}

    # -- per-system drivers; each fills cells and loads ------------------------

    def bench_postgres(self, args, cluster, keys, cells, loads, meta):
        conn = cluster.connect()
        query = self.query(keys)
        try:
            cur = conn.cursor()
            meta.setdefault("versions", {})["postgres"] = conn.info.parameter_status("server_version")
            cur.execute("drop table if exists t")
            cur.execute("drop table if exists s")
            t0 = time.perf_counter()
            try:
                load = self.load_sql(keys, args.rows)["postgres"]
                for stmt in load if isinstance(load, list) else [load]:
                    cur.execute(stmt)
            except Exception as e:
                loads.append(Load("postgres", keys, None, f"failed: {short_error(str(e))}"))
                raise
            load_ms = (time.perf_counter() - t0) * 1e3
            t0 = time.perf_counter()
            cur.execute("vacuum analyze t")
            if keys in ("zipf", "hot"):
                cur.execute("vacuum analyze s")
            vac_ms = (time.perf_counter() - t0) * 1e3
            loads.append(Load("postgres", keys, load_ms, f"CREATE TABLE AS; then VACUUM ANALYZE {fmt_ms(vac_ms)} ms (not counted)"))
            for threads in args.threads:
                cell = Cell("postgres", keys, threads)
                cells.append(cell)
                try:
                    cur.execute(f"set max_parallel_workers_per_gather = {threads - 1}")
                    cur.execute("explain " + query)
                    plan = "\n".join(r[0] for r in cur.fetchall())
                    join = re.search(r"(Parallel Hash Join|Hash Join|Merge Join|Nested Loop)", plan)
                    workers = re.search(r"Workers Planned: (\d+)", plan)
                    cell.notes.append(f"plan: {join.group(1) if join else '?'}, "
                                      f"workers planned {workers.group(1) if workers else 0}")
                    cur.execute(query)
                    cur.fetchone()  # warm-up
                    counts = set()
                    for _ in range(args.runs):
                        t0 = time.perf_counter()
                        cur.execute(query)
                        counts.add(cur.fetchone()[0])
                        cell.times_ms.append((time.perf_counter() - t0) * 1e3)
                    cell.count = min(counts)
                    if len(counts) > 1:
                        cell.notes.append(f"count varies between runs: {sorted(counts)}")
                except Exception as e:  # noqa: BLE001
                    cell.error = short_error(str(e))
                self.progress(cell)
            cur.execute("drop table t")
            cur.execute("drop table if exists s")
        finally:
            conn.close()

    def tusk_sets(self, args) -> dict:
        sets = dict(self.TUSK_SETTINGS)
        for item in args.tusk_set:
            name, _, value = item.partition("=")
            sets[name.strip()] = value.strip()
        return sets

    def bench_tusk(self, args, tusk, keys, cells, loads, meta):
        meta.setdefault("versions", {})["tusk"] = tusk.version()
        sets = [f"set {k} = '{v}';" for k, v in self.tusk_sets(args).items()]
        query = self.query(keys)
        load = self.load_sql(keys, args.rows)["tusk"]
        load = load if isinstance(load, list) else [load]
        try:
            times, _ = tusk.script(["drop table if exists t;", "drop table if exists s;", "\\timing on"]
                                   + [stmt + ";" for stmt in load])
        except Exception as e:
            loads.append(Load("tusk", keys, None, f"failed: {short_error(str(e))}"))
            raise
        loads.append(Load("tusk", keys, sum(times) if times else None,
                          "CREATE TABLE AS" if times else "no Time: line printed"))
        for threads in args.threads:
            cell = Cell("tusk", keys, threads)
            cells.append(cell)
            try:
                script = sets + [f"set max_parallel_workers_per_gather = {threads - 1};"]
                if keys in ("zipf", "hot"):
                    # `s` is small: let it go parallel anyway.
                    script.append("set min_parallel_table_scan_size = 0;")
                script += ["\\timing on"] + [query + ";"] * (args.runs + 1)
                times, values = tusk.script(script)
                if len(times) != args.runs + 1:
                    raise RuntimeError(f"expected {args.runs + 1} Time: lines, got {len(times)}")
                cell.times_ms = times[1:]  # the first run is the warm-up
                if values:
                    cell.count = min(values)
                    if len(set(values)) > 1:
                        cell.notes.append(f"count varies between runs: {sorted(set(values))}")
                else:
                    cell.notes.append("no count printed")
            except Exception as e:  # noqa: BLE001
                cell.error = short_error(str(e))
            self.progress(cell)

    def bench_worker(self, args, system, keys, cells, loads, meta):
        if keys in ("zipf", "hot"):
            raise RuntimeError(f"the {keys} skew case runs on tusk and PostgreSQL only")
        for threads in args.threads:
            cell = Cell(system, keys, threads)
            cells.append(cell)
            spec = {"system": system, "keys": keys, "threads": threads, "rows": args.rows,
                    "runs": args.runs, "query": self.QUERY,
                    "load_sql": self.load_sql(keys, args.rows)}
            res = run_worker(spec, args.timeout)
            if "error" in res:
                cell.error = res["error"]
            else:
                cell.times_ms = res["times_ms"]
                cell.count = res["count"]
                cell.notes.extend(res.get("notes", []))
                meta.setdefault("versions", {})[system] = res.get("version", "?")
                if threads == args.threads[0]:
                    how = {"polars": "DataFrame from int_range"}.get(system, "CREATE TABLE AS")
                    loads.append(Load(system, keys, res["load_ms"], how))
            self.progress(cell)

    @staticmethod
    def progress(cell: Cell) -> None:
        label = f"{cell.system} {cell.keys} {cell.threads}T"
        if cell.ok:
            log(f"bench: {label}: min {fmt_ms(cell.min_ms)} ms, median {fmt_ms(cell.median_ms)} ms, count {cell.count}")
        else:
            log(f"bench: {label}: FAILED {cell.error}")

    # -- main ------------------------------------------------------------------

    def run(self, args):
        cells: list[Cell] = []
        loads: list[Load] = []
        meta: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_description()}
        failures: dict[str, str] = {}

        tusk = cluster = None
        if "tusk" in args.systems:
            tusk = Tusk(args.tusk_bin, args.timeout)
            tusk.startup.update(self.TUSK_STARTUP)
            for item in args.tusk_conf:
                name, _, value = item.partition("=")
                tusk.startup[name.strip()] = value.strip()
            tusk.build()
            tusk.fresh_data_dir(args.workdir)
            meta["tusk_conf"] = tusk.startup
        if "postgres" in args.systems:
            cluster = PgCluster(args.pg_bin, self.PG_SETTINGS)
            try:
                cluster.start()
                log(f"bench: PostgreSQL cluster in {cluster.root}, port {cluster.port}: "
                    + ", ".join(f"{k}={v}" for k, v in self.PG_SETTINGS.items()))
            except Exception as e:  # noqa: BLE001
                failures["postgres"] = short_error(str(e))
                log(f"bench: PostgreSQL: {e}")
        if tusk is not None:
            log("bench: tusk settings: " + ", ".join(f"{k}={v}" for k, v in
                                                      {**tusk.startup, **self.tusk_sets(args)}.items())
                + ", max_parallel_workers_per_gather = threads - 1")

        for keys in args.keys:
            for system in args.systems:
                try:
                    if system in failures:
                        raise RuntimeError(failures[system])
                    if system == "postgres":
                        self.bench_postgres(args, cluster, keys, cells, loads, meta)
                    elif system == "tusk":
                        self.bench_tusk(args, tusk, keys, cells, loads, meta)
                    else:
                        self.bench_worker(args, system, keys, cells, loads, meta)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as e:  # noqa: BLE001 - one system failing must not stop the others
                    msg = short_error(str(e))
                    log(f"bench: {system} {keys}: FAILED {msg}")
                    if os.environ.get("TUSK_BENCH_DEBUG"):
                        traceback.print_exc()
                    done = {c.threads for c in cells if c.system == system and c.keys == keys}
                    for threads in args.threads:
                        if threads not in done:
                            cells.append(Cell(system, keys, threads, error=msg))
        if cluster is not None:
            cluster.stop()

        markdown = self.markdown(args, cells, loads, meta)
        print(markdown)
        meta["label"] = args.label
        data = {"benchmark": self.name, "query": self.QUERY, "rows": args.rows, "runs": args.runs,
                "keys": args.keys, "meta": meta, "pg_settings": self.PG_SETTINGS,
                "tusk_settings": self.tusk_sets(args), "tusk_conf": tusk.startup if tusk else None,
                "cells": [vars(c) for c in cells], "loads": [vars(l) for l in loads]}
        name = self.name + (f"-{re.sub(r'[^A-Za-z0-9_.-]+', '_', args.label)}" if args.label else "")
        written = write_outputs(name, markdown, data, lambda p: self.chart(p, args, cells))
        log("bench: wrote " + ", ".join(written))
        return 0

    def markdown(self, args, cells, loads, meta) -> str:
        data_conf = meta.get("tusk_conf")
        # The count most systems agree on, per key set; others get flagged.
        majority = {}
        for keys in args.keys:
            counts = [c.count for c in cells if c.keys == keys and c.ok and c.count is not None]
            if counts:
                majority[keys] = max(set(counts), key=counts.count)
        versions = ", ".join(f"{k} {v}" for k, v in sorted(meta.get("versions", {}).items()))
        out = [f"# join benchmark{' (' + args.label + ')' if args.label else ''}, {meta['started']}", ""]
        out.append(f"`{self.QUERY}` with t = {args.rows:,} rows; dense keys "
                   f"`generate_series(1, {args.rows})::int`, sparse keys "
                   "`((g * 48271::bigint) % 2147483647)::int`. Every key is distinct, so the "
                   f"expected count is {args.rows:,} for both.")
        if set(args.keys) & {"zipf", "hot"}:
            out.append("")
            out.append(f"Skew cases (tusk and PostgreSQL only): `{self.SKEW_QUERY}` with t = dense keys "
                       f"1..{args.rows:,}; zipf: `s` holds keys 1..K, key r ⌊C/r⌋ times (Zipf 1.0, "
                       f"{sum(c for _, c in self.zipf_counts(args.rows)):,} rows); hot: `s` holds one "
                       "key 1,000,000 times. The count equals the rows of `s`.")
        out.append("")
        out.append(f"Times in ms over {args.runs} timed runs after 1 warm-up run; table load not included. "
                   "Threads: PostgreSQL and tusk run `max_parallel_workers_per_gather = threads - 1`.")
        out.append("")
        out.append(f"Machine: {meta['machine']}. Versions: {versions or 'n/a'}.")
        out.append("")
        out.append("| system | keys | threads | min ms | median ms | count |")
        out.append("|---|---|---:|---:|---:|---:|")
        notes = []
        for keys in args.keys:
            for threads in args.threads:
                for system in args.systems:
                    for c in cells:
                        if (c.system, c.keys, c.threads) != (system, keys, threads):
                            continue
                        if c.ok:
                            count = f"{c.count:,}" if c.count is not None else "?"
                            if c.count is not None and majority.get(keys) not in (None, c.count):
                                count = f"**{count} ≠ {majority[keys]:,}**"
                            out.append(f"| {system} | {keys} | {threads} | {fmt_ms(c.min_ms)} | "
                                       f"{fmt_ms(c.median_ms)} | {count} |")
                        else:
                            out.append(f"| {system} | {keys} | {threads} | failed | failed | — |")
                            notes.append(f"{system} {keys} {threads}T failed: {c.error}")
                        notes.extend(f"{system} {keys} {threads}T: {n}" for n in c.notes)
        for keys, count in majority.items():
            if count != args.rows and keys not in ("zipf", "hot"):
                notes.append(f"the usual count for {keys} keys is {count:,}, not {args.rows:,}")
        out += ["", "## Table load (not included above)", "",
                "| system | keys | ms | how |", "|---|---|---:|---|"]
        for l in loads:
            out.append(f"| {l.system} | {l.keys} | {fmt_ms(l.ms)} | {l.note} |")
        settings = {
            "tusk": "tusk: `tusk.conf` " + ", ".join(f"`{k} = {v}`" for k, v in (data_conf or {}).items())
            + "; " + ", ".join(f"`SET {k} = '{v}'`" for k, v in self.tusk_sets(args).items())
            + ", `SET max_parallel_workers_per_gather` = threads - 1; times from the `Time:` lines "
            "of `\\timing on` in a `tusk -A -t -q -f` script (one process per thread count).",
            "postgres": "PostgreSQL 15, private cluster (initdb --locale=C, Unix socket only): "
            + ", ".join(f"`{k}={v}`" for k, v in self.PG_SETTINGS.items())
            + ", other settings default; `max_parallel_workers_per_gather` = threads - 1; "
            "timed client-side with psycopg.",
            "duckdb": "DuckDB: in-memory database, `SET threads` = threads.",
            "datafusion": "DataFusion: `target_partitions` = threads, `TOKIO_WORKER_THREADS` = threads.",
            "polars": "Polars: `POLARS_MAX_THREADS` = threads; lazy inner join, then `pl.len()`.",
        }
        out += ["", "## Settings", ""] + [f"- {settings[s]}" for s in args.systems]
        if set(args.systems) & {"duckdb", "datafusion", "polars"}:
            out.append("- DuckDB, DataFusion and Polars run in a fresh Python subprocess per configuration.")
        if notes:
            out += ["", "## Notes", ""] + [f"- {n}" for n in notes]
        return "\n".join(out) + "\n"

    def chart(self, path: Path, args, cells) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        groups = [(k, t) for k in args.keys for t in args.threads]
        systems = list(args.systems)
        width = 0.8 / max(1, len(systems))
        fig, ax = plt.subplots(figsize=(max(8, 2.2 * len(groups)), 5))
        ok_values = [c.median_ms for c in cells if c.ok]
        top = max(ok_values) if ok_values else 1.0
        low = min(ok_values) if ok_values else 1.0
        log_scale = low > 0 and top / low > 50
        for si, system in enumerate(systems):
            xs, med, mins = [], [], []
            for gi, (keys, threads) in enumerate(groups):
                x = gi + (si - (len(systems) - 1) / 2) * width
                cell = next((c for c in cells if (c.system, c.keys, c.threads) == (system, keys, threads)), None)
                if cell is not None and cell.ok:
                    xs.append(x)
                    med.append(cell.median_ms)
                    mins.append(cell.min_ms)
                    ax.text(x, cell.median_ms, fmt_ms(cell.median_ms), ha="center", va="bottom",
                            fontsize=7, rotation=90)
                else:
                    ax.text(x, low if log_scale else top * 0.02, "failed", ha="center", va="bottom", fontsize=7,
                            rotation=90, color="red")
            ax.bar(xs, med, width, label=system)
            ax.scatter(xs, mins, marker="_", color="black", s=80, zorder=3)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"{k} keys\n{t} thread{'s' if t > 1 else ''}" for k, t in groups])
        if log_scale:
            ax.set_yscale("log")
        ax.set_ylabel("median ms (lower is better; black tick = min)" + (", log scale" if log_scale else ""))
        ax.set_title(f"{self.QUERY}\nt = {args.rows:,} rows, {args.runs} runs")
        if not log_scale:
            ax.set_ylim(0, top * 1.25)
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, format="png", dpi=120)
        plt.close(fig)


# ---------------------------------------------------------------------------
# spill: a hash join whose hash table does not fit in memory (seed 004)
# ---------------------------------------------------------------------------


def parse_size_kb(text: str) -> int:
    """'4MB', '512kB', '1GB' (PostgreSQL units, 1 MB = 1024 kB) -> kB."""
    m = re.fullmatch(r"\s*(\d+)\s*(kB|MB|GB)?\s*", text, re.I)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 4MB, 512kB)")
    return int(m.group(1)) * {"kb": 1, "mb": 1024, "gb": 1024 * 1024}[(m.group(2) or "kB").lower()]


def fmt_kb(kb: int) -> str:
    """kB -> PostgreSQL unit text ('4MB', '512kB')."""
    for unit, size in (("GB", 1024 * 1024), ("MB", 1024)):
        if kb % size == 0:
            return f"{kb // size}{unit}"
    return f"{kb}kB"


def proc_io() -> dict:
    """This process's I/O counters. `wchar` counts every byte handed to a
    write system call, whether or not it reached the disk."""
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return {}
    return {k: int(v) for k, v in (l.split(": ", 1) for l in text.splitlines() if ": " in l)}


def spill_duckdb_worker(spec: dict) -> dict:
    """DuckDB side of the spill benchmark, in its own subprocess.

    The tables live in a database file (an in-memory database would count
    them against memory_limit and spill them to the temp directory too). The
    query runs at memory_limit = spec['limit_kb'] KiB, doubling on
    out-of-memory up to spec['max_limit_kb']; then once with the JSON profiler
    (build side, peak buffer memory) and `runs` times plain (timed, with the
    bytes this process wrote meanwhile, which all go to temp files: the
    query does not modify the database)."""
    import duckdb

    work = Path(spec["dir"])
    con = duckdb.connect(str(work / "spill.duckdb"))
    con.execute("SET threads = 1")
    con.execute(f"SET temp_directory = '{work / 'tmp'}'")
    notes = []

    def used_bytes() -> int:
        used, block = con.execute("select used_blocks, block_size from pragma_database_size()").fetchone()
        return used * block

    con.execute("checkpoint")
    before = used_bytes()
    t0 = time.perf_counter()
    con.execute(spec["load_big"])
    con.execute("checkpoint")
    load_big_ms = (time.perf_counter() - t0) * 1e3
    table_bytes = used_bytes() - before
    t0 = time.perf_counter()
    con.execute(spec["load_probe"])
    con.execute("checkpoint")
    load_probe_ms = (time.perf_counter() - t0) * 1e3

    query = spec["query"]

    def timed():
        io0 = proc_io()
        t0 = time.perf_counter()
        row = con.execute(query).fetchall()[0]
        secs = time.perf_counter() - t0
        io1 = proc_io()
        wrote = io1["wchar"] - io0["wchar"] if "wchar" in io0 and "wchar" in io1 else None
        return secs, row, wrote

    def out_of_memory(e: Exception) -> bool:
        return isinstance(e, duckdb.Error) and "out of memory" in str(e).lower()

    limit_kb, tried = spec["limit_kb"], []
    while True:
        # KiB, not KB: DuckDB's KB/MB are powers of 1000, PostgreSQL's of 1024.
        con.execute(f"SET memory_limit = '{limit_kb}KiB'")
        setting = con.execute("select current_setting('memory_limit')").fetchone()[0]
        try:
            first = timed()
            tried.append({"limit_kb": limit_kb, "setting": setting, "result": "ok"})
            break
        except Exception as e:  # noqa: BLE001
            if not out_of_memory(e):
                raise
            tried.append({"limit_kb": limit_kb, "setting": setting, "result": "out of memory",
                          "error": short_error(str(e))})
            if limit_kb * 2 > spec["max_limit_kb"]:
                return {"error": f"out of memory at every memory_limit up to {setting}",
                        "memory_limits": tried, "table_bytes": table_bytes,
                        "load_big_ms": load_big_ms, "load_probe_ms": load_probe_ms,
                        "version": duckdb.__version__}
            limit_kb *= 2

    prof_path = work / "profile.json"
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"SET profile_output = '{prof_path}'")
    try:
        con.execute(query).fetchall()  # the profile is written when the result is consumed
    except Exception as e:  # noqa: BLE001
        if not out_of_memory(e):
            raise
        notes.append(f"the profiled run failed at {setting}: {short_error(str(e))}")
    con.execute("PRAGMA disable_profiling")
    profile = json.loads(prof_path.read_text()) if prof_path.exists() else {}

    def find(node, kind):
        """The first operator of type `kind` in a profile (tree under
        'operator' or 'children', depending on the DuckDB version)."""
        if isinstance(node, list):
            return next((hit for hit in (find(x, kind) for x in node) if hit is not None), None)
        if not isinstance(node, dict):
            return None
        if node.get("type") == kind or node.get("operator_type") == kind:
            return node
        return find([node[k] for k in ("operator", "children") if k in node], kind)

    hashed, join_info = None, {}
    join = find(profile, "HASH_JOIN")
    if join is not None:
        join_info = join.get("extra_info", {})
        if len(join.get("children", [])) == 2:  # DuckDB builds on the right child
            build = find(join["children"][1], "TABLE_SCAN") or {}
            table = build.get("extra_info", {}).get("Table", "")
            hashed = table.rsplit(".", 1)[-1] if table else None
    else:
        notes.append("no HASH_JOIN in the profile")
    system = profile.get("system", {})

    times, written, rows = [], [], set()
    for i in range(spec["runs"]):
        try:
            secs, row, wrote = timed()
        except Exception as e:  # noqa: BLE001 - the limit held once; say so if it does not again
            if not out_of_memory(e):
                raise
            notes.append(f"timed run {i + 1} failed at {setting}: {short_error(str(e))}")
            continue
        times.append(secs)
        written.append(wrote)
        rows.add(tuple(row))
    if not times:  # fall back on the run that found the limit
        notes.append("time and bytes written are from the run that found the memory limit")
        times, written, rows = [first[0]], [first[2]], {tuple(first[1])}
    if len(rows) > 1:
        notes.append(f"result varies between runs: {sorted(rows)}")
    row = min(rows)
    return {"version": duckdb.__version__, "table_bytes": table_bytes,
            "load_big_ms": load_big_ms, "load_probe_ms": load_probe_ms,
            "memory_limits": tried, "memory_limit": setting, "limit_kb": limit_kb,
            "first_run_s": first[0], "times_s": times, "wchar": written,
            "count": int(row[0]), "max_pad": row[1], "hashed": hashed, "join_info": join_info,
            "peak_buffer_memory": system.get("peak_buffer_memory"),
            "peak_temp_dir_size": system.get("peak_temp_dir_size"),
            "profile_io": profile.get("io", {}), "notes": notes}


@dataclass
class SpillResult:
    """One system at one size."""

    system: str
    rows: int
    query: str = ""
    hashed: str | None = None        # the relation under the Hash node (build side)
    nbatch: int | None = None
    peak_kb: int | None = None       # as the system reports it (see the footnotes)
    limit_kb: int | None = None
    times_s: list = field(default_factory=list)
    table_bytes: int | None = None   # size of `big` in the system's own storage
    temp_written: int | None = None  # bytes
    temp_read: int | None = None     # bytes
    count: int | None = None
    max_pad: str | None = None
    error: str | None = None
    notes: list = field(default_factory=list)
    plan: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.times_s)

    @property
    def amplification(self) -> float | None:
        if self.temp_written is None or not self.table_bytes:
            return None
        return self.temp_written / self.table_bytes


def plan_node(lines: list, header: str) -> list:
    """The lines of the first plan node whose title matches `header` (a regex
    matched after the optional `->`): its title line and its detail lines, up
    to its first child."""
    for i, line in enumerate(lines):
        if re.match(r"\s*(->\s+)?" + header + r"\s\s\(", line):
            block = [line]
            for nxt in lines[i + 1:]:
                if re.match(r"\s*->", nxt):
                    break
                block.append(nxt)
            return block
    return []


def hashed_relation(lines: list) -> str | None:
    """The relation scanned below the first Hash node of a text plan."""
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)(->\s+)?(Parallel )?Hash\s\s", line)
        if m:
            depth = len(m.group(1))
            for nxt in lines[i + 1:]:
                mm = re.match(r"(\s*)", nxt)
                if len(mm.group(1)) <= depth and nxt.strip():
                    break
                scan = re.search(r"Scan on (\w+)", nxt)
                if scan:
                    return scan.group(1)
            return None
    return None


class SpillBench(Benchmark):
    name = "spill"
    help = "hash join whose hash table does not fit in work_mem (seed 004's table)"

    SYSTEMS = ["tusk", "postgres", "duckdb"]
    # 93 characters; with the row number appended a pad is ~100 bytes.
    PAD_PREFIX = ("tusk-spill-" + "0123456789abcdefghijklmnopqrstuvwxyz" * 3)[:93]
    QUERY = "select count(*), max(b.pad) from probe p join big b using (id)"
    # The planners hash the side they think is smaller. If a system still
    # picks `probe`, this variant (a filter that removes no row but divides
    # `big`'s estimate) is tried; the report says when it was used.
    QUERY_NUDGED = QUERY + " where b.id > 0"

    def add_arguments(self, p):
        self.add_common_arguments(p)
        p.add_argument("--rows", default="1000000,5000000,10000000,25000000",
                       type=lambda s: [int(x) for x in parse_list(s)],
                       help="comma list of row counts of `big` (default 1M,5M,10M,25M)")
        p.add_argument("--probe-factor", type=int, default=2,
                       help="probe has this many rows per row of big, every id of big equally "
                            "often (default 2: with 1, PostgreSQL hashes the narrow probe)")
        p.add_argument("--work-mem", type=parse_size_kb, default=parse_size_kb("4MB"),
                       help="work_mem for tusk and PostgreSQL (default 4MB; hash_mem_multiplier "
                            "is 2.0, so the hash join may use twice that)")
        p.add_argument("--duckdb-memory-limit", type=parse_size_kb, default=None,
                       help="first DuckDB memory_limit to try (default work_mem x 2, i.e. 8MB); "
                            "doubled on out-of-memory")
        p.add_argument("--duckdb-max-memory-limit", type=parse_size_kb, default=parse_size_kb("16GB"),
                       help="give up doubling DuckDB's memory_limit beyond this (default 16GB)")
        p.add_argument("--runs", type=int, default=1,
                       help="timed runs of the plain query per system and size (default 1; "
                            "the EXPLAIN ANALYZE run before them is the warm-up)")
        p.add_argument("--systems", default=",".join(self.SYSTEMS),
                       type=lambda s: parse_list(s, self.SYSTEMS),
                       help="comma list from: " + ",".join(self.SYSTEMS))
        p.add_argument("--tusk-parallel", type=int, default=0, metavar="WORKERS",
                       help="run tusk's join with this many workers (plus the leader) as a "
                            "Parallel Hash Join; its peak and limit cover all participants "
                            "(default 0: serial, like the other systems)")
        p.add_argument("--tusk-in-memory", type=parse_size_kb, default=None, metavar="WORK_MEM",
                       help="also run tusk's query at this work_mem (e.g. 8GB) for a no-spill "
                            "reference row, and give the spilling run's time relative to it")

    # -- workload ----------------------------------------------------------------

    def load_sql(self, system: str, rows: int, factor: int) -> tuple[str, str]:
        """(CREATE TABLE big, CREATE TABLE probe) in the system's dialect."""
        src = "generate_series(1, {}) s(g)" if system == "duckdb" else "generate_series(1, {}) g"
        big = (f"create table big as select g::int as id, '{self.PAD_PREFIX}' || g::text as pad "
               f"from {src.format(rows)}")
        probe = f"create table probe as select (g % {rows} + 1)::int as id from {src.format(factor * rows)}"
        return big, probe

    def limit_kb(self, args) -> int:
        return args.work_mem * 2  # hash_mem_multiplier = 2.0

    def pg_settings(self, args) -> dict:
        return {
            "huge_pages": "off",
            "shared_buffers": "2GB",
            "work_mem": fmt_kb(args.work_mem),
            "hash_mem_multiplier": "2.0",
            "max_parallel_workers_per_gather": "0",
            "jit": "off",
            "autovacuum": "off",
            "max_wal_size": "8GB",
        }

    def tusk_settings(self, args) -> dict:
        # Never analyzed: a merge join otherwise (see JoinBench.TUSK_SETTINGS).
        settings = {"work_mem": fmt_kb(args.work_mem), "hash_mem_multiplier": "2",
                    "max_parallel_workers_per_gather": str(args.tusk_parallel),
                    "enable_mergejoin": "off"}
        if args.tusk_parallel:
            settings["min_parallel_table_scan_size"] = "0"
        return settings

    # -- tusk ----------------------------------------------------------------------

    @staticmethod
    def file_sizes(directory: Path) -> dict:
        sizes = {}
        if directory.exists():
            for f in directory.rglob("*"):
                if f.is_file():
                    sizes[str(f.relative_to(directory))] = f.stat().st_size
        return sizes

    def bench_tusk(self, args, tusk, n, res, loads, meta):
        meta.setdefault("versions", {})["tusk"] = tusk.version()
        base = tusk.data_dir / "base"
        load_big, load_probe = self.load_sql("tusk", n, args.probe_factor)
        tusk.output(["drop table if exists big;", "drop table if exists probe;"])
        before = self.file_sizes(base)
        out = tusk.output(["\\timing on", load_big + ";"])
        after = self.file_sizes(base)
        # The relation file(s) the CREATE TABLE made; `big` is the only table.
        res.table_bytes = sum(size for name, size in after.items() if before.get(name) != size)
        res.extra["big_files"] = sorted(name for name, size in after.items() if before.get(name) != size)
        big_ms = next((float(m.group(1)) for m in map(TIME_RE.match, out.splitlines()) if m), None)
        out = tusk.output(["\\timing on", load_probe + ";"])
        probe_ms = next((float(m.group(1)) for m in map(TIME_RE.match, out.splitlines()) if m), None)
        loads.append({"system": "tusk", "rows": n, "big_ms": big_ms, "probe_ms": probe_ms,
                      "how": "CREATE TABLE AS (Time: lines)"})

        sets = [f"set {k} = '{v}';" for k, v in self.tusk_settings(args).items()]
        for q in (self.QUERY, self.QUERY_NUDGED):
            plan = tusk.output(sets + ["explain " + q + ";"]).splitlines()
            res.query, res.hashed = q, hashed_relation(plan)
            if res.hashed == "big":
                break
        if res.query != self.QUERY:
            res.notes.append("the plain query hashed `probe`; ran it with `where b.id > 0` added "
                             "(removes no row, lowers big's row estimate)")

        self.tusk_measure(args, tusk, sets, res)
        extra = []
        if args.tusk_in_memory:
            mem = SpillResult(f"tusk, work_mem {fmt_kb(args.tusk_in_memory)}", n, query=res.query,
                              table_bytes=res.table_bytes)
            extra.append(mem)
            mem_sets = sets + [f"set work_mem = '{fmt_kb(args.tusk_in_memory)}';"]
            try:
                self.tusk_measure(args, tusk, mem_sets, mem)
            except Exception as e:  # noqa: BLE001
                mem.error = short_error(str(e))
            if mem.ok and res.ok:
                ratio = min(res.times_s) / min(mem.times_s)
                res.notes.append(f"{ratio:.2f}× the time at work_mem = {fmt_kb(args.tusk_in_memory)}")
        return extra

    def tusk_measure(self, args, tusk, sets, res):
        """EXPLAIN ANALYZE, then the timed runs, in one tusk process; fills `res`."""
        script = sets + ["\\timing on", "explain analyze " + res.query + ";"] + [res.query + ";"] * args.runs
        out = tusk.output(script).splitlines()
        times = [float(m.group(1)) for m in map(TIME_RE.match, (l.strip() for l in out)) if m]
        first_time = next(i for i, l in enumerate(out) if TIME_RE.match(l.strip()))
        plan = out[:first_time]
        res.plan = "\n".join(plan)
        res.hashed = hashed_relation(plan)
        results = [re.match(r"^(\d+)\|(.*)$", l) for l in out[first_time:]]
        results = [(int(m.group(1)), m.group(2)) for m in results if m]
        if len(times) != args.runs + 1 or len(results) != args.runs:
            raise RuntimeError(f"expected {args.runs + 1} Time: lines and {args.runs} results, "
                               f"got {len(times)} and {len(results)}")
        res.times_s = [t / 1e3 for t in times[1:]]
        res.extra["explain_analyze_s"] = times[0] / 1e3
        res.count, res.max_pad = min(results)
        if len(set(results)) > 1:
            res.notes.append("result varies between runs")

        node = "\n".join(plan_node(plan, "(Parallel )?Hash"))
        if not node:
            res.notes.append("no Hash node in EXPLAIN ANALYZE")
        m = re.search(r"Batches: (\d+)(?: \(originally (\d+)\))?", node)
        if m:
            res.nbatch = int(m.group(1))
        m = re.search(r"Peak Memory: (\d+)kB(?: \(limit (\d+)kB(?: × (\d+) participants)?\))?", node)
        if m:
            res.peak_kb = int(m.group(1))
            res.limit_kb = int(m.group(2)) if m.group(2) else None
            if res.limit_kb is not None and m.group(3):
                # A Parallel Hash Join's limit covers all its participants.
                res.limit_kb *= int(m.group(3))
                res.notes.append(f"Parallel Hash Join, {m.group(3)} participants")
        elif res.nbatch != 1:
            res.notes.append("no `Peak Memory:` in EXPLAIN ANALYZE")
        m = re.search(r"Memory Usage: (\d+)kB", node)
        if m:
            res.extra["memory_usage_kb"] = int(m.group(1))
        m = re.search(r"Temp Written: (\d+)kB", node)
        res.temp_written = int(m.group(1)) * 1024 if m else None
        m = re.search(r"Temp Read: (\d+)kB", node)
        res.temp_read = int(m.group(1)) * 1024 if m else None
        if res.temp_written is None:
            if res.nbatch == 1:
                res.temp_written = 0
            else:
                res.notes.append("no `Temp Written:` in EXPLAIN ANALYZE")
        m = re.search(r"Partitions: (\d+) per level, (\d+) level\(s\), (\d+) chunked", node)
        if m:
            res.extra.update(partitions_per_level=int(m.group(1)), levels=int(m.group(2)),
                             chunked=int(m.group(3)))
            res.notes.append(f"{m.group(1)} partitions per level, {m.group(2)} level(s), "
                             f"{m.group(3)} chunked")
        m = re.search(r"Slices?: (\d+)", node)
        if m:
            res.extra["slices"] = int(m.group(1))
            res.notes.append(f"{m.group(1)} slices")
        if res.peak_kb is not None and res.peak_kb > (res.limit_kb or self.limit_kb(args)):
            res.notes.append(f"peak memory {res.peak_kb} kB is over the limit "
                             f"{res.limit_kb or self.limit_kb(args)} kB")
        leftovers = self.file_sizes(tusk.data_dir / "tmp")
        if leftovers:
            res.notes.append(f"{len(leftovers)} file(s), {sum(leftovers.values()) / 2**20:.1f} MB "
                             "left in the data directory's tmp/ after the script")

    def drop_tusk(self, tusk):
        tusk.output(["drop table if exists big;", "drop table if exists probe;"])

    # -- PostgreSQL ------------------------------------------------------------------

    def bench_postgres(self, args, cluster, n, res, loads, meta):
        conn = cluster.connect()
        try:
            cur = conn.cursor()
            meta.setdefault("versions", {})["postgres"] = conn.info.parameter_status("server_version")
            cur.execute("drop table if exists big")
            cur.execute("drop table if exists probe")
            load_big, load_probe = self.load_sql("postgres", n, args.probe_factor)
            t0 = time.perf_counter()
            cur.execute(load_big)
            big_ms = (time.perf_counter() - t0) * 1e3
            t0 = time.perf_counter()
            cur.execute(load_probe)
            probe_ms = (time.perf_counter() - t0) * 1e3
            t0 = time.perf_counter()
            cur.execute("vacuum analyze big")
            cur.execute("vacuum analyze probe")
            vac_ms = (time.perf_counter() - t0) * 1e3
            loads.append({"system": "postgres", "rows": n, "big_ms": big_ms, "probe_ms": probe_ms,
                          "how": f"CREATE TABLE AS; then VACUUM ANALYZE both, {fmt_ms(vac_ms)} ms (not counted)"})
            cur.execute("select pg_relation_size('big')")
            res.table_bytes = cur.fetchone()[0]
            for k, v in self.pg_settings(args).items():
                if k in ("work_mem", "hash_mem_multiplier", "max_parallel_workers_per_gather"):
                    cur.execute(f"set {k} = '{v}'")
            for q in (self.QUERY, self.QUERY_NUDGED):
                cur.execute("explain " + q)
                res.query = q
                res.hashed = hashed_relation([r[0] for r in cur.fetchall()])
                if res.hashed == "big":
                    break
            if res.query != self.QUERY:
                res.notes.append("the plain query hashed `probe`; ran it with `where b.id > 0` added")
            t0 = time.perf_counter()
            cur.execute("explain (analyze, buffers) " + res.query)
            plan = [r[0] for r in cur.fetchall()]
            res.extra["explain_analyze_s"] = time.perf_counter() - t0
            res.plan = "\n".join(plan)
            res.hashed = hashed_relation(plan)
            node = "\n".join(plan_node(plan, "(Parallel )?Hash"))
            m = re.search(r"Batches: (\d+)(?: \(originally (\d+)\))?", node)
            if m:
                res.nbatch = int(m.group(1))
                if m.group(2):
                    res.extra["nbatch_originally"] = int(m.group(2))
            m = re.search(r"Memory Usage: (\d+)kB", node)
            if m:
                res.peak_kb = int(m.group(1))
            res.limit_kb = self.limit_kb(args)
            join = "\n".join(plan_node(plan, "Hash Join"))
            m = re.search(r"temp(?: read=(\d+))?(?: written=(\d+))?", join)
            if m:
                res.temp_read = int(m.group(1) or 0) * 8192
                res.temp_written = int(m.group(2) or 0) * 8192
            elif join:
                res.temp_read = res.temp_written = 0
            if res.nbatch and res.nbatch > 1:
                bufs = 2 * res.nbatch * 8
                res.extra["buffile_buffers_kb"] = bufs
                res.notes.append(f"Memory Usage leaves out the batch files' buffers: up to "
                                 f"2 × {res.nbatch} × 8 kB = {bufs:,} kB more")
            outs = set()
            for _ in range(args.runs):
                t0 = time.perf_counter()
                cur.execute(res.query)
                row = cur.fetchone()
                res.times_s.append(time.perf_counter() - t0)
                outs.add((int(row[0]), row[1]))
            res.count, res.max_pad = min(outs)
            if len(outs) > 1:
                res.notes.append("result varies between runs")
        finally:
            conn.close()

    def drop_postgres(self, cluster):
        conn = cluster.connect()
        try:
            conn.execute("drop table if exists big")
            conn.execute("drop table if exists probe")
        finally:
            conn.close()

    # -- DuckDB ----------------------------------------------------------------------

    def bench_duckdb(self, args, n, res, loads, meta):
        work = Path(tempfile.mkdtemp(prefix="tusk-bench-duckdb-", dir=args.workdir))
        on_exit(lambda: shutil.rmtree(work, ignore_errors=True))
        try:
            load_big, load_probe = self.load_sql("duckdb", n, args.probe_factor)
            spec = {"bench": "spill", "system": "duckdb", "threads": 1, "dir": str(work),
                    "load_big": load_big, "load_probe": load_probe, "query": self.QUERY,
                    "limit_kb": args.duckdb_memory_limit or self.limit_kb(args),
                    "max_limit_kb": args.duckdb_max_memory_limit, "runs": args.runs}
            out = run_worker(spec, args.timeout)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        res.query = self.QUERY
        if "version" in out:
            meta.setdefault("versions", {})["duckdb"] = out["version"]
        if "load_big_ms" in out:
            loads.append({"system": "duckdb", "rows": n, "big_ms": out["load_big_ms"],
                          "probe_ms": out["load_probe_ms"],
                          "how": "CREATE TABLE AS into a database file, then CHECKPOINT"})
        res.table_bytes = out.get("table_bytes")
        tried = out.get("memory_limits", [])
        res.extra["memory_limits"] = tried
        failed = [t for t in tried if t["result"] != "ok"]
        if failed:
            res.notes.append("memory_limit " + ", ".join(f"{t['setting']}: out of memory" for t in failed)
                             + (f"; ran at {out['memory_limit']}" if "memory_limit" in out else ""))
            res.extra["first_error"] = failed[0].get("error")
        if "error" in out:
            res.error = out["error"]
            return
        res.limit_kb = out["limit_kb"]
        res.hashed = out["hashed"]
        res.times_s = out["times_s"]
        res.count, res.max_pad = out["count"], out["max_pad"]
        res.peak_kb = out["peak_buffer_memory"] // 1024 if out.get("peak_buffer_memory") is not None else None
        written = [w for w in out["wchar"] if w is not None]
        res.temp_written = min(written) if written else None
        if written and max(written) != min(written):
            res.notes.append(f"bytes written vary between runs: {', '.join(f'{w / 2**20:.1f}' for w in written)} MB")
        res.extra.update(join_info=out["join_info"], peak_temp_dir_size=out["peak_temp_dir_size"],
                         profile_io=out["profile_io"], first_run_s=out["first_run_s"], memory_limit=out["memory_limit"])
        res.notes.extend(out.get("notes", []))

    # -- main ------------------------------------------------------------------------

    def run(self, args):
        if args.runs < 1:
            raise SystemExit("--runs must be at least 1")
        results: list[SpillResult] = []
        loads: list[dict] = []
        meta: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_description()}
        failures: dict[str, str] = {}
        tusk = cluster = None
        if "tusk" in args.systems:
            tusk = Tusk(args.tusk_bin, args.timeout)
            tusk.build()
            tusk.fresh_data_dir(args.workdir)
            log("bench: tusk settings: " + ", ".join(
                f"{k}={v}" for k, v in {**Tusk.STARTUP, **self.tusk_settings(args)}.items()))
        if "postgres" in args.systems:
            cluster = PgCluster(args.pg_bin, self.pg_settings(args))
            try:
                cluster.start()
                log(f"bench: PostgreSQL cluster in {cluster.root}, port {cluster.port}: "
                    + ", ".join(f"{k}={v}" for k, v in self.pg_settings(args).items()))
            except Exception as e:  # noqa: BLE001
                failures["postgres"] = short_error(str(e))
                log(f"bench: PostgreSQL: {e}")

        for n in args.rows:
            free = shutil.disk_usage(args.workdir or tempfile.gettempdir()).free
            log(f"bench: {n:,} rows; {free / 2**30:.1f} GiB free on the work disk")
            for system in args.systems:
                res = SpillResult(system, n)
                results.append(res)
                more = []  # reference rows (tusk at a large work_mem)
                try:
                    if system in failures:
                        raise RuntimeError(failures[system])
                    if system == "tusk":
                        try:
                            more = self.bench_tusk(args, tusk, n, res, loads, meta)
                        finally:
                            self.drop_tusk(tusk)
                    elif system == "postgres":
                        try:
                            self.bench_postgres(args, cluster, n, res, loads, meta)
                        finally:
                            self.drop_postgres(cluster)
                    else:
                        self.bench_duckdb(args, n, res, loads, meta)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as e:  # noqa: BLE001 - one system failing must not stop the others
                    res.error = short_error(str(e))
                    if os.environ.get("TUSK_BENCH_DEBUG"):
                        traceback.print_exc()
                for r in [res] + more:
                    self.progress(r)
                results.extend(more)
        if cluster is not None:
            cluster.stop()

        markdown = self.markdown(args, results, loads, meta)
        print(markdown)
        data = {"benchmark": self.name, "query": self.QUERY, "rows": args.rows,
                "probe_factor": args.probe_factor, "work_mem_kb": args.work_mem,
                "limit_kb": self.limit_kb(args), "runs": args.runs, "meta": meta,
                "load_sql": {s: self.load_sql(s, args.rows[0], args.probe_factor) for s in args.systems},
                "pg_settings": self.pg_settings(args), "tusk_settings": self.tusk_settings(args),
                "results": [dict(vars(r), amplification=r.amplification) for r in results],
                "loads": loads}
        written = write_outputs(self.name, markdown, data, lambda p: self.chart(p, args, results))
        log("bench: wrote " + ", ".join(written))
        return 0

    @staticmethod
    def progress(res: SpillResult) -> None:
        if res.ok:
            amp = f"{res.amplification:.2f}" if res.amplification is not None else "n/a"
            log(f"bench: {res.system} {res.rows:,}: {min(res.times_s):.2f} s, hashed {res.hashed}, "
                f"nbatch {res.nbatch}, peak {res.peak_kb} kB, temp {fmt_mb(res.temp_written)} MB, "
                f"amplification {amp}" + (f" ({'; '.join(res.notes)})" if res.notes else ""))
        else:
            log(f"bench: {res.system} {res.rows:,}: FAILED {res.error}")

    # -- report ----------------------------------------------------------------------

    def markdown(self, args, results, loads, meta) -> str:
        limit = self.limit_kb(args)
        versions = ", ".join(f"{k} {v}" for k, v in sorted(meta.get("versions", {}).items()))
        pad_len = len(self.PAD_PREFIX)
        out = [f"# spill benchmark, {meta['started']}", ""]
        out.append(f"`{self.QUERY}` — `big(id int, pad text)` has N rows, `pad` = "
                   f"`'<{pad_len} characters>' || g::text` (about {pad_len + 7} bytes); "
                   f"`probe(id int)` has {args.probe_factor} × N rows, each id of `big` "
                   f"{args.probe_factor} time(s), so the expected count is {args.probe_factor} × N. "
                   "Every system must hash `big` (column *hashed*), and `max(b.pad)` puts the "
                   "pad into the hash table.")
        out.append("")
        out.append(f"work_mem = {fmt_kb(args.work_mem)}, hash_mem_multiplier = 2.0: the join's limit is "
                   f"{limit:,} kB. One thread everywhere (`max_parallel_workers_per_gather = 0`, "
                   "DuckDB `threads = 1`)"
                   + (f", except tusk with `--tusk-parallel {args.tusk_parallel}`: a Parallel Hash "
                      f"Join of {args.tusk_parallel + 1} participants whose limit is "
                      f"{args.tusk_parallel + 1} × {limit:,} kB." if args.tusk_parallel else "."))
        out.append("")
        out.append(f"Machine: {meta['machine']}. Versions: {versions or 'n/a'}.")
        out.append("")
        out.append("| system | rows | hashed | nbatch | peak memory (kB) | time (s) | size (MB) "
                   "| temp written (MB) | amplif |")
        out.append("|---|---:|---|---:|---:|---:|---:|---:|---:|")
        notes = []
        expected = {n: args.probe_factor * n for n in args.rows}
        pads = {}
        for r in results:
            if r.ok and r.max_pad is not None:
                pads.setdefault(r.rows, []).append(r.max_pad)
        for r in sorted(results, key=lambda r: args.rows.index(r.rows)):  # stable: system order kept
            system, n = r.system, r.rows
            size = fmt_mb(r.table_bytes)
            if not r.ok:
                out.append(f"| {system} | {n:,} | — | — | — | failed | {size} | — | — |")
                notes.append(f"{system} {n:,} failed: {r.error}")
            else:
                hashed = r.hashed or "?"
                if hashed != "big":
                    hashed = f"**{hashed}**"
                nbatch = str(r.nbatch) if r.nbatch is not None else "n/a ³"
                peak = f"{r.peak_kb:,}" if r.peak_kb is not None else "n/a"
                if system.startswith("tusk") and r.peak_kb is not None and r.peak_kb > (r.limit_kb or limit):
                    peak = f"**{peak}**"
                peak += {"postgres": " ¹", "duckdb": " ²"}.get(system, "")
                temp = fmt_mb(r.temp_written)
                if system == "duckdb" and r.temp_written is not None:
                    temp += " ⁴"
                amp = f"{r.amplification:.2f}" if r.amplification is not None else "n/a"
                out.append(f"| {system} | {n:,} | {hashed} | {nbatch} | {peak} | "
                           f"{fmt_s(min(r.times_s))} | {size} | {temp} | {amp} |")
                if r.count != expected[n]:
                    notes.append(f"{system} {n:,}: count {r.count:,}, expected {expected[n]:,}")
                common = pads.get(n, [])
                if common and r.max_pad != max(set(common), key=common.count):
                    notes.append(f"{system} {n:,}: max(pad) differs from the other systems'")
            notes.extend(f"{system} {n:,}: {x}" for x in r.notes)
        out += ["", "- tusk: peak memory is EXPLAIN ANALYZE's `Peak Memory` (hash table, bucket "
                "array and every spill-file buffer); temp written is its `Temp Written`; size is "
                "the relation file of `big` under `base/`. A peak over the limit is bold.",
                "- ¹ PostgreSQL: peak memory is the Hash node's `Memory Usage` as printed; it "
                "leaves out the 8 kB buffer of every batch file (seed 004's point; see the notes "
                "for the amount). Temp written is the Hash Join's `temp written` (8 kB blocks) "
                "from `EXPLAIN (ANALYZE, BUFFERS)`; size is `pg_relation_size('big')`.",
                "- ² DuckDB: peak memory is the profiler's `peak_buffer_memory` (everything its "
                "buffer manager held, table blocks included) at the first memory_limit that did "
                f"not fail, starting at {fmt_kb(args.duckdb_memory_limit or limit)} and doubling "
                "(the notes list the failures); "
                "size is the database blocks `big` took after CHECKPOINT (compressed, hence the "
                "large amplification).",
                "- ³ DuckDB does not report a batch count.",
                "- ⁴ DuckDB: bytes the DuckDB process passed to write calls during a timed run "
                "(`wchar` in /proc/self/io; the least of the runs); the query changes no table, so "
                "they all went to its temp directory.",
                "- Time: minimum of "
                f"{args.runs} run(s) of the plain query, after one EXPLAIN ANALYZE (or profiled) run; "
                "table load not included. MB = 2^20 bytes; amplif = temp written / size."]
        if args.tusk_in_memory:
            out.append(f"- `tusk, work_mem {fmt_kb(args.tusk_in_memory)}`: tusk's same query at "
                       f"work_mem = {fmt_kb(args.tusk_in_memory)}, a reference without spilling; the "
                       "notes give the spilling run's time as a multiple of it.")
        if notes:
            out += ["", "## Notes", ""] + [f"- {x}" for x in notes]
        out += ["", "## Table load (not included above)", "",
                "| system | rows | big (s) | probe (s) | how |", "|---|---:|---:|---:|---|"]
        for l in loads:
            out.append(f"| {l['system']} | {l['rows']:,} | {fmt_s(l['big_ms'] / 1e3) if l['big_ms'] is not None else '—'} | "
                       f"{fmt_s(l['probe_ms'] / 1e3) if l['probe_ms'] is not None else '—'} | {l['how']} |")
        settings = {
            "tusk": "tusk: `tusk.conf` " + ", ".join(f"`{k} = {v}`" for k, v in Tusk.STARTUP.items())
            + "; " + ", ".join(f"`SET {k} = '{v}'`" for k, v in self.tusk_settings(args).items())
            + "; one `tusk -A -t -q -f` script runs EXPLAIN ANALYZE and then the timed query "
            "(times from `\\timing on`).",
            "postgres": "PostgreSQL 15, private cluster (initdb --locale=C, Unix socket only): "
            + ", ".join(f"`{k}={v}`" for k, v in self.pg_settings(args).items())
            + "; VACUUM ANALYZE after the load; timed client-side with psycopg.",
            "duckdb": "DuckDB: database file in a temporary directory, `SET threads = 1`, "
            "`temp_directory` of its own, `memory_limit` starting at "
            f"{fmt_kb(args.duckdb_memory_limit or limit)} (as KiB: DuckDB's MB is 10^6 bytes) "
            "and doubled on out-of-memory; run in a fresh Python subprocess per size.",
        }
        out += ["", "## Settings", ""] + [f"- {settings[s]}" for s in args.systems]
        return "\n".join(out) + "\n"

    def chart(self, path: Path, args, results) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        panels = [("time (s)", lambda r: min(r.times_s), True),
                  ("peak memory (kB, as reported)", lambda r: r.peak_kb, True),
                  ("write amplification (temp / size)", lambda r: r.amplification, False)]
        fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.5))
        for ax, (title, value, log_scale) in zip(axes, panels):
            for system in dict.fromkeys(r.system for r in results):
                pts = [(r.rows, value(r)) for r in results
                       if r.system == system and r.ok and value(r) is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=system)
            if title.startswith("peak"):
                ax.axhline(self.limit_kb(args), color="grey", linestyle="--", linewidth=1,
                           label=f"limit {self.limit_kb(args):,} kB")
            ax.set_xscale("log")
            ax.set_xticks(args.rows)
            ax.set_xticklabels([f"{n / 1e6:g}M" if n >= 1e6 else f"{n / 1e3:g}k" for n in args.rows])
            ax.minorticks_off()
            if log_scale:
                ax.set_yscale("log")
            ax.set_xlabel("rows in big")
            ax.set_title(title)
            ax.legend(fontsize=8)
        fig.suptitle(f"{self.QUERY}, work_mem = {fmt_kb(args.work_mem)}", fontsize=10)
        fig.tight_layout()
        fig.savefig(path, format="png", dpi=120)
        plt.close(fig)


def fmt_mb(b: int | None) -> str:
    if b is None:
        return "n/a"
    mb = b / 2**20
    return f"{mb:,.1f}" if mb < 100 else f"{mb:,.0f}"


def fmt_s(s: float | None) -> str:
    if s is None:
        return "—"
    return f"{s:.2f}" if s < 10 else f"{s:.1f}" if s < 100 else f"{s:.0f}"


# ---------------------------------------------------------------------------
# vacuum: VACUUM of a half-deleted table with one btree index
# ---------------------------------------------------------------------------


@dataclass
class VacuumRun:
    system: str
    setup_s: float | None = None
    vacuum_ms: float | None = None
    index_scans: int | None = None
    full_page_images: int | None = None
    info: list = field(default_factory=list)
    error: str | None = None


INDEX_SCANS_RE = re.compile(r"index scans: (\d+)")
FPI_RE = re.compile(r"WAL usage: \d+ records, (\d+) full page images")


class VacuumBench(Benchmark):
    """Seed 003's VACUUM benchmark: an int table with one btree index, every
    second row deleted, `VACUUM VERBOSE` with maintenance_work_mem = 16MB.
    PostgreSQL 15 keeps dead TIDs in a sorted array (6 bytes each), so 10 M
    dead rows need several index scans; tusk's TidStore needs one."""

    name = "vacuum"
    help = "VACUUM VERBOSE of a half-deleted indexed table, tusk vs PostgreSQL 15"
    needs_venv = False
    SYSTEMS = ["tusk", "postgres"]
    # Same memory and WAL room on both sides; no autovacuum racing the
    # measured VACUUM; checkpoint right before it on both sides.
    PG_SETTINGS = {
        "shared_buffers": "2GB",
        "huge_pages": "off",
        "autovacuum": "off",
        "max_wal_size": "8GB",
        "checkpoint_timeout": "1h",
    }
    TUSK_STARTUP = {"shared_buffers": "2GB", "huge_pages": "off", "max_wal_size": "8GB",
                    "checkpoint_timeout": "1h"}

    def add_arguments(self, p):
        self.add_common_arguments(p)
        p.add_argument("--rows", type=int, default=20_000_000, help="rows in t (default 20M)")
        p.add_argument("--runs", type=int, default=1,
                       help="times the whole setup + VACUUM is repeated (default 1)")
        p.add_argument("--maintenance-work-mem", default="16MB",
                       help="maintenance_work_mem for the VACUUM (default 16MB)")
        p.add_argument("--systems", default=",".join(self.SYSTEMS),
                       type=lambda s: parse_list(s, self.SYSTEMS),
                       help="comma list from: " + ",".join(self.SYSTEMS))
        p.add_argument("--checkpoint", action="store_true",
                       help="CHECKPOINT before the VACUUM, so that its first change to every "
                            "page logs a full-page image on both systems")

    def setup_sql(self, rows: int, checkpoint: bool) -> list:
        """The same statements for both systems."""
        # The leading CHECKPOINT keeps the WAL of earlier runs from
        # triggering one in the middle of this run (max_wal_size).
        return [
            "checkpoint;",
            "drop table if exists t;",
            "create table t (i int);",
            f"insert into t select g from generate_series(1, {rows}) g;",
            "create index t_i_idx on t (i);",
            "delete from t where i % 2 = 0;",
        ] + (["checkpoint;"] if checkpoint else [])

    def vacuum_sql(self, mwm: str) -> list:
        return [f"set maintenance_work_mem = '{mwm}';", "\\timing on", "vacuum verbose t;"]

    @staticmethod
    def parse(run: VacuumRun, stdout: str, stderr: str) -> None:
        times = [float(m.group(1)) for m in
                 (re.match(r"^Time: ([0-9.]+) ms", l.strip()) for l in stdout.splitlines()) if m]
        if not times:
            raise RuntimeError("no Time: line printed")
        run.vacuum_ms = times[-1]
        run.info = [l for l in stderr.splitlines() if l.strip()]
        m = INDEX_SCANS_RE.search(stderr)
        run.index_scans = int(m.group(1)) if m else None
        m = FPI_RE.search(stderr)
        run.full_page_images = int(m.group(1)) if m else None

    def bench_tusk(self, args, tusk: Tusk) -> VacuumRun:
        run = VacuumRun("tusk")
        # fresh_data_dir writes the instance's settings (not the class default).
        tusk.startup = dict(self.TUSK_STARTUP)
        tusk.fresh_data_dir(args.workdir)
        # One process for setup and VACUUM, as one PostgreSQL server serves
        # both: a tusk process checkpoints when it opens the data directory,
        # so a VACUUM in a second process would log a full-page image of
        # every page it touches.
        t0 = time.perf_counter()
        r = tusk.run_script(self.setup_sql(args.rows, args.checkpoint)
                            + self.vacuum_sql(args.maintenance_work_mem))
        self.parse(run, r.stdout, r.stderr)
        run.setup_s = time.perf_counter() - t0 - run.vacuum_ms / 1e3
        shutil.rmtree(tusk.data_dir.parent, ignore_errors=True)
        return run

    def bench_postgres(self, args, cluster: PgCluster) -> VacuumRun:
        run = VacuumRun("postgres")

        def psql(lines: list) -> subprocess.CompletedProcess:
            with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
                f.write("\n".join(lines) + "\n")
                path = f.name
            os.chmod(path, 0o644)
            try:
                r = subprocess.run(
                    [str(cluster.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                     "-h", str(cluster.root), "-p", str(cluster.port), "-U", "postgres",
                     "-d", "postgres", "-f", path],
                    capture_output=True, text=True, timeout=args.timeout,
                )
            finally:
                os.unlink(path)
            if r.returncode != 0:
                raise RuntimeError(short_error(r.stderr or r.stdout))
            return r

        t0 = time.perf_counter()
        psql(self.setup_sql(args.rows, args.checkpoint))
        run.setup_s = time.perf_counter() - t0
        r = psql(self.vacuum_sql(args.maintenance_work_mem))
        self.parse(run, r.stdout, r.stderr)
        psql(["drop table t;"])
        return run

    def run(self, args):
        meta: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_description(),
                      "load_before": os.getloadavg()}
        runs: list[VacuumRun] = []
        tusk = cluster = None
        if "tusk" in args.systems:
            tusk = Tusk(args.tusk_bin, args.timeout)
            tusk.build()
            meta.setdefault("versions", {})["tusk"] = tusk.version()
        if "postgres" in args.systems:
            cluster = PgCluster(args.pg_bin, self.PG_SETTINGS)
            try:
                cluster.start()
                log(f"bench: PostgreSQL cluster in {cluster.root}, port {cluster.port}")
            except Exception as e:  # noqa: BLE001
                log(f"bench: PostgreSQL: {e}")
                runs.append(VacuumRun("postgres", error=short_error(str(e))))
                cluster = None
        for i in range(args.runs):
            for system in args.systems:
                try:
                    if system == "tusk" and tusk is not None:
                        run = self.bench_tusk(args, tusk)
                    elif system == "postgres" and cluster is not None:
                        run = self.bench_postgres(args, cluster)
                    else:
                        continue
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as e:  # noqa: BLE001 - one system failing must not stop the other
                    run = VacuumRun(system, error=short_error(str(e)))
                runs.append(run)
                if run.error:
                    log(f"bench: {system} run {i + 1}: FAILED {run.error}")
                else:
                    log(f"bench: {system} run {i + 1}: VACUUM {fmt_ms(run.vacuum_ms)} ms, "
                        f"index scans {run.index_scans}, setup {run.setup_s:.1f} s")
        if cluster is not None:
            cluster.stop()
        meta["load_after"] = os.getloadavg()
        markdown = self.markdown(args, runs, meta)
        print(markdown)
        data = {"benchmark": self.name, "rows": args.rows, "runs": args.runs,
                "maintenance_work_mem": args.maintenance_work_mem, "meta": meta,
                "pg_settings": self.PG_SETTINGS, "tusk_startup": self.TUSK_STARTUP,
                "results": [vars(r) for r in runs]}
        written = write_outputs(self.name, markdown, data, None)
        log("bench: wrote " + ", ".join(written))
        return 0

    def markdown(self, args, runs, meta) -> str:
        out = [f"# VACUUM of {args.rows:,} rows, every second one deleted, one btree index", "",
               f"Started {meta['started']} on {meta['machine']}; load average before "
               f"{meta['load_before'][0]:.2f}, after {meta['load_after'][0]:.2f}.", "",
               "Same SQL on both systems (through psql and tusk -f; tusk runs it in one process):", "", "```sql"]
        out += self.setup_sql(args.rows, args.checkpoint) + self.vacuum_sql(args.maintenance_work_mem)
        out += ["```", "", "| system | runs | VACUUM min (ms) | VACUUM median (ms) | index scans | "
                "full page images | setup (s) |",
                "|---|---|---|---|---|---|---|"]
        medians, mins = {}, {}
        for system in args.systems:
            ok = [r for r in runs if r.system == system and not r.error]
            bad = [r for r in runs if r.system == system and r.error]
            if not ok:
                out.append(f"| {system} | 0 | — | — | — | — | failed: {bad[0].error if bad else 'not run'} |")
                continue
            times = [r.vacuum_ms for r in ok]
            medians[system] = statistics.median(times)
            mins[system] = min(times)
            scans = sorted({r.index_scans for r in ok}, key=lambda v: (v is None, v))
            fpis = ", ".join(str(r.full_page_images) for r in ok)
            out.append(f"| {system} | {len(ok)} | {fmt_ms(min(times))} | {fmt_ms(medians[system])} | "
                       f"{', '.join(str(s) for s in scans)} | {fpis} | "
                       f"{statistics.median(r.setup_s for r in ok):.1f} |")
        if "tusk" in medians and "postgres" in medians and medians["tusk"] > 0:
            out += ["", f"PostgreSQL 15 / tusk: min **{mins['postgres'] / mins['tusk']:.1f}×**, "
                        f"median **{medians['postgres'] / medians['tusk']:.1f}×**"]
        for system in args.systems:
            last = next((r for r in reversed(runs) if r.system == system and not r.error), None)
            if last is not None:
                out += ["", f"## {system}: VACUUM VERBOSE output (last run)", "", "```"] + last.info + ["```"]
        out += ["", "## Settings", "",
                "- PostgreSQL: " + ", ".join(f"{k}={v}" for k, v in self.PG_SETTINGS.items()),
                "- tusk (tusk.conf): " + ", ".join(f"{k}={v}" for k, v in self.TUSK_STARTUP.items())]
        return "\n".join(out) + "\n"

# ---------------------------------------------------------------------------
# copy: COPY FROM of a lineitem-like CSV file (issue 17)
# ---------------------------------------------------------------------------

LINEITEM_DDL = (
    "create table lineitem (l_orderkey bigint not null, l_partkey int not null, "
    "l_suppkey int not null, l_linenumber int not null, l_quantity decimal(15,2) not null, "
    "l_extendedprice decimal(15,2) not null, l_discount decimal(15,2) not null, "
    "l_tax decimal(15,2) not null, l_returnflag char(1) not null, l_linestatus char(1) not null, "
    "l_shipdate date not null, l_commitdate date not null, l_receiptdate date not null, "
    "l_shipinstruct char(25) not null, l_shipmode char(10) not null, l_comment varchar(44) not null)"
)


def generate_lineitem(path: Path, rows: int, seed: int = 17) -> None:
    """Writes `rows` rows shaped like TPC-H's lineitem as CSV: the same 16
    columns and types, orders of 1 to 7 lines, prices with two decimals,
    dates from 1992 to 1998, and comments of a few words (quoted when they
    hold a comma, which one in about fifty does). Deterministic for a seed."""
    import datetime
    import random

    r = random.Random(seed)
    modes = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
    instructs = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"]
    words = ("furiously quickly carefully blithely slyly ironic final pending regular express "
             "bold even special unusual packages deposits requests accounts instructions "
             "theodolites foxes asymptotes, pinto beans, dependencies").split(" ")
    first = datetime.date(1992, 1, 2).toordinal()
    days = [datetime.date.fromordinal(first + i).isoformat() for i in range(2600)]
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        order, line, lines_in_order = 1, 0, r.randint(1, 7)
        out = []
        for _ in range(rows):
            line += 1
            if line > lines_in_order:
                order += r.randint(1, 4)
                line, lines_in_order = 1, r.randint(1, 7)
            q = r.randint(1, 50)
            price = q * r.randint(90000, 200000)
            ship = r.randint(30, 2500)
            comment = " ".join(r.choices(words, k=r.randint(2, 6)))[:44]
            if "," in comment:
                comment = '"' + comment + '"'
            out.append(
                f"{order},{r.randint(1, 200000)},{r.randint(1, 10000)},{line},{q}.00,"
                f"{price // 100}.{price % 100:02d},0.0{r.randint(0, 9)},0.0{r.randint(0, 8)},"
                f"{r.choice('NRA')},{r.choice('OF')},{days[ship]},{days[ship + r.randint(-30, 60)]},"
                f"{days[ship + r.randint(1, 30)]},{r.choice(instructs)},{r.choice(modes)},{comment}\n")
            if len(out) >= 10000:
                f.write("".join(out))
                out.clear()
        f.write("".join(out))
    os.replace(tmp, path)


def lineitem_ddl(primary_key: bool) -> str:
    """LINEITEM_DDL, with TPC-H's primary key `(l_orderkey, l_linenumber)`
    when `primary_key` (declared in CREATE TABLE, so it is built during
    the load, as TPC-H's DDL and bench/tpch load it)."""
    if not primary_key:
        return LINEITEM_DDL
    return LINEITEM_DDL[:-1] + ", primary key (l_orderkey, l_linenumber))"


def copy_lineitem_sql(csv: str, header: bool) -> str:
    return f"copy lineitem from '{csv}' (format csv{', header' if header else ''})"


def copy_duckdb_worker(spec: dict) -> dict:
    """DuckDB's CSV load: `COPY lineitem FROM file (FORMAT csv)` into a
    fresh table, one warm-up and `runs` timed loads."""
    import duckdb

    con = duckdb.connect(spec["database"] or ":memory:")
    con.execute(f"SET threads = {spec['threads']}")
    times, counts = [], set()
    for i in range(spec["runs"] + 1):
        con.execute("drop table if exists lineitem")
        con.execute(spec["ddl"])
        t0 = time.perf_counter()
        con.execute(copy_lineitem_sql(spec["csv"], spec["header"]))
        ms = (time.perf_counter() - t0) * 1e3
        counts.add(con.execute("select count(*) from lineitem").fetchone()[0])
        if i > 0:
            times.append(ms)
    return {"times_ms": times, "count": min(counts), "version": duckdb.__version__, "notes": []}


class CopyBench(Benchmark):
    """COPY FROM of one CSV file into an empty table with TPC-H lineitem's
    columns: tusk's COPY, PostgreSQL 15's COPY (both reading the file
    server-side) and DuckDB's CSV reader. Each system loads the file once
    to warm up (the file is then in the page cache for everyone), then
    `--runs` times into a fresh table, with a CHECKPOINT before each load
    (outside the time) so that no load pays for the previous one's pages."""

    name = "copy"
    help = "COPY FROM of a lineitem-like CSV file: tusk vs PostgreSQL 15 vs DuckDB"
    SYSTEMS = ["tusk", "postgres", "duckdb"]
    PG_SETTINGS = {"shared_buffers": "2GB", "huge_pages": "off", "max_wal_size": "8GB",
                   "checkpoint_timeout": "1h", "autovacuum": "off"}
    TUSK_STARTUP = {"shared_buffers": "2GB", "huge_pages": "off", "max_wal_size": "8GB",
                    "checkpoint_timeout": "1h"}

    def add_arguments(self, p):
        self.add_common_arguments(p)
        p.add_argument("--rows", type=int, default=1_000_000, help="rows in the file (default 1M)")
        p.add_argument("--runs", type=int, default=3, help="timed loads per system (default 3)")
        p.add_argument("--systems", default=",".join(self.SYSTEMS),
                       type=lambda s: parse_list(s, self.SYSTEMS),
                       help="comma list from: " + ",".join(self.SYSTEMS))
        p.add_argument("--duckdb-threads", default="1,2", type=lambda s: [int(x) for x in parse_list(s)],
                       help="DuckDB thread counts (default 1,2)")
        p.add_argument("--duckdb-file", action="store_true",
                       help="load DuckDB into a database file instead of an in-memory database")
        p.add_argument("--csv", default=None,
                       help="load this CSV file (lineitem's 16 columns) instead of generating one")
        p.add_argument("--header", action="store_true",
                       help="the CSV file has a header line (COPY ... HEADER), as bench/tpch's do")
        p.add_argument("--primary-key", action="store_true",
                       help="declare TPC-H's primary key (l_orderkey, l_linenumber) in CREATE TABLE")

    def script(self, csv: Path, args) -> list:
        """The same statements for tusk and PostgreSQL; the first load warms up."""
        lines = []
        for _ in range(args.runs + 1):
            lines += ["drop table if exists lineitem;", lineitem_ddl(args.primary_key) + ";",
                      "checkpoint;", "\\timing on", copy_lineitem_sql(str(csv), args.header) + ";",
                      "\\timing off",
                      "select count(*) from lineitem;"]
        return lines + ["drop table lineitem;"]

    @staticmethod
    def parse(stdout: str) -> tuple[list, list]:
        times, counts = [], []
        for line in stdout.splitlines():
            m = TIME_RE.match(line.strip())
            if m:
                times.append(float(m.group(1)))
            elif re.fullmatch(r"\d+", line.strip()):
                counts.append(int(line.strip()))
        return times[1:], counts

    def csv_file(self, args) -> Path:
        if args.csv:
            return Path(args.csv).resolve()
        # A directory and file PostgreSQL's server (the postgres user) can read.
        root = Path(tempfile.mkdtemp(prefix="tusk-bench-copy-", dir=args.workdir))
        on_exit(lambda: shutil.rmtree(root, ignore_errors=True))
        os.chmod(root, 0o755)
        path = root / f"lineitem-{args.rows}.csv"
        t0 = time.perf_counter()
        generate_lineitem(path, args.rows)
        os.chmod(path, 0o644)
        log(f"bench: wrote {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
        return path

    def run(self, args):
        meta: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_description(),
                      "load_before": os.getloadavg(), "versions": {}}
        csv = self.csv_file(args)
        meta["csv_bytes"] = csv.stat().st_size
        cells: list[Cell] = []
        if "tusk" in args.systems:
            tusk = Tusk(args.tusk_bin, args.timeout)
            tusk.startup = dict(self.TUSK_STARTUP)
            tusk.build()
            meta["versions"]["tusk"] = tusk.version()
            cell = Cell("tusk", "lineitem", 2)
            try:
                tusk.fresh_data_dir(args.workdir)
                cell.times_ms, counts = self.parse(tusk.output(self.script(csv, args)))
                cell.count = min(counts) if counts else None
                cell.notes.append("reads and converts on one thread while the statement's "
                                  "thread checks and stores (2 threads)")
            except Exception as e:  # noqa: BLE001 - one system failing must not stop the others
                cell.error = short_error(str(e))
            cells.append(cell)
        if "postgres" in args.systems:
            cell = Cell("postgres", "lineitem", 1)
            cluster = PgCluster(args.pg_bin, self.PG_SETTINGS)
            try:
                cluster.start()
                cell.times_ms, counts = self.parse(self.psql(cluster, self.script(csv, args),
                                                             args.timeout))
                cell.count = min(counts) if counts else None
                meta["versions"]["postgres"] = "PostgreSQL " + self.psql(
                    cluster, ["show server_version;"], args.timeout).strip()
            except Exception as e:  # noqa: BLE001
                cell.error = short_error(str(e))
            finally:
                cluster.stop()
            cells.append(cell)
        if "duckdb" in args.systems:
            for threads in args.duckdb_threads:
                cell = Cell("duckdb", "lineitem", threads)
                database = None
                if args.duckdb_file:
                    root = Path(tempfile.mkdtemp(prefix="tusk-bench-duckdb-", dir=args.workdir))
                    on_exit(lambda root=root: shutil.rmtree(root, ignore_errors=True))
                    database = str(root / "copy.duckdb")
                r = run_worker({"bench": "copy", "system": "duckdb", "threads": threads,
                                "runs": args.runs, "csv": str(csv), "database": database,
                                "ddl": lineitem_ddl(args.primary_key), "header": args.header},
                               args.timeout)
                if "error" in r:
                    cell.error = r["error"]
                else:
                    cell.times_ms, cell.count = r["times_ms"], r["count"]
                    meta["versions"]["duckdb"] = r["version"]
                cells.append(cell)
        for c in cells:
            if c.ok:
                log(f"bench: {c.system} ({c.threads} thread{'s' if c.threads > 1 else ''}): "
                    f"min {fmt_ms(c.min_ms)} ms, median {fmt_ms(c.median_ms)} ms, {c.count} rows")
            else:
                log(f"bench: {c.system}: FAILED {c.error}")
        meta["load_after"] = os.getloadavg()
        markdown = self.markdown(args, csv, cells, meta)
        print(markdown)
        data = {"benchmark": self.name, "rows": args.rows, "runs": args.runs, "meta": meta,
                "ddl": lineitem_ddl(args.primary_key), "pg_settings": self.PG_SETTINGS, "tusk_startup": self.TUSK_STARTUP,
                "cells": [vars(c) for c in cells]}
        written = write_outputs(self.name, markdown, data, lambda p: self.chart(p, args, cells))
        log("bench: wrote " + ", ".join(written))
        return 0 if all(c.ok for c in cells) else 1

    @staticmethod
    def psql(cluster: PgCluster, lines: list, timeout: float) -> str:
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
            f.write("\n".join(lines) + "\n")
            path = f.name
        os.chmod(path, 0o644)
        try:
            r = subprocess.run(
                [str(cluster.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                 "-h", str(cluster.root), "-p", str(cluster.port), "-U", "postgres",
                 "-d", "postgres", "-f", path],
                capture_output=True, text=True, timeout=timeout,
            )
        finally:
            os.unlink(path)
        if r.returncode != 0:
            raise RuntimeError(short_error(r.stderr or r.stdout))
        return r.stdout

    def markdown(self, args, csv: Path, cells, meta) -> str:
        rows = args.rows if not args.csv else max((c.count or 0 for c in cells), default=0)
        pg = next((c for c in cells if c.system == "postgres" and c.ok), None)
        versions = ", ".join(f"{k} {v}" for k, v in sorted(meta["versions"].items()))
        out = [f"# COPY FROM of {rows:,} lineitem rows, {meta['started']}", "",
               f"`{csv.name}`: {meta['csv_bytes'] / 1e6:.0f} MB of CSV with TPC-H lineitem's 16 "
               "columns, loaded into an empty table:", "", "```sql", lineitem_ddl(args.primary_key) + ";",
               copy_lineitem_sql("<file>", args.header) + ";", "```", "",
               f"One warm-up load, then {args.runs} timed loads per system, each into a fresh table "
               "after a CHECKPOINT. tusk and PostgreSQL read the file server-side; times are their "
               "`\\timing` lines. DuckDB: "
               + ("a database file" if args.duckdb_file else "an in-memory database")
               + ", timed around `COPY ... FROM` in Python.", "",
               f"Machine: {meta['machine']}; load average before {meta['load_before'][0]:.2f}, "
               f"after {meta['load_after'][0]:.2f}. Versions: {versions or 'n/a'}.", "",
               "| system | threads | min ms | median ms | rows/s (best) | rows/s (median) | "
               "PostgreSQL median / median | rows loaded |",
               "|---|---:|---:|---:|---:|---:|---:|---:|"]
        notes = []
        for c in cells:
            if not c.ok:
                out.append(f"| {c.system} | {c.threads} | failed | failed | — | — | — | — |")
                notes.append(f"{c.system} failed: {c.error}")
                continue
            ratio = f"{pg.median_ms / c.median_ms:.2f}×" if pg else "—"
            count = f"{c.count:,}" if c.count is not None else "?"
            if c.count is not None and c.count != rows:
                count = f"**{count} ≠ {rows:,}**"
            out.append(f"| {c.system} | {c.threads} | {fmt_ms(c.min_ms)} | {fmt_ms(c.median_ms)} | "
                       f"{rows / c.min_ms * 1e3:,.0f} | {rows / c.median_ms * 1e3:,.0f} | {ratio} | {count} |")
            notes.extend(f"{c.system}: {n}" for n in c.notes)
        out += ["", "## Settings", "",
                "- tusk (tusk.conf): " + ", ".join(f"{k}={v}" for k, v in self.TUSK_STARTUP.items())
                + "; the table is created by an earlier statement, so every page is WAL-logged "
                "(one page image per page).",
                "- PostgreSQL 15 (private cluster): " + ", ".join(f"{k}={v}" for k, v in self.PG_SETTINGS.items())
                + ", other settings default (wal_level = replica: every row WAL-logged)."]
        if notes:
            out += ["", "## Notes", ""] + [f"- {n}" for n in notes]
        return "\n".join(out) + "\n"

    def chart(self, path: Path, args, cells) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ok = [c for c in cells if c.ok]
        labels = [f"{c.system}\n{c.threads} thread{'s' if c.threads > 1 else ''}" for c in ok]
        rows = max((c.count or 0 for c in ok), default=0) if args.csv else args.rows
        best = [rows / c.min_ms * 1e3 / 1e6 for c in ok]
        median = [rows / c.median_ms * 1e3 / 1e6 for c in ok]
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(ok)), 4.5))
        xs = range(len(ok))
        ax.bar(xs, median, 0.6, label="median")
        ax.scatter(xs, best, marker="_", color="black", s=200, zorder=3, label="best")
        for x, v in zip(xs, median):
            ax.text(x, v, f"{v:.2f}", ha="center", va="bottom", fontsize=8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels)
        ax.set_ylabel("million rows/s (higher is better)")
        ax.set_title(f"COPY FROM, {rows:,} lineitem rows (CSV), {args.runs} runs")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, format="png", dpi=120)
        plt.close(fig)


# ---------------------------------------------------------------------------
# pgbench: many sessions reading through the wire protocol
# ---------------------------------------------------------------------------

@dataclass
class PgbenchRun:
    system: str
    workload: str
    mode: str
    round: int
    tps: float | None = None
    latency_ms: float | None = None
    p99_ms: float | None = None
    transactions: int | None = None
    failed: int | None = None
    # mixed: the TPC-B clients' figures beside the select-only ones
    tpcb_tps: float | None = None
    tpcb_p99_ms: float | None = None
    consistent: bool | None = None
    sums: list | None = None
    size_before_kb: int | None = None
    size_after_kb: int | None = None
    # group commit: WAL syncs (pg_stat_wal.wal_sync) during the measured run
    # and the TPC-B transactions (each one commit) they served
    wal_syncs: int | None = None
    tpcb_transactions: int | None = None
    error: str | None = None


TPS_RE = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)", re.M)
LAT_RE = re.compile(r"^latency average = ([0-9.]+) ms", re.M)
TXN_RE = re.compile(r"^number of transactions actually processed: (\d+)", re.M)
FAILED_RE = re.compile(r"^number of failed transactions: (\d+)", re.M)
CONSISTENCY_SQL = ("select (select sum(abalance) from pgbench_accounts), "
                   "(select sum(tbalance) from pgbench_tellers), "
                   "(select sum(bbalance) from pgbench_branches), "
                   "(select coalesce(sum(delta), 0) from pgbench_history)")


def percentile(values: list, q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


class PgbenchBench(Benchmark):
    """pgbench against tusk serve and PostgreSQL 15, alternating system by
    system in each round so that both see the same machine load; both are
    set up by `pgbench -i -s SCALE` itself. Workloads:

    * `select`: seed 002's `pgbench -S` (one indexed SELECT per
      transaction), tusk under `tusk.buffer_mapping = chash` (lock-free
      lookups) and `partitioned` (PostgreSQL's 128 locked partitions);
    * `tpcb`: the default TPC-B script (`synchronous_commit = on` on both),
      with the consistency check sum(abalance) = sum(tbalance) =
      sum(bbalance) = sum(delta) and the relations' size before and after;
    * `mixed`: 6 select-only clients beside 2 TPC-B clients (two pgbench
      processes at once).

    Latencies come from pgbench's per-transaction log (`-l`): average and
    p99 over every transaction of the measured run."""

    name = "pgbench"
    help = "pgbench -S, TPC-B and a mix (-c 8 -j 2) against tusk serve and PostgreSQL 15"
    needs_venv = False
    SYSTEMS = ["postgres", "tusk-chash", "tusk-partitioned"]
    WORKLOADS = ["select", "tpcb", "mixed"]
    PG_SETTINGS = {"shared_buffers": "1GB", "huge_pages": "off", "max_connections": "100",
                   "synchronous_commit": "on"}
    TUSK_STARTUP = {"shared_buffers": "1GB", "huge_pages": "off", "synchronous_commit": "on"}

    def add_arguments(self, p):
        self.add_common_arguments(p)
        p.add_argument("--scale", type=int, default=10,
                       help="pgbench scale: 100,000 accounts per unit (default 10)")
        p.add_argument("--clients", type=int, default=8, help="pgbench -c (default 8)")
        p.add_argument("--jobs", type=int, default=2, help="pgbench -j (default 2)")
        p.add_argument("--duration", type=int, default=30,
                       help="pgbench -T seconds for select-only and mixed runs (default 30)")
        p.add_argument("--tpcb-duration", type=int, default=60,
                       help="pgbench -T seconds for TPC-B runs (default 60)")
        p.add_argument("--warmup", type=int, default=5,
                       help="seconds of pgbench before each measured run (default 5)")
        p.add_argument("--rounds", type=int, default=1,
                       help="rounds; each runs every system once per mode and workload (default 1)")
        p.add_argument("--modes", default="simple,prepared",
                       type=lambda s: parse_list(s, ["simple", "extended", "prepared"]),
                       help="pgbench -M modes (default simple,prepared)")
        p.add_argument("--workloads", default=",".join(self.WORKLOADS),
                       type=lambda s: parse_list(s, self.WORKLOADS),
                       help="comma list from: " + ",".join(self.WORKLOADS))
        p.add_argument("--systems", default=",".join(self.SYSTEMS),
                       type=lambda s: parse_list(s, self.SYSTEMS),
                       help="comma list from: " + ",".join(self.SYSTEMS)
                       + " (TPC-B and mixed runs use tusk-chash only)")
        p.add_argument("--transport", choices=["socket", "tcp"], default="socket",
                       help="how pgbench reaches both systems: a Unix-domain socket (default, "
                            "as psql and pgbench do without -h) or TCP on 127.0.0.1")

    def pgbench(self, args, bin_dir: Path, conn: list, mode: str, seconds: int, extra: list,
                clients: int, jobs: int, log_dir: Path | None) -> subprocess.Popen:
        cmd = [str(bin_dir / "pgbench"), "-n", "-M", mode, "-c", str(clients), "-j", str(jobs),
               "-T", str(seconds)] + extra
        if log_dir is not None:
            cmd += ["-l", f"--log-prefix={log_dir / 'pgbench_log'}"]
        return subprocess.Popen(cmd + conn, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    @staticmethod
    def finish(proc: subprocess.Popen, timeout: float) -> tuple[str, str, int]:
        out, err = proc.communicate(timeout=timeout)
        return out, err, proc.returncode

    @staticmethod
    def log_latencies(log_dir: Path) -> list:
        """Per-transaction latencies (ms) from pgbench's `-l` logs."""
        lat = []
        for f in log_dir.glob("pgbench_log*"):
            for line in f.read_text().splitlines():
                parts = line.split()
                if len(parts) >= 3 and parts[2].isdigit():
                    lat.append(int(parts[2]) / 1000.0)
        return lat

    def one(self, args, bin_dir, conn, mode, seconds, extra, clients, jobs, tmp: Path):
        """Runs one pgbench; returns (stdout, latencies)."""
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        p = self.pgbench(args, bin_dir, conn, mode, seconds, extra, clients, jobs, tmp)
        out, err, rc = self.finish(p, seconds + args.timeout)
        if rc != 0 or not TPS_RE.search(out):
            raise RuntimeError(short_error(err or out or f"exit {rc}"))
        return out, self.log_latencies(tmp)

    @staticmethod
    def wal_syncs(bin_dir: Path, conn: list, timeout: float, settle: float) -> int:
        """pg_stat_wal.wal_sync: WAL fsyncs so far (PostgreSQL: after `settle`
        seconds, so that backends that just exited have reported theirs)."""
        time.sleep(settle)
        host, port, user = conn[1], conn[3], conn[5]
        r = subprocess.run([str(bin_dir / "psql"), "-X", "-A", "-h", host, "-p", port, "-U", user,
                            "-d", "postgres", "-c", "select * from pg_stat_wal"],
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(short_error(r.stderr))
        lines = r.stdout.splitlines()
        return int(dict(zip(lines[0].split("|"), lines[1].split("|")))["wal_sync"])

    def measure(self, args, run: PgbenchRun, bin_dir: Path, conn: list, tmp: Path,
                settle: float = 0.0) -> None:
        """One measured run; TPC-B and mixed runs also count the WAL syncs
        (pg_stat_wal) during it (`settle`: see `wal_syncs`)."""
        syncs = None
        if run.workload != "select":
            syncs = lambda: self.wal_syncs(bin_dir, conn, args.timeout, settle)
        if run.workload == "mixed":
            syncs0 = syncs()
            a_dir, b_dir = tmp / "select", tmp / "tpcb"
            for d in (a_dir, b_dir):
                shutil.rmtree(d, ignore_errors=True)
                d.mkdir(parents=True)
            sel = self.pgbench(args, bin_dir, conn, run.mode, args.duration, ["-S"], 6, 1, a_dir)
            tpcb = self.pgbench(args, bin_dir, conn, run.mode, args.duration, [], 2, 1, b_dir)
            out, err, rc = self.finish(sel, args.duration + args.timeout)
            out_b, err_b, rc_b = self.finish(tpcb, args.duration + args.timeout)
            if rc != 0 or rc_b != 0 or not TPS_RE.search(out) or not TPS_RE.search(out_b):
                raise RuntimeError(short_error(err or err_b or out or out_b))
            lat = self.log_latencies(a_dir)
            lat_b = self.log_latencies(b_dir)
            run.tpcb_tps = float(TPS_RE.search(out_b).group(1))
            run.tpcb_p99_ms = percentile(lat_b, 0.99)
            failed_b = FAILED_RE.search(out_b)
            run.failed = int(failed_b.group(1)) if failed_b else None
            run.wal_syncs = syncs() - syncs0
            txn_b = TXN_RE.search(out_b)
            run.tpcb_transactions = int(txn_b.group(1)) if txn_b else None
        else:
            extra = ["-S"] if run.workload == "select" else []
            seconds = args.tpcb_duration if run.workload == "tpcb" else args.duration
            if args.warmup > 0:
                p = self.pgbench(args, bin_dir, conn, run.mode, args.warmup, extra,
                                 args.clients, args.jobs, None)
                self.finish(p, args.warmup + args.timeout)
            syncs0 = syncs() if syncs else None
            out, lat = self.one(args, bin_dir, conn, run.mode, seconds, extra, args.clients,
                                args.jobs, tmp)
            failed = FAILED_RE.search(out)
            run.failed = int(failed.group(1)) if failed else None
            if syncs:
                run.wal_syncs = syncs() - syncs0
                txn = TXN_RE.search(out)
                run.tpcb_transactions = int(txn.group(1)) if txn else None
        run.tps = float(TPS_RE.search(out).group(1))
        run.latency_ms = statistics.mean(lat) if lat else None
        run.p99_ms = percentile(lat, 0.99)
        txn = TXN_RE.search(out)
        run.transactions = int(txn.group(1)) if txn else None

    @staticmethod
    def psql(bin_dir: Path, conn: list, sql: str, timeout: float) -> str:
        host, port, user = conn[1], conn[3], conn[5]
        r = subprocess.run([str(bin_dir / "psql"), "-X", "-A", "-t", "-h", host, "-p", port,
                            "-U", user, "-d", "postgres", "-c", sql],
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(short_error(r.stderr))
        return r.stdout.strip()

    def check(self, bin_dir: Path, conn: list, run: PgbenchRun, timeout: float) -> None:
        sums = self.psql(bin_dir, conn, CONSISTENCY_SQL, timeout).split("|")
        run.sums = sums
        run.consistent = len(set(sums)) == 1

    @staticmethod
    def pg_size_kb(bin_dir: Path, conn: list, timeout: float) -> int:
        out = PgbenchBench.psql(
            bin_dir, conn,
            "select sum(pg_total_relation_size(oid)) from pg_class "
            "where relname like 'pgbench_%' and relkind = 'r'", timeout)
        return int(out) // 1024

    @staticmethod
    def tusk_size_kb(data_dir: Path) -> int:
        """Relation files (tables and indexes) after a shutdown checkpoint."""
        base = data_dir / "base"
        return sum(f.stat().st_size for f in base.rglob("*") if f.is_file()) // 1024

    def init(self, args, bin_dir: Path, conn: list) -> float:
        t0 = time.perf_counter()
        r = subprocess.run([str(bin_dir / "pgbench"), "-i", "-q", "-s", str(args.scale)] + conn,
                           capture_output=True, text=True, timeout=args.timeout)
        if r.returncode != 0:
            raise RuntimeError(short_error(r.stderr))
        return time.perf_counter() - t0

    def start_tusk(self, tusk: Tusk, mapping: str, transport: str) -> tuple[subprocess.Popen, list]:
        """`tusk serve` on the prepared data directory with `mapping`; returns
        the process and pgbench's connection arguments for `transport`."""
        socket_dir = tusk.data_dir.parent / "socket"
        socket_dir.mkdir(exist_ok=True)
        sockets = str(socket_dir) if transport == "socket" else ""
        (tusk.data_dir / "tusk.conf").write_text(
            "".join(f"{k} = {v}\n" for k, v in self.TUSK_STARTUP.items())
            + f"tusk.buffer_mapping = {mapping}\n"
            + f"unix_socket_directories = '{sockets}'\n")
        proc = subprocess.Popen(
            [tusk.binary, "serve", "-D", str(tusk.data_dir), "--listen", "127.0.0.1", "--port", "0"],
            stderr=subprocess.PIPE, text=True,
            env={k: v for k, v in os.environ.items() if k != "TUSKDATA"},
        )
        on_exit(lambda: proc.poll() is None and proc.kill())
        port = None
        for line in proc.stderr:
            m = re.match(r'LOG:  listening on IPv4 address "127.0.0.1", port (\d+)', line)
            if m:
                port = int(m.group(1))
            if "ready to accept connections" in line:
                break
        if port is None:
            proc.kill()
            raise RuntimeError("tusk serve did not start")
        # Keep reading its log so that the pipe never fills.
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
        host = sockets or "127.0.0.1"
        return proc, ["-h", host, "-p", str(port), "-U", "tusk", "postgres"]

    @staticmethod
    def stop_tusk(proc: subprocess.Popen) -> None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def plan(self, args) -> list:
        """(workload, mode, system) in the order they run within a round."""
        out = []
        for workload in args.workloads:
            for mode in args.modes:
                for system in args.systems:
                    if workload != "select" and system == "tusk-partitioned":
                        continue
                    out.append((workload, mode, system))
        return out

    def run(self, args):
        meta: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_description(),
                      "load_before": os.getloadavg()}
        runs: list[PgbenchRun] = []
        bin_dir = Path(args.pg_bin)
        tmp = Path(args.workdir or tempfile.gettempdir()) / f"tusk-pgbench-logs-{os.getpid()}"
        on_exit(lambda: shutil.rmtree(tmp, ignore_errors=True))
        tusk = cluster = None
        tusk_error = pg_error = None
        if any(s.startswith("tusk") for s in args.systems):
            tusk = Tusk(args.tusk_bin, args.timeout)
            tusk.build()
            meta.setdefault("versions", {})["tusk"] = tusk.version()
            try:
                tusk.startup = dict(self.TUSK_STARTUP)
                tusk.fresh_data_dir(args.workdir)
                proc, conn = self.start_tusk(tusk, "chash", args.transport)
                try:
                    meta["tusk_load_s"] = self.init(args, bin_dir, conn)
                finally:
                    self.stop_tusk(proc)
                log(f"bench: tusk: pgbench -i in {meta['tusk_load_s']:.1f} s")
            except Exception as e:  # noqa: BLE001
                tusk_error = short_error(str(e))
                log(f"bench: tusk: {tusk_error}")
        pg_settings = dict(self.PG_SETTINGS)
        if args.transport == "tcp":
            pg_settings["listen_addresses"] = "127.0.0.1"
        pg_host = lambda: str(cluster.root) if args.transport == "socket" else "127.0.0.1"
        if "postgres" in args.systems:
            cluster = PgCluster(args.pg_bin, pg_settings)
            try:
                cluster.start()
                pg_conn = ["-h", pg_host(), "-p", str(cluster.port), "-U", "postgres", "postgres"]
                meta["postgres_load_s"] = self.init(args, bin_dir, pg_conn)
                log(f"bench: PostgreSQL: pgbench -i in {meta['postgres_load_s']:.1f} s")
            except Exception as e:  # noqa: BLE001
                pg_error = short_error(str(e))
                log(f"bench: PostgreSQL: {pg_error}")
        for rnd in range(1, args.rounds + 1):
            for workload, mode, system in self.plan(args):
                run = PgbenchRun(system, workload, mode, rnd)
                try:
                    if system == "postgres":
                        if pg_error:
                            raise RuntimeError(pg_error)
                        conn = ["-h", pg_host(), "-p", str(cluster.port), "-U", "postgres",
                                "postgres"]
                        if workload != "select":
                            run.size_before_kb = self.pg_size_kb(bin_dir, conn, args.timeout)
                        self.measure(args, run, bin_dir, conn, tmp, settle=1.0)
                        if workload != "select":
                            self.check(bin_dir, conn, run, args.timeout)
                            run.size_after_kb = self.pg_size_kb(bin_dir, conn, args.timeout)
                    else:
                        if tusk_error or tusk is None:
                            raise RuntimeError(tusk_error or "not built")
                        if workload != "select":
                            run.size_before_kb = self.tusk_size_kb(tusk.data_dir)
                        proc, conn = self.start_tusk(tusk, system.split("-", 1)[1], args.transport)
                        try:
                            self.measure(args, run, bin_dir, conn, tmp)
                            if workload != "select":
                                self.check(bin_dir, conn, run, args.timeout)
                        finally:
                            self.stop_tusk(proc)
                        if workload != "select":
                            run.size_after_kb = self.tusk_size_kb(tusk.data_dir)
                except (KeyboardInterrupt, SystemExit):
                    raise
                except Exception as e:  # noqa: BLE001 - one system failing must not stop the rest
                    run.error = short_error(str(e))
                runs.append(run)
                if run.error:
                    log(f"bench: round {rnd} {workload} {mode} {system}: FAILED {run.error}")
                else:
                    log(f"bench: round {rnd} {workload} {mode} {system}: {run.tps:,.0f} tps, "
                        f"latency {fmt_num(run.latency_ms)} ms, p99 {fmt_num(run.p99_ms)} ms, "
                        f"failed {run.failed}, consistent {run.consistent}")
        if cluster is not None:
            cluster.stop()
        meta["load_after"] = os.getloadavg()
        markdown = self.markdown(args, runs, meta)
        print(markdown)
        data = {"benchmark": self.name, "scale": args.scale, "clients": args.clients, "jobs": args.jobs,
                "duration": args.duration, "tpcb_duration": args.tpcb_duration, "meta": meta,
                "transport": args.transport, "pg_settings": pg_settings,
                "tusk_startup": self.TUSK_STARTUP,
                "results": [vars(r) for r in runs]}
        written = write_outputs(self.name, markdown, data, None)
        log("bench: wrote " + ", ".join(written))
        return 0

    def markdown(self, args, runs, meta) -> str:
        out = [f"# pgbench -c {args.clients} -j {args.jobs}, scale {args.scale}", "",
               f"Started {meta['started']} on {meta['machine']}; load average before "
               f"{meta['load_before'][0]:.2f}, after {meta['load_after'][0]:.2f}. "
               f"{args.rounds} round(s); in each, every system runs each workload once per mode, "
               f"in turn (select-only and TPC-B after a {args.warmup} s warm-up). Select-only and "
               f"mixed runs last {args.duration} s, TPC-B runs {args.tpcb_duration} s. Latency: "
               "average and p99 of every transaction in pgbench's `-l` log.", "",
               "| workload | mode | system | tps (median) | tps (all rounds) | latency avg (ms) "
               "| p99 (ms) | failed | × PostgreSQL | consistent | size before → after "
               "| WAL syncs per TPC-B commit |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for workload in args.workloads:
            for mode in args.modes:
                pg = [r.tps for r in runs if (r.workload, r.mode, r.system) == (workload, mode, "postgres")
                      and r.tps]
                pg_median = statistics.median(pg) if pg else None
                for system in args.systems:
                    if workload != "select" and system == "tusk-partitioned":
                        continue
                    mine = [r for r in runs if (r.workload, r.mode, r.system) == (workload, mode, system)]
                    ok = [r for r in mine if r.tps]
                    if not ok:
                        bad = next((r.error for r in mine), "not run")
                        out.append(f"| {workload} | {mode} | {system} | — | — | — | — | — | "
                                   f"failed: {bad} | — | — | — |")
                        continue
                    tps = statistics.median(r.tps for r in ok)
                    lats = [r.latency_ms for r in ok if r.latency_ms is not None]
                    p99s = [r.p99_ms for r in ok if r.p99_ms is not None]
                    ratio = f"{tps / pg_median:.2f}×" if pg_median else "—"
                    last = ok[-1]
                    consistent = "—" if last.consistent is None else (
                        "yes" if last.consistent else f"NO {last.sums}")
                    size = "—" if last.size_before_kb is None else (
                        f"{fmt_kb(last.size_before_kb)} → {fmt_kb(last.size_after_kb or 0)}")
                    synced = [r for r in ok if r.wal_syncs is not None and r.tpcb_transactions]
                    per_commit = "—" if not synced else (
                        f"{sum(r.wal_syncs for r in synced) / sum(r.tpcb_transactions for r in synced):.3f}"
                        f" ({sum(r.wal_syncs for r in synced):,} / "
                        f"{sum(r.tpcb_transactions for r in synced):,})")
                    label = system
                    tps_text = f"{tps:,.0f}"
                    if workload == "mixed":
                        label += " (6 × -S; 2 × TPC-B)"
                        tps_text += f"; TPC-B {statistics.median(r.tpcb_tps for r in ok):,.0f} " \
                                    f"(p99 {fmt_num(last.tpcb_p99_ms)} ms)"
                    out.append(
                        f"| {workload} | {mode} | {label} | {tps_text} | "
                        f"{', '.join(f'{r.tps:,.0f}' for r in ok)} | "
                        f"{fmt_num(statistics.median(lats) if lats else None)} | "
                        f"{fmt_num(statistics.median(p99s) if p99s else None)} | "
                        f"{sum(r.failed or 0 for r in ok)} | {ratio} | {consistent} | {size} "
                        f"| {per_commit} |")
        out += ["", "## Setup", "",
                f"Both systems: `pgbench -i -s {args.scale}` (tusk: load "
                f"{meta.get('tusk_load_s', 0):.1f} s; PostgreSQL: {meta.get('postgres_load_s', 0):.1f} s).",
                "",
                "- PostgreSQL: " + ", ".join(f"{k}={v}" for k, v in self.PG_SETTINGS.items())
                + "; autovacuum on (default)",
                "- tusk serve (tusk.conf): " + ", ".join(f"{k}={v}" for k, v in self.TUSK_STARTUP.items())
                + ", tusk.buffer_mapping per system",
                "- pgbench reaches both through "
                + ("a Unix-domain socket" if args.transport == "socket" else "TCP on 127.0.0.1"),
                "- size: PostgreSQL's pg_total_relation_size of the pgbench tables; tusk's relation "
                "files (tables and indexes) after its shutdown checkpoint",
                "- WAL syncs per TPC-B commit: `pg_stat_wal.wal_sync` before and after the measured "
                "run (every fsync of the WAL: commits, page writes, checkpoints; PostgreSQL read 1 s "
                "after pgbench exits, once its backends have reported) over the TPC-B transactions "
                "pgbench completed; below 1 means commits shared flushes (group commit)"]
        return "\n".join(out) + "\n"


def fmt_num(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


# bench/tpch/ is a package of its own that builds on this module's machinery:
# it imports it as `run`, which must be this very module (not a second copy
# loaded from the same file) so that both share one list of clean-ups.
sys.modules.setdefault("run", sys.modules[__name__])
sys.path.insert(0, str(BENCH_DIR))
from tpch.bench import TpchBench  # noqa: E402 - needs the alias above
from scan.bench import ScanBench  # noqa: E402 - needs the alias above
from recovery_tpcb.bench import RecoveryTpcbBench  # noqa: E402 - needs the alias above

BENCHMARKS = {b.name: b for b in [JoinBench(), SpillBench(), VacuumBench(), PgbenchBench(),
                                  CopyBench(), TpchBench(), ScanBench(), RecoveryTpcbBench()]}


def main() -> int:
    if len(sys.argv) >= 3 and sys.argv[1] == "_worker":
        try:
            result = worker_main(json.loads(sys.argv[2]))
        except Exception as e:  # noqa: BLE001 - reported to the parent
            traceback.print_exc()
            result = {"error": short_error(f"{type(e).__name__}: {e}")}
        print(WORKER_MARK + json.dumps(result), flush=True)
        return 0

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="benchmark", required=True)
    for bench in BENCHMARKS.values():
        bench.add_arguments(sub.add_parser(bench.name, help=bench.help))
    args = parser.parse_args()
    if getattr(args, "runs", 1) < 1:
        parser.error("--runs must be at least 1")
    if any(t < 1 for t in getattr(args, "threads", [1])):
        parser.error("--threads must be at least 1")

    if BENCHMARKS[args.benchmark].needs_venv:
        ensure_venv()
    install_signal_handlers()
    try:
        return BENCHMARKS[args.benchmark].run(args)
    except KeyboardInterrupt:
        log("bench: interrupted")
        return 130
    finally:
        run_cleanups()


if __name__ == "__main__":
    sys.exit(main())
