-- Hash joins below a Gather whose build side is not parallel-safe (a
-- nested loop of two small scans that meet only in an OR, TPC-H Q7's
-- shape): every participant builds the whole table for its share of the
-- probe side (in the differential test's parallel runs), and the answers
-- must be the serial ones: NULL keys, duplicate build rows, an empty build
-- side, a join filter, a semi and an anti join over such a join.

create table fact (id int, a int, c int, v int) using columnar;
insert into fact select g, g % 25, g % 5000, g % 1000 from generate_series(1, 60000) g;
insert into fact select g, null, g % 5000, 1 from generate_series(1, 300) g;
insert into fact select g, g % 25, null, 2 from generate_series(1, 300) g;
create table cust (id int, nat int);
insert into cust select g, (g / 25) % 25 from generate_series(0, 4999) g;
insert into cust values (7, 3), (null, 1);
create table nat (id int, name text, region int);
insert into nat select g, 'n' || g, g % 5 from generate_series(0, 24) g;
insert into nat values (3, 'n3 again', 3), (null, 'no id', 0);
analyze fact;
analyze cust;
analyze nat;

select n1.name, n2.name, count(*), sum(f.v)
from fact f, cust, nat n1, nat n2
where f.a = n1.id and f.c = cust.id and cust.nat = n2.id
  and ((n1.name = 'n1' and n2.name = 'n2') or (n1.name = 'n2' and n2.name = 'n1')
       or (n1.name like 'n3%' and n2.name = 'n4'))
group by n1.name, n2.name order by n1.name, n2.name;

select count(*), sum(f.v)
from fact f, cust, nat n1, nat n2
where f.a = n1.id and f.c = cust.id and cust.nat = n2.id and f.v > n1.region * 100
  and ((n1.region = 1 and n2.region = 2) or (n1.region = 2 and n2.region = 1));

select count(*)
from fact f, cust, nat n1, nat n2
where f.a = n1.id and f.c = cust.id and cust.nat = n2.id
  and ((n1.name = 'none' and n2.name = 'n2') or (n1.name = 'n2' and n2.name = 'none'));

select count(*) from cust c
where exists (select 1 from fact f, nat n1, nat n2
              where f.c = c.id and f.a = n1.id and n2.id = c.nat
                and ((n1.region = 1 and n2.region = 2) or (n1.region = 2 and n2.region = 1)))
  and c.id < 1000;

select count(*) from cust c
where not exists (select 1 from fact f, nat n1, nat n2
                  where f.c = c.id and f.a = n1.id and n2.id = c.nat
                    and ((n1.region = 1 and n2.region = 2) or (n1.region = 2 and n2.region = 1)));
