"""psycopg 3 against a tusk server: parameters, types, prepared statements,
binary results, errors with SQLSTATEs, cancel, settings, and server-side
cursors in psycopg's default transactions.

Usage: psycopg_check.py CONNINFO. Prints "ok" and exits 0 when every check
passes; an assertion error otherwise.
"""

import sys
import threading
import time
import uuid
from decimal import Decimal

import psycopg
from psycopg import errors, sql

conninfo = sys.argv[1]

# Most checks run in autocommit mode; the server-side cursor below uses
# psycopg's default, a transaction that BEGIN opens.
with psycopg.connect(conninfo, autocommit=True) as conn:
    assert conn.info.server_version == 150000, conn.info.server_version
    assert conn.info.parameter_status("client_encoding") == "UTF8"
    cur = conn.cursor()

    # Parameters of several types, and NULL.
    cur.execute("select %s::int + 1, %s, %s, %s", (41, "x'y", None, True))
    assert cur.fetchone() == (42, "x'y", None, True)
    assert [d.type_code for d in cur.description][:1] == [23]

    cur.execute("drop table if exists pc")
    cur.execute("create table pc (id int not null, name text, amount numeric)")
    cur.executemany(
        "insert into pc (id, name, amount) values (%s, %s, %s)",
        [(i, f"n{i}", Decimal(i) / 4) for i in range(1, 101)],
    )
    cur.execute("select count(*), sum(id) from pc")
    assert cur.fetchone() == (100, 5050)
    cur.execute("select name, amount from pc where id = %s", (10,))
    assert cur.fetchone() == ("n10", Decimal("2.50"))
    assert cur.rowcount == 1

    # Prepared statements (psycopg prepares after a few executions, and
    # at once with prepare=True).
    for i in range(1, 8):
        cur.execute("select name from pc where id = %s", (i,), prepare=True)
        assert cur.fetchone() == (f"n{i}",)

    # Binary results.
    bcur = conn.cursor(binary=True)
    bcur.execute("select id, name, amount, id > 50 from pc where id in (3, 77) order by id")
    assert bcur.fetchall() == [(3, "n3", Decimal("0.75"), False), (77, "n77", Decimal("19.25"), True)]

    # bytea and uuid: Python bytes and UUID as parameters (psycopg sends
    # bytes in binary), in text and binary results, through a table.
    blob = bytes(range(256)) + b"\x00\\x"
    ident = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    cur.execute("drop table if exists pcb")
    cur.execute("create table pcb (id uuid primary key, data bytea)")
    cur.execute("insert into pcb values (%s, %s), (gen_random_uuid(), %s)", (ident, blob, b""))
    for c in (cur, bcur):
        c.execute("select id, data, length(data) from pcb where id = %s", (ident,))
        assert c.fetchone() == (ident, blob, len(blob)), c
        c.execute("select data, pg_typeof(id)::text from pcb where data = %s", (b"",))
        assert c.fetchone() == (b"", "uuid"), c
    cur.execute("select %s::bytea || '\\x01'::bytea, %s::uuid::text", (b"\xff", str(ident)))
    assert cur.fetchone() == (b"\xff\x01", str(ident))

    # Parameters reach every kind of plan node: aggregate filters, window
    # frames, CTEs (recursive too), subqueries, outer joins, set operations.
    for query, params, expected in [
        (
            "select id %% 2, count(*) filter (where id > %s) from pc group by 1 order by 1",
            (90,),
            [(0, 5), (1, 5)],
        ),
        (
            "select id, sum(id) over (order by id rows between %s preceding and current row)"
            " from pc where id <= %s order by id",
            (1, 3),
            [(1, 1), (2, 3), (3, 5)],
        ),
        (
            "with recursive r(n) as (select %s::int union all select n + 1 from r where n < %s)"
            " select sum(n) from r",
            (1, 10),
            [(55,)],
        ),
        (
            "select id from pc where id in (select id + %s from pc where id < 3) order by id",
            (50,),
            [(51,), (52,)],
        ),
        (
            "select a.id, b.id from pc a left join pc b on b.id = a.id + %s"
            " where a.id > %s order by 1",
            (1, 98),
            [(99, 100), (100, None)],
        ),
        (
            "select id from pc where id < %s union select id from pc where id > %s order by 1",
            (2, 99),
            [(1,), (100,)],
        ),
    ]:
        for prepare in (False, True):
            cur.execute(query, params, prepare=prepare)
            assert cur.fetchall() == expected, (query, prepare)

    # A large result, fetched in pieces.
    cur.execute("select g from generate_series(1, 100000) g")
    total = 0
    while True:
        rows = cur.fetchmany(5000)
        if not rows:
            break
        total += sum(r[0] for r in rows)
    assert total == 100000 * 100001 // 2

    # Errors keep their SQLSTATE; the session goes on.
    for query, exc, code in [
        ("select * from missing_table", errors.UndefinedTable, "42P01"),
        ("select 1/0", errors.DivisionByZero, "22012"),
        ("select nope from pc", errors.UndefinedColumn, "42703"),
        ("selec 1", errors.SyntaxError, "42601"),
    ]:
        try:
            cur.execute(query)
        except exc as e:
            assert e.sqlstate == code, (query, e.sqlstate)
        else:
            raise AssertionError(f"{query} did not fail")
    cur.execute("select 1")
    assert cur.fetchone() == (1,)

    # Cancel from another thread.
    def cancel_soon():
        time.sleep(0.3)
        conn.cancel_safe()

    t = threading.Thread(target=cancel_soon)
    t.start()
    try:
        cur.execute("select count(*) from generate_series(1, 10000000000) g")
    except errors.QueryCanceled as e:
        assert e.sqlstate == "57014"
    else:
        raise AssertionError("not canceled")
    t.join()

    # Settings.
    cur.execute("set timezone = 'UTC'")
    assert conn.info.parameter_status("TimeZone") == "UTC"
    cur.execute(sql.SQL("set search_path = {}").format(sql.Identifier("Some Schema")))
    cur.execute("show search_path")
    assert cur.fetchone() == ('"Some Schema"',)
    cur.execute("drop table pc")

