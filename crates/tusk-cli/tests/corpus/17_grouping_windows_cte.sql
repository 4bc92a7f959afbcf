-- GROUPING SETS / ROLLUP / CUBE with GROUPING(), window functions with
-- frames, WITH (plain, MATERIALIZED, RECURSIVE), and aggregate forms
-- (DISTINCT, FILTER, string_agg, bool_and/or, stddev/variance).

create table sales (region text, product text, qty int, price numeric);
insert into sales values
  ('east', 'a', 1, 10.5), ('east', 'b', 2, 20), ('west', 'a', 3, 10.5),
  ('west', 'a', null, 11), ('north', null, 5, 7.25), ('east', 'a', 1, 10.5);

select region, product, sum(qty) from sales group by rollup (region, product) order by 1, 2;
select region, product, count(*) from sales group by cube (region, product) order by 1, 2, 3;
select region, sum(qty), grouping(region) from sales group by grouping sets ((region), ()) order by 1;
select region, product, grouping(region, product) from sales group by rollup (region, product) order by 3, 1, 2;
select product, sum(qty) from sales group by grouping sets (product, ()) having sum(qty) > 2 order by 1, 2;

select region, qty, row_number() over (partition by region order by qty, product) from sales order by 1, 2, 3;
select region, qty, rank() over (order by qty), dense_rank() over (order by qty) from sales order by 2, 1;
select qty, sum(qty) over (order by qty rows between 1 preceding and 1 following) from sales order by qty nulls first;
select region, qty, lag(qty) over (partition by region order by qty), lead(qty, 1, -1) over (partition by region order by qty) from sales order by 1, 2;
select region, first_value(product) over (partition by region order by qty), last_value(qty) over (partition by region order by qty rows between unbounded preceding and unbounded following) from sales order by 1, 2, 3;
select qty, ntile(3) over (order by qty), percent_rank() over (order by qty), cume_dist() over (order by qty) from sales order by 1;
select region, avg(price) over (partition by region), count(*) over () from sales order by 1, 2;
select region, sum(qty) over (partition by region order by qty range between unbounded preceding and current row) from sales order by 1, 2;

with t as (select region, sum(qty) as q from sales group by region) select * from t where q > 2 order by 1;
with t as materialized (select * from sales where qty > 1) select count(*) from t a, t b where a.region = b.region;
with recursive r(n) as (select 1 union all select n + 1 from r where n < 10) select sum(n) from r;
with recursive r(n) as (select 1 union select n % 3 + 1 from r) select n from r order by n;
with recursive fib(a, b) as (select 0::bigint, 1::bigint union all select b, a + b from fib where b < 1000) select a from fib order by a;
with a as (select 1 as x), b as (select x + 1 as y from a) select * from a, b;

select count(distinct region), count(distinct product) from sales;
select region, count(*) filter (where qty > 1), sum(qty) filter (where product = 'a') from sales group by region order by 1;
select string_agg(product, ',' order by product) from sales where product is not null;
select region, string_agg(distinct product, '|') from sales group by region order by 1;
select bool_and(qty > 0), bool_or(qty > 4), every(price > 1) from sales;
select stddev(qty), variance(qty), stddev_pop(qty), var_pop(qty) from sales;
select stddev(price), var_samp(price) from sales;
select avg(qty), avg(price), sum(price) from sales;
-- expect: error
select region, sum(qty) over (partition by region) from sales group by product;
-- expect: error
select sum(sum(qty)) from sales;
-- expect: error
select * from sales where row_number() over () > 1;
