-- Cases the differential fuzzer found: outer-join simplification, ties in
-- min/max, sign folding of literals, IN lists without a common type, the
-- order filters evaluate their conjuncts in, and the order of binding.

create table fa (c0 int, c1 boolean, c2 text);
insert into fa values (2, false, null), (0, true, 'x%'), (5, false, '10'), (-5, true, ''), (3, true, 'b ');
create table fb (c0 int, c1 text);
insert into fb values (2, 'x%'), (2, 'b ');
create table fn (c0 numeric);
insert into fn values (0.5), (-0.001), (0.00), (0.5), (3), (0.5), (-1.25);
create table fz (c0 int);
insert into fz values (0), (1), (7);
create table fe (c0 numeric, c1 numeric);

-- NOT (x IS NOT NULL) keeps NULL-extended rows: the left join stays outer.
select count(*) from fa a left join fb b on a.c0 = b.c0 where not (b.c1 is not null);
select count(*) from fa a left join fb b on a.c0 = b.c0 where (b.c1 is not null) is not true;
select count(*) from fa a left join fb b on a.c0 = b.c0 where b.c1 is not null;
select count(*) from fa a left join fb b on a.c0 = b.c0 where (b.c1 = 'x%') is false;
select count(*) from fa a left join fb b on a.c0 = b.c0 where not (b.c1 = 'x%' and a.c1);

-- Equal numerics of different scales: the later value wins a tie.
select max(c0 - c0), min(c0 - c0) from fn where 0.5 >= c0;
select max(c0 * 0), min(c0 * 0) from fn;
select max(x), min(x) from (values (0.0), (0.000), (0.00)) v(x);

-- Minus signs fold into numeric literals as the grammar reads them.
select - -2147483648, -2147483648 * 0, - (- 0.5), -(-(-3)), -9223372036854775808;
-- expect: error
select - -9223372036854775808::bigint;

-- IN lists with no common type compare item by item.
-- expect: error
select 'a'::text in (1, 2);
-- expect: error
select 'a'::text not in (1, 2);
-- expect: error
select 1 in ('a'::text, 2);
-- expect: error
select true in (1);
-- expect: error
select 1 in (1, 'a');
-- expect: error
select case when 3 >= 1 then null else null end not in (-8, -5);

-- The cheaper conjunct runs first, so the division never meets zero.
select c0 from fz where (c0 * c0) between (c0 / 0) and c0 and c0 > 100;
select c0 from fz where nullif(2147483647, c0) between (-4 % c0) and 10;
select c0 from fz where c0 between (c0 % c0) and -1;

-- An empty outer side of a nested loop stops the join before its inner
-- side is read.
select b.c0 from fe a cross join fz b where b.c0 between (b.c0 / 0) and 4;

-- The select list is bound before WHERE: its error is the one reported.
-- expect: error
select max(null % null) from fn where (- null) in (3);

-- Deep nesting: PostgreSQL parses thousands of parentheses.
select ((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))));

-- A hash join reads its probe side's first row before its build side: an
-- empty probe side ends the join without running the build side.
create table fq (c0 boolean, c1 int, c2 numeric);
insert into fq values (true, 3, -1.25), (false, 5, 0.00), (true, 4, null), (false, 2, -1.25), (null, 6, 0.00);
select * from fe a join fz b on a.c0 = 1 / b.c0;

-- An uncorrelated subquery's value is a parameter of the scan's qual list:
-- the cheaper conjunct over it runs before a dearer one that could fail.
select 'aa', (select max(s.c1) from fq s) from fq a
 where a.c1::numeric between (a.c2 % a.c2) and (select max(u.c0) from fn u);
set max_parallel_workers_per_gather = 0;
explain (costs off) select 'aa', (select max(s.c1) from fq s) from fq a
 where a.c1::numeric between (a.c2 % a.c2) and (select max(u.c0) from fn u);
reset max_parallel_workers_per_gather;

-- A WHERE clause is a qual list: a NULL conjunct rejects the row, and the
-- conjuncts after it are not evaluated for it.
select c1 from fq a where a.c0 and (a.c2 / a.c2) >= 0;
select c1 from fq a join fz b on a.c0 where (a.c2 / a.c2) between case when a.c0 then a.c2 else a.c2 end and (a.c2 / a.c2);

