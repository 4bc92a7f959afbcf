-- Merge joins. On tables never analyzed PostgreSQL costs a hash join's
-- buckets at a tenth of its build side each, so it joins two scans of
-- narrow tables with a Merge Join over a Sort of each side; tusk makes the
-- same choice with the same formulas. The method decides which rows are
-- evaluated: the outer side is sorted whole (every key computed), and the
-- inner side is read only once the outer one has a row that can match.
-- (Merge joins are never parallel; EXPLAIN runs without workers.)
set max_parallel_workers_per_gather = 0;
create table mj1 (a int, s text);
create table mj2 (c int, t text);
create table mj_empty (c int, t text);
create table mj_nulls (c int, t text);
insert into mj1 values (1, 'x'), (1, 'x'), (2, 'y'), (null, 'z'), (3, null), (5, '5'), (5, '6'), (7, 'seven');
insert into mj2 values (1, 'x'), (1, 'x'), (1, 'q'), (2, 'y'), (null, null), (4, '4'), (5, '5'), (8, '8'), (null, 'n');
insert into mj_nulls values (null, 'a'), (null, 'b');

explain (costs off) select * from mj1 join mj2 on mj1.a = mj2.c;
explain (costs off) select * from mj1 left join mj2 on mj1.a = mj2.c;
explain (costs off) select * from mj1 right join mj2 on mj1.a = mj2.c;
explain (costs off) select * from mj1 full join mj2 on mj1.a = mj2.c;
explain (costs off) select * from mj1 join mj2 on mj1.a = mj2.c and mj1.s = mj2.t;
explain (costs off) select * from mj1 join mj2 on mj1.a = mj2.c and mj1.s < mj2.t;
explain (costs off) select * from mj1 join mj2 on mj1.s = mj2.t;
-- A filtered side is small enough for a hash join again.
explain (costs off) select * from mj1 join mj2 on mj1.a = mj2.c where mj1.a > 3;
-- Every kind, with NULL keys and duplicates on both sides.
select * from mj1 join mj2 on mj1.a = mj2.c;
select * from mj1 left join mj2 on mj1.a = mj2.c;
select * from mj1 right join mj2 on mj1.a = mj2.c;
select * from mj1 full join mj2 on mj1.a = mj2.c;
select * from mj2 full join mj1 on mj1.a = mj2.c;
select * from mj1 full join mj2 on mj1.a = mj2.c order by mj1.a, mj2.c, mj1.s, mj2.t;
-- Join filters besides the merge keys.
select * from mj1 join mj2 on mj1.a = mj2.c and mj1.s < mj2.t;
select * from mj1 left join mj2 on mj1.a = mj2.c and mj1.s <> mj2.t;
select * from mj1 right join mj2 on mj1.a = mj2.c and mj2.t > 'p';
-- Two keys; a NULL in the second key matches nothing.
select * from mj1 join mj2 on mj1.a = mj2.c and mj1.s = mj2.t;
select * from mj1 left join mj2 on mj1.a = mj2.c and mj1.s = mj2.t;
select * from mj1 full join mj2 on mj1.a = mj2.c and mj1.s = mj2.t;
select * from mj1 full join mj2 on mj1.s = mj2.t and mj1.a = mj2.c;
select * from mj1 full join mj2 on mj1.s = mj2.t;
select count(*), sum(mj1.a), sum(mj2.c) from mj1 join mj2 on mj1.a = mj2.c;
-- Expressions as keys.
select mj1.a, mj2.c from mj1 join mj2 on mj1.a + 1 = mj2.c;
select mj1.a, mj2.c from mj1 full join mj2 on mj1.a * 2 = mj2.c - 1;
-- Empty sides.
select * from mj1 join mj_empty on mj1.a = mj_empty.c;
select * from mj1 left join mj_empty on mj1.a = mj_empty.c;
select * from mj_empty right join mj1 on mj1.a = mj_empty.c;
select * from mj_empty full join mj1 on mj1.a = mj_empty.c;
select * from mj_empty join mj_empty e2 on mj_empty.c = e2.c;

