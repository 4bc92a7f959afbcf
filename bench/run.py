#!/usr/bin/env python3
"""Benchmark harness: runs tusk beside PostgreSQL, DuckDB, DataFusion and Polars.

    python3 bench/run.py join [--rows N] [--runs N] [--systems ...] [--threads 1,2]

The script bootstraps itself: it creates (or refreshes, when
bench/requirements.txt changed) the virtual environment bench/.venv and
re-executes itself inside it. It builds tusk in release mode, starts a private
PostgreSQL 15 cluster in a temporary directory (removed again at exit, also on
error or Ctrl-C), runs the benchmark and writes a markdown report, a JSON file
and a PNG chart to bench/results/ (timestamped, plus a `*-latest.*` copy).

Each benchmark is a subcommand (a `Benchmark` subclass registered in
BENCHMARKS); `join` is the first. The machinery they share lives at module
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
            "".join(f"{k} = {v}\n" for k, v in self.STARTUP.items()))

    def script(self, lines: list) -> tuple[list, list]:
        """Runs a -f script; returns (Time: values in ms, integer result lines)."""
        if self.build_error:
            raise RuntimeError(self.build_error)
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
            f.write("\n".join(lines) + "\n")
            path = f.name
        try:
            r = subprocess.run(
                [self.binary, "-D", str(self.data_dir), "-A", "-t", "-q", "-f", path],
                capture_output=True, text=True, timeout=self.timeout,
                env={k: v for k, v in os.environ.items() if k != "TUSKDATA"},
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"timed out after {self.timeout:.0f} s")
        finally:
            os.unlink(path)
        if r.returncode != 0:
            raise RuntimeError(short_error(r.stderr or r.stdout or f"exit {r.returncode}"))
        times, values = [], []
        for line in r.stdout.splitlines():
            m = TIME_RE.match(line.strip())
            if m:
                times.append(float(m.group(1)))
            elif re.fullmatch(r"-?\d+", line.strip()):
                values.append(int(line.strip()))
        return times, values

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
    }
    TUSK_SETTINGS = {"work_mem": "1GB"}

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

    def load_sql(self, keys: str, rows: int) -> dict:
        """Table creation per SQL dialect."""
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
        try:
            cur = conn.cursor()
            meta.setdefault("versions", {})["postgres"] = conn.info.parameter_status("server_version")
            cur.execute("drop table if exists t")
            t0 = time.perf_counter()
            try:
                cur.execute(self.load_sql(keys, args.rows)["postgres"])
            except Exception as e:
                loads.append(Load("postgres", keys, None, f"failed: {short_error(str(e))}"))
                raise
            load_ms = (time.perf_counter() - t0) * 1e3
            t0 = time.perf_counter()
            cur.execute("vacuum analyze t")
            vac_ms = (time.perf_counter() - t0) * 1e3
            loads.append(Load("postgres", keys, load_ms, f"CREATE TABLE AS; then VACUUM ANALYZE {fmt_ms(vac_ms)} ms (not counted)"))
            for threads in args.threads:
                cell = Cell("postgres", keys, threads)
                cells.append(cell)
                try:
                    cur.execute(f"set max_parallel_workers_per_gather = {threads - 1}")
                    cur.execute("explain " + self.QUERY)
                    plan = "\n".join(r[0] for r in cur.fetchall())
                    join = re.search(r"(Parallel Hash Join|Hash Join|Merge Join|Nested Loop)", plan)
                    workers = re.search(r"Workers Planned: (\d+)", plan)
                    cell.notes.append(f"plan: {join.group(1) if join else '?'}, "
                                      f"workers planned {workers.group(1) if workers else 0}")
                    cur.execute(self.QUERY)
                    cur.fetchone()  # warm-up
                    counts = set()
                    for _ in range(args.runs):
                        t0 = time.perf_counter()
                        cur.execute(self.QUERY)
                        counts.add(cur.fetchone()[0])
                        cell.times_ms.append((time.perf_counter() - t0) * 1e3)
                    cell.count = min(counts)
                    if len(counts) > 1:
                        cell.notes.append(f"count varies between runs: {sorted(counts)}")
                except Exception as e:  # noqa: BLE001
                    cell.error = short_error(str(e))
                self.progress(cell)
            cur.execute("drop table t")
        finally:
            conn.close()

    def bench_tusk(self, args, tusk, keys, cells, loads, meta):
        meta.setdefault("versions", {})["tusk"] = tusk.version()
        sets = [f"set {k} = '{v}';" for k, v in self.TUSK_SETTINGS.items()]
        try:
            times, _ = tusk.script(["drop table if exists t;", "\\timing on",
                                    self.load_sql(keys, args.rows)["tusk"] + ";"])
        except Exception as e:
            loads.append(Load("tusk", keys, None, f"failed: {short_error(str(e))}"))
            raise
        loads.append(Load("tusk", keys, times[-1] if times else None,
                          "CREATE TABLE AS" if times else "no Time: line printed"))
        for threads in args.threads:
            cell = Cell("tusk", keys, threads)
            cells.append(cell)
            try:
                script = sets + [f"set max_parallel_workers_per_gather = {threads - 1};", "\\timing on"]
                script += [self.QUERY + ";"] * (args.runs + 1)
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
            tusk.build()
            tusk.fresh_data_dir(args.workdir)
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
                                                      {**Tusk.STARTUP, **self.TUSK_SETTINGS}.items())
                + ", max_parallel_workers_per_gather = threads - 1")

        for keys in self.KEYS:
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
        data = {"benchmark": self.name, "query": self.QUERY, "rows": args.rows, "runs": args.runs,
                "meta": meta, "pg_settings": self.PG_SETTINGS, "tusk_settings": self.TUSK_SETTINGS,
                "cells": [vars(c) for c in cells], "loads": [vars(l) for l in loads]}
        written = write_outputs(self.name, markdown, data, lambda p: self.chart(p, args, cells))
        log("bench: wrote " + ", ".join(written))
        return 0

    def markdown(self, args, cells, loads, meta) -> str:
        # The count most systems agree on, per key set; others get flagged.
        majority = {}
        for keys in self.KEYS:
            counts = [c.count for c in cells if c.keys == keys and c.ok and c.count is not None]
            if counts:
                majority[keys] = max(set(counts), key=counts.count)
        versions = ", ".join(f"{k} {v}" for k, v in sorted(meta.get("versions", {}).items()))
        out = [f"# join benchmark, {meta['started']}", ""]
        out.append(f"`{self.QUERY}` with t = {args.rows:,} rows; dense keys "
                   f"`generate_series(1, {args.rows})::int`, sparse keys "
                   "`((g * 48271::bigint) % 2147483647)::int`. Every key is distinct, so the "
                   f"expected count is {args.rows:,} for both.")
        out.append("")
        out.append(f"Times in ms over {args.runs} timed runs after 1 warm-up run; table load not included. "
                   "Threads: PostgreSQL and tusk run `max_parallel_workers_per_gather = threads - 1`.")
        out.append("")
        out.append(f"Machine: {meta['machine']}. Versions: {versions or 'n/a'}.")
        out.append("")
        out.append("| system | keys | threads | min ms | median ms | count |")
        out.append("|---|---|---:|---:|---:|---:|")
        notes = []
        for keys in self.KEYS:
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
            if count != args.rows:
                notes.append(f"the usual count for {keys} keys is {count:,}, not {args.rows:,}")
        out += ["", "## Table load (not included above)", "",
                "| system | keys | ms | how |", "|---|---|---:|---|"]
        for l in loads:
            out.append(f"| {l.system} | {l.keys} | {fmt_ms(l.ms)} | {l.note} |")
        settings = {
            "tusk": "tusk: " + ", ".join(f"`SET {k} = '{v}'`" for k, v in self.TUSK_SETTINGS.items())
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

        groups = [(k, t) for k in self.KEYS for t in args.threads]
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


BENCHMARKS = {b.name: b for b in [JoinBench()]}


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
