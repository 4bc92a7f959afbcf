-- ANALYZE and the plans it changes: the statements PostgreSQL accepts and
-- refuses, and queries whose join order, build sides and estimates come
-- from the statistics (skewed values, NULLs, unique and composite keys, an
-- empty table, a many-way join ordered by dynamic programming). Also the
-- comparison of a date with a timestamp (`date + interval`), which tusk
-- compares as dates, at and around midnight and with infinite dates.

create table fact (id integer not null, dim1 integer, dim2 integer, k1 integer not null, k2 integer not null, amount decimal(15,2), day date, note varchar(20), primary key (id));
create table dim1 (d1 integer not null, label char(10), grp integer, primary key (d1));
create table dim2 (d2 integer not null, label varchar(10), primary key (d2));
create table pair (k1 integer not null, k2 integer not null, w integer, primary key (k1, k2));
create table lonely (x integer);
create table nothing (x integer, y text);

insert into dim1 select g, 'L' || (g % 7), g % 3 from generate_series(1, 50) g;
insert into dim2 select g, 'M' || (g % 5) from generate_series(1, 20) g;
insert into pair select a, b, a * b from generate_series(1, 10) a, generate_series(1, 10) b;
insert into fact select g,
  case when g % 10 = 0 then null else (g * 7) % 50 + 1 end,
  case when g % 3 = 0 then 1 else g % 20 + 1 end,
  g % 10 + 1, (g / 10) % 10 + 1,
  (g % 97) * 1.25,
  date '1994-01-01' + (g % 400),
  case when g % 4 = 0 then null else 'n' || (g % 13) end
  from generate_series(1, 3000) g;
insert into lonely values (1), (1), (1), (2), (null);

-- pg_class.reltuples: -1 until the table is analyzed, then its rows.
select relname, reltuples from pg_class where relname in ('fact', 'lonely', 'nothing') order by relname;
analyze;
select relname, reltuples from pg_class where relname in ('fact', 'dim1', 'dim2', 'pair', 'lonely', 'nothing') order by relname;
analyze fact;
analyze verbose dim1;
analyze fact (dim1, dim2), dim2 (label);
analyse pair;
analyze (verbose) lonely;
analyze nothing;
vacuum analyze pair;
-- expect: error
analyze missing_table;
-- expect: error
analyze fact (no_such_column);
-- expect: error
analyze fact (dim1, dim1);
begin;
analyze dim2;
commit;

-- Joins of every shape over the analyzed tables.
select count(*), sum(f.amount) from fact f join dim1 d on f.dim1 = d.d1 join dim2 e on f.dim2 = e.d2;
select d.grp, e.label, count(*), sum(f.amount) from fact f, dim1 d, dim2 e, pair p
  where f.dim1 = d.d1 and f.dim2 = e.d2 and f.k1 = p.k1 and f.k2 = p.k2 and p.w > 20
  group by d.grp, e.label order by d.grp, e.label;
select count(*) from fact f join pair p on f.k1 = p.k1 and f.k2 = p.k2 where f.day < date '1994-03-01';
select count(*) from fact f join dim1 d on f.dim1 = d.d1 where d.label = 'L3';
select count(*) from fact f left join dim1 d on f.dim1 = d.d1 where d.d1 is null;
select count(*) from fact f where f.dim2 = 1;
select count(*) from fact f where f.note like 'n1%';
select count(*) from fact f where f.note not like '%2';
select count(*) from fact f where f.dim1 in (1, 2, 3, 49) and f.dim2 <> 1;
select count(*) from fact f where f.amount between 10 and 20;
select count(*) from fact f where f.dim1 is null;
select count(*) from fact f, nothing n where f.id = n.x;
select count(*) from fact f where exists (select 1 from lonely l where l.x = f.dim1);
select count(*) from fact f where not exists (select 1 from lonely l where l.x = f.dim1);
select count(*) from fact f where f.dim1 in (select x from lonely);
select l.x, count(*) from lonely l join fact f on f.dim1 = l.x group by l.x order by l.x;
select count(*) from dim1 a, dim1 b, dim2 c, dim2 d, pair e, lonely f, fact g, nothing h, dim1 i
  where a.d1 = b.d1 and b.grp = c.d2 and c.d2 = d.d2 and d.d2 = e.k1 and e.k2 = f.x and f.x = g.dim1 and g.id = h.x and h.x = i.d1;
