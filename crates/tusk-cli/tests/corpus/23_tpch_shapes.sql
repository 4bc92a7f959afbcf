-- The shapes of TPC-H's 22 queries on small tables with its column types
-- (char(n), varchar(n), decimal(15,2), date), NULLs and empty inputs:
-- EXISTS / NOT EXISTS with a non-equality beside the correlation (Q4, Q21,
-- Q22), an OR whose arms repeat the join condition (Q19), scalar
-- subqueries over aggregates (Q2, Q11, Q15, Q17, Q20), count(distinct)
-- (Q16), LEFT JOIN with count (Q13), substring(x from a for b) (Q22), a
-- view (Q15), CASE inside aggregates (Q8, Q12, Q14).

create table tr (r_regionkey integer not null, r_name char(25) not null, primary key (r_regionkey));
create table tn (n_nationkey integer not null, n_name char(25) not null, n_regionkey integer not null, primary key (n_nationkey));
create table ts (s_suppkey integer not null, s_name char(25) not null, s_nationkey integer not null, s_phone char(15) not null, s_acctbal decimal(15,2) not null, s_comment varchar(101), primary key (s_suppkey));
create table tp (p_partkey integer not null, p_name varchar(55) not null, p_brand char(10) not null, p_type varchar(25) not null, p_size integer not null, p_container char(10) not null, primary key (p_partkey));
create table tps (ps_partkey integer not null, ps_suppkey integer not null, ps_availqty integer not null, ps_supplycost decimal(15,2) not null, primary key (ps_partkey, ps_suppkey));
create table tc (c_custkey integer not null, c_name varchar(25) not null, c_phone char(15), c_acctbal decimal(15,2), primary key (c_custkey));
create table tord (o_orderkey integer not null, o_custkey integer, o_orderstatus char(1) not null, o_orderdate date not null, o_orderpriority char(15) not null, o_comment varchar(79), primary key (o_orderkey));
create table tl (l_orderkey integer not null, l_partkey integer not null, l_suppkey integer, l_linenumber integer not null, l_quantity decimal(15,2) not null, l_extendedprice decimal(15,2) not null, l_discount decimal(15,2) not null, l_shipdate date not null, l_commitdate date not null, l_receiptdate date not null, l_shipinstruct char(25) not null, l_shipmode char(10) not null, primary key (l_orderkey, l_linenumber));
create table tempty (k integer not null, v decimal(15,2));

insert into tr values (0, 'AFRICA'), (1, 'AMERICA'), (2, 'EUROPE');
insert into tn values (0, 'ALGERIA', 0), (1, 'BRAZIL', 1), (2, 'CANADA', 1), (3, 'FRANCE', 2), (4, 'GERMANY', 2);
insert into ts values
  (1, 'Supplier#1', 3, '13-555-0101', 100.50, 'good'),
  (2, 'Supplier#2', 4, '31-555-0102', -20.00, 'Customer very Complaints here'),
  (3, 'Supplier#3', 1, '23-555-0103', 999.99, null),
  (4, 'Supplier#4', 2, '29-555-0104', 0.00, 'fine');
insert into tp values
  (1, 'forest green lace', 'Brand#12', 'SMALL PLATED BRASS', 5, 'SM BOX'),
  (2, 'navy forest tan', 'Brand#23', 'PROMO BURNISHED STEEL', 10, 'MED BOX'),
  (3, 'green misty rose', 'Brand#34', 'MEDIUM POLISHED TIN', 15, 'LG CASE'),
  (4, 'forest blush', 'Brand#45', 'ECONOMY BRASS', 15, 'SM PKG'),
  (5, 'azure puff', 'Brand#12', 'PROMO PLATED BRASS', 3, 'SM CASE');
insert into tps values
  (1, 1, 100, 10.00), (1, 2, 50, 9.50), (2, 1, 5, 20.25), (2, 3, 700, 20.25),
  (3, 4, 12, 1.10), (4, 2, 0, 3.00), (5, 1, 1000, 7.77), (5, 3, 1, 7.70);
insert into tc values
  (1, 'Customer#1', '13-111-2222', 500.00), (2, 'Customer#2', '31-333-4444', 7000.25),
  (3, 'Customer#3', '17-555-6666', -10.00), (4, 'Customer#4', null, 300.00),
  (5, 'Customer#5', '23-777-8888', null), (6, 'Customer#6', '30-999-0000', 9000.00);
insert into tord values
  (1, 1, 'F', '1993-07-05', '1-URGENT', 'quick special packages requests'),
  (2, 1, 'O', '1995-03-01', '2-HIGH', 'regular deposits'),
  (3, 2, 'F', '1994-06-30', '5-LOW', null),
  (4, null, 'F', '1996-01-15', '3-MEDIUM', 'special requests only'),
  (5, 3, 'P', '1993-09-30', '1-URGENT', 'ironic');
