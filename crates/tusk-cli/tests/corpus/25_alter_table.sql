-- ALTER TABLE: constraints added to tables with rows (and checked against
-- them), columns added, dropped, renamed and retyped, several actions in
-- one statement, ALTER INDEX ... RENAME; the table's new shape after each.

-- ADD PRIMARY KEY: duplicates are reported before NULLs, as PostgreSQL
-- builds the index first
create table acct (aid int, bid int, abalance int, filler text);
insert into acct values (1, 1, 0, 'x'), (1, 1, 5, 'y'), (null, 2, 0, 'z');
-- expect: error
alter table acct add primary key (aid);
delete from acct where abalance = 5;
-- expect: error
alter table acct add primary key (aid);
delete from acct where aid is null;
-- expect: error
alter table acct add primary key (nope);
alter table acct add primary key (aid);
-- expect: error
alter table acct add primary key (bid);
-- expect: error
alter table acct add constraint acct_pk2 primary key (bid);
insert into acct select g, g % 3, 0, 'f' from generate_series(2, 200) g;
-- expect: error
insert into acct values (7, 1, 1, 'dup');
-- expect: error
insert into acct values (null, 1, 1, 'null');
select aid, bid from acct where aid = 150;
select count(*) from acct where aid between 10 and 19;
-- the primary key's column is NOT NULL now
-- expect: error
update acct set aid = null where aid = 3;

-- UNIQUE: single and multi-column, named and unnamed; NULLs never collide
create table u (a int, b text, c int);
insert into u values (1, 'x', null), (2, 'y', null), (3, null, 1), (4, null, 1);
alter table u add unique (a);
alter table u add constraint u_bc unique (b, c);
-- expect: error
alter table u add unique (c);
-- expect: error
alter table u add unique (a, nope);
-- expect: error
alter table u add constraint u_bc unique (a);
-- expect: error
alter table u add constraint acct unique (a);
-- expect: error
insert into u values (1, 'q', 9);
insert into u values (5, 'x', null), (6, 'x', null);
-- expect: error
insert into u values (7, 'x', 1), (8, 'x', 1);
-- a second UNIQUE on the same column is a second index (u_a_key1)
alter table u add unique (a);
-- expect: error
insert into u values (2, 'dup', 0);
alter table u drop constraint u_a_key;
-- expect: error
insert into u values (2, 'dup', 0);
alter table u drop constraint u_a_key1;
insert into u values (2, 'dup', 0);
select * from u order by a, b;

-- CHECK: validated against the rows unless NOT VALID; names as PostgreSQL
-- chooses them
create table ck (a int, b int);
insert into ck values (1, 10), (2, 20), (null, 5);
-- expect: error
alter table ck add check (a > 1);
alter table ck add check (a > 0);
alter table ck add check (a > 0);
alter table ck add check (a < b);
alter table ck add constraint named check (b >= 5);
-- expect: error
alter table ck add constraint named check (b > 0);
-- expect: error
alter table ck add constraint big check (b > 100);
alter table ck add constraint big check (b > 100) not valid;
-- expect: error
insert into ck values (3, 30);
alter table ck drop constraint big;
insert into ck values (3, 300);
-- expect: error
insert into ck values (0, 10);
-- expect: error
insert into ck values (5, 1);
alter table ck drop constraint ck_a_check;
-- expect: error
insert into ck values (0, 10);
alter table ck drop constraint ck_a_check1;
insert into ck values (0, 10);
-- expect: error
alter table ck drop constraint ck_a_check;
alter table ck drop constraint if exists ck_a_check;
alter table ck drop constraint ck_check cascade;
insert into ck values (9, 5);
select * from ck order by a, b;
-- expect: error
alter table ck add check (nope > 0);
-- expect: error
alter table ck add check (a);

-- ADD COLUMN: existing rows get the default, a volatile one per row
create table w (id int);
insert into w select g from generate_series(1, 20) g;
alter table w add column note text;
alter table w add column five int default 5;
alter table w add column r float8 default random();
select count(*), count(note), min(five), max(five), count(distinct r) from w;
alter table w drop column r;
-- expect: error
alter table w add column five int;
alter table w add column if not exists five int;
-- expect: error
alter table w add column nn int not null;
alter table w add column nn int not null default 0;
-- expect: error
alter table w add column k int default 1 unique;
delete from w where id > 1;
alter table w add column k2 int default 1 unique;
alter table w add column big int default 1 check (big > 0);
-- expect: error
alter table w add column neg int default -1 check (neg > 0);
alter table w add column pk int primary key default 100;
select * from w;
-- expect: error
insert into w (id) values (2);
insert into w (id, k2, pk) values (2, 2, 101);
select * from w order by id;
-- an empty table
create table e (a int);
alter table e add column b int not null;
alter table e add column c text default 'c';
insert into e (a, b) values (1, 2);
select * from e;

