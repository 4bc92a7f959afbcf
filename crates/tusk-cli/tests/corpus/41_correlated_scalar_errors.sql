-- Correlated scalar subqueries fail exactly where PostgreSQL's SubPlan
-- fails: it runs the subquery per outer row that reaches it, over the
-- inner rows that row's parameters select. An aggregate is decorrelated
-- into a grouped join only when nothing in it can fail; otherwise it
-- runs as a SubPlan, as in PostgreSQL.
create table cse_a (x int, y int);
create table cse_b (x int, y int, n numeric);
insert into cse_a values (1, 1), (2, 2), (null, 3);
insert into cse_b values (1, 10, 1.5), (3, 0, 0), (2, 5, 2.5), (2, 6, null), (null, 0, 7);
-- The inner row (3, 0) matches no outer row: never divided by.
select x, (select sum(10 / b.y) from cse_b b where b.x = a.x) from cse_a a order by 1;
select x, (select max(b.n / b.y) from cse_b b where b.x = a.x) from cse_a a order by 1;
select x, (select sum(b.y) from cse_b b where b.x = a.x and 10 / b.y > 1) from cse_a a order by 1;
select x, (select count(*) from cse_b b where b.x = a.x and 10 / b.y > 1) from cse_a a order by 1;
select x, (select avg((10 - b.y) * 300000000) from cse_b b where b.x = a.x) from cse_a a order by 1;
select x from cse_a a where (select sum(10 / b.y) from cse_b b where b.x = a.x) > 1 order by 1;
select x from cse_a a where a.y < 2 and (select min(b.y / (b.y - 5)) from cse_b b where b.x = a.x) >= 0;
-- expect: error
select x from cse_a a where (select min(b.y / (b.y - 5)) from cse_b b where b.x = a.x) >= 0;
-- expect: error
select x, (select sum(10 / b.y) from cse_b b where b.x = a.x + 1) from cse_a a order by 1;
-- Outer rows filtered out never run the subquery.
select x, (select sum(10 / b.y) from cse_b b where b.x = a.x + 1) from cse_a a where a.x = 1;
select x, (select sum(10 / b.y) from cse_b b where b.x = a.x + 1) from cse_a a where false;
select x, (select sum(10 / b.y) from cse_b b where b.x = a.x) from cse_a a where a.x is null;
-- Casts that can fail, and numeric arithmetic that cannot.
select x, (select max(b.y::text::int2) from cse_b b where b.x = a.x) from cse_a a order by 1;
select x, (select sum(b.n * 2 + 1) from cse_b b where b.x = a.x) from cse_a a order by 1;
select x, (select count(*) filter (where 10 / b.y > 1) from cse_b b where b.x = a.x) from cse_a a order by 1;
-- Without an aggregate: two rows for one outer row raise 21000, only for a
-- row that reaches the subquery.
select x, (select b.y from cse_b b where b.x = a.x) from cse_a a where a.x = 1;
-- expect: error
select x, (select b.y from cse_b b where b.x = a.x) from cse_a a order by 1;
select x from cse_a a where a.x <> 2 and (select b.y from cse_b b where b.x = a.x) > 0;
-- The cheaper conjunct runs first, wherever it is written (PostgreSQL
-- orders quals by cost, a SubPlan's last).
select x from cse_a a where (select b.y from cse_b b where b.x = a.x) > 0 and a.x <> 2;
select x, (select 10 / b.y from cse_b b where b.x = a.x and b.y > 5) from cse_a a order by 1;
-- Empty inner and outer tables.
select x, (select sum(10 / b.y) from cse_b b where b.x = a.x and false) from cse_a a order by 1;
select count(*) from cse_a a where false and (select sum(10 / b.y) from cse_b b where b.x = a.x) > 0;
drop table cse_a, cse_b;
