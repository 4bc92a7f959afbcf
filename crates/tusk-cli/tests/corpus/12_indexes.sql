-- Btree indexes: CREATE INDEX, lookups and ranges through the index,
-- INSERT maintenance, DELETE + VACUUM, DROP INDEX, and their errors.

create table acct (id int not null, owner bigint, note text);
insert into acct select g, g % 50, 'n' || g from generate_series(1, 3000) g;
create index acct_id_idx on acct (id);
create index on acct (owner);
create index acct_owner_idx2 on acct using btree (owner);
-- expect: error
create index acct_id_idx on acct (owner);
-- expect: error
create index bad on acct (nosuch);
-- expect: error
create index bad on nosuch (id);
-- expect: error
create table acct_owner_idx (x int);
-- equality, ranges, BETWEEN, constants on the left
select * from acct where id = 17;
select id, note from acct where id between 100 and 110 order by id;
select count(*) from acct where id < 25;
select count(*) from acct where id >= 2990;
select count(*) from acct where 40 > id;
select count(*), min(id), max(id) from acct where owner = 7;
select count(*) from acct where owner between 10 and 12 and note like 'n1%';
select count(*) from acct where id = 17 and id = 18;
select count(*) from acct where id > 5 and id < 3;
-- INSERT keeps the indexes current (VALUES and SELECT)
insert into acct values (17, 99, 'dup'), (5000, null, 'no owner');
insert into acct select id + 10000, owner, note from acct where id <= 10;
select id, owner, note from acct where id = 17 order by note;
select count(*) from acct where id >= 10000;
select count(*) from acct where owner = 99;
-- DELETE leaves dead rows the index still points at; they are never returned
delete from acct where id % 3 = 0;
select count(*) from acct where id between 1 and 300;
select count(*) from acct where owner = 9;
vacuum acct;
select count(*) from acct;
select count(*) from acct where id between 1 and 300;
select id from acct where id between 10 and 20 order by id;
-- space freed by VACUUM is reused; the index sees the new rows
insert into acct select g, g % 7, 'again' from generate_series(20001, 21000) g;
select count(*) from acct where id > 20000;
select count(*) from acct where owner = 3 and note = 'again';
vacuum;
select count(*) from acct where id <= 3000;
-- DROP INDEX
drop index acct_owner_idx2;
-- expect: error
drop index acct_owner_idx2;
drop index if exists acct_owner_idx2;
-- expect: error
drop index acct;
select count(*) from acct where owner = 3;
-- a table created by CREATE TABLE AS has no index; one can be added
create table acct2 as select * from acct where id < 100;
create index acct2_id on acct2 (id);
select count(*) from acct2 where id between 10 and 19;
drop table acct;
-- expect: error
select count(*) from acct where id = 1;
create index acct_id_idx on acct2 (owner);
select count(*) from acct2 where owner = 5;
