"""Crash recovery after pgbench's TPC-B: tusk serve against PostgreSQL 15.

    python3 bench/run.py recovery-tpcb [--scale 10] [--duration 60] [--rounds 3]
                                       [--systems tusk,postgres] [--no-evict]

Issue 20's "recovery after that crash, against PostgreSQL 15's on the same
workload: replay time, with recovery_prefetch on and off in both". For each
system, once: a fresh data directory, `pgbench -i -s SCALE`, clean shutdown
(the *base* directory). Then each round, for each system in turn:

1. a copy of the base (the *crashed* directory) is started, `CHECKPOINT`, and
   the default TPC-B script runs (`pgbench -n -c 8 -j 2 -T DURATION`);
   checkpoints are pushed out (`max_wal_size` 20GB, `checkpoint_timeout` 1d)
   so that everything the run wrote is WAL to replay;
2. the server is crashed: tusk (one process) gets SIGKILL; PostgreSQL's
   postmaster and every backend and auxiliary process are frozen with
   SIGSTOP and then all SIGKILLed (nothing runs between the first and the
   last kill: no process gets to write, flush or notice another's death);
3. for `recovery_prefetch` = on and off (order alternating by round), a copy
   of the crashed directory (`cp -a`) has every file fsynced and evicted from
   the OS page cache (`posix_fadvise(DONTNEED)`, unless `--no-evict`), and the
   server starts on it with that setting. Replay time is what the server logs:
   PostgreSQL's `redo done at X/Y system usage: CPU: ..., elapsed: S s` (10 ms
   resolution), tusk's `redo done at X (N records from Y) in S s; recovery
   prefetch (METHOD): ...`; beside it, the wall time from starting the process
   to `database system is ready to accept connections` (includes the
   end-of-recovery checkpoint of both);
4. after each restart, the consistency check sum(abalance) = sum(tbalance) =
   sum(bbalance) = sum(delta) of history, and `pg_stat_recovery_prefetch`.

WAL replayed: tusk's log line gives records and the LSN range; PostgreSQL's
the range (`redo starts at` .. `redo done at`, the start of the last record),
and `pg_waldump --stats` over the crashed directory's WAL from the
checkpoint's redo pointer gives its records. Hold `flock /tmp/tusk-bench.lock`
around the whole run on a shared machine. Writes
results/recovery-tpcb-<timestamp>.{md,json} and results/recovery-tpcb-latest.*.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import run
from run import (CONSISTENCY_SQL, FAILED_RE, TPS_RE, TXN_RE, Benchmark, Tusk, log,
                 machine_description, on_exit, parse_list, short_error, write_outputs)

SYSTEMS = ["tusk", "postgres"]
READY_RE = re.compile(r"database system is ready to accept connections")
TUSK_PORT_RE = re.compile(r'listening on IPv4 address "127.0.0.1", port (\d+)')
TUSK_REDO_RE = re.compile(
    r"redo done at ([0-9A-F]+) \((\d+) records from ([0-9A-F]+)\) in ([0-9.]+) s; "
    r"recovery prefetch \(([^)]*)\)")
PG_REDO_START_RE = re.compile(r"redo starts at ([0-9A-F]+)/([0-9A-F]+)")
PG_REDO_DONE_RE = re.compile(
    r"redo done at ([0-9A-F]+)/([0-9A-F]+) system usage: CPU: user: ([0-9.]+) s, "
    r"system: ([0-9.]+) s, elapsed: ([0-9.]+) s")
WALDUMP_TOTAL_RE = re.compile(r"^Total\s+(\d+)", re.M)
PREFETCH_COLUMNS = ["prefetch", "hit", "skip_init", "skip_new", "skip_fpw", "skip_rep"]


def pg_lsn(hi: str, lo: str) -> int:
    return (int(hi, 16) << 32) | int(lo, 16)


@dataclass
class Replay:
    system: str
    round: int
    prefetch: str
    load_tps: float | None = None
    load_transactions: int | None = None
    load_failed: int | None = None
    records: int | None = None
    wal_bytes: int | None = None
    redo_s: float | None = None
    ready_s: float | None = None
    method: str | None = None
    counters: dict | None = None
    consistent: bool | None = None
    sums: list | None = None
    load_average: float | None = None
    error: str | None = None


class Server:
    """A database server process started by hand on one data directory at a
    time: started and waited for until it accepts connections (its log read
    from stderr), crashed, or shut down cleanly. Subclasses know the system."""

    name = ""

    def __init__(self, args, root: Path):
        self.args = args
        self.root = root
        self.proc: subprocess.Popen | None = None
        self.lines: list = []
        self.port: int | None = None
        on_exit(self.kill)

    def popen(self, cmd: list, **kw) -> subprocess.Popen:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, cwd="/", **kw)

    def wait_ready(self, t0: float) -> float:
        """Reads the log until the server is ready; returns seconds since t0."""
        self.lines = []
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            self.saw(line)
            if READY_RE.search(line):
                ready = time.perf_counter() - t0
                break
        else:
            self.proc.wait()
            tail = "\n".join(self.lines[-15:])
            self.proc = None
            raise RuntimeError(f"{self.name} did not start:\n{tail}")
        # Keep reading its log, so that the pipe never fills.
        proc, lines = self.proc, self.lines
        threading.Thread(target=lambda: [lines.append(l.rstrip("\n")) for l in proc.stderr],
                         daemon=True).start()
        return ready

    def saw(self, line: str) -> None:
        pass

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def stop(self) -> None:
        """Clean (fast) shutdown."""
        self.proc.send_signal(signal.SIGTERM if self.name == "tusk" else signal.SIGINT)
        try:
            self.proc.wait(timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError(f"{self.name} did not shut down")
        self.proc = None

    def run_sql(self, sql: str, header: bool = False) -> str:
        cmd = [str(Path(self.args.pg_bin) / "psql"), "-X", "-A", "-v", "ON_ERROR_STOP=1",
               "-c", sql] + self.conn_args()
        if not header:
            cmd.insert(3, "-t")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=self.args.timeout)
        if r.returncode != 0:
            raise RuntimeError(short_error(r.stderr or r.stdout))
        return r.stdout.strip()

    def pgbench(self, extra: list, timeout: float) -> str:
        r = subprocess.run([str(Path(self.args.pg_bin) / "pgbench")] + extra + self.conn_args(),
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(short_error(r.stderr or r.stdout))
        return r.stdout

    def prefetch_counters(self) -> dict:
        out = self.run_sql("select * from pg_stat_recovery_prefetch", header=True).splitlines()
        row = dict(zip(out[0].split("|"), out[1].split("|")))
        return {k: row[k] for k in PREFETCH_COLUMNS if k in row}

    def crashed_records(self, crashed: Path) -> int | None:
        """WAL records to replay in a crashed directory, when the log will
        not say (see `redo`)."""
        return None

    # Subclasses: create(data), start(data, prefetch) -> ready seconds, crash(),
    # conn_args(), redo() -> (records or None, wal bytes, redo seconds, method)
    # from the log of the last start.


class TuskServer(Server):
    name = "tusk"

    def __init__(self, args, root: Path, binary: str):
        super().__init__(args, root)
        self.binary = binary

    def conf(self, prefetch: str | None) -> str:
        a = self.args
        lines = {"shared_buffers": a.shared_buffers, "huge_pages": "off",
                 "synchronous_commit": "on", "max_wal_size": "20GB", "checkpoint_timeout": "1d",
                 "full_page_writes": a.full_page_writes,
                 "maintenance_io_concurrency": str(a.maintenance_io_concurrency),
                 "unix_socket_directories": "''"}
        if prefetch is not None:
            lines["recovery_prefetch"] = prefetch
            if a.tusk_prefetch_method:
                lines["tusk.recovery_prefetch_method"] = a.tusk_prefetch_method
        return "".join(f"{k} = {v}\n" for k, v in lines.items())

    def create(self, data: Path) -> None:
        data.mkdir(parents=True)
        (data / "tusk.conf").write_text(self.conf(None))

    def start(self, data: Path, prefetch: str | None) -> float:
        (data / "tusk.conf").write_text(self.conf(prefetch))
        t0 = time.perf_counter()
        self.proc = self.popen(
            [self.binary, "serve", "-D", str(data), "--listen", "127.0.0.1",
             "--port", str(self.args.tusk_port)],
            env={k: v for k, v in os.environ.items() if k != "TUSKDATA"})
        return self.wait_ready(t0)

    def saw(self, line: str) -> None:
        m = TUSK_PORT_RE.search(line)
        if m:
            self.port = int(m.group(1))

    def crash(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc = None

    def conn_args(self) -> list:
        return ["-h", "127.0.0.1", "-p", str(self.port), "-U", "tusk", "postgres"]

    def redo(self) -> tuple:
        m = next((m for m in map(TUSK_REDO_RE.search, self.lines) if m), None)
        if m is None:
            raise RuntimeError("tusk logged no `redo done` line")
        end, records, start, secs, method = m.groups()
        return int(records), int(end, 16) - int(start, 16), float(secs), method


class PgServer(Server):
    """PostgreSQL 15's postmaster, run directly (not through pg_ctl) so that
    this process is its parent, sees its log on stderr and knows its pid; as
    the `postgres` user when we are root."""

    name = "postgres"

    def __init__(self, args, root: Path):
        super().__init__(args, root)
        self.bin = Path(args.pg_bin)
        self.port = args.pg_port
        self.socket_dir = root / "socket"
        self.socket_dir.mkdir()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(root, "postgres", "postgres")
            shutil.chown(self.socket_dir, "postgres", "postgres")

    def owner_kw(self) -> dict:
        return {"user": "postgres", "group": "postgres", "extra_groups": []} \
            if self.as_postgres else {}

    def create(self, data: Path) -> None:
        r = subprocess.run([str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "-A",
                            "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                           capture_output=True, text=True, cwd="/", **self.owner_kw())
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed: {r.stdout}{r.stderr}")
        a = self.args
        conf = {"port": self.port, "listen_addresses": "", "unix_socket_directories":
                str(self.socket_dir), "shared_buffers": a.shared_buffers, "huge_pages": "off",
                "synchronous_commit": "on", "max_wal_size": "20GB", "checkpoint_timeout": "1d",
                "full_page_writes": a.full_page_writes, "max_connections": "100",
                "maintenance_io_concurrency": a.maintenance_io_concurrency,
                "log_checkpoints": "on"}
        with open(data / "postgresql.conf", "a") as f:
            f.write("\n# tusk bench recovery-tpcb\n"
                    + "".join(f"{k} = '{v}'\n" for k, v in conf.items()))

    def start(self, data: Path, prefetch: str | None) -> float:
        if prefetch is not None:
            # A later line of postgresql.conf wins over an earlier one.
            with open(data / "postgresql.conf", "a") as f:
                f.write(f"recovery_prefetch = '{prefetch}'\n")
        t0 = time.perf_counter()
        self.proc = self.popen([str(self.bin / "postgres"), "-D", str(data)], **self.owner_kw())
        return self.wait_ready(t0)

    @staticmethod
    def children(pid: int) -> list:
        kids = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            # pid (comm) state ppid ...; comm may hold spaces and parentheses.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(d.name))
        return kids

    def crash(self) -> None:
        """SIGSTOP the postmaster and every child, then SIGKILL them all."""
        pm = self.proc.pid
        os.kill(pm, signal.SIGSTOP)
        kids = self.children(pm)
        for k in kids:
            try:
                os.kill(k, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        for p in [pm] + kids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self.proc = None
        # The orphans are reaped by init; wait until they are gone.
        deadline = time.time() + 30
        while time.time() < deadline and any(self.alive(k) for k in kids):
            time.sleep(0.05)

    @staticmethod
    def alive(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return state != "Z"

    def conn_args(self) -> list:
        return ["-h", str(self.socket_dir), "-p", str(self.port), "-U", "postgres", "postgres"]

    def crashed_records(self, crashed: Path) -> int | None:
        """Records from the checkpoint's redo pointer to the end of valid WAL."""
        r = subprocess.run([str(self.bin / "pg_controldata"), "-D", str(crashed)],
                           capture_output=True, text=True)
        m = re.search(r"Latest checkpoint's REDO location:\s+(\S+)", r.stdout)
        if not m:
            return None
        # pg_waldump stops with an error at the end of the valid WAL, after
        # printing the statistics.
        r = subprocess.run([str(self.bin / "pg_waldump"), "--stats", "-p",
                            str(crashed / "pg_wal"), "-s", m.group(1)],
                           capture_output=True, text=True)
        m = WALDUMP_TOTAL_RE.search(r.stdout)
        return int(m.group(1)) if m else None

    def redo(self) -> tuple:
        start = next((m for m in map(PG_REDO_START_RE.search, self.lines) if m), None)
        done = next((m for m in map(PG_REDO_DONE_RE.search, self.lines) if m), None)
        if start is None or done is None:
            raise RuntimeError("PostgreSQL logged no `redo starts` / `redo done` line")
        wal = pg_lsn(*done.groups()[:2]) - pg_lsn(*start.groups())
        return None, wal, float(done.group(5)), "fadvise"