-- A constant on the left of a comparison with a cast column keeps its
-- meaning when the planner looks for a date-against-timestamp rewrite
-- (found by the fuzzer: the operator was flipped without the operands).
create table fdt (n int, ts timestamp, d date);
insert into fdt values (2, '2000-01-01 00:00', '2000-01-01'), (4, '-infinity', '-infinity'),
  (-5, '1999-12-31 23:59:59.5', '2024-02-29'), (null, null, null), (7, '2030-05-01 12:00', 'infinity');
select count(*) from fdt where date '2024-02-29' < ts::date;
select count(*) from fdt where date '2024-02-29' >= ts::date;
select count(*) from fdt where -1.25 >= n::numeric;
select count(*) from fdt where -1.25 < n::numeric;
select n from fdt where 3 between n::numeric and 10 order by n;
select n from fdt where timestamp '2000-01-01 12:00' < d::timestamp order by n;
select n from fdt where timestamp '2000-01-01 12:00' >= d::timestamp order by n;
select n from fdt where timestamp '2000-01-01 00:00' <= d::timestamp order by n;
select n from fdt where timestamp '2000-01-01 00:00' > d::timestamp order by n;
select n from fdt where d::timestamp < timestamp '2024-02-29 00:00:01' order by n;

-- NULLIF with a NULL argument is its first argument when planning: a
-- strict operator over NULLIF(NULL, x) is NULL without evaluating the
-- rest (no division by zero), as PostgreSQL folds it.
create table fnz (b boolean, c bigint);
insert into fnz values (true, 0), (true, 2), (false, null);
select nullif(null, c) * (-8 / c) from fnz;
select nullif(c, null) from fnz order by 1;
select nullif(null::int, 1) is null;
-- expect: error
select nullif(1, c) * (-8 / c) from fnz;

-- A JOIN's ON quals are tested before the WHERE clause's on the same
-- scan, as PostgreSQL distributes them: the division never sees the rows
-- the ON condition rejects.
create table fqo (c2 numeric);
insert into fqo values (null), (0.00), (-1.25), (0.5);
create table fqp (c0 int);
insert into fqp values (-4), (null);
select count(*) from fqo a join fqp b on (a.c2 <> a.c2) where ((0.5 / a.c2) is null);
select count(*) from fqp b join fqo a on (a.c2 > 0) where (1 / a.c2) > 1;

-- A hash join reads its probe side first where PostgreSQL's ExecHashJoin
-- does: semi and anti joins (IN, EXISTS, NOT EXISTS) over an empty probe
-- side never run the build side, under parallel plans too (the
-- participants agree that every share of the probe side is empty).
select * from fe a where a.c0 in (select 1 / c0 from fz);
select * from fe a where exists (select 1 from fz b where b.c0 = a.c0 and 1 / b.c0 > 0);
select * from fe a where not exists (select 1 from fz b where b.c0 = a.c0 and 1 / b.c0 > 0);
-- An inner join whose probe side starts dearer than the whole Hash builds
-- first: the empty build side ends the join before the probe side's
-- aggregate divides by zero.
create table fg (c0 int);
insert into fg select g from generate_series(0, 1999) g;
analyze fg;
select * from (select c0, sum(1 / c0) s from fg group by c0) a join fe b on a.c0 = b.c0;

-- PostgreSQL reads one probe row before building, tusk a batch: a data
-- error in a later row of that batch is held until the probe side is read
-- again, so an empty build side ends the join without it.
create table fh (c0 numeric, c1 numeric);
insert into fh values (-1.25, 3), (3, 0.5), (0.00, 3), (-1.25, 0.00), (-1.25, 0.5), (3, -0.001);
create table fi (c0 text, c2 numeric);
select avg(1::bigint), count(*) from fi a left join fh b on a.c2 = b.c0 where 100.125 between (b.c1 / b.c1) and (a.c2 % -1.25);
select count(*) from fh b where b.c0 in (select c2 from fi) and b.c1 / b.c1 > 0;
insert into fi values ('x', 3);
-- expect: error
select count(*) from fh b where b.c0 in (select c2 from fi) and b.c1 / b.c1 > 0;

