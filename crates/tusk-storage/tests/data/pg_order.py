#!/usr/bin/env python3
"""Writes pg_order.tsv: random values of every indexable type, sorted by
PostgreSQL 15 (C collation), for tests/btree_pg_order.rs.

Each line is `type <TAB> rank <TAB> value`, in PostgreSQL's ORDER BY order,
where `rank` is dense_rank() over that order (equal values share a rank)
and `value` is a form the test can read without PostgreSQL's input
functions (integers for dates, times and timestamps in PostgreSQL's own
units; interval fields; hex UTF-8 for strings).

    python3 pg_order.py --port 5497 > pg_order.tsv

needs a running PostgreSQL 15 created with `initdb --no-locale` (C collation).
"""
import argparse
import random
import subprocess
import sys

N = 300


def q(s):
    return "'" + s.replace("'", "''") + "'"


def values(rng):
    ints = lambda lo, hi, ext: [str(rng.randint(lo, hi)) for _ in range(N - len(ext))] + [str(v) for v in ext]
    out = {}
    out["bool"] = ["true", "false"] * 3
    out["int2"] = ints(-300, 300, [-32768, 32767, 0, -1, 1])
    out["int4"] = ints(-10**6, 10**6, [-2**31, 2**31 - 1, 0, -1, 1, 255, 256, 65535, 65536])
    out["int8"] = ints(-10**12, 10**12, [-2**63, 2**63 - 1, 0, -1, 1, 2**32, -2**32])

    def floats(bits):
        vs = ["'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "0", "1e-300" if bits == 64 else "1e-30",
              "-1e-300" if bits == 64 else "-1e-30", "1.5", "-1.5"]
        while len(vs) < N:
            m = rng.uniform(-10, 10)
            e = rng.randint(-30, 30)
            vs.append(repr(m * 10.0 ** e))
        return vs

    out["float4"] = floats(32)
    out["float8"] = floats(64)

    def numeric():
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 45)))
        point = rng.randint(0, len(digits))
        s = digits[:point] + ("." + digits[point:] if point < len(digits) else "")
        if s.startswith("."):
            s = "0" + s
        if rng.random() < 0.3:
            s += "0" * rng.randint(1, 5) if "." in s else ".000"
        return ("-" if rng.random() < 0.5 else "") + s

    nums = ["'NaN'", "'Infinity'", "'-Infinity'", "0", "0.0", "-0.000", "1", "1.0", "1.00", "10", "0.1", "-1",
            "-1.000", "123456789012345678901234567890123456789", "1e-60", "-1e-60", "1e100", "12.34", "12.340"]
    while len(nums) < N:
        nums.append(numeric())
    out["numeric"] = nums

    alphabet = ["a", "b", "z", "A", "Z", " ", "0", "~", "é", "ß", "日", "本", "😀", "\t", "ÿ", "\x7f", "\x01"]

    def text(maxlen):
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, maxlen)))

    texts = ["", "a", "a ", "ab", "abc", "b", "aa", "a\x01", " "]
    while len(texts) < N:
        texts.append(text(8))
    out["text"] = [q(t) for t in texts]
    out["bpchar"] = [q(t) for t in ["", " ", "a", "a  ", "ab", "a b", "b"] + [text(6).rstrip("\t") for _ in range(N - 7)]]

    days = [rng.randint(-800000, 800000) for _ in range(N - 4)] + [0, -1]
    out["date"] = ["date '2000-01-01' + %d" % d for d in days] + ["'infinity'", "'-infinity'"]
    out["time"] = ["time '00:00' + interval '%d microseconds'" % rng.randint(0, 86400 * 10**6 - 1)
                   for _ in range(N - 2)] + ["'24:00'", "'00:00'"]
    stamps = ["timestamp '2000-01-01' + interval '%d seconds' + interval '%d microseconds'"
              % (rng.randint(-10**10, 10**10), rng.randint(0, 10**6)) for _ in range(N - 2)]
    out["timestamp"] = stamps + ["'infinity'", "'-infinity'"]
    out["timestamptz"] = [s.replace("timestamp ", "timestamptz ") for s in stamps] + ["'infinity'", "'-infinity'"]

    def interval():
        return "interval '%d mons %d days %d microseconds'" % (
            rng.randint(-50, 50), rng.randint(-100, 100), rng.randint(-10**12, 10**12))

    out["interval"] = [interval() for _ in range(N - 6)] + [
        "'1 day'", "'24 hours'", "'1 mon'", "'30 days'", "'-1 mon 30 days'", "'0'"]
    return out


def render(ty):
    """A SQL expression of `v` the test can parse."""
    if ty in ("text",):
        return "encode(convert_to(v, 'UTF8'), 'hex')"
    if ty == "bpchar":
        return "encode(convert_to(rpad(v::text, 8), 'UTF8'), 'hex')"
    if ty == "date":
        return "case when v = 'infinity' then 'inf' when v = '-infinity' then '-inf' else (v - date '2000-01-01')::text end"
    if ty == "time":
        return "(extract(epoch from v) * 1000000)::bigint::text"
    if ty in ("timestamp", "timestamptz"):
        return ("case when v = 'infinity' then 'inf' when v = '-infinity' then '-inf' else "
                "((extract(epoch from v) * 1000000)::bigint - 946684800000000)::text end")
    if ty == "interval":
        return ("(extract(epoch from v - date_trunc('day', v)) * 1000000)::bigint || ' ' || "
                "extract(day from v)::int || ' ' || (extract(year from v) * 12 + extract(month from v))::int")
    return "v::text"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", default="5497")
    ap.add_argument("--host", default="/tmp")
    ap.add_argument("--seed", type=int, default=16)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    sql = ["set extra_float_digits = 1;", "set timezone = 'UTC';"]
    pgtype = {"bpchar": "char(8)"}
    for ty, vals in values(rng).items():
        t = pgtype.get(ty, ty)
        sql.append(f"select '{ty}', dense_rank() over (order by v), {render(ty)} from "
                   f"(values {', '.join('((' + v + ')::' + t + ')' for v in vals)}) s(v) order by s.v;")
    r = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-h", a.host, "-p", a.port, "-U", "postgres",
                        "-v", "ON_ERROR_STOP=1"], input="\n".join(sql), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(r.stderr)
    sys.stdout.write(r.stdout)


if __name__ == "__main__":
    main()
