-- The join order search costs index nested loops beside hash joins: a
-- selective chain of joins (a filtered dimension, the rows that reference
-- it) probes a large table's index from the middle of the order, as
-- PostgreSQL's plan for TPC-H Q3 and Q5 does, at default settings. NULL
-- and duplicate keys, keys with no match, filters on the probed table, a
-- join filter between the probed table and a table joined earlier, a
-- composite index used on its leading column, an empty dimension, and rows
-- changed in the transaction.

create table cust (c_id int primary key, c_seg text, c_nation int);
insert into cust select g, case when g % 10 = 0 then 'BUILDING' else 'OTHER' end, g % 5 from generate_series(1, 300) g;
insert into cust values (301, null, null);
create table ord (o_id int primary key, o_cust int, o_day int, o_note text);
insert into ord select g, (g * 7) % 320, g % 100, 'o' || g from generate_series(1, 3000) g;
insert into ord values (3001, null, 5, 'no customer'), (3002, 301, 5, 'null segment');
create table item (i_ord int, i_line int, i_price numeric(12, 2), i_supp int, i_day int, primary key (i_ord, i_line));
insert into item select g / 4 + 1, g % 4, (g % 997) * 1.25, g % 50, g % 120 from generate_series(0, 24003) g;
insert into item values (999999, 1, 1.00, 1, 1);
create table supp (s_id int primary key, s_nation int);
insert into supp select g, g % 5 from generate_series(0, 49) g;
create table nat (n_id int primary key, n_name text, n_region int);
insert into nat values (0, 'ALGERIA', 0), (1, 'BRAZIL', 1), (2, 'CHINA', 2), (3, 'DENMARK', 3), (4, 'EGYPT', 2);
create table reg (r_id int primary key, r_name text);
insert into reg values (0, 'AFRICA'), (1, 'AMERICA'), (2, 'ASIA'), (3, 'EUROPE');
analyze cust;
analyze ord;
analyze item;
analyze supp;
analyze nat;
analyze reg;

-- Q3's shape: filtered customers, their orders, the orders' items by the primary key
select i_ord, sum(i_price) as revenue, o_day
from cust, ord, item
where c_seg = 'BUILDING' and c_id = o_cust and i_ord = o_id and o_day < 40 and i_day > 30
group by i_ord, o_day order by revenue desc, i_ord limit 10;
select count(*), sum(i_price)
from cust, ord, item
where c_seg = 'BUILDING' and c_id = o_cust and i_ord = o_id;
-- Q5's shape: six tables, a join filter between the probed items' supplier and the customer
select n_name, sum(i_price) as revenue
from cust, ord, item, supp, nat, reg
where c_id = o_cust and i_ord = o_id and i_supp = s_id and c_nation = s_nation
  and s_nation = n_id and n_region = r_id and r_name = 'ASIA' and o_day >= 10 and o_day < 30
group by n_name order by revenue desc, n_name;
-- a join filter between the probed table and an earlier one
select count(*), min(i_price), max(i_price)
from cust join ord on c_id = o_cust join item on i_ord = o_id and i_day > o_day
where c_seg = 'BUILDING';
-- NULL keys and keys with no match never join
select count(*) from cust join ord on c_id = o_cust join item on i_ord = o_id where c_seg is null;
select count(*) from ord join item on i_ord = o_id where o_cust is null;
select count(*) from cust join ord on c_id = o_cust join item on i_ord = o_id + 100000 where c_seg = 'BUILDING';
-- the composite key in full
select count(*), sum(i_price) from cust, ord, item
where c_seg = 'BUILDING' and c_id = o_cust and i_ord = o_id and i_line = o_day % 4;
-- an empty dimension
select count(*) from cust join ord on c_id = o_cust join item on i_ord = o_id where c_seg = 'NONE';
-- rows changed inside the transaction
begin;
delete from item where i_ord % 3 = 0;
update ord set o_day = 0 where o_id % 10 = 1;
update cust set c_seg = 'BUILDING' where c_id = 11;
select count(*), sum(i_price) from cust, ord, item
where c_seg = 'BUILDING' and c_id = o_cust and i_ord = o_id and o_day < 40;
rollback;
select count(*), sum(i_price) from cust, ord, item
where c_seg = 'BUILDING' and c_id = o_cust and i_ord = o_id and o_day < 40;