-- A one-item IN list is the plain `=` (NOT IN: `<>`) PostgreSQL makes of
-- it, so `x IN (NULL)` folds to NULL without evaluating x; longer lists
-- still evaluate x.
select count(*) from fh a where (a.c0 % a.c1) in (null);
select count(*) from fh a where (a.c0 % a.c1) not in (null);
select c0 in (3), c0 not in (3), c0 in (null::numeric) from fh order by c0, c1;
-- expect: error
select count(*) from fh a where (a.c0 % a.c1) in (null, null);
select count(*) from fh a where (a.c0 % nullif(a.c1, 0)) in (null, 1, -1.25);

-- A data error from the build side of a Parallel Hash Join below another
-- hash join's probe side is raised at once, not held until the upper
-- join's build side proves non-empty: the other participants wait for
-- this one in the lower join's build (it hung, with parallel plans).
create table fpp (c0 date, c2 int);
insert into fpp values ('2000-01-02', 2), ('2000-01-01', -5), ('infinity', 0), ('2024-02-29', 3), ('1999-12-31', 3);
create table fpq (c0 date);
insert into fpq values ('infinity'), ('2000-01-01'), ('2000-01-02'), (null), ('1999-12-31');
-- expect: error
select (b.c0 = any (select sq.c0 from fpq sq)) from fpq a full join fpp b on a.c0 = b.c0 where ((0 % b.c2) >= 3);
-- expect: error
select count(*) from fpq a join fpp b on a.c0 = b.c0 where b.c0 in (select c0 from fpq) and 1 / b.c2 > 0;