def copy_dir(src: Path, dst: Path) -> None:
    r = subprocess.run(["cp", "-a", str(src), str(dst)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"cp -a failed: {r.stderr.strip()}")


def evict(directory: Path) -> int:
    """Writes back and drops every file of `directory` from the page cache;
    returns the bytes evicted."""
    total = 0
    for path in directory.rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            total += os.fstat(fd).st_size
        finally:
            os.close(fd)
    return total


class RecoveryTpcbBench(Benchmark):
    name = "recovery-tpcb"
    help = ("crash after pgbench TPC-B, then replay with recovery_prefetch on and off: "
            "tusk serve against PostgreSQL 15")
    needs_venv = False

    def add_arguments(self, p):
        self.add_common_arguments(p)
        p.add_argument("--scale", type=int, default=10, help="pgbench -i -s (default 10)")
        p.add_argument("--clients", type=int, default=8, help="pgbench -c (default 8)")
        p.add_argument("--jobs", type=int, default=2, help="pgbench -j (default 2)")
        p.add_argument("--duration", type=int, default=60,
                       help="pgbench -T seconds of TPC-B before each crash (default 60)")
        p.add_argument("--mode", default="simple", choices=["simple", "extended", "prepared"],
                       help="pgbench -M (default simple)")
        p.add_argument("--rounds", type=int, default=3,
                       help="crashes per system; each is replayed once per prefetch setting "
                            "(default 3)")
        p.add_argument("--systems", default=",".join(SYSTEMS),
                       type=lambda s: parse_list(s, SYSTEMS), help="tusk,postgres")
        p.add_argument("--shared-buffers", default="1GB", help="both systems (default 1GB)")
        p.add_argument("--full-page-writes", default="on", choices=["on", "off"],
                       help="both systems (default on, as both default); off makes redo "
                            "read every page it changes")
        p.add_argument("--maintenance-io-concurrency", type=int, default=10,
                       help="prefetch depth of both (default 10, the default of both)")
        p.add_argument("--tusk-prefetch-method", default=None,
                       choices=["io_uring", "fadvise", "threads"],
                       help="tusk.recovery_prefetch_method (default: tusk's, io_uring)")
        p.add_argument("--no-evict", action="store_true",
                       help="leave the copies in the OS page cache")
        p.add_argument("--tusk-port", type=int, default=0,
                       help="tusk's TCP port on 127.0.0.1 (default 0: any free port)")
        p.add_argument("--pg-port", type=int, default=None,
                       help="PostgreSQL's port (names its Unix socket; default: a free one)")

    def run(self, args):
        if args.pg_port is None:
            args.pg_port = run.PgCluster._free_port()
        meta = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_description(),
                "load_before": os.getloadavg()}
        servers: dict = {}
        setup_errors: dict = {}
        for system in args.systems:
            root = Path(tempfile.mkdtemp(prefix=f"tusk-bench-recovery-{system}-",
                                         dir=args.workdir))
            on_exit(lambda root=root: shutil.rmtree(root, ignore_errors=True))
            try:
                if system == "tusk":
                    tusk = Tusk(args.tusk_bin, args.timeout)
                    tusk.build()
                    if tusk.build_error:
                        raise RuntimeError(tusk.build_error)
                    meta["tusk_version"] = tusk.version()
                    server = TuskServer(args, root, str(Path(tusk.binary).resolve()))
                else:
                    server = PgServer(args, root)
                servers[system] = server
                t0 = time.perf_counter()
                server.create(root / "base")
                server.start(root / "base", None)
                server.pgbench(["-i", "-q", "-s", str(args.scale)], args.timeout)
                server.stop()
                meta[f"{system}_init_s"] = time.perf_counter() - t0
                log(f"bench: {system}: pgbench -i -s {args.scale} in "
                    f"{meta[f'{system}_init_s']:.1f} s")
            except Exception as e:  # noqa: BLE001 - one system failing must not stop the other
                setup_errors[system] = short_error(str(e))
                log(f"bench: {system}: FAILED {setup_errors[system]}")
        replays: list = []
        for rnd in range(1, args.rounds + 1):
            order = ["on", "off"] if rnd % 2 else ["off", "on"]
            for system in args.systems:
                if system in setup_errors:
                    replays += [Replay(system, rnd, pf, error=setup_errors[system])
                                for pf in order]
                    continue
                replays += self.round(args, servers[system], rnd, order)
        meta["load_after"] = os.getloadavg()
        for server in servers.values():
            server.kill()
            shutil.rmtree(server.root, ignore_errors=True)
        markdown = self.markdown(args, replays, meta)
        print(markdown)
        data = {"benchmark": self.name, "args": {k: v for k, v in vars(args).items()
                                                 if v is None or isinstance(v, (int, float, str, list))},
                "meta": meta, "replays": [vars(r) for r in replays]}
        written = write_outputs(self.name, markdown, data, None)
        log("bench: wrote " + ", ".join(written))
        return 0

    def round(self, args, server: Server, rnd: int, order: list) -> list:
        """One crash of `server` under TPC-B, replayed once per prefetch setting."""
        crashed = server.root / "crashed"
        out = [Replay(server.name, rnd, pf) for pf in order]
        try:
            shutil.rmtree(crashed, ignore_errors=True)
            copy_dir(server.root / "base", crashed)
            server.start(crashed, None)
            server.run_sql("checkpoint")
            text = server.pgbench(["-n", "-M", args.mode, "-c", str(args.clients), "-j",
                                   str(args.jobs), "-T", str(args.duration)],
                                  args.duration + args.timeout)
            server.crash()
            records = server.crashed_records(crashed)
            tps, txn, failed = (TPS_RE.search(text), TXN_RE.search(text), FAILED_RE.search(text))
            for r in out:
                r.load_tps = float(tps.group(1)) if tps else None
                r.load_transactions = int(txn.group(1)) if txn else None
                r.load_failed = int(failed.group(1)) if failed else None
                r.records = records
            log(f"bench: round {rnd} {server.name}: TPC-B {r.load_tps} tps, "
                f"{r.load_transactions} transactions; crashed")
        except Exception as e:  # noqa: BLE001
            server.kill()
            for r in out:
                r.error = "load/crash: " + short_error(str(e))
            log(f"bench: round {rnd} {server.name}: FAILED {out[0].error}")
            return out
        for r in out:
            self.replay(args, server, crashed, r)
        shutil.rmtree(crashed, ignore_errors=True)
        return out

    def replay(self, args, server: Server, crashed: Path, r: Replay) -> None:
        target = server.root / "replay"
        try:
            shutil.rmtree(target, ignore_errors=True)
            copy_dir(crashed, target)
            if not args.no_evict:
                evict(target)
            r.load_average = os.getloadavg()[0]
            r.ready_s = server.start(target, r.prefetch)
            records, r.wal_bytes, r.redo_s, r.method = server.redo()
            r.records = records if records is not None else r.records
            if r.prefetch == "off":
                r.method = "off"
            sums = server.run_sql(CONSISTENCY_SQL).split("|")
            r.sums, r.consistent = sums, len(set(sums)) == 1
            r.counters = server.prefetch_counters()
            server.stop()
            log(f"bench: round {r.round} {server.name} recovery_prefetch={r.prefetch}: redo "
                f"{r.redo_s:.3f} s, ready {r.ready_s:.3f} s, {r.records} records, "
                f"{r.wal_bytes / 2**20:.1f} MB, consistent {r.consistent} {r.counters}")
        except Exception as e:  # noqa: BLE001
            server.kill()
            r.error = short_error(str(e))
            log(f"bench: round {r.round} {server.name} recovery_prefetch={r.prefetch}: "
                f"FAILED {r.error}")
        finally:
            shutil.rmtree(target, ignore_errors=True)

    @staticmethod
    def fmt(v, spec: str = ".3f") -> str:
        return "—" if v is None else format(v, spec)

    def markdown(self, args, replays: list, meta: dict) -> str:
        med = statistics.median
        out = [f"# Crash recovery after TPC-B (scale {args.scale}, -c {args.clients} "
               f"-j {args.jobs} -T {args.duration}): tusk and PostgreSQL 15", "",
               f"Started {meta['started']} on {meta['machine']}; load average (1 min) before "
               f"{meta['load_before'][0]:.2f}, after {meta['load_after'][0]:.2f}. "
               f"{args.rounds} crash(es) per system, each replayed once with recovery_prefetch "
               "on and once off (order alternating by round)"
               + ("" if args.no_evict else ", every copy evicted from the OS page cache first")
               + ".", "",
               "| system | recovery_prefetch | replays | redo min (s) | redo median (s) "
               "| start → ready min (s) | median (s) | records (median) | WAL MB (median) "
               "| records/s (median) | off ÷ on, same crash: median (each) | consistent | load avg at start "
               "of replays |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for system in args.systems:
            # off ÷ on of the same crash (the same WAL), per round.
            by_round: dict = {}
            for r in replays:
                if r.system == system and r.redo_s:
                    by_round.setdefault(r.round, {})[r.prefetch] = r.redo_s
            paired = [t["off"] / t["on"] for _, t in sorted(by_round.items()) if len(t) == 2]
            for pf in ("on", "off"):
                mine = [r for r in replays if (r.system, r.prefetch) == (system, pf)]
                ok = [r for r in mine if r.redo_s is not None]
                if not ok:
                    bad = next((r.error for r in mine if r.error), "not run")
                    out.append(f"| {system} | {pf} | 0 | failed: {bad} |" + " — |" * 9)
                    continue
                recs = [r.records for r in ok if r.records]
                rate = [r.records / r.redo_s for r in ok if r.records and r.redo_s]
                ratio = (f"{med(paired):.2f}× ({', '.join(f'{x:.2f}' for x in paired)})"
                         if pf == "on" and paired else "")
                cons = "yes" if all(r.consistent for r in ok) else "NO " + "; ".join(
                    str(r.sums) for r in ok if not r.consistent)
                failed = len(mine) - len(ok)
                out.append(
                    f"| {system} | {pf}{' (' + ok[0].method + ')' if pf == 'on' else ''} | "
                    f"{len(ok)}{f' ({failed} failed)' if failed else ''} | "
                    f"{min(r.redo_s for r in ok):.3f} | {med(r.redo_s for r in ok):.3f} | "
                    f"{min(r.ready_s for r in ok):.3f} | {med(r.ready_s for r in ok):.3f} | "
                    f"{self.fmt(med(recs) if recs else None, ',.0f')} | "
                    f"{med(r.wal_bytes for r in ok) / 2**20:.1f} | "
                    f"{self.fmt(med(rate) if rate else None, ',.0f')} | {ratio} | {cons} | "
                    f"{', '.join(f'{r.load_average:.1f}' for r in ok)} |")
        out += ["", "Every replay:", "",
                "| round | system | TPC-B tps before the crash | transactions | failed "
                "| recovery_prefetch | records | WAL MB | redo (s) | start → ready (s) "
                "| consistent | " + " | ".join(PREFETCH_COLUMNS) + " | load avg |",
                "|---|---|---|---|---|---|---|---|---|---|---|" + "---|" * len(PREFETCH_COLUMNS)
                + "---|"]
        for r in sorted(replays, key=lambda r: (r.round, args.systems.index(r.system))):
            if r.error:
                out.append(f"| {r.round} | {r.system} | {self.fmt(r.load_tps, ',.0f')} | — | — "
                           f"| {r.prefetch} | failed: {r.error} |" + " — |" * (5 + len(
                               PREFETCH_COLUMNS)))
                continue
            c = r.counters or {}
            out.append(
                f"| {r.round} | {r.system} | {self.fmt(r.load_tps, ',.0f')} | "
                f"{self.fmt(r.load_transactions, ',')} | {self.fmt(r.load_failed, 'd')} | "
                f"{r.prefetch} | {self.fmt(r.records, ',')} | {r.wal_bytes / 2**20:.1f} | "
                f"{r.redo_s:.3f} | {r.ready_s:.3f} | {'yes' if r.consistent else 'NO'} | "
                + " | ".join(c.get(k, "—") for k in PREFETCH_COLUMNS)
                + f" | {r.load_average:.1f} |")
        common = (f"shared_buffers={args.shared_buffers}, huge_pages=off, synchronous_commit=on, "
                  f"max_wal_size=20GB, checkpoint_timeout=1d, full_page_writes="
                  f"{args.full_page_writes}, maintenance_io_concurrency="
                  f"{args.maintenance_io_concurrency}, autovacuum on (default)")
        out += ["", "## Setup", "",
                f"- Both systems: {common}; `pgbench -i -s {args.scale}` once "
                f"(tusk {meta.get('tusk_init_s', 0):.1f} s, PostgreSQL "
                f"{meta.get('postgres_init_s', 0):.1f} s) and a clean shutdown; each round "
                f"starts a copy of that directory, runs CHECKPOINT and `pgbench -n -M {args.mode} "
                f"-c {args.clients} -j {args.jobs} -T {args.duration}` (default TPC-B script), "
                "and crashes the server.",
                "- tusk: `tusk serve` (tusk.conf), TCP on 127.0.0.1, version "
                f"{meta.get('tusk_version', '—')}; recovery_prefetch on uses "
                f"tusk.recovery_prefetch_method = {args.tusk_prefetch_method or 'default (io_uring)'}. "
                "Crash: SIGKILL (one process). Replay time: its log line `redo done at X (N "
                "records from Y) in S s` (replay of the WAL from the checkpoint's redo pointer, "
                "transaction and catalog outcomes; before the end-of-recovery checkpoint); "
                "records and WAL bytes from the same line.",
                "- PostgreSQL 15: `postgres -D` started directly (Unix socket only), max_connections"
                "=100, log_checkpoints=on; recovery_prefetch on uses posix_fadvise (its only "
                "method). Crash: the postmaster and all its children SIGSTOPped, then all "
                "SIGKILLed (not `pg_ctl stop -m immediate`, which sends SIGQUIT and lets each "
                "process exit on its own). Replay time: `redo done at X/Y system usage: CPU: "
                "..., elapsed: S s` (10 ms resolution); WAL bytes from `redo starts at` to "
                "`redo done at` (the start of the last record replayed); records from "
                "`pg_waldump --stats` of the crashed WAL from pg_controldata's REDO location.",
                "- Each replay runs on a fresh `cp -a` of the crashed directory"
                + ("" if args.no_evict else ", every file of which is fsynced and evicted from the "
                   "OS page cache (`posix_fadvise(DONTNEED)`) before the start, so replay reads "
                   "WAL and data files from disk") + ". start → ready: wall time from starting "
                "the process to its `database system is ready to accept connections` line "
                "(includes the end-of-recovery checkpoint of both). After each start: the "
                "consistency check sum(abalance) = sum(tbalance) = sum(bbalance) = sum(delta) "
                "and `select * from pg_stat_recovery_prefetch`, then a clean shutdown."]
        return "\n".join(out) + "\n"
