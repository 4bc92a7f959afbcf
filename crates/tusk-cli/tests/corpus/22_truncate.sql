-- TRUNCATE (transactional: rolled back with its block), storage
-- parameters of CREATE TABLE, VACUUM ANALYZE of several tables.

create table tr1 (id int primary key, v text) with (fillfactor = 100);
create table tr2 (id int, v text) with (fillfactor = 70, autovacuum_enabled = false);
insert into tr1 select g, 'r' || g from generate_series(1, 50) g;
insert into tr2 select g, 's' || g from generate_series(1, 20) g;
truncate tr1;
select count(*) from tr1;
insert into tr1 values (1, 'again'), (2, 'two');
select * from tr1 order by id;
-- expect: error
insert into tr1 values (1, 'dup');
begin;
truncate table tr1, tr2 restart identity cascade;
select (select count(*) from tr1), (select count(*) from tr2);
insert into tr2 values (100, 'in block');
rollback;
select (select count(*) from tr1), (select count(*) from tr2);
select * from tr2 where id > 18 order by id;
begin;
truncate only tr2;
insert into tr2 values (7, 'after truncate');
commit;
select * from tr2;
truncate tr1, tr1 continue identity restrict;
select count(*) from tr1;
begin;
insert into tr1 values (5, 'a');
savepoint s;
truncate tr1;
insert into tr1 values (6, 'b');
rollback to s;
select * from tr1 order by id;
commit;
select * from tr1 order by id;
-- expect: error
truncate nosuch;
create view trv as select * from tr1;
-- expect: error
truncate trv;
-- expect: error
truncate tr1_pkey;
-- expect: error
truncate tr1, nosuch;
select count(*) from tr1;
-- expect: error
begin read only; truncate tr1;
rollback;
vacuum analyze tr1, tr2;
vacuum (analyze, verbose false) tr1;
vacuum analyze;
-- expect: error
vacuum analyze tr1, nosuch;
-- expect: error
create table bad1 (a int) with (fillfactor = 5);
-- expect: error
create table bad2 (a int) with (fillfactor = 101);
-- expect: error
create table bad3 (a int) with (nosuchparam = 1);
-- expect: error
create table bad4 (a int) with (fillfactor = 70, fillfactor = 80);
-- expect: error
create table bad5 (a int) with (fillfactor = 'abc');
-- expect: error
create table bad6 (a int) with (autovacuum_enabled = maybe);
-- expect: error
create table bad7 (a int) with (oids = true);
create table ok1 (a int) with (oids = false, fillfactor = 50.5, vacuum_index_cleanup = auto);
create table ok2 with (fillfactor = 90) as select g from generate_series(1, 3) g;
select count(*) from ok2;
