-- Values of any size (TOAST): long text compressed inline, moved out of
-- line, or both, through INSERT, UPDATE, DELETE, ON CONFLICT, scans,
-- joins, grouping, sorting (spilled under a small work_mem) and indexes.
-- Values are shown by length, md5 and their ends. NULLs, empty strings,
-- duplicates, rolled-back changes and errors.

create table tl (id int primary key, k text, a text, b varchar(100000));

-- Compressible out of line, incompressible-ish out of line, compressed
-- inline, short, empty and NULL values.
insert into tl values
  (1, 'k1', repeat('abcdefgh', 50000), 'short'),
  (2, 'k2', repeat('0123456789', 300), repeat('z', 40000)),
  (3, 'k1', '', null),
  (4, null, null, repeat('xy', 3000)),
  (5, 'k3', repeat('abcdefgh', 50000), repeat('0123456789', 300));
insert into tl select 10 + i, 'k' || (i % 3), string_agg(md5(i::text || j::text), '' order by j), null
  from generate_series(1, 4) i, generate_series(1, 400) j group by i;
insert into tl select 20 + i, null, repeat(chr(64 + i), 1000 * i), repeat('q', i)
  from generate_series(1, 20) i;

select id, k, length(a), md5(a), left(a, 10), right(a, 10), length(b), md5(b)
  from tl order by id;
select count(*), count(a), count(b), sum(length(a)), sum(length(b)) from tl;

-- Comparisons, joins and grouping on the long values.
select t1.id, t2.id from tl t1 join tl t2 on t1.a = t2.a and t1.id < t2.id order by 1, 2;
select md5(a), count(*), min(id), max(id) from tl group by a order by 2 desc, 3;
select k, count(*), sum(length(a)), max(md5(a)) from tl group by k order by k nulls first;
select id from tl where a like 'abcdefgh%' and b like '%short%' order by id;
select id, strpos(a, '9012') from tl where a like '%789%' order by id;
select count(distinct a), count(distinct b) from tl;

-- Sorting long values (spills under a small work_mem).
select id, length(a) from tl order by a, id;
select id, md5(a || coalesce(b, '')) from tl order by a || coalesce(b, ''), id;

-- An index on a short expression of a long value, and an index scan.
create index tl_k on tl (k);
select id, length(a) from tl where k = 'k1' order by id;

-- UPDATE of toasted rows: grow, shrink, keep, set NULL.
update tl set a = a || a where id = 1;
update tl set a = 'small now' where id = 2;
update tl set b = null where id = 5;
update tl set k = 'k9' where id = 11;
select id, k, length(a), md5(a), length(b) from tl where id in (1, 2, 5, 11) order by id;

-- Changes rolled back leave the old values readable.
begin;
update tl set a = repeat('r', 70000) where id <= 5;
delete from tl where id > 20;
select count(*), sum(length(a)) from tl;
rollback;
select count(*), sum(length(a)), md5(string_agg(coalesce(a, '-'), ',' order by id)) from tl;

-- DELETE, then new rows.
delete from tl where id between 21 and 30;
insert into tl select 100 + i, 'n', repeat(i::text, 20000), repeat('b', 10 * i)
  from generate_series(1, 5) i;
select id, length(a), md5(a), length(b) from tl where id > 30 order by id;

-- ON CONFLICT reading and writing long values.
insert into tl values (1, 'c', 'new', null) on conflict (id) do update
  set a = left(tl.a, 5) || excluded.a || right(tl.a, 5) where length(tl.a) > 100000;
insert into tl values (3, 'c', repeat('w', 60000), 'b') on conflict (id) do update
  set a = excluded.a, b = tl.b || excluded.b;
insert into tl values (4, 'c', repeat('v', 60000), null) on conflict (id) do nothing;
select id, k, length(a), md5(a), b from tl where id in (1, 3, 4) order by id;

-- Errors: a duplicate key, a value too long for its type.
-- expect: error
insert into tl values (5, 'dup', repeat('d', 50000), null);
-- expect: error
insert into tl values (200, 'x', 'a', repeat('b', 100001));
select count(*) from tl;

-- A wide table of several long values in one row.
create table tw (a text, b text, c text, d text);
insert into tw select repeat('a', 3000), repeat('b', 3000), repeat('c', 3000), repeat('d', 3000);
insert into tw select string_agg(md5(j::text), ''), string_agg(md5((j + 1)::text), ''),
  string_agg(md5((j + 2)::text), ''), 'short' from generate_series(1, 200) j;
insert into tw values (null, '', repeat('e', 100), null);
select length(a), length(b), length(c), length(d), md5(a || b || c || coalesce(d, ''))
  from tw order by 1 nulls first;
update tw set d = a || b where d = 'short';
select length(d), md5(d) from tw order by 1 nulls first;
delete from tw where length(a) > 5000;
select count(*) from tw;

drop table tw;
drop table tl;
