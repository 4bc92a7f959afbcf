-- Cases from differential fuzzing (seeds 20261403 and 20261404), reduced,
-- with neighbours:
-- * a qual over one relation and a correlated subquery is tested in that
--   relation's scan, below the joins, for every row of it (PostgreSQL
--   places a SubPlan's qual by the relations it and its correlation read):
--   its errors are raised for rows a join above would have dropped;
-- * a correlated aggregate subquery whose qual can fail stays a SubPlan,
--   tested on every outer row (with NULL where no inner row matches),
--   instead of a join that the qual makes inner;
-- * in a qual, an AND with a NULL term is false and an OR drops it, as
--   PostgreSQL's canonicalize_qual does: the arm is never evaluated.

create table fa (c0 int, c1 int, c2 text);
insert into fa values (1, 4, 'x'), (2, 0, 'y'), (2, 5, 'z'), (null, 3, 'w'), (3, 0, null);
create table fb (c0 int, c1 int);
insert into fb values (1, 1), (2, 2), (2, 3), (4, 4);
create table fe (c0 int, c1 int);

-- A correlated subquery in a qual over one side of a join: tested in that
-- side's scan, so "more than one row" comes even though the other side is
-- empty, and even for rows the join would drop.
-- expect: error
select count(*) from fa join fe on fa.c0 = fe.c0 where fa.c1 < (select fb.c1 from fb where fb.c0 = fa.c0);
-- expect: error
select count(*) from fe right join fa on fa.c0 = fe.c0 where (select fb.c1 from fb where fb.c0 = fa.c0) is not null;
-- The subquery finds at most one row for these: no error, same rows.
select fa.c2, x.c1 from fa join fb x on fa.c1 = x.c0 where fa.c1 < (select fb.c1 + 10 from fb where fb.c0 = fa.c1) order by 1, 2;
select fa.c2 from fe right join fa on fa.c0 = fe.c0 where (select fb.c1 from fb where fb.c0 = fa.c1) is not null order by 1;
select fa.c2, x.c0 from fa left join fb x on fa.c0 = x.c0 where exists (select 1 from fb where fb.c1 = fa.c1) order by 1, 2;
-- Qual over both sides: still a join filter, evaluated on joined rows only.
select count(*) from fa join fe on fa.c0 = fe.c0 where fe.c1 < (select fb.c1 from fb where fb.c0 = fa.c0);
-- Select-list subquery: evaluated for output rows only.
select fa.c2, (select fb.c1 from fb where fb.c0 = fa.c0) from fa join fe on fa.c0 = fe.c0;
-- expect: error
select count(*) from fa join fb x on fa.c0 = x.c0 where x.c1 = 4 and (select fb.c1 from fb where fb.c0 = fa.c0) > 0;

-- A correlated aggregate subquery beside a qual that can fail: every outer
-- row is tested, the unmatched ones with min() of no rows (NULL).
-- expect: error
select fa.c2 from fa where (select min(-5) from fb where fb.c0 = fa.c0 + 10) <= (fa.c1 / fa.c1);
-- expect: error
select count(*) from fa where (select sum(fb.c1) from fb where fb.c0 = fa.c0) < 10 / fa.c1;
select fa.c2 from fa where (select min(fb.c1) from fb where fb.c0 = fa.c0) <= fa.c1 order by 1;
select fa.c2 from fa where (select count(*) from fb where fb.c0 = fa.c0) = 0 order by 1;
select fa.c2 from fa where (select max(fb.c1) from fb where fb.c0 = fa.c0) + 1 > fa.c1 order by 1;
select fa.c2 from fa where fa.c1 <> 0 and (select min(fb.c1) from fb where fb.c0 = fa.c0) <= 10 / fa.c1 order by 1;
-- A subquery made empty by a false correlation predicate is an InitPlan.
-- expect: error
select count(*) from fa left join fb on fa.c0 = fb.c0 where (fa.c1 % 0) between (select sum(fb2.c1) from fb fb2 where fb2.c0 = fa.c0 and (null < 'b ')) and (fa.c1 + fb.c1);

