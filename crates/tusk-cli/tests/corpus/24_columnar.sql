-- Columnar tables (CREATE TABLE ... USING columnar). PostgreSQL 15 has no
-- columnar access method: the harness takes `USING columnar` out of the
-- statements it sends to PostgreSQL, so the same queries run over heap
-- tables there and must give the same answers.

-- Access method names.
-- expect: error
create table bad_am (a int) using nosuch;
-- expect: error
create table bad_am (a int) using btree;
create table heap_am (a int) using heap;
insert into heap_am values (1), (2);
select * from heap_am order by a;

-- Every type, NULLs, an empty table.
create table ct (
    i int, s smallint, b bigint, f float8, r real, n numeric, n2 numeric(12, 2),
    t text, v varchar(10), c char(4), d date, ts timestamp, tz timestamptz,
    tm time, iv interval, ok boolean
) using columnar;
select count(*), count(i), sum(i), min(t), max(d) from ct;
select * from ct;
insert into ct values
    (1, 1, 1, 1.5, 2.5, 1.25, 3.10, 'one', 'uno', 'a', '2024-01-31', '2024-01-31 10:00', '2024-01-31 10:00+02', '10:00', '1 day', true),
    (null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
    (-2147483648, -32768, -9223372036854775808, 'NaN', '-Infinity', -99999999999999999999.123456789, -0.01, '', '', '', '4713-11-24 BC', '1999-12-31 23:59:59.999999', 'infinity', '00:00', '-3 mons +2 days -00:00:01', false),
    (2147483647, 32767, 9223372036854775807, '-0', 'Infinity', 12345678901234567890.5, 9999999999.99, repeat('z', 300), 'ten chars.', 'abcd', '294276-12-31', '294276-12-31 23:59:59', '-infinity', '24:00', '178000000 years', null);
select * from ct order by i nulls first;
select count(*), count(t), count(ok), sum(n), sum(n2), min(f), max(f), min(r), max(r) from ct;
select i, length(t) from ct where t > 'y' order by i;
select i from ct where c = 'a' order by i;
select i from ct where c = 'a   ' order by i;
select i from ct where n2 between -1 and 5 order by i;
select i from ct where f = 'NaN';
select i from ct where f > 1e300 order by i;
select i from ct where ok is null order by i nulls first;
select i from ct where d < '2000-01-01' order by i;
select i, iv from ct where iv > '1 year' order by i;

-- Several row groups: statistics skip the ones a filter rules out.
create table big (id int, grp int, name text, amount numeric(12, 2), day date) using columnar;
insert into big
select g, g % 10, 'name ' || (g % 1000), g * 0.25, date '2000-01-01' + g / 1000
from generate_series(1, 300000) g;
select count(*), sum(id), sum(amount), min(day), max(day), count(distinct name) from big;
select id, grp, name, amount, day from big where id = 123456;
select count(*), sum(amount) from big where id between 150000 and 160000;
select count(*) from big where id < 0;
select count(*) from big where id > 299990;
select count(*) from big where id in (5, 105000, 205000, 299999, 400000);
select count(*) from big where day = '2000-08-01';
select count(*) from big where name = 'name 7';
select count(*) from big where name > 'name 998';
select count(*) from big where name in ('name 7', 'name 8', null, 'nothing');
select count(*), min(id) from big where name = 'name 7' and id > 150000;
select count(*) from big where name = 'name 7' or id = 3;
select count(*) from big where name <> 'name 7';
select count(*) from big where id is null;
select count(*) from big where id is not null and grp = 3;
select grp, count(*), sum(amount), min(name), max(day) from big group by grp order by grp;
select id from big where id % 50000 = 0 order by id;
select id from big order by id desc limit 3;
select id from big where id >= 299998 or id <= 2 order by id;
select count(*) from big where 1000 > id;
select count(*) from big where id = null;
-- Filters run before the other columns are read; errors still happen.
-- expect: error
select count(*) from big where 1 / (id - 200000) > 0;
select count(*) from big where id > 300000 and 1 / (id - 200000) > 0;

-- Small inserts land in the row-wise delta; scans read both.
insert into big values (0, 0, 'zero', 0, '2000-01-01');
insert into big values (-5, null, null, null, null), (300001, 1, 'last', 1.5, '2001-01-01');
select count(*), sum(id), min(id), max(id) from big;
select id, name from big where id < 1 or id > 300000 order by id;
select count(*) from big where grp is null;

-- Joins with heap tables, parallel plans and aggregates over columnar ones.
create table dim (grp int, label text);
insert into dim select g, 'group ' || g from generate_series(0, 9) g;
select d.label, count(*), sum(b.amount) from big b join dim d on d.grp = b.grp
where b.id between 1000 and 20000 group by d.label order by d.label;
select count(*) from big b where exists (select 1 from dim d where d.grp = b.grp and d.label like '%5');
select b1.id, b2.id from big b1 join big b2 on b2.id = b1.id + 1 where b1.id < 4 order by 1;

-- CREATE TABLE AS into a columnar table.
create table big2 using columnar as select id, name from big where id % 3 = 0;
select count(*), min(id), max(id) from big2;
create table small2 using columnar as select 1 as x, 'a'::text as y;
select * from small2;

-- TRUNCATE empties it, in a transaction too.
begin;
truncate big2;
select count(*) from big2;
rollback;
select count(*) from big2;
truncate big2;
select count(*) from big2;
insert into big2 select g, 'again' from generate_series(1, 50000) g;
select count(*), sum(id), min(name) from big2;
drop table big2;

-- COPY out of a columnar table (COPY FROM is in tusk-sql's tests).
create table cp (a int, b text) using columnar;
insert into cp values (1, 'one'), (2, null), (3, 'three');
copy cp to stdout;
copy (select * from cp order by a) to stdout with (format csv);

-- DELETE and UPDATE: rows of row groups and of the delta.
delete from big where id % 1000 = 7;
select count(*), sum(id) from big;
delete from big where id between 100000 and 100010 returning id, name;
select count(*) from big where id between 99990 and 100020;
delete from big where id < 1;
select count(*), min(id) from big;
update big set name = 'renamed', amount = amount + 1 where id in (1, 2, 150001, 300001);
select id, name, amount from big where name = 'renamed' or id in (1, 2, 150001, 300001) order by id;
update big set name = 'twice' where id = 1;
update big set name = name || '!' where id = 1;
select id, name from big where id = 1;
select count(*), sum(id), sum(amount) from big;
-- A row deleted twice in one statement counts once.
delete from big b using dim d where b.grp = d.grp and b.id < 20 returning b.id;
select count(*) from big where id < 20;
-- Deletions roll back with their transaction or savepoint.
begin;
delete from big where id > 200000;
select count(*) from big where id > 200000;
rollback;
select count(*) from big where id > 200000;
begin;
savepoint s;
delete from big where grp = 5;
select count(*) from big where grp = 5;
rollback to savepoint s;
delete from big where grp = 6;
commit;
select grp, count(*) from big where grp in (5, 6) group by grp order by grp;
-- Deleting while reading the same table.
delete from big where id in (select id + 1 from big where id % 10000 = 0);
select count(*), sum(id) from big;
-- VACUUM rewrites row groups that lost rows and compresses the delta.
vacuum big;
select count(*), sum(id), sum(amount) from big;
delete from big where id % 2 = 0;
vacuum big;
select count(*), sum(id), min(id), max(id) from big;
update big set name = 'v' where id % 1000 = 1;
vacuum big;
select count(*), sum(id) from big where name = 'v';
select count(*), sum(id), sum(amount), count(distinct name) from big;
insert into big select g, g % 10, 'new', g, '2001-01-01' from generate_series(300002, 320000) g;
vacuum big;
select count(*), sum(id), max(id) from big;
select id, name from big where id between 300000 and 300004 order by id;
-- Everything.
delete from big;
select count(*) from big;
insert into big values (1, 1, 'back', 1, '2000-01-01');
select * from big;
