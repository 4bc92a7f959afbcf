-- A row compared with a row-valued subquery, `(a, b) op (SELECT x, y ...)`
-- (PostgreSQL's ROWCOMPARE sublink): every comparison operator, NULL
-- fields on either side, a subquery of no row (NULL), of two rows (error
-- 21000, raised only when some outer row reaches it), uncorrelated and
-- correlated, in WHERE, the select list, CASE, joins and aggregates, and
-- the column-count errors.

create table rq (a int, b int, c text);
insert into rq values (1, 2, 'x'), (3, 4, 'y'), (null, 5, 'z'), (6, null, 'w'), (3, 4, 'v'), (3, 5, null);
create table rs (x int, y int, z text);
insert into rs values (3, 4, 'y');
create table rm (x int, y int);
insert into rm values (3, 4), (3, 5), (1, 2), (null, null);
create table re (x int, y int);

select a, b, (a, b) = (select x, y from rs), (a, b) <> (select x, y from rs) from rq order by a, b;
select a, b, (a, b) < (select x, y from rs), (a, b) <= (select x, y from rs) from rq order by a, b;
select a, b, (a, b) > (select x, y from rs), (a, b) >= (select x, y from rs) from rq order by a, b;
select * from rq where (a, b) = (select x, y from rs) order by c;
select * from rq where (a, b) <> (select x, y from rs) order by c;
select * from rq where (a, b, c) = (select x, y, z from rs);
select * from rq where (a, b) >= (select x, y from rs) order by a, b, c;
select * from rq where not (a, b) < (select x, y from rs) order by a, b, c;
select (1, 2) = (select x, y from re), (1, 2) < (select x, y from re);
select count(*) from rq where (a, b) = (select x, y from re);
select (1, null) = (select 1, 2), (1, null) = (select 2, 2), (1, null) < (select 2, 2), (null, 1) < (select 2, 2);
select (1, 2) = (select 1, 2), ('a', 2) = (select 'a', 2::bigint), (1.5, 2) < (select 1.5, 3);
select row(1, 2) = (select 1, 2), row(1, 2) > (select 1, 1);
-- correlated: one row per outer row, none for some
select a, b, (a, b) = (select x, y from rm where rm.x = rq.a and rm.y = rq.b) from rq order by a, b, c;
select a, b, (b, a) < (select y, x from rm where rm.y = rq.b) from rq order by a, b, c;
select c from rq where (a, b) = (select x, y from rm where rm.y = rq.b) order by c;
-- in CASE, aggregates, joins, HAVING
select c, case when (a, b) = (select x, y from rs) then 'same' else 'other' end from rq order by c;
select count(*) filter (where (a, b) = (select x, y from rs)), count(*) from rq;
select a, count(*) from rq group by a having (a, count(*)::int) = (select 3, 2) order by a;
select r1.c, r2.c from rq r1 join rq r2 on (r1.a, r1.b) = (select r2.a, r2.b) order by 1, 2;
-- the subquery's own errors and cardinality
-- expect: error
select (1, 2) = (select x, y from rm);
-- expect: error
select * from rq where (a, b) = (select x, y from rm);
select * from rq where false and (a, b) = (select x, y from rm);
select * from re where (x, y) = (select x, y from rm);
-- expect: error
select (1, 2) = (select 1, 2 / 0);
-- expect: error
select (a, b) = (select x, y from rm where rm.x = rq.a) from rq;
-- expect: error
select (1, 2) = (select 1);
-- expect: error
select (1, 2) = (select 1, 2, 3);
-- expect: error
select (1, 'a') = (select 1, 2);
-- expect: error
select (1, 2) = (select x from rs);
