-- UNION / INTERSECT / EXCEPT [ALL], type unification, ORDER BY and LIMIT on
-- the result, NULLs and duplicates; DISTINCT, DISTINCT ON, HAVING.

create table a (x int, y text);
insert into a values (1, 'a'), (2, 'b'), (2, 'b'), (null, 'n'), (3, null);
create table b (x bigint, y text);
insert into b values (2, 'b'), (3, null), (3, null), (4, 'd'), (null, 'n');

select x from a union select x from b;
select x from a union all select x from b;
select x, y from a union select x, y from b order by 1, 2;
select x from a intersect select x from b;
select x from a intersect all select x from b;
select x, y from a except select x, y from b;
select x from a except all select x from b;
select x from b except select x from a;
select 1 union select 2 union select 1;
select 1 as n union all select 2 order by n desc;
select x from a union select x from b order by x limit 2;
select x from a union select x from b order by x desc nulls last limit 3 offset 1;
select 1, 'a' union select 2.5, 'b';
select null union select 1;
select 'x' union select 'y';
-- expect: error
select 1 union select 'a';
-- expect: error
select 1, 2 union select 1;
select x from a where x > 1 union select x from b where x < 4 intersect select 3;

select distinct x from a;
select distinct x, y from a order by 1, 2;
select distinct on (x) x, y from a order by x, y;
select distinct on (x) x, y from a order by x, y desc;
select count(distinct x) from a;
select x, count(*) from a group by x having count(*) > 1;
select x, count(*) from a group by x having x > 1 order by x;
select count(*) from a having count(*) > 3;
select count(*) from a having count(*) > 30;
select y, sum(x) from a group by y having sum(x) is not null order by y;
-- expect: error
select x, y from a group by x;
-- expect: error
select distinct x from a order by y;