select count(*) from dim1 a, dim1 b, dim2 c, dim2 d, pair e, lonely f, fact g, dim1 i, dim2 j, pair k, dim1 m, dim2 n
  where a.d1 = b.d1 and b.grp = c.d2 and c.d2 = d.d2 and d.d2 = e.k1 and e.k2 = f.x and f.x = g.dim1
    and g.dim1 = i.d1 and i.grp = j.d2 and j.d2 = k.k1 and k.k2 = m.grp and m.d1 = n.d2;
-- Correlated aggregates over a selective outer leaf: the aggregation's
-- input is first semi-joined to that leaf (NULL keys, groups without rows,
-- counts of missing groups, several keys).
select d.d1, d.label from dim1 d where d.grp = 0 and (select count(*) from fact f where f.dim1 = d.d1) > 50 order by 1;
select d.d1, (select sum(amount) from fact f where f.dim1 = d.d1) from dim1 d where d.d1 < 5 order by 1;
select count(*), sum(f.amount) from fact f, dim1 d where f.dim1 = d.d1 and d.grp = 1 and f.amount > (select avg(f2.amount) from fact f2 where f2.dim1 = d.d1);
select d.d1, (select count(*) from fact f where f.dim1 = d.d1 and f.amount > 1000) from dim1 d where d.d1 <= 3 order by 1;
select p.k1, p.k2, p.w from pair p where p.w > 90 and p.w < (select 40 * count(*) from fact f where f.k1 = p.k1 and f.k2 = p.k2) order by 1, 2;
select count(*) from lonely l where l.x < (select max(f.dim1) from fact f where f.dim1 = l.x);
select e.d2 from dim2 e where e.label = 'M1' and (select count(*) from fact f where f.dim2 = e.d2) = 0 order by 1;
-- Columns only a subquery's select list names are not read.
select count(*) from (select f.id, f.note, f.amount / 0 as boom from fact f) s where s.id < 10;
select a from (select f.id as a, random() as r from fact f) s where a = 5;

-- Statistics of a table whose rows then change are only hints.
delete from fact where id > 2000;
select count(*), count(dim1) from fact f join dim1 d on f.dim1 = d.d1;
truncate dim2;
select count(*) from fact f join dim2 e on f.dim2 = e.d2;
analyze dim2;
select count(*) from fact f left join dim2 e on f.dim2 = e.d2;

-- A date against a timestamp: d::timestamp op t, compared as dates.
create table days (d date);
insert into days values ('1994-12-31'), ('1995-01-01'), ('1995-01-02'), ('infinity'), ('-infinity'), (null);
select d from days where d < date '1994-01-01' + interval '1' year order by d;
select d from days where d <= date '1994-01-01' + interval '1' year order by d;
select d from days where d > date '1994-01-01' + interval '1' year order by d;
select d from days where d >= date '1994-01-01' + interval '1' year order by d;
select d from days where d < timestamp '1995-01-01 12:00' order by d;
select d from days where d <= timestamp '1995-01-01 12:00' order by d;
select d from days where d > timestamp '1995-01-01 12:00' order by d;
select d from days where d >= timestamp '1995-01-01 12:00' order by d;
select d from days where timestamp '1995-01-01 12:00' > d order by d;
select d from days where timestamp '1995-01-01 00:00' <= d order by d;
select d from days where d = timestamp '1995-01-01 00:00' order by d;
select d from days where d < timestamp 'infinity' order by d;
select d from days where d > timestamp '-infinity' order by d;
select d, d < date '1995-01-01' + interval '1 hour' from days order by d;
