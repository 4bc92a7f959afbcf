-- count(*), count(x), sum, min, max, avg; GROUP BY.
-- avg of integers is numeric in PostgreSQL (1.5000000000000000): deliberate.

create table sales (region text, product text, units int, price bigint);
insert into sales values
  ('north', 'apple', 10, 3), ('north', 'pear', 5, 4), ('north', 'apple', 7, 3),
  ('south', 'apple', 2, 5), ('south', 'plum', null, 9), ('east', null, 4, 1),
  ('east', 'pear', 6, null), (null, 'apple', 1, 2);
select count(*) from sales;
select count(units), count(price), count(product), count(region) from sales;
select sum(units), min(units), max(units), avg(units) from sales;
select sum(price), min(price), max(price), avg(price) from sales;
select min(product), max(product), min(region), max(region) from sales;
select sum(units * price), sum(units) * 2, count(*) + 1 from sales;
select avg(x) from generate_series(1, 2) t(x);
select avg(x) from generate_series(1, 3) t(x);
select avg(x) from generate_series(1, 4) t(x);
select avg(x), sum(x) from generate_series(-5, 2) t(x);
select avg(x::bigint), sum(x::bigint) from generate_series(1, 10) t(x);
select sum(x) from generate_series(2147483600, 2147483647) t(x);

-- GROUP BY; NULL keys form one group
select region, count(*) from sales group by region;
select region, sum(units), min(price), max(price) from sales group by region;
select product, count(*), count(units), avg(units) from sales group by product;
select region, product, count(*), sum(units) from sales group by region, product;
select region, product, sum(units) from sales where units > 3 group by region, product;
select count(*) from sales group by region;
select region, count(*) as n, sum(units) as u from sales group by region order by n desc, region;
select units % 2, count(*) from sales group by units % 2;
select region, sum(units * price) as revenue from sales where price is not null group by region;

-- empty input: one row without GROUP BY, none with it
create table nothing (a int, b text);
select count(*), count(a), sum(a), min(a), max(b), avg(a) from nothing;
select a, count(*) from nothing group by a;
select count(*) from sales where false;
select sum(units) from sales where units is null;
select region, count(*) from sales where false group by region;

-- aggregates over joins
create table regions (region text, manager text);
insert into regions values ('north', 'nina'), ('south', 'sam'), ('west', 'will');
select manager, count(*), sum(units) from sales join regions using (region) group by manager;
select r.manager, s.product, count(*) from sales s join regions r on s.region = r.region group by r.manager, s.product;
select count(*), sum(s.units), max(r.manager) from sales s, regions r where s.region = r.region;

-- grouping a larger generated set
select g % 5 as m, count(*), sum(g), min(g), max(g) from generate_series(1, 1000) g group by g % 5;
select count(*), sum(g), avg(g) from generate_series(1, 1000) g where g % 3 = 0;