insert into tl values
  (1, 1, 1, 1, 5.00, 500.00, 0.05, '1993-07-10', '1993-07-20', '1993-07-25', 'DELIVER IN PERSON', 'AIR'),
  (1, 2, 2, 2, 15.00, 1520.50, 0.10, '1993-07-12', '1993-07-15', '1993-07-14', 'NONE', 'MAIL'),
  (1, 5, 3, 3, 2.00, 210.00, 0.00, '1993-08-01', '1993-08-02', '1993-08-10', 'DELIVER IN PERSON', 'AIR REG'),
  (2, 3, 4, 1, 25.00, 2600.00, 0.02, '1995-03-20', '1995-03-10', '1995-03-25', 'DELIVER IN PERSON', 'AIR'),
  (3, 1, 2, 1, 30.00, 3000.00, 0.04, '1994-07-01', '1994-07-05', '1994-07-30', 'TAKE BACK RETURN', 'SHIP'),
  (3, 4, 2, 2, 1.00, 101.00, 0.06, '1994-07-02', '1994-07-01', '1994-07-03', 'COLLECT COD', 'SHIP'),
  (4, 2, null, 1, 12.00, 1212.00, 0.07, '1996-01-20', '1996-01-25', '1996-01-22', 'DELIVER IN PERSON', 'AIR'),
  (5, 5, 1, 1, 8.00, 800.00, 0.01, '1993-10-01', '1993-09-30', '1993-10-05', 'NONE', 'RAIL');