-- An uncorrelated NOT IN is a hashed SubPlan in PostgreSQL, tested among
-- its scan's quals in cost order (its comparison: one operator), before a
-- dearer conjunct that would raise an error for a row NOT IN rejects; a
-- conjunct that ties with it keeps the written order (ON before WHERE),
-- and one over fewer relations runs first, at a lower level.
create table fk (c0 int, c1 text, c2 int);
insert into fk values (1, 'a', 0), (2, 'b', 1), (null, 'c', 2), (3, 'd', 4);
create table fl (c0 int);
insert into fl values (1), (5);
create table fs (c0 int);
insert into fs values (1);
select * from fk a join fl b on (a.c0 not in (select c0 from fs)) where (0.00 / a.c2) > 0;
select * from fk a join fl b on (a.c0 not in (select c0 from fs)) where (0.00 / a.c2) >= 0;
select * from fk a join fl b on (a.c0 not in (select c0 from fs)) where (0.00 / a.c2) is not null;
select * from fk a where a.c0 not in (select c0 from fs) and (0.00 / a.c2) >= 0;
select * from fk a where (0.00 / a.c2) >= 0 and a.c0 not in (select c0 from fs);
select * from fk a where a.c2 > 0 and a.c0 not in (select c0 from fs);
select * from fk a where not (a.c0 in (select c0 from fs)) and 10 / a.c2 > 1;
select * from fk a where a.c0 + 0 not in (select c0 from fs) and 1 / a.c2 > 0;
-- expect: error
select * from fk a where 1 / a.c2 > 0 and a.c0 + 0 not in (select c0 from fs);
select * from fk a join fl b on a.c0 + 0 not in (select c0 from fs) where 1 / a.c2 > 0;
select * from fk a, fl b where a.c0 not in (select c0 from fs) and (0.00 / a.c2) > b.c0;
-- expect: error
select * from fk a, fl b where a.c0 + b.c0 not in (select c0 from fs) and 1 / a.c2 > 0;
select * from fk a where a.c0 not in (select c0 from fs) and a.c0 not in (select c0 + 2 from fs) and 1 / a.c2 > 0;
-- expect: error
select count(*) from fk a where a.c0 not in (select c0 from fs where false) and 1 / a.c2 > 0 or a.c2 = 0;
-- Over a join, the NOT IN goes with the scan of the side it reads, below
-- the join and its condition (TPC-H Q16's shape).
select * from fk a, fl b where a.c0 not in (select c0 from fs) and a.c0 + 3 = b.c0 + 0;
select count(*) from fk a join fl b on a.c0 not in (select c0 from fs) and 1 / (a.c0 - 1) = b.c0 - 5;
select count(*) from fl b, fk a where 1 / (a.c0 - 1) = b.c0 - 5 and a.c0 not in (select c0 from fs);
-- expect: error
select count(*) from fk a join fl b on a.c0 not in (select c0 from fs) and 1 / (a.c0 - 2) = b.c0 - 5;
-- The IN as a select-list value is computed for every row either way.
-- expect: error
select a.c0 not in (select c0 from fs), 1 / a.c2 from fk a;

-- INTERSECT ALL over a join with an empty side (fuzzer, seed 20261131):
-- PostgreSQL's default plan is a Merge Join, whose sort of the non-empty
-- side divides by zero (39_merge_join.sql runs it so); with merge joins
-- off the hash join ends at the empty probe side in both systems.
create table fia (c0 date, c1 bigint, c2 numeric);
insert into fia values ('1999-12-31', 4, -0.001), ('2000-01-02', 5, 3), ('2000-01-01', -4, 0.00);
create table fib (c0 int);
set enable_mergejoin = off;
select -9 from fib a, fia b where ((a.c0)::numeric = (b.c2 / b.c2)) intersect all select (-5)::bigint from fia a join fia b on a.c0 = b.c0;
select -9 from fib a, fia b where ((a.c0)::numeric = (b.c2 / b.c2));
reset enable_mergejoin;
insert into fib values (1);
-- expect: error
select -9 from fib a, fia b where ((a.c0)::numeric = (b.c2 / b.c2)) intersect all select (-5)::bigint from fia a join fia b on a.c0 = b.c0;

-- A join filter of several conjuncts is a qual list, as PostgreSQL's
-- ExecQual tests it: a pair stops at its first false or NULL conjunct, so
-- a later conjunct's division never runs on it (fuzzer, seed 20261205).
create table jq_a (a int);
create table jq_b (b int, t text);
insert into jq_a values (-6), (NULL), (-4);
insert into jq_b values (0, NULL), (1, 'x'), (-10, 'y');
select count(*) from jq_a, jq_b where jq_a.a between jq_b.b and (1 % jq_b.b);
select count(*) from jq_a left join jq_b on jq_a.a >= jq_b.b and jq_a.a <= (1 % jq_b.b);
select count(*) from jq_a a join jq_b b on (b.t >= 'a') where (a.a % b.b) <> 4;
select count(*) from jq_a where exists (select 1 from jq_b where jq_a.a >= jq_b.b and jq_a.a <= (1 % jq_b.b));
-- a pair that passes the first conjunct still divides by zero
insert into jq_a values (5);
-- expect: error
select count(*) from jq_a, jq_b where jq_a.a between jq_b.b and (1 % jq_b.b);
drop table jq_a, jq_b;

-- A comparison with a NULL constant keeps no row in PostgreSQL's estimate
-- (`x NOT IN (..., NULL)` included), so the filtered side is one row, and
-- a nested loop puts a side of one row outside: it is scanned, and fails,
-- though the other side is empty (fuzzer, seed 20261206).
create table nl_one (c0 bigint, c1 int);
insert into nl_one values (-8, 0);
create table nl_none (c0 int);
-- expect: error
select distinct b.c0 from nl_one a cross join nl_none b where (a.c0 - 9223372036854775807) not in (10, null, -5, -8);
-- expect: error
select -4 from nl_one a, nl_none b where (a.c1 / a.c1) not in (3, 5, -4, null) except all select c0 from nl_none;
select count(*) from nl_one a, nl_none b where (a.c1 / a.c1) not in (3, 5, -4);
select count(*) from nl_one a, nl_none b where a.c0 = null or a.c0 < null;
-- A left join without keys scans its left side outside, whichever side is
-- larger; an empty left side never reads the right one.
select count(*) from (select * from nl_none where c0 > 0) b left join (select * from nl_one where c0 / c1 <> 1) a on true;
select count(*) from nl_none b right join nl_one a on a.c0 / a.c1 < b.c0;
-- expect: error
select count(*) from nl_none b right join (select * from nl_one where c0 / c1 <> 1) a on true;
drop table nl_one, nl_none;

-- BETWEEN binds as `x >= lo AND x <= hi`: the first comparison is resolved
-- before the upper bound is bound (fuzzer, seed 20261206).
-- expect: error
select null::text between 2 and (- null);
-- expect: error
select null::text not between 2 and (- null);
-- expect: error
select 1 between (- null) and 'a'::text;

-- A filter raises its data errors in row order, as PostgreSQL's qual
-- tests one row at a time: the rows before a failing one are returned
-- first. A hash join reads its probe side's first row before building
-- (its startup cost is below the Hash node's): if that first row fails,
-- the error is raised though the build side is empty; if it passes, the
-- empty build side ends the join before the failing row (fuzzer, seed
-- 20261207).
create table ro_first_fails (c0 boolean, c2 int);
insert into ro_first_fails values (false, 0), (true, 5), (true, -2), (false, -3);
create table ro_first_passes (c0 boolean, c2 int);
insert into ro_first_passes values (true, 2), (false, 0), (true, -2);
create table ro_empty (c0 boolean, c1 bigint);
-- expect: error
select count(-a.c2), count(*) from ro_first_fails a join ro_empty b on a.c0 = b.c0 where (3 / a.c2) is not null;
select count(-a.c2), count(*) from ro_first_passes a join ro_empty b on a.c0 = b.c0 where (3 / a.c2) is not null;
-- A Limit stops before the failing row.
select c2 from ro_first_passes where 3 / c2 > 0 limit 1;
select c2 from (select * from ro_first_passes where 3 / c2 > 0) s limit 1;
-- expect: error
select c2 from ro_first_passes where 3 / c2 > 0 limit 2;
-- expect: error
select c2 from ro_first_fails where 3 / c2 > 0 limit 1;
-- A nested loop reads every outer row though its inner side is empty.
-- expect: error
select count(*) from ro_first_passes a where 3 / a.c2 > 0 and exists (select 1 from ro_empty b where b.c1 > a.c2);
drop table ro_first_fails, ro_first_passes, ro_empty;

-- A hash join builds the side PostgreSQL's costs choose, counting the
-- comparisons in a probe row's bucket (`estimate_hash_bucket_stats`): a
-- boolean key keeps two distinct values, and one on a side its filter
-- shrinks keeps about one, so building that side costs more than building
-- the larger one. The filtered side is probed, its first row read before
-- the build, and fails (fuzzer, seed 20261205 round 210).
create table hb_probe (c0 boolean, c1 numeric, c2 numeric);
insert into hb_probe values (false, -0.001, 0.00), (true, -1.25, null), (true, -1.25, -0.001), (true, 3, 3);
create table hb_empty (c0 timestamp, c1 text, c2 boolean);
-- expect: error
select max(-1), count(*) from hb_probe a right join hb_empty b on a.c0 = b.c2 where ((-0.001 + a.c2) between a.c1 and (a.c1 % a.c2));
select max(-1), count(*) from hb_probe a right join hb_empty b on a.c0 = b.c2 where ((-0.001 + a.c2) between a.c1 and (a.c1 % nullif(a.c2, 0)));
drop table hb_probe, hb_empty;

-- A nested loop's outer side is the larger one, by PostgreSQL's estimates:
-- `IS UNKNOWN` keeps 0.5 % of the rows without statistics (booltestsel),
-- so the filtered empty table is the inner side and the other side's
-- overflowing filter runs (found by the fuzzer, seed 20261300).
create table nl_one (c0 bigint, c1 text, c2 numeric);
insert into nl_one values (1, 'A', -1.25);
create table nl_empty (c0 boolean);
-- expect: error
select 1 from nl_one a right join nl_empty b on (b.c0 is unknown) where ((a.c0 + 9223372036854775807) <> (a.c0 - a.c0));
-- expect: error
select 1 from nl_one a join nl_empty b on (b.c0 is unknown) where ((a.c0 + 9223372036854775807) <> (a.c0 - a.c0));
select count(*) from nl_one a join nl_empty b on (b.c0 is not unknown) where a.c0 > 0;
drop table nl_one, nl_empty;

-- CASE binds its parts in the written order, so of two unresolvable
-- operators the first written is reported (found by the fuzzer, seed
-- 20261301).
-- expect: error
select case when c0 > 0 then (- null) else (null / null) end from fb;
-- expect: error
select case when c0 > 0 then 1 else (- null) end from fb;
select case c0 when 1 then 'one' when 2 then 'two' else 'many' end from fb order by 1;

-- Of two hash join orders of equal total cost PostgreSQL keeps the one
-- that starts sooner, building the side cheaper to read; a filter costs
-- each of its operators (fuzzer, seed 20261305): here it builds the
-- filtered a (empty), and probing with b divides by zero.
create table fhe (c0 int);
insert into fhe values (0);
-- expect: error
select (a.c0)::bigint from fhe a right join fhe b on a.c0 = b.c0 where (4 between (b.c0 % b.c0) and a.c0);
-- expect: error
select a.c0 from fhe a join fhe b on a.c0 = b.c0 where b.c0 % b.c0 <= 4 and a.c0 >= 4;
select a.c0 from fhe a join fhe b on a.c0 = b.c0 where b.c0 % (b.c0 + 1) <= 4 and a.c0 >= 0;

-- An uncorrelated scalar subquery is an InitPlan, its value a parameter:
-- a conjunct over it and one relation is tested in that relation's scan,
-- and `x BETWEEN lo AND hi` is two such conjuncts (x bound twice). So
-- `$1 <= a.c0 / a.c0` runs on every row of a, and divides by zero, though
-- `$0 >= b.c1 % b.c1` rejects every row of b (fuzzer, seed 20261306).
create table fip1 (c0 int, c1 int);
create table fip2 (c0 int, c1 int);
insert into fip1 values (0, 1), (3, 4);
insert into fip2 values (1, -1), (2, 5);
-- expect: error
select max((b.c0 + 0)), count(*) from fip1 a, fip2 b where ((select min(s.c1) from fip2 s) between (b.c1 % b.c1) and (a.c0 / a.c0));
-- b's scan rejects every row, so a's never runs.
select count(*) from fip1 a, fip2 b where ((select min(s.c1) from fip2 s) between (b.c1 % b.c1) and (a.c0 / nullif(a.c0, 0))) and a.c0 / a.c0 > 0;
select count(*) from fip1 a, fip2 b where ((select min(s.c1) from fip2 s) between (b.c1 % b.c1) and (a.c0 / nullif(a.c0, 0)));
-- NOT BETWEEN is an OR over both relations: a join filter, whose first
-- arm is true here.
select max((b.c0 + 0)), count(*) from fip1 a, fip2 b where ((select min(s.c1) from fip2 s) not between (b.c1 % b.c1) and (a.c0 / a.c0));
-- Correlated with b: a SubPlan per row of b.
-- expect: error
select count(*) from fip1 a, fip2 b where ((select min(s.c1) from fip2 s where s.c0 = b.c0) between (b.c1 % b.c1) and (a.c0 / a.c0));
-- BETWEEN SYMMETRIC: an OR of two ranges, over both relations.
select count(*) from fip1 a, fip2 b where (select min(c1) from fip2 s) between symmetric b.c1 and a.c0;
select count(*) from fip1 a, fip2 b where (select min(c1) from fip2 s) between symmetric (b.c1 % b.c1) and (a.c0 / nullif(a.c0, 0));
-- expect: error
select count(*) from fip1 a, fip2 b where (select min(c1) from fip2 s) not between symmetric (b.c1 % b.c1) and (a.c0 / a.c0);
select count(*) from fip1 a, fip2 b where a.c0 <> 0 and (select max(s.c1) from fip2 s) >= 10 / a.c0 and b.c1 > 0;
-- expect: error
select count(*) from fip1 a join fip2 b on a.c1 = b.c0 + 3 where (select max(s.c1) from fip2 s) < a.c0 / a.c0;
-- The nullable side of a left join keeps the subquery above it.
select count(*) from fip1 a left join fip2 b on a.c1 = b.c0 where (select max(s.c1) from fip2 s) < b.c0 / b.c0;
select count(*) from fip1 a left join fip2 b on a.c1 = b.c0 where (select max(s.c1) from fip2 s) is distinct from b.c0 / nullif(b.c0, 1);
-- EXISTS is an InitPlan too.
-- expect: error
select count(*) from fip1 a, fip2 b where (exists (select 1 from fip2 s where s.c1 < 0)) = (a.c0 / a.c0 > 0);
select count(*) from fip1 a, fip2 b where (exists (select 1 from fip2 s where s.c1 < -5)) = (b.c0 / nullif(a.c0, 0) > 0);
select a.c0, (select min(s.c1) from fip2 s) between a.c0 and a.c1 from fip1 a order by 1;
select count(*) from fip1 a where (select min(c1) from fip2) between -1 and a.c0;
select count(*) from fip1 a, fip2 b where (select min(c1) from fip2) between b.c1 and a.c0 and a.c1 = b.c0;
-- EXPLAIN: the InitPlan prints at the top node, its conjunct in the scan's
-- filter after the scan's own.
set max_parallel_workers_per_gather = 0;
explain (costs off) select * from fip1 a where (select min(c1) from fip2) <= a.c0 / a.c0 and c1 > 0;
explain (costs off) select * from fip1 a, fip2 b where (select min(c1) from fip2) <= a.c0 / a.c0 and a.c1 = b.c1;
-- InitPlans are numbered in the written order (the select list's first),
-- and a relation named in two levels prints as fip2, then fip2_1, ...
explain (costs off) select * from fip1 where c0 > (select min(c1) from fip2) and c1 < (select max(c1) from fip2);
explain (costs off) select (select min(c1) from fip2), (select max(c1) from fip2) from fip1 where c0 > (select min(c0) from fip2);
explain (costs off) select * from fip1 where c0 > (select min(c1) from fip2 x) and c1 < (select max(c1) from fip2 x);
explain (costs off) select * from fip1 x where c0 > (select min(c1) from fip2 x);
explain (costs off) select * from fip1 a where (select min(c1) from fip2 s) between a.c1 and a.c0;
reset max_parallel_workers_per_gather;
drop table fip1, fip2;

-- A conjunct over an InitPlan and the nullable side of an outer join that
-- rejects that side's NULLs makes the join inner, and goes into that
-- side's scan with its InitPlan (fuzzer, seed 20261308).
create table fio0 (c0 int, c1 numeric);
insert into fio0 values (2, -0.001), (2, -0.001), (-5, 0.00);
create table fio1 (c0 numeric, c1 date);
insert into fio1 values (-0.001, date 'infinity'), (-1.25, date '2000-01-02'), (-1.25, date '1999-12-31'), (null, date '1999-12-31');
create table fio2 (c0 int, c1 bigint);
insert into fio2 values (2, -5), (0, -7), (null, -2);
-- expect: error
select false from fio1 a left join fio0 b on a.c0 = b.c1 where ((b.c1 / b.c1) > (select min(s.c0) from fio1 s)) intersect all select true from fio2 a right join fio1 b on true;
select count(*) from fio1 a left join fio0 b on a.c0 = b.c1 where ((b.c1 / nullif(b.c1, 0)) > (select min(s.c0) from fio1 s));
-- expect: error
select count(*) from fio0 b right join fio1 a on a.c0 = b.c1 where ((b.c1 / b.c1) > (select min(s.c0) from fio1 s));
-- expect: error
select count(*) from fio0 b full join fio1 a on a.c0 = b.c1 where ((b.c1 / b.c1) > (select min(s.c0) from fio1 s));
select count(*) from fio1 a left join fio0 b on a.c0 = b.c1 where (select min(s.c0) from fio1 s) is distinct from b.c1 / nullif(b.c1, 0);
set max_parallel_workers_per_gather = 0;
explain (costs off) select count(*) from fio1 a left join fio0 b on a.c0 = b.c1 where ((b.c1 / nullif(b.c1, 0)) > (select min(s.c0) from fio1 s));
explain (costs off) select * from fio0 where c1 > 5 and c1 < 5.5 and c1 <> -5;
reset max_parallel_workers_per_gather;
drop table fio0, fio1, fio2;
-- A join with an empty side that it needs is empty without running the
-- other side (PostgreSQL's dummy relations), so a filter pushed into that
-- side raises nothing; the preserved side of an outer join still runs.
create table fid0 (id int, a int);
insert into fid0 values (1, 1), (2, 0), (3, null);
create table fid1 (x int);
insert into fid1 values (1), (1);
select fid0.id from fid0 join (select * from fid1 where false) s on true where 1 / (fid0.a - fid0.a) > 0;
select fid0.id from fid0 where fid0.a in (select x from fid1 where false) and 1 / (fid0.a - fid0.a) > 0;
-- expect: error
select fid0.id from fid0 left join (select * from fid1 where false) s on true where 1 / (fid0.a - fid0.a) > 0;
-- A subquery whose value constant folding left unread never runs (here
-- it would return two rows).
select id, (select x from fid1 where fid1.x = fid0.a) is null or true from fid0 order by id;
select id, coalesce(7, (select x from fid1 where fid1.x = fid0.a)) from fid0 order by id;
drop table fid0, fid1;
