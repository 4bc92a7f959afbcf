-- A set-returning function inside a select-list expression: the
-- expression is computed for each value of the series (PostgreSQL's
-- ProjectSet), under operators, casts, null tests and scalar functions.
create table sx (a int, b text);
insert into sx values (1, 'x'), (2, 'y'), (null, 'z'), (2, 'y');
select generate_series(1, 3) + 1;
select 1 + generate_series(1, 2) * 2;
select -generate_series(1, 3);
select generate_series(1, 3)::text || 'x' as t;
select abs(generate_series(-2, 2)) order by 1;
select (generate_series(1, 2)) is not null, 7 as seven;
select generate_series(1, 3) is null from sx where a = 2;
select generate_series(1, 3) % 2 as parity order by parity, 1;
select distinct generate_series(1, 5) % 3;
select generate_series(1, 4) * 10 limit 2;
select generate_series(0.5, 2) * 2;
select upper(b) || generate_series(1, 2)::text from sx order by 1;
-- Arguments from the FROM rows (NULL gives no rows), duplicates kept.
select a, b, generate_series(1, a) * 100 from sx order by 1, 2, 3;
select a, generate_series(a, 2) + a from sx where a is not null order by 1, 2;
select count(*) from (select generate_series(1, a) + 0 as g from sx) s;
-- Empty input and empty series.
select generate_series(1, 3) + 1 from sx where false;
select generate_series(3, 1) + 1;
select a, generate_series(1, a - 1) + 1 from sx order by 1, 2;
-- Errors: a set-returning call under CASE, COALESCE or an aggregate.
-- expect: error
select case when true then generate_series(1, 2) end;
-- expect: error
select case generate_series(1, 2) when 1 then 'a' end;
-- expect: error
select coalesce(generate_series(1, 2), 0);
-- expect: error
select sum(generate_series(1, 3));
-- expect: error
select count(generate_series(1, a) + 1) from sx;
-- expect: error
select abs(case when a > 0 then generate_series(1, 2) end) from sx;
drop table sx;
