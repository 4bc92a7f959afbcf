-- Semi and anti joins (EXISTS, NOT EXISTS, IN) whose condition reads one
-- table of a region of inner joins: the planner either joins them to that
-- table before the region's joins or applies them above the region, after
-- joins that drop most rows (TPC-H Q21's shape), whichever costs less; and
-- semi and anti index nested loops costed as stopping at a row's first
-- match. The answers must not depend on where the join runs: NULL keys,
-- duplicate keys, a `<>` join filter beside the key, inner scans with
-- filters, and empty inputs.

create table fact (ok int, part int, sup int, d1 int, d2 int, note text);
insert into fact select g / 4, g % 97, g % 13, g % 5, g % 7, 'n' || g from generate_series(0, 19999) g;
insert into fact values (null, 1, 1, 1, 1, 'null ok'), (null, null, null, null, null, 'all null'),
  (5, null, 2, 3, 1, 'null sup part'), (5, 3, null, 1, 2, 'null sup');
create index fact_ok on fact (ok);
create table sup (sk int, nk int, name text);
insert into sup select g, g % 5, 'sup' || g from generate_series(0, 12) g;
insert into sup values (null, 1, 'null sup');
create table nat (nk int, name text);
insert into nat values (0, 'zero'), (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four'), (null, 'none');
create table ord (ok int, status text);
insert into ord select g, case when g % 3 = 0 then 'F' else 'O' end from generate_series(0, 4999) g;
insert into ord values (null, 'F'), (7, 'F');
create index ord_ok on ord (ok);
create table empty_fact (ok int, sup int, d1 int, d2 int);
analyze fact;
analyze sup;
analyze nat;
analyze ord;
analyze empty_fact;

-- Q21's shape: a selective region over the fact table, then EXISTS and NOT EXISTS
-- on the fact table's key with a `<>` filter
select s.name, count(*) from sup s, fact f1, ord o, nat n
where s.sk = f1.sup and o.ok = f1.ok and o.status = 'F' and f1.d2 > f1.d1
  and exists (select * from fact f2 where f2.ok = f1.ok and f2.sup <> f1.sup)
  and not exists (select * from fact f3 where f3.ok = f1.ok and f3.sup <> f1.sup and f3.d2 > f3.d1)
  and s.nk = n.nk and n.name = 'two'
group by s.name order by 2 desc, 1;
-- the same with the subqueries' filters reversed and no NOT EXISTS
select s.name, count(*) from sup s, fact f1, nat n
where s.sk = f1.sup and s.nk = n.nk and n.name in ('one', 'three')
  and exists (select * from fact f2 where f2.ok = f1.ok and f2.sup <> f1.sup and f2.d1 < f2.d2)
group by s.name order by 1;
-- NOT EXISTS alone, and IN, over the region
select count(*), count(f1.ok), sum(f1.sup) from sup s join fact f1 on f1.sup = s.sk join nat n on n.nk = s.nk
where n.name = 'four' and not exists (select 1 from fact f2 where f2.ok = f1.ok and f2.part <> f1.part);
select s.name, count(*) from sup s join fact f1 on f1.sup = s.sk
where s.nk = 3 and f1.ok in (select o.ok from ord o where o.status = 'O') group by s.name order by 1;
select s.name, count(*) from sup s join fact f1 on f1.sup = s.sk
where s.nk = 3 and f1.ok not in (select o.ok from ord o where o.status = 'O' and o.ok is not null)
group by s.name order by 1;
-- a region that multiplies rows: the semi join is better run first
select count(*) from fact f1 join sup s on s.nk = f1.d1
where exists (select 1 from ord o where o.ok = f1.ok and o.status = 'F');
-- semi and anti index nested loops over an inner scan with a filter
select o.status, count(*) from ord o
where o.ok between 100 and 400 and exists (select 1 from fact f where f.ok = o.ok and f.d1 < f.d2)
group by o.status order by 1;
select o.status, count(*) from ord o
where o.ok between 100 and 400 and not exists (select 1 from fact f where f.ok = o.ok and f.d1 < f.d2)
group by o.status order by 1;
select count(*) from ord o where o.ok is null and exists (select 1 from fact f where f.ok = o.ok);
select count(*) from ord o where o.ok is null and not exists (select 1 from fact f where f.ok = o.ok);
-- index nested loops probed by the rows of a join that drops most of its
-- scan's rows (the probes share the scan's pages: PostgreSQL's loop count)
select o.status, count(*), sum(f.part), count(f.sup) from ord o join nat n on n.nk = o.ok % 5
join fact f on f.ok = o.ok where n.name = 'two' and f.d1 < f.d2 group by o.status order by 1;
select o.status, count(*), count(f.ok) from ord o join nat n on n.nk = o.ok % 5
left join fact f on f.ok = o.ok and f.sup = 3 where n.name in ('one', 'none') group by o.status order by 1;
select n.name, count(*) from ord o join nat n on n.nk = o.ok % 5
where exists (select 1 from fact f where f.ok = o.ok and f.sup > 10) group by n.name order by 1;
-- empty inputs on each side
select count(*) from sup s join empty_fact f1 on f1.sup = s.sk
where exists (select 1 from fact f2 where f2.ok = f1.ok and f2.sup <> f1.sup);
select s.name, count(*) from sup s join fact f1 on f1.sup = s.sk join nat n on n.nk = s.nk
where n.name = 'two' and not exists (select 1 from empty_fact e where e.ok = f1.ok)
group by s.name order by 1;
select count(*) from sup s join fact f1 on f1.sup = s.sk
where s.nk = 2 and exists (select 1 from empty_fact e where e.ok = f1.ok);
-- with hash joins off, every semi and anti join runs as a nested loop
set enable_hashjoin = off;
select s.name, count(*) from sup s, fact f1, ord o, nat n
where s.sk = f1.sup and o.ok = f1.ok and o.status = 'F' and f1.d2 > f1.d1
  and exists (select * from fact f2 where f2.ok = f1.ok and f2.sup <> f1.sup)
  and not exists (select * from fact f3 where f3.ok = f1.ok and f3.sup <> f1.sup and f3.d2 > f3.d1)
  and s.nk = n.nk and n.name = 'two'
group by s.name order by 2 desc, 1;
select o.status, count(*) from ord o
where o.ok between 100 and 400 and not exists (select 1 from fact f where f.ok = o.ok and f.d1 < f.d2)
group by o.status order by 1;
reset enable_hashjoin;