-- Q4: EXISTS (select * ...) with a local condition beside the correlation.
select o_orderpriority, count(*) as order_count
from tord
where o_orderdate >= date '1993-07-01' and o_orderdate < date '1995-01-01'
  and exists (select * from tl where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
group by o_orderpriority
order by o_orderpriority;

-- Q21: EXISTS and NOT EXISTS correlated on one column with a non-equality
-- on another (NULL suppliers never differ).
select s_name, count(*) as numwait
from ts, tl l1, tord, tn
where s_suppkey = l1.l_suppkey
  and o_orderkey = l1.l_orderkey
  and o_orderstatus = 'F'
  and l1.l_receiptdate > l1.l_commitdate
  and exists (select * from tl l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
  and not exists (select * from tl l3 where l3.l_orderkey = l1.l_orderkey and l3.l_suppkey <> l1.l_suppkey
                  and l3.l_receiptdate > l3.l_commitdate)
  and s_nationkey = n_nationkey
group by s_name
order by numwait desc, s_name;
select l1.l_orderkey, l1.l_linenumber,
       exists (select * from tl l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey) as other
from tl l1 order by 1, 2;
select count(*) from tl where exists (select *, 1 / 0 from tempty where k = l_orderkey);
select count(*) from tl where not exists (select * from tempty where k = l_orderkey);

-- Q19: the join condition in every arm of an OR.
select sum(l_extendedprice * (1 - l_discount)) as revenue
from tl, tp
where (p_partkey = l_partkey and p_brand = 'Brand#12'
       and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
       and l_quantity >= 1 and l_quantity <= 1 + 10 and p_size between 1 and 5
       and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
   or (p_partkey = l_partkey and p_brand = 'Brand#23'
       and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
       and l_quantity >= 10 and l_quantity <= 10 + 10 and p_size between 1 and 10
       and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
   or (p_partkey = l_partkey and p_brand = 'Brand#34'
       and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
       and l_quantity >= 20 and l_quantity <= 20 + 10 and p_size between 1 and 15
       and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON');
-- An arm made only of the common conjunct absorbs the OR; NULLs stay NULL.
select l_orderkey, l_linenumber from tl, tp
where (p_partkey = l_partkey) or (p_partkey = l_partkey and l_suppkey = 1)
order by 1, 2;
select l_orderkey, l_linenumber from tl
where (l_suppkey = 2 and l_quantity > 1) or (l_quantity > 1 and l_suppkey is null)
order by 1, 2;
select (l_suppkey = 2 and l_quantity > 1) or (l_suppkey = 3 and l_quantity > 1) from tl order by l_orderkey, l_linenumber;
select count(*) from tl left join tp on (p_partkey = l_partkey and p_size > 5) or (p_partkey = l_partkey and p_size < 4);
select count(*) from tempty, tp where (k = p_partkey and v > 0) or (k = p_partkey and v is null);

-- Q2: the minimum cost among a region's suppliers, correlated per part.
select s_acctbal, s_name, n_name, p_partkey
from tp, ts, tps, tn, tr
where p_partkey = ps_partkey and s_suppkey = ps_suppkey and p_type like '%BRASS'
  and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = 'EUROPE'
  and ps_supplycost = (select min(ps_supplycost) from tps, ts, tn, tr
                       where p_partkey = ps_partkey and s_suppkey = ps_suppkey
                         and s_nationkey = n_nationkey and n_regionkey = r_regionkey
                         and r_name = 'EUROPE')
order by s_acctbal desc, n_name, s_name, p_partkey;

-- Q11: HAVING against an uncorrelated scalar aggregate.
select ps_partkey, sum(ps_supplycost * ps_availqty) as value
from tps, ts, tn
where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name in ('FRANCE', 'GERMANY')
group by ps_partkey
having sum(ps_supplycost * ps_availqty) > (select sum(ps_supplycost * ps_availqty) * 0.0001000000
                                           from tps, ts, tn
                                           where ps_suppkey = s_suppkey and s_nationkey = n_nationkey
                                             and n_name in ('FRANCE', 'GERMANY'))
order by value desc;
select k from tempty group by k having sum(v) > (select sum(v) from tempty);

-- Q17: a correlated average; parts without lines, lines without a part.
select sum(l_extendedprice) / 7.0 as avg_yearly
from tl, tp
where p_partkey = l_partkey and p_container in ('MED BOX', 'SM BOX')
  and l_quantity < (select 0.2 * avg(l_quantity) from tl where l_partkey = p_partkey);
select p_partkey, (select 0.2 * avg(l_quantity) from tl where l_partkey = p_partkey) from tp order by 1;
select sum(l_extendedprice) / 7.0 from tl, tp where p_partkey = l_partkey and p_brand = 'none';

-- Q20: IN over IN and a correlated sum on two keys.
select s_name from ts, tn
where s_suppkey in (select ps_suppkey from tps
                    where ps_partkey in (select p_partkey from tp where p_name like 'forest%')
                      and ps_availqty > (select 0.5 * sum(l_quantity) from tl
                                         where l_partkey = ps_partkey and l_suppkey = ps_suppkey
                                           and l_shipdate >= date '1993-01-01'))
  and s_nationkey = n_nationkey
order by s_name;

-- Q15: a view over an aggregate and the rows reaching its maximum.
create view trevenue (supplier_no, total_revenue) as
  select l_suppkey, sum(l_extendedprice * (1 - l_discount)) from tl
  where l_shipdate >= date '1993-07-01' group by l_suppkey;
select s_suppkey, s_name, s_phone, total_revenue
from ts, trevenue
where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from trevenue)
order by s_suppkey;
select * from trevenue order by supplier_no;
drop view trevenue;

-- Q16: count(distinct) with NOT IN over a LIKE.
select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
from tps, tp
where p_partkey = ps_partkey and p_brand <> 'Brand#45' and p_type not like 'MEDIUM POLISHED%'
  and p_size in (49, 14, 23, 45, 19, 3, 36, 9, 5, 10)
  and ps_suppkey not in (select s_suppkey from ts where s_comment like '%Customer%Complaints%')
group by p_brand, p_type, p_size
order by supplier_cnt desc, p_brand, p_type, p_size;
select count(distinct l_suppkey), count(l_suppkey), count(*) from tl;
select count(distinct k) from tempty;

-- Q13: LEFT JOIN with count of the nullable side, grouped twice.
select c_count, count(*) as custdist
from (select c_custkey, count(o_orderkey)
      from tc left outer join tord on c_custkey = o_custkey and o_comment not like '%special%requests%'
      group by c_custkey) as c_orders (c_custkey, c_count)
group by c_count
order by custdist desc, c_count desc;

-- Q22: substring(... from ... for ...), IN list, avg over a filter, NOT EXISTS.
select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
from (select substring(c_phone from 1 for 2) as cntrycode, c_acctbal
      from tc
      where substring(c_phone from 1 for 2) in ('13', '31', '23', '29', '30', '18', '17')
        and c_acctbal > (select avg(c_acctbal) from tc
                         where c_acctbal > 0.00
                           and substring(c_phone from 1 for 2) in ('13', '31', '23', '29', '30', '18', '17'))
        and not exists (select * from tord where o_custkey = c_custkey)) as custsale
group by cntrycode
order by cntrycode;
select substring(c_phone from 4 for 3), substring(c_phone from 0 for 2), substring(c_phone for 2),
       substring(c_phone from 13) from tc order by c_custkey;

-- Q8, Q12, Q14: CASE inside aggregates; numeric division's scale.
select sum(case when n_name = 'BRAZIL' then l_extendedprice * (1 - l_discount) else 0 end)
       / sum(l_extendedprice * (1 - l_discount)) as mkt_share
from tl, ts, tn where l_suppkey = s_suppkey and s_nationkey = n_nationkey;
select l_shipmode,
       sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count,
       sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end) as low_line_count
from tord, tl
where o_orderkey = l_orderkey and l_shipmode in ('MAIL', 'SHIP', 'AIR')
group by l_shipmode
order by l_shipmode;
select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
       / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
from tl, tp where l_partkey = p_partkey;
-- expect: error
select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice else 0 end)
       / sum(l_extendedprice * 0) from tl, tp where l_partkey = p_partkey;

-- Q18: IN over a grouped subquery with HAVING; char(n) and varchar(n) out.
select c_name, c_custkey, o_orderkey, o_orderdate, sum(l_quantity)
from tc, tord, tl
where o_orderkey in (select l_orderkey from tl group by l_orderkey having sum(l_quantity) > 20)
  and c_custkey = o_custkey and o_orderkey = l_orderkey
group by c_name, c_custkey, o_orderkey, o_orderdate
order by o_orderdate, o_orderkey;
select n_name, r_name, n_name || '|' from tn, tr where n_regionkey = r_regionkey order by n_name;
