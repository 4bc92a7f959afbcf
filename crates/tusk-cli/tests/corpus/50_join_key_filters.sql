-- Join key filters: a hash join whose probe side is a columnar scan hands
-- its build keys down to the scan, which drops rows whose keys cannot
-- match before the join sees them (inner, right, semi, right semi, right
-- anti joins; never left, full, anti or mark joins, which keep unmatched
-- probe rows). The answers must not change: NULL keys, duplicate keys on
-- both sides, widened integer keys, text and char(n) keys (trailing
-- blanks), two keys, a join filter beside the key, an empty build side, a
-- subplan that runs its join again with other keys, and (in the
-- differential test's other runs) spilled and parallel plans. Also the
-- dictionary test of `char(n)` columns against `=` / IN constants.

create table probe (k int, k2 smallint, k8 bigint, code char(6), tag text, v int) using columnar;
insert into probe
select g % 5000, (g % 700)::smallint, g % 5000,
       case g % 4 when 0 then 'AB' when 1 then 'AB  ' when 2 then 'CD' else 'E F' end,
       't' || (g % 37), g
from generate_series(1, 60000) g;
insert into probe select null, null, null, null, null, g from generate_series(1, 500) g;
create table dim (k int, k2 int, k8 bigint, code char(6), tag text, name text) using columnar;
insert into dim select g * 50, g * 50 % 700, g * 50, 'AB', 't' || g, 'd' || g from generate_series(1, 40) g;
insert into dim select g * 50, g * 50 % 700, g * 50, 'CD', 't3', 'dup' || g from generate_series(1, 5) g;
insert into dim values (null, null, null, null, null, 'null key'), (99999, 1, 99999, 'XY', 'none', 'no match');
create table nothing (k int, k2 int, code char(6)) using columnar;
analyze probe;
analyze dim;
analyze nothing;

-- Inner joins.
select count(*), sum(p.v), count(distinct d.name) from probe p join dim d on p.k = d.k;
select d.name, count(*), sum(p.v) from probe p join dim d on p.k = d.k group by d.name order by d.name;
select count(*), sum(p.v) from probe p join dim d on p.k = d.k and p.v > d.k2 * 40;
select count(*), sum(p.v) from probe p join dim d on p.k = d.k and p.k2 = d.k2;
select count(*), sum(p.v) from probe p join dim d on p.k8 = d.k;
select count(*), sum(p.v) from probe p join dim d on p.k2 = d.k2;
select count(*), sum(p.v) from probe p join dim d on p.tag = d.tag;
select count(*), sum(p.v) from probe p join dim d on p.code = d.code;
select count(*), sum(p.v) from probe p join dim d on p.code = d.code and p.k = d.k;
select count(*) from probe p join nothing n on p.k = n.k;
select count(*) from probe p join dim d on p.k = d.k where d.name = 'nobody';

-- Semi joins (EXISTS, IN) and right semi / right anti joins.
select count(*), sum(v) from probe p where exists (select 1 from dim d where d.k = p.k);
select count(*), sum(v) from probe where k in (select k from dim);
select count(*), sum(v) from probe where (k, k2) in (select k, k2 from dim);
select count(*), sum(v) from probe p
where exists (select 1 from dim d where d.k = p.k and d.name <> 'd' || (p.k / 50));
select count(*) from probe p where exists (select 1 from nothing n where n.k = p.k);
select count(*), sum(k) from dim d where exists (select 1 from probe p where p.k = d.k);
select count(*), sum(k) from dim d where not exists (select 1 from probe p where p.k = d.k);
select name from dim d where not exists (select 1 from probe p where p.k = d.k) order by name;
select count(*), sum(k) from dim d
where exists (select 1 from probe p where p.k = d.k and p.v <> d.k);
select count(*), sum(k) from dim d
where not exists (select 1 from probe p where p.k = d.k and p.v % 7 <> 0);

-- Kinds that keep unmatched probe rows: nothing may be dropped.
select count(*), sum(v) from probe p where not exists (select 1 from dim d where d.k = p.k);
select count(*), sum(v) from probe where k not in (select k from dim where k is not null);
select count(*), count(d.name), sum(p.v) from probe p left join dim d on p.k = d.k;
select count(*), count(p.v), count(d.name) from probe p right join dim d on p.k = d.k;
select count(*), count(p.v), count(d.name) from probe p full join dim d on p.k = d.k;
select count(*), count(n.k) from probe p left join nothing n on p.k = n.k;

-- A subplan that runs its join again for each outer row, with other keys.
select d.name,
       (select count(*) from probe p join dim d2 on p.k = d2.k where d2.k2 = d.k2)
from dim d order by d.name;

-- char(n) columns against constants: the dictionary test ignores
-- trailing blanks as `=` does, a text comparison does not.
select count(*) from probe where code = 'AB';
select count(*) from probe where code = 'AB    ';
select count(*) from probe where code in ('AB', 'CD  ', 'zz');
select count(*) from probe where code in ('E F', 'E F ');
select count(*) from probe where code::text = 'AB';
select count(*) from probe where code::text in ('AB  ', 'CD');
select count(*) from probe where code = '';
select count(*) from probe where code is null;
select code, count(*) from probe where code in ('AB', 'E F') group by code order by code;
