-- Row constructors in comparisons: (a, b) op (c, d) and ROW(...), with
-- PostgreSQL's rules: = is the AND of the fields' =, <> the OR of their <>,
-- and < <= > >= compare lexicographically, the first pair with a NULL making
-- the result NULL. Also row IN lists, row IN / NOT IN subqueries, row
-- ANY / ALL, IS [NOT] NULL and IS [NOT] DISTINCT FROM over rows.
create table rc (id int, a int, b int, c text, n numeric);
insert into rc values (1, 1, 2, 'x', 1.5), (2, 1, null, 'y', 2), (3, null, 2, 'z', null), (4, 3, 4, null, 4.00), (5, null, null, null, null), (6, 1, 2, 'x', 1.50), (7, 2, 1, 'a', -1);
create table rs (x int, y int);
insert into rs values (1, 2), (3, null), (null, 4), (1, 2);
-- Constants.
select (1, 2) = (1, 2), (1, 2) <> (1, 3), (1, 2) < (1, 3), (1, null) = (1, 2), (1, null) = (2, 2);
select (1, null) < (2, null), (null, 1) < (2, 2), (1, null) <= (1, null), (1, 2) <= (1, 2), (1, 2) >= (1, 2), (1, 2) > (1, 2);
select (1, 2, 3) < (1, 2, 4), (1, 2, 3) > (1, 1, 9), (2, 0, 0) > (1, 9, 9), ('a', 1) < ('b', 0);
select row(1, 2) = row(1, 2), row(1) < row(2), row(1, 'a') < row(1, 'b'), (1, 2) = row(1, 2);
-- Cross-type pairs resolve as the lone operators would.
select (1, 2.5) < (1, 3), (1::bigint, 2) = (1, 2::numeric), ('ab'::char(4), 1) = ('ab', 1);
-- Over columns, in the select list.
select id, (a, b) = (1, 2), (a, b) <> (1, 2), (a, b) < (1, 3), (a, b) <= (1, 2), (a, b) > (1, 1), (a, b) >= (3, 4) from rc order by id;
select id, (a, c) < (1, 'y'), (c, a) >= ('x', 1), (a, b, n) < (1, 2, 1.6) from rc order by id;
select id, (a, b) = (b, a), (a, b) < (b, a) from rc order by id;
-- In WHERE, as a qualification (NULL rows leave).
select id from rc where (a, b) = (1, 2) order by id;
select id from rc where (a, b) <> (1, 2) order by id;
select id from rc where (a, b) < (2, 0) order by id;
select id from rc where (a, b) >= (1, 2) order by id;
select id from rc where not ((a, b) > (1, 2)) order by id;
select id from rc where row(a, b) > row(1, null) order by id;
-- Keyset pagination, the common use.
select id, a, b from rc where (a, b) > (1, 2) order by a, b, id;
-- Joins on row comparisons.
select rc.id, rs.x, rs.y from rc join rs on (rc.a, rc.b) = (rs.x, rs.y) order by 1, 2, 3;
select rc.id, rs.x, rs.y from rc join rs on (rc.a, rc.b) < (rs.x, rs.y) order by 1, 2, 3;
select rc.id, rs.x, rs.y from rc left join rs on (rc.a, rc.b) = (rs.x, rs.y) order by 1, 2, 3;
-- Later pairs are compared only when the earlier pairs are equal.
select id, (a, 10 / (b - 2)) < (2, 0) from rc where a is not null and a < 2 and b is not null order by id;
-- Row IN lists.
select id, (a, b) in ((1, 2), (3, 4)), (a, b) not in ((1, 2), (3, 4)) from rc order by id;
select (1, 2) in ((1, 3), (null, 2)), (1, 2) not in ((1, 3), (null, 2)), (1, 2) in ((null, 2), (1, 2));
select (1, 2) in ((1, 2)), row(1, 2) in (row(1, 2)), (1, 2) not in ((2, 2));
select id from rc where (a, b) in ((1, 2), (null, 2), (3, 4)) order by id;
select id from rc where (a, c) not in ((1, 'x'), (3, 'q')) order by id;
-- Row IN / NOT IN subqueries, with NULLs on both sides.
select id, (a, b) in (select x, y from rs) from rc order by id;
select id, (a, b) not in (select x, y from rs) from rc order by id;
select id from rc where (a, b) in (select x, y from rs) order by id;
select id from rc where (a, b) not in (select x, y from rs) order by id;
select id from rc where (a, b) not in (select x, y from rs where x is not null and y is not null) order by id;
select id from rc where (a, b) in (select x, y from rs where false) order by id;
select id from rc where (a, b) not in (select x, y from rs where false) order by id;
select id from rc where (b, a) in (select y, x from rs where rs.x = rc.a) order by id;
-- Row ANY / ALL: each subquery row compares as a row comparison.
select id, (a, b) = any (select x, y from rs), (a, b) <> all (select x, y from rs) from rc order by id;
select id, (a, b) < any (select x, y from rs), (a, b) >= all (select x, y from rs) from rc order by id;
select id, (a, b) <> any (select x, y from rs), (a, b) <= all (select x, y from rs where false) from rc order by id;
select (1, 2) < all (select 1, 3 union all select null, 1), (1, 2) <> all (select 1, 3 union all select 1, null);
-- Over an empty subquery the left side is never evaluated: PostgreSQL
-- compares it only with a subquery row.
select id, (a, 1 / (id - id)) in (select x, y from rs where false), (a, 1 / (id - id)) <> all (select x, y from rs where x > 100) from rc order by id;
select id, a / 0 = any (select x from rs where false), a / 0 < all (select x from rs where false) from rc order by id;
-- In WHERE, PostgreSQL makes a simple uncorrelated IN subquery a semi join
-- and flattens it: the test is folded with the subquery's constant columns
-- in it (3 = 4 is false, so 3 / 0.00 is never folded), and what then
-- reads only the outer table goes down into its scan, in cost order.
select id from rc where (a, 3, 3 / 0.00) = any (select x, 4, y from rs);
select id from rc where ((-0.001 / (n - 1.5)), n) = any (select 0.5, 100.125 from rs);
-- expect: error
select id from rc where (-4, n / (n - n), -3) = any (select x, -0.001, -3 from rs);
select id from rc where (a, 3) = any (select x, 3 from rs) order by id;
select id from rc where (a, 2 + 1) in (select x, 3 from rs union all select 1, 3) order by id;
-- A side of the semi join known to be empty empties the query: the
-- conjunct that went down into rc's scan never runs.
select id from rc where (c like '%b', a / (a - a), 'x') < any (select false, 5, 'y' from rs where -1 <= -5);
-- Folding decides the row comparison, so its subquery never runs (it
-- would return two rows for a = 1).
select id, ((10 % null), (a / -1.25), 2) <> (-3, (select x from rs where rs.x = rc.a), -2) from rc order by id;
-- Elsewhere the subquery stays a SubPlan, whose test compares with its
-- columns as parameters, and 3 / 0.00 is folded: in the select list,
-- under NOT, in HAVING, correlated, or not simple (DISTINCT, ORDER BY).
-- expect: error
select id, (a, 3, 3 / 0.00) = any (select x, 4, y from rs) from rc;
-- expect: error
select id from rc where not ((a, 3, 3 / 0.00) = any (select x, 4, y from rs));
-- expect: error
select a, count(*) from rc group by a having (a, 3, 3 / 0.00) = any (select x, 4, y from rs);
-- expect: error
select id from rc where (a, 3, 3 / 0.00) = any (select x, 4, y from rs where rs.x = rc.id);
-- expect: error
select id from rc where (a, 3, 3 / 0.00) = any (select distinct x, 4, y from rs);
-- expect: error
select id from rc where (a, 3, 3 / 0.00) = any (select x, 4, y from rs order by x);
-- IS NULL / IS NOT NULL on rows: all fields NULL, no field NULL.
select id, (a, b) is null, (a, b) is not null, row(a, c) is null, not (a, b) is null from rc order by id;
select id from rc where (a, b) is not null order by id;
select id from rc where (a, b, c) is null order by id;
select (null, null) is null, (null, null) is not null, (1, null) is not null, row(null) is null;
select row() is null, row() is not null;
-- Every field is folded before the test is split into the fields' tests:
-- a constant field that fails fails, even after a field that decides.
-- expect: error
select (6, 1 % 0) is null;
-- expect: error
select id from rc where (null, -0.001 / 0.00) is not null;
select id from rc where (a, 1 / 2) is null order by id;
-- ... but only when planning: a binding error comes first.
-- expect: error
select -4, count(*) from rc where ((0 / 0), -3, a) is null group by -4;
-- expect: error
select 0, count(*) from rc where ((6 * 9223372036854775807), a) is not null group by 0;
-- A view and a CHECK constraint keep the test.
create view rcn as select id from rc where (a, b) is null or row(a, c) is not null;
select * from rcn order by id;
drop view rcn;
create table rcc (a int, b int, check ((a, b) is not null));
insert into rcc values (1, 2);
-- expect: error
insert into rcc values (1, null);
select * from rcc;
drop table rcc;
-- IS [NOT] DISTINCT FROM on rows.
select id, (a, b) is distinct from (1, 2), (a, b) is not distinct from (null, 2) from rc order by id;
select (1, null) is not distinct from (1, null), (1, 2) is distinct from (1, null), row() is distinct from row();
-- Aggregates and grouping over row comparisons.
select (a, b) < (2, 0) as lt, count(*) from rc group by 1 order by 1;
select count(*) filter (where (a, b) >= (1, 2)), count(*) filter (where (a, b) is null) from rc;
-- Empty input.
select id from rc where false and (a, b) < (1, 2);
select (a, b) = (1, 2) from rc where id > 100;
-- A view keeps the comparison.
create view rcv as select id from rc where (a, b) < (2, 0) and (a, b) <> (1, 2);
select * from rcv order by id;
drop view rcv;
-- Enough rows for parallel and spilling plans.
create table rbig as select g as id, g % 7 as a, g % 5 as b, (g % 11)::text as c from generate_series(1, 30000) g;
insert into rbig values (0, null, 1, null), (-1, 1, null, 'n');
select count(*) from rbig where (a, b) < (3, 2);
select count(*) from rbig where (a, b) <> (3, 2);
select count(*), sum(id) from rbig where (a, b) in ((1, 1), (2, 2), (6, 4));
select count(*) from rbig where (a, b) not in (select x, y from rs);
select count(*) from rbig where (a, b) in (select x, y from rs);
select count(*) from rbig where (a, b) not in (select a, b from rbig where id % 3 = 0 and id > 0);
select a, count(*) from rbig where (a, c) >= (3, '5') group by a order by a;
drop table rbig;
-- Errors: rows of different lengths.
-- expect: error
select (1, 2) = (1, 2, 3);
-- expect: error
select (1, 2) < (1, 2, 3);
-- expect: error
select (1, 2) in ((1, 2), (1, 2, 3));
-- expect: error
select (1, 2) is distinct from (1, 2, 3);
-- expect: error
select id from rc where (a, b) <> row(a);
-- Errors: pairs without an operator, or values that do not convert.
-- expect: error
select (1, true) < (1, 2);
-- expect: error
select (a, c) = (1, 2) from rc;
-- expect: error
select (1, 'a') = (1, 2);
-- expect: error
select (a, b) < (1, 'x'::text) from rc;
-- Errors: a row against a single value.
-- expect: error
select (1, 2) = 1;
-- expect: error
select 1 = (1, 2);
-- expect: error
select (1, 2) in ((1, 3), 3);
-- expect: error
select 1 in ((1, 2), 1);
-- Errors: zero-length rows, and operators that are not comparisons.
-- expect: error
select row() = row();
-- expect: error
select (1, 2) + (1, 2);
-- expect: error
select (1, 2) ~~ (1, 2);
-- Errors: a row IN subquery of the wrong width.
-- expect: error
select (a, b) in (select x from rs) from rc;
-- expect: error
select (a, b) in (select x, y, x from rs) from rc;
-- expect: error
select (a, b) = any (select x, 'a' from rs) from rc;
drop table rs;
drop table rc;