-- Errors. The outer side's sort computes every key: a bad cast fails.
-- expect: error
select * from mj1 join mj2 on (mj1.s)::int = mj2.c;
-- expect: error
select * from mj1 join mj_empty on (mj1.s)::int = mj_empty.c;
-- An empty outer side ends the join before the inner side is read.
select * from mj_empty join mj1 on mj_empty.c = (mj1.s)::int;
select * from mj_empty left join mj1 on mj_empty.c = (mj1.s)::int;
-- expect: error
select * from mj_empty full join mj1 on mj_empty.c = (mj1.s)::int;
-- An outer side whose first key is NULL in every row matches nothing, and
-- the inner side is not read either (NULLs sort last).
select * from mj_nulls join mj1 on mj_nulls.c = (mj1.s)::int;
select * from mj_nulls left join mj1 on mj_nulls.c = (mj1.s)::int;
-- expect: error
select * from mj_nulls full join mj1 on mj_nulls.c = (mj1.s)::int;
-- The join filter runs only on pairs whose keys are equal.
select * from mj1 join mj2 on mj1.a = mj2.c and 10 / (mj1.a - mj2.c + 1) > 0;
-- expect: error
select * from mj1 join mj2 on mj1.a = mj2.c and 10 / (mj1.a - mj2.c) > 0;
-- Found by the fuzzer as an INTERSECT ALL over a join with an empty side
-- (seed 20261131, in 20_fuzz_findings.sql with enable_mergejoin = off):
-- PostgreSQL's Merge Join sorts the non-empty side and divides by zero.
create table mj_fia (c0 date, c1 bigint, c2 numeric);
insert into mj_fia values ('1999-12-31', 4, -0.001), ('2000-01-02', 5, 3), ('2000-01-01', -4, 0.00);
create table mj_fib (c0 int);
-- expect: error
select -9 from mj_fib a, mj_fia b where ((a.c0)::numeric = (b.c2 / b.c2)) intersect all select (-5)::bigint from mj_fia a join mj_fia b on a.c0 = b.c0;

-- Methods forced by the planner switches. Numeric keys (1.0 = 1.000)
-- and integer = bigint keys.
create table mjn1 (a int, b bigint, n numeric);
create table mjn2 (c int, d int, n numeric);
insert into mjn1 values (1, 1, 1.0), (1, 1, 1.0), (2, 2, 2), (null, 3, null), (3, null, 3), (5, 5, 5), (5, 6, 5.0), (7, 7, 7);
insert into mjn2 values (1, 10, 1), (1, 11, 1), (1, 12, 1.000), (2, 20, 2), (null, 30, null), (4, 40, 4), (5, 50, 5), (8, 80, 8), (null, null, null);
set enable_hashjoin = off;
explain (costs off) select * from mj1 join mj2 on mj1.a = mj2.c where mj1.a > 3;
explain (costs off) select * from mjn1 join mjn2 on mjn1.n = mjn2.n;
select * from mj1 join mj2 on mj1.a = mj2.c where mj1.a > 1;
select * from mj1 full join mj2 on mj1.a = mj2.c where mj1.a > 1 or mj2.c > 1;
select * from mj1 left join mj2 on mj1.a = mj2.c where mj1.a > 1;
select mjn1.a, mjn2.d, mjn1.n, mjn2.n from mjn1 join mjn2 on mjn1.n = mjn2.n;
select * from mjn1 full join mjn2 on mjn1.n = mjn2.n;
select * from mjn1 full join mjn2 on mjn1.b = mjn2.c;
select * from mjn1 right join mjn2 on mjn1.b = mjn2.d;
select * from mjn1 left join mjn2 on mjn1.a = mjn2.c and mjn1.b * 10 < mjn2.d;
select * from mjn1 join mjn2 on mjn1.a = mjn2.c and mjn1.b < mjn2.d / 10;
-- expect: error
select * from mjn1 join mjn2 on mjn1.a = mjn2.c and mjn1.b < 10 / (mjn2.d - 50);
set enable_mergejoin = off;
select * from mj1 join mj2 on mj1.a = mj2.c;
select * from mj1 left join mj2 on mj1.a = mj2.c and mj1.s = mj2.t;
select * from mj1 right join mj2 on mj1.a = mj2.c;
select * from mj_empty join mj1 on mj_empty.c = mj1.a;
reset enable_hashjoin;
explain (costs off) select * from mj1 join mj2 on mj1.a = mj2.c;
explain (costs off) select * from mj1 full join mj2 on mj1.a = mj2.c;
select * from mj1 full join mj2 on mj1.a = mj2.c;
reset enable_mergejoin;

-- Larger inputs: the sorts spill at a small work_mem, and one key repeats
-- on both sides (a group of equal inner keys larger than work_mem).
create table mj_big1 (k int, v text);
create table mj_big2 (k int, w int);
insert into mj_big1 select g % 500, 'v' || g from generate_series(1, 6000) g;
insert into mj_big1 select null, 'null' from generate_series(1, 50) g;
insert into mj_big2 select g % 700, g from generate_series(1, 5000) g;
insert into mj_big2 select 7, g from generate_series(1, 3000) g;
explain (costs off) select count(*) from mj_big1 a join mj_big2 b on a.k = b.k;
select count(*), sum(b.w), count(distinct a.v) from mj_big1 a join mj_big2 b on a.k = b.k;
select count(*), count(a.k), count(b.k) from mj_big1 a full join mj_big2 b on a.k = b.k;
select count(*), count(b.k) from mj_big1 a left join mj_big2 b on a.k = b.k and b.w % 3 = 0;
set work_mem = '64kB';
select count(*), sum(b.w), count(distinct a.v) from mj_big1 a join mj_big2 b on a.k = b.k;
select count(*), count(a.k), count(b.k) from mj_big1 a full join mj_big2 b on a.k = b.k;
select a.k, count(*) from mj_big1 a join mj_big2 b on a.k = b.k where a.k < 10 group by a.k order by a.k;
reset work_mem;