# psycopg's default transactions (BEGIN ... COMMIT) and a server-side
# cursor: DECLARE with a parameter through the extended protocol, Describe
# of the cursor's portal, FETCH FORWARD n, MOVE (scroll), CLOSE.
with psycopg.connect(conninfo) as conn:
    with conn.cursor(name="sc") as cur:
        cur.execute("select g, g * 2 from generate_series(1, 1000) g where g > %s", (10,))
        assert [d.name for d in cur.description] == ["g", "?column?"], cur.description
        assert cur.fetchmany(3) == [(11, 22), (12, 24), (13, 26)]
        cur.scroll(2)
        assert cur.fetchone() == (16, 32)
        assert len(cur.fetchall()) == 984
    assert conn.execute("select count(*) from pg_cursors").fetchone() == (0,)
    conn.commit()

# Scrollable server-side cursors: DECLARE ... SCROLL CURSOR, scroll()
# back and to absolute positions (MOVE), NULLs, a result larger than a
# batch; a NO SCROLL cursor refuses to go back with 55000.
with psycopg.connect(conninfo) as conn:
    with conn.cursor(name="ss", scrollable=True) as cur:
        cur.execute(
            "select g, case when g %% 5 = 0 then null else g end from generate_series(1, %s) g order by g",
            (3000,),
        )
        assert cur.fetchmany(4) == [(1, 1), (2, 2), (3, 3), (4, 4)]
        cur.scroll(-3)
        assert cur.fetchone() == (2, 2)
        cur.scroll(2999, mode="absolute")
        assert cur.fetchall() == [(3000, None)]
        cur.scroll(0, mode="absolute")
        assert cur.fetchone() == (1, 1)
        cur.scroll(4, mode="absolute")
        assert cur.fetchone() == (5, None)
        cur.scroll(-5)
        assert len(cur.fetchall()) == 3000
    assert conn.execute(
        "select count(*) from pg_cursors where is_scrollable"
    ).fetchone() == (0,)
    with conn.cursor(name="ns", scrollable=False) as cur:
        cur.execute("select g from generate_series(1, 10) g")
        assert cur.fetchmany(3) == [(1,), (2,), (3,)]
        try:
            cur.scroll(-1)
        except errors.ObjectNotInPrerequisiteState as e:
            assert e.sqlstate == "55000" and "scan forward" in str(e), e
        else:
            raise AssertionError("a NO SCROLL cursor went back")
    conn.rollback()

# json and jsonb: results become Python values, parameters go as text
# and as binary (jsonb's version byte).
from psycopg.types.json import Json, Jsonb

with psycopg.connect(conninfo, autocommit=True) as conn:
    conn.execute("drop table if exists docs")
    conn.execute("create table docs (id int, d jsonb, j json)")
    doc = {"name": "tusk", "tags": ["db", "rust"], "n": 1.5, "ok": True, "none": None}
    conn.execute("insert into docs values (%s, %b, %t)", (1, Jsonb(doc), Json([1, "x"])))
    conn.execute("insert into docs values (%s, %t, %b)", (2, Jsonb({"a": 1}), Json({"k": None})))
    rows = conn.execute("select id, d, j from docs order by id").fetchall()
    assert rows == [(1, doc, [1, "x"]), (2, {"a": 1}, {"k": None})], rows
    got = conn.execute(
        "select d ->> 'name', d -> 'tags' -> 1, d @> %s from docs where id = 1",
        (Jsonb({"ok": True}),),
    ).fetchone()
    assert got == ("tusk", "rust", True), got
    with conn.cursor(binary=True) as cur:
        cur.execute("select d from docs where d ? 'tags'")
        assert cur.fetchone() == (doc,)
    assert conn.execute("select jsonb_agg(id order by id) from docs").fetchone() == ([1, 2],)
    conn.execute("drop table docs")

# Settings from the connection string.
with psycopg.connect(conninfo, autocommit=True, options="-c statement_timeout=100") as conn:
    try:
        conn.execute("select count(*) from generate_series(1, 10000000000) g")
    except errors.QueryCanceled as e:
        assert "statement timeout" in str(e)
    else:
        raise AssertionError("no timeout")

print("ok")