-- Row IN lists: a NULL member makes its arm false in the qual, so the
-- arm's expressions are never computed.
select c2 from fa where ((-2147483647 - 1 + c0), c1) in ((-3, null::int), (2, 4));
-- expect: error
select c2 from fa where ((10 / c1), c0) in ((1, null::int), (2, 1)) is null;
-- expect: error
select c2 from fa where ((10 / c1), c0) not in ((1, null::int), (3, 1)) order by 1;
select c2 from fa where c1 <> 0 and ((10 / c1), c0) not in ((1, null::int), (3, 1)) order by 1;
select c2 from fa where (c0, c1) in ((null, 3), (2, 5), (3, null)) order by 1;
select c2 from fa where (c0 = 2 and null) or c1 = 4 order by 1;
select c2 from fa where (c0 = 2 or null) and c1 = 5 order by 1;
select c2 from fa where not ((c0 = 2 and null) or c1 = 4) order by 1;
select count(*) from fa join fb on (fa.c0 = fb.c0 and null) or fa.c1 = fb.c1;
select count(*) from fa left join fb on ((10 / fa.c1) = fb.c0 and null) or fa.c0 = fb.c0;
-- expect: error
select c2 from fa where ((10 / c1), c0) in ((1, 7), (2, 1));
-- expect: error
select c2 from fa where (((-2147483647 - 1) - c1), c0) in ((-3, 1), (2, 4));

-- Estimates that decide which side of a join runs first, and so whether a
-- qual that fails is reached, as in PostgreSQL: `x = x` keeps the
-- non-NULL rows (an IS NOT NULL), a row `<` whose first pair has a NULL
-- keeps none, a LIKE with a fixed prefix and no statistics keeps 0.5%,
-- and `x = false` is `NOT x` (half the rows).
create table ga (c0 bigint);
insert into ga values (1), (-6), (5), (0), (-3), (null);
create table gb (c0 date);
create table gc (c0 numeric);
insert into gc values (null), (0.5), (3), (0.00);
create table gd (c0 text, c1 int);
insert into gd values ('A', 1), ('x%', 2);
create table ge (c0 boolean, c1 int);
select max(0.5), count(*) from ga a right join gb b on (b.c0 = b.c0) where ((a.c0 % a.c0) < a.c0);
select count(*) from ga a join gb b on b.c0 = b.c0;
-- expect: error
select count(*) from gc a join gb b on true where (((a.c0 / a.c0), (a.c0 = -1.25), 3) < (null, true, 10));
select count(*) from gc a where ((a.c0, 1) < (null, 2)) is null;
-- expect: error
select a.c0 from ga a right join gd b on (b.c0 like 'a%') where ((a.c0 - 9223372036854775807) in (5, -1));
select count(*) from gd where c0 like 'x%';
select count(*) from gd where c0 ilike 'X%';
select count(*) from gd where c0 like '%';
select count(*) from gd where c0 like 'x\%';
select avg(-3), count(*) from ge a, gc b where (((2 between 3 and null), (b.c0 / b.c0), a.c0) in ((false, -1.25, false), (false, 3, false)));

-- A boolean `=` or `<>` with a constant side is that side or its negation.
insert into ge values (true, 1), (false, 2), (null, 3);
select c1 from ge where c0 = true order by 1;
select c1 from ge where c0 = false order by 1;
select c1 from ge where true = c0 order by 1;
select c1 from ge where false <> c0 order by 1;
select c1 from ge where c0 <> true order by 1;
select c1 from ge where (c0 = false) is null order by 1;
select c1 from ge where c0 = null::boolean order by 1;
select c1, c0 = true, c0 <> false, false = c0 from ge order by 1;
select c1 from ge where (c1 > 1) = true order by 1;
select c1 from ge where (c1 > 1) = false order by 1;

-- A condition that reads a correlated subquery's value stays above it, but
-- still rejects the NULL-extended rows of the outer join below: the join
-- becomes inner first, so the subquery (which would return two rows) never
-- runs over an empty side (fuzz seed 20261502, round 238).
create table oj_empty (c0 text);
create table oj_bools (c0 boolean);
insert into oj_bools values (true), (false), (false), (true), (true);
select (b.c0 is false) from oj_empty a right join oj_bools b on true where ((select cs.c0 from oj_bools cs where cs.c0 = b.c0 and cs.c0) = (a.c0 like '%'));
select b.c0 from oj_bools b left join oj_empty a on true where (select count(*) from oj_bools cs where cs.c0 = b.c0) > length(a.c0);
select b.c0, a.c0 from oj_bools b left join oj_empty a on true where (select count(*) from oj_bools cs where cs.c0 = b.c0) > 0 or a.c0 is null order by 1;
insert into oj_empty values ('x'), (null);
-- expect: error
select (b.c0 is false) from oj_empty a right join oj_bools b on true where ((select cs.c0 from oj_bools cs where cs.c0 = b.c0 and cs.c0) = (a.c0 like '%'));
select b.c0, a.c0 from oj_bools b left join oj_empty a on true where (select count(*) from oj_bools cs where cs.c0 = b.c0) > length(a.c0) order by 1, 2;
