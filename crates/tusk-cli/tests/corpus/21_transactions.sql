-- Transaction blocks in one session: BEGIN / COMMIT / ROLLBACK and their
-- aliases, savepoints, failed blocks, READ ONLY, SET TRANSACTION, DDL
-- inside blocks, row locks in one session, strings of several statements
-- (one implicit transaction). Warnings are not compared, errors are.

create table tb (id int not null, v text);
begin;
insert into tb values (1, 'a');
select * from tb;
rollback;
select count(*) from tb;
start transaction;
insert into tb values (1, 'a'), (2, 'b');
update tb set v = v || '!' where id = 2;
end;
select * from tb order by id;
begin work;
delete from tb where id = 1;
abort;
select * from tb order by id;

-- A failed statement fails the block until it ends; COMMIT rolls back.
begin;
insert into tb values (3, 'c');
-- expect: error
select 1 / 0;
-- expect: error
select * from tb;
-- expect: error
insert into tb values (4, 'd');
-- expect: error
savepoint s;
commit;
select * from tb order by id;

-- Savepoints.
begin;
insert into tb values (3, 'c');
savepoint one;
insert into tb values (4, 'd');
savepoint two;
delete from tb;
select count(*) from tb;
rollback to savepoint two;
select * from tb order by id;
rollback to one;
select * from tb order by id;
insert into tb values (5, 'e');
release savepoint one;
commit;
select * from tb order by id;
begin;
savepoint a;
-- expect: error
insert into tb values (null, 'x');
-- expect: error
select 1;
rollback to a;
select count(*) from tb;
savepoint b;
-- expect: error
release c;
-- expect: error
rollback to c;
rollback to b;
release b;
release a;
commit;
-- expect: error
savepoint x;
-- expect: error
release savepoint x;
-- expect: error
rollback to savepoint x;

-- Transactional DDL.
begin;
create table tb2 (x int);
insert into tb2 values (1), (2);
create index tb2_x on tb2 (x);
select * from tb2 where x = 2;
rollback;
-- expect: error
select * from tb2;
begin;
create table tb2 (x int);
insert into tb2 select g from generate_series(1, 5) g;
savepoint s;
drop table tb2;
-- expect: error
select * from tb2;
rollback to s;
select count(*) from tb2;
create view tb2_v as select x * 10 as y from tb2;
commit;
select * from tb2_v order by y;
begin;
drop view tb2_v;
drop table tb2;
commit;
-- expect: error
select * from tb2;

-- READ ONLY and SET TRANSACTION.
begin read only;
select count(*) from tb;
-- expect: error
insert into tb values (9, 'x');
rollback;
start transaction read only;
-- expect: error
update tb set v = 'x';
rollback;
begin transaction read only;
-- expect: error
delete from tb;
rollback;
begin read only;
-- expect: error
create table tb3 (x int);
rollback;
begin read only;
-- expect: error
select * from tb for update;
rollback;
begin;
set transaction read only;
show transaction_read_only;
-- expect: error
insert into tb values (9, 'x');
rollback;
begin isolation level repeatable read;
show transaction_isolation;
select count(*) from tb;
-- expect: error
set transaction isolation level read committed;
rollback;
begin;
set transaction isolation level repeatable read, read only;
show transaction_isolation;
show transaction_read_only;
commit;
begin;
savepoint s;
-- expect: error
set transaction isolation level repeatable read;
rollback;
begin read only;
select 1;
-- expect: error
set transaction read write;
rollback;
show transaction_isolation;
set default_transaction_isolation = 'repeatable read';
show default_transaction_isolation;
begin;
show transaction_isolation;
commit;
reset default_transaction_isolation;
set default_transaction_read_only = on;
-- expect: error
insert into tb values (9, 'x');
begin read write;
insert into tb values (9, 'x');
commit;
reset default_transaction_read_only;
delete from tb where id = 9;
set transaction isolation level repeatable read;
begin isolation level read committed;
show transaction_isolation;
commit;

-- Settings in a block follow its outcome.
begin;
set lock_timeout = '1s';
show lock_timeout;
rollback;
show lock_timeout;
begin;
set lock_timeout = '2s';
savepoint s;
set lock_timeout = '3s';
rollback to s;
show lock_timeout;
commit;
show lock_timeout;
reset lock_timeout;
set local lock_timeout = '1s';
show lock_timeout;
begin;
set local lock_timeout = '2s';
show lock_timeout;
commit;
show lock_timeout;
begin;
set lock_timeout = '3s';
set local lock_timeout = '2s';
show lock_timeout;
commit;
show lock_timeout;
begin;
set local lock_timeout = '2s';
set lock_timeout = '4s';
commit;
show lock_timeout;
begin;
savepoint s;
set lock_timeout = '5s';
rollback to s;
set local lock_timeout = '6s';
commit;
show lock_timeout;
reset lock_timeout;
set local lock_timeout = '1s'; show lock_timeout;

-- Row locks and LOCK TABLE in one session.
begin;
select * from tb order by id for update;
select id from tb where id = 2 for no key update;
select id from tb where id > 2 order by id for share limit 1;
select id from tb order by id for key share skip locked limit 2 offset 1;
select id from tb order by id for update nowait;
update tb set v = 'locked' where id = 3;
select t.id from tb t where t.id = 3 for update of t;
-- expect: error
select id from tb for update of nosuch;
rollback;
begin;
-- expect: error
select count(*) from tb for update;
rollback;
begin;
-- expect: error
select distinct id from tb for share;
rollback;
begin;
-- expect: error
select id from tb group by id for update;
rollback;
begin;
-- expect: error
select * from tb a left join tb b on a.id = b.id + 100 for update;
rollback;
begin;
lock table tb in share mode;
lock tb in row exclusive mode nowait;
lock table tb;
select count(*) from tb;
commit;
-- expect: error
lock table tb;
-- expect: error
lock table nosuch in share mode;

-- Strings of several statements run as one transaction.
insert into tb values (10, 'x'); insert into tb values (11, 'y');
select count(*) from tb;
-- expect: error
insert into tb values (12, 'z'); select 1 / 0;
select count(*) from tb;
-- expect: error
insert into tb values (12, 'z'); commit; select 1 / 0;
select count(*) from tb;
begin; insert into tb values (13, 'w'); commit;
select count(*) from tb;
-- expect: error
insert into tb values (14, 'v'); vacuum tb;
vacuum tb;
-- expect: error
begin; vacuum tb;
rollback;
select * from tb order by id;
