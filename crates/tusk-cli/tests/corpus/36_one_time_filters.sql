-- One-time filters: a WHERE or inner-join ON conjunct that reads no
-- column of the rows it filters (only uncorrelated subqueries, stable
-- functions or nothing) gates the whole join tree, as PostgreSQL's
-- pseudoconstant quals do: it is evaluated once, first, and when it is
-- not true nothing below it runs (so no error below it is raised).
create table ot0 (c0 int, c1 timestamp);
create table ot1 (c0 int, c1 text);
create table ot2 (c0 int);
create table ot_empty (c0 int);
insert into ot0 values (1, '2001-01-01'), (2, null), (null, '1999-01-01');
insert into ot1 values (0, 'a'), (1, 'b'), (null, null), (2, 'b');
insert into ot2 values (5), (1), (null);

-- Found by the fuzzer (seed 20261212): the ALL is NULL, so the join never
-- runs and the division by zero is never evaluated.
select * from ot1 a join ot2 b on (timestamp '2000-01-01 12:30' >= all (select sq.c1 from ot0 sq)) where (- a.c0) = (a.c0 / a.c0);
select * from ot1 a join ot2 b on (timestamp '2002-01-01 12:30' >= all (select sq.c1 from ot0 sq where sq.c1 is not null)) where a.c0 > 0;
select * from ot1 a join ot2 b on (timestamp '1998-01-01' >= all (select sq.c1 from ot0 sq)) where a.c0 / a.c0 = 1;
-- Scalar and EXISTS InitPlans in WHERE and ON.
select * from ot1 a where 1 > (select max(c0) from ot0) and a.c0 / a.c0 = 1;
select * from ot1 a where 5 > (select max(c0) from ot0) and a.c0 > 0;
select * from ot1 a where (select max(c0) from ot_empty) > 0 and 1 / a.c0 > 0;
select * from ot1 a where exists (select 1 from ot_empty) and 1 / a.c0 > 0;
select * from ot1 a where not exists (select 1 from ot0) and 1 / a.c0 > 0;
select * from ot1 a where exists (select 1 from ot0) and a.c0 is not null;
select * from ot1 a join ot2 b on (select count(*) from ot_empty) > 0 where a.c0 / a.c0 = b.c0;
select * from ot1 a join ot2 b on a.c0 = b.c0 and (select min(c0) from ot0) = 1 order by 1;
select a.c0, b.c0 from ot1 a, ot2 b where (select max(c0) from ot0) < 0 and a.c0 / 0 = b.c0;
-- IN and NOT IN with a constant left side are SubPlans, tested once.
select * from ot1 a where 7 in (select c0 from ot0) and 1 / a.c0 > 0;
select * from ot1 a where 2 in (select c0 from ot0) and a.c0 > 0 order by 1;
select * from ot1 a where 7 not in (select c0 from ot0) and 1 / a.c0 > 0;
select * from ot1 a where 7 not in (select c0 from ot0 where c0 is not null) and a.c0 >= 0 order by 1;
select * from ot1 a where 1 = any (select c0 from ot_empty) and 1 / a.c0 > 0;
select count(*) from ot1 a where 1 > all (select c0 from ot_empty);
-- In the select list the subquery is a value, not a gate.
select c0, 2 in (select c0 from ot0), 7 in (select c0 from ot0) from ot1 order by 1;
-- Aggregates over a gated input: no group, one row of zero.
select count(*), sum(1 / c0) from ot1 where (select max(c0) from ot0) > 10;
select c1, count(*) from ot1 where (select max(c0) from ot0) > 10 group by c1;
select c1, count(*) from ot1 where (select max(c0) from ot0) < 10 group by c1 order by 1;
-- The nullable side of an outer join gates only itself; an outer join's
-- own condition filters pairs.
select * from ot1 a left join (select * from ot2 where (select max(c0) from ot0) > 5) s on a.c0 = s.c0 order by 1, 2;
select * from ot1 a left join ot2 b on a.c0 = b.c0 and (select max(c0) from ot0) > 1 order by 1, 2;
select * from ot1 a left join ot2 b on a.c0 = b.c0 and (select max(c0) from ot0) > 5 order by 1, 2;
select * from ot1 a left join ot2 b on a.c0 = b.c0 where (select max(c0) from ot0) > 5 and a.c0 / 0 = 1;
-- A FROM subquery is part of the join tree around it.
select * from ot1 a join (select * from ot2 where (select max(c0) from ot0) > 5) s on true where a.c0 / a.c0 = 1;
-- Stable functions and no FROM.
select 1 where now() < '2000-01-01';
select 1 where (select 1) > 0;
select * from ot1 where now() < '2000-01-01' and 1 / c0 > 0;
-- A volatile conjunct is tested per row.
select count(*) from ot1 where random() >= 0;
-- DML.
create table ot_dml (c0 int);
insert into ot_dml values (1), (0);
update ot_dml set c0 = c0 / c0 where (select max(c0) from ot0) > 5;
delete from ot_dml where exists (select 1 from ot_empty) and 1 / c0 > 0;
select * from ot_dml order by 1;
delete from ot_dml where exists (select 1 from ot0) and c0 = 0;
select * from ot_dml order by 1;
-- EXPLAIN shows the gate as a Result with a One-Time Filter.
set max_parallel_workers_per_gather = 0;
explain (costs off) select * from ot1 a where 1 > (select max(c0) from ot0) and a.c0 > 0;
explain (costs off) select * from ot1 a where exists (select 1 from ot0);
explain (costs off) select * from ot1 a where 2 not in (select c0 from ot0);
explain (costs off) select * from ot1 where now() > '2000-01-01';
explain (costs off) select 1 where (select 1) > 0;
reset max_parallel_workers_per_gather;