-- DROP COLUMN: indexes and CHECK constraints on the column go with it
create table d (a int primary key, b text, c int check (c > 0), x int, unique (b, x));
insert into d values (1, 'one', 1, 10), (2, 'two', 2, 20), (3, null, 3, null);
create index d_c_idx on d (c);
alter table d drop column x;
select * from d order by a;
insert into d values (4, 'one', 4);
-- expect: error
insert into d values (4, 'four', 4);
-- expect: error
insert into d values (5, 'five', -5);
alter table d drop column c;
insert into d values (5, 'five');
select * from d order by a;
-- expect: error
alter table d drop column c;
alter table d drop column if exists c;
alter table d drop column a, drop column if exists zz;
select * from d order by b;
insert into d values ('again');
select count(*) from d;

-- RENAME COLUMN, RENAME TO, RENAME CONSTRAINT, ALTER INDEX ... RENAME
create table r (a int check (a > 0), b int, constraint r_b_uniq unique (b));
insert into r values (1, 1), (2, 2);
alter table r rename column a to z;
-- expect: error
alter table r rename column a to y;
-- expect: error
alter table r rename column z to b;
-- expect: error
insert into r values (-1, 3);
select z, b from r order by z;
alter table r rename to r2;
-- expect: error
select * from r;
-- expect: error
alter table r2 rename to acct;
alter table r2 rename constraint r_b_uniq to r_b_u;
-- expect: error
alter table r2 rename constraint r_b_uniq to r_b_u2;
-- expect: error
alter table r2 rename constraint r_a_check to r_b_u;
alter table r2 rename constraint r_a_check to positive;
-- expect: error
insert into r2 values (3, 1);
alter index r_b_u rename to r_b_index;
-- expect: error
alter index r_b_u rename to r_b_index;
-- expect: error
alter index r_b_index rename to r2;
alter table r2 drop constraint r_b_index;
alter table r2 drop constraint positive;
insert into r2 values (-3, 1);
select * from r2 order by z;

-- ALTER COLUMN: defaults, NOT NULL, types
create table c (a int, b text, n numeric(10,2));
insert into c values (1, '10', 1.5), (2, '20', 2.25), (null, null, null);
alter table c alter column a set default 42;
insert into c (b) values ('30');
alter table c alter column a drop default;
insert into c (b) values ('40');
select * from c order by b;
-- expect: error
alter table c alter column a set not null;
delete from c where a is null;
alter table c alter column a set not null;
-- expect: error
insert into c (b) values ('50');
alter table c alter column a drop not null;
insert into c (b) values ('50');
-- expect: error
alter table c alter column nope set not null;
-- expect: error
alter table c alter column b type int;
alter table c alter column b type int using b::int;
select b + 1 from c order by b;
alter table c alter column a type bigint;
alter table c alter column n type int;
alter table c alter column a type text;
select * from c order by b;
-- expect: error
alter table c alter column a type int using 'x';
alter table c alter column a set data type int using a::int * 10;
select * from c order by b;
-- expect: error
alter table c alter column a set default 'x';
-- a primary key's column stays NOT NULL
create table pkc (a int primary key, b int);
-- expect: error
alter table pkc alter column a drop not null;
alter table pkc drop constraint pkc_pkey;
alter table pkc alter column a drop not null;
insert into pkc values (null, 1);
select * from pkc;

-- several actions in one statement; the first failure undoes them all
create table m (a int, b int);
insert into m values (1, 2), (3, 4);
alter table m add column c int default 0, alter column a set not null, add constraint m_b check (b > 0);
alter table m rename column b to bb;
select * from m order by a;
-- expect: error
alter table m add column d int default 1, alter column c set default 7, add check (a > 2);
select * from m order by a;
insert into m (a, bb) values (5, 6);
select * from m order by a;

-- missing tables, IF EXISTS, views
-- expect: error
alter table nosuch add primary key (a);
alter table if exists nosuch add primary key (a);
alter table only m add unique (a);
-- expect: error
alter index nosuch rename to x;
create view mv as select a from m;
-- expect: error
alter table mv add column z int;
-- expect: error
alter table mv drop column a;
-- expect: error
alter table mv alter column a set not null;
alter table mv rename to mv2;
select * from mv2 order by a;

-- DROP COLUMN and the views that use the column
create table vt (a int, b int, c int);
insert into vt values (1, 2, 3);
create view vt_b as select b from vt;
create view vt_a as select a + c as s from vt;
create view vt_star as select * from vt;
-- expect: error
alter table vt drop column b;
select * from vt_b;
alter table vt drop column b cascade;
-- expect: error
select * from vt_b;
-- expect: error
select * from vt_star;
select * from vt_a;
alter table vt add column b int default 5;
alter table vt drop column b;
select * from vt order by a;
