-- Sequences: CREATE SEQUENCE with its options and PostgreSQL's defaults
-- and checks, nextval / currval / setval / lastval, bounds and CYCLE,
-- serial columns (their sequences, defaults, ownership and DROP
-- behaviour) and the catalog views. Each statement runs in a session of
-- its own on tusk, so currval and lastval are tested within one statement.

create sequence s;
select nextval('s'), nextval('s'), currval('s'), lastval();
select nextval('s');
select setval('s', 10);
select nextval('s'), currval('s');
select setval('s', 20, false);
select nextval('s'), nextval('s');
select setval('s', 5, true), nextval('s'), lastval();
select nextval('s'::regclass), nextval('public.s');
select nextval('s'::text);
select nextval(null), currval(null), setval(null, 1), setval('s', null);
select x, nextval('s') from generate_series(1, 4) x order by x;
select count(distinct n), min(n), max(n) from (select nextval('s') n from generate_series(1, 1000)) q;
-- options
create sequence up increment by 10 start with 5;
select nextval('up'), nextval('up'), nextval('up');
create sequence down increment -3;
select nextval('down'), nextval('down'), nextval('down');
create sequence cyc minvalue 1 maxvalue 3 cycle;
select nextval('cyc') from generate_series(1, 7);
create sequence cyc_down increment by -2 minvalue -5 maxvalue 0 cycle;
select nextval('cyc_down') from generate_series(1, 6);
create sequence lim as smallint start 32766;
select nextval('lim');
select nextval('lim');
-- expect: error
select nextval('lim');
create sequence lim_down increment -1 minvalue -2 maxvalue 0 start 0;
select nextval('lim_down'), nextval('lim_down'), nextval('lim_down');
-- expect: error
select nextval('lim_down');
create sequence as_int as integer;
create sequence no_bounds no minvalue no maxvalue cache 20 no cycle;
create sequence if not exists s;
select sequencename, data_type, start_value, min_value, max_value, increment_by, cycle, cache_size from pg_sequences order by sequencename;
select seqrelid::regclass::text, seqtypid::regtype, seqstart, seqincrement, seqmax, seqmin, seqcache, seqcycle from pg_sequence order by 1;
select relname, relkind from pg_class where relkind = 'S' order by relname;
-- errors
-- expect: error
create sequence s;
-- expect: error
create sequence bad increment 0;
-- expect: error
create sequence bad as smallint maxvalue 40000;
-- expect: error
create sequence bad as smallint minvalue -40000;
-- expect: error
create sequence bad minvalue 10 maxvalue 5;
-- expect: error
create sequence bad start 0;
-- expect: error
create sequence bad maxvalue 5 start 6;
-- expect: error
create sequence bad cache 0;
-- expect: error
create sequence bad as text;
-- expect: error
create sequence bad as numeric;
-- expect: error
select setval('s', 0);
-- expect: error
select setval('lim', 40000);
-- expect: error
select nextval('nope');
create sequence fresh;
-- expect: error
select currval('fresh');
create table plain (a int);
-- expect: error
select nextval('plain');
-- expect: error
drop sequence plain;
-- expect: error
drop table s;
-- expect: error
insert into s values (1);
-- expect: error
create index on s (last_value);
-- expect: error
truncate s;
drop sequence if exists nope;
drop sequence up, down;
-- expect: error
select nextval('up');
-- serial columns
create table t (id serial primary key, v text, big bigserial, small smallserial);
insert into t (v) values ('a'), ('b'), (null);
insert into t (v, id) values ('explicit', 100);
insert into t (v) values ('c') returning id, v, big, small;
select * from t order by id;
select pg_typeof(id), pg_typeof(big), pg_typeof(small) from t limit 1;
select column_name, data_type, column_default, is_nullable from information_schema.columns where table_name = 't' order by ordinal_position;
select sequencename, data_type, max_value from pg_sequences where sequencename like 't\_%' order by 1;
select pg_get_serial_sequence('t', 'id');
-- expect: error
insert into t (id, v) values (null, 'x');
-- expect: error
create table bad_serial (id serial default 5);
-- a serial's sequence depends on nothing else: the defaults depend on it
-- expect: error
drop sequence t_id_seq;
create table t2 (id serial, v int);
drop sequence t2_id_seq cascade;
-- expect: error
insert into t2 (v) values (1);
select * from t2;
-- names are chosen as PostgreSQL chooses them
create sequence t3_id_seq;
create table t3 (id serial);
select sequencename from pg_sequences where sequencename like 't3%' order by 1;
insert into t3 default values;
insert into t3 default values;
select * from t3 order by id;
-- owned sequences go with their table
drop table t3;
select sequencename from pg_sequences where sequencename like 't3%' order by 1;
create sequence owned_seq owned by plain.a;
drop table plain;
select count(*) from pg_sequences where sequencename = 'owned_seq';
-- expect: error
create sequence bad owned by nope.a;
-- expect: error
create sequence bad owned by t.nope;
-- a dropped serial column takes its sequence along
create table t4 (a serial, b serial, c text);
insert into t4 (c) values ('x');
alter table t4 drop column a;
select sequencename from pg_sequences where sequencename like 't4%' order by 1;
insert into t4 (c) values ('y');
select * from t4 order by b;
-- a sequence shared by a user-written default
create sequence shared_ids start 1000;
create table u1 (id int default nextval('shared_ids'), v text);
create table u2 (id bigint default nextval('shared_ids'::regclass) primary key, v text);
insert into u1 (v) values ('a'), ('b');
insert into u2 (v) values ('c');
insert into u1 (v) values ('d');
select * from u1 union all select * from u2 order by 1;
-- expect: error
drop sequence shared_ids;
drop table u1, u2;
drop sequence shared_ids;
-- rolled-back values are not reused
create table r (id serial, v int);
insert into r (v) values (1);
-- expect: error
insert into r (v) values (1), (1 / 0);
insert into r (v) values (2);
select * from r order by id;
-- options in any order, as pg_dump writes them
create sequence dumped start with 1 increment by 1 no minvalue no maxvalue cache 1;
create sequence mixed owned by none cycle as integer maxvalue 5 increment -1;
select sequencename, data_type, start_value, min_value, max_value, increment_by, cycle from pg_sequences where sequencename in ('dumped', 'mixed') order by 1;
select nextval('mixed'), nextval('mixed');
-- expect: error
create sequence bad start 1 start 2;
-- expect: error
create sequence bad no maxvalue maxvalue 3;
-- expect: error
create sequence bad increment 1 cache 2 increment 2;
-- identity columns
create table ia (id int generated always as identity, v text);
create table ib (id bigint generated by default as identity (start with 10 increment by 5) primary key, v text);
insert into ia (v) values ('a'), ('b');
insert into ia values (default, 'c');
insert into ia (id, v) values (default, 'd'), (default, 'e');
-- expect: error
insert into ia (id, v) values (7, 'x');
-- expect: error
insert into ia values (7, 'x');
-- expect: error
insert into ia (id, v) values (default, 'd'), (8, 'e');
-- expect: error
insert into ia (id, v) select 1, 'y';
insert into ia default values;
select * from ia order by id;
-- expect: error
update ia set id = 5 where v = 'a';
update ia set id = default where v = 'a' returning *;
update ia set v = 'aa' where v = 'a';
insert into ib (v) values ('p');
insert into ib (id, v) values (3, 'q');
insert into ib (v) values ('r') returning *;
update ib set id = 100 where v = 'p';
select * from ib order by id;
-- expect: error
insert into ib (id, v) values (3, 'dup');
select column_name, column_default, is_nullable, is_identity, identity_generation, identity_start, identity_increment, identity_maximum, identity_minimum, identity_cycle from information_schema.columns where table_name in ('ia', 'ib') order by table_name, ordinal_position;
select attname, attidentity, atthasdef, attnotnull from pg_attribute where attrelid = 'ia'::regclass and attnum > 0 order by attnum;
select count(*) from pg_attrdef where adrelid in ('ia'::regclass, 'ib'::regclass);
select sequencename, start_value, increment_by from pg_sequences where sequencename like 'i%' order by 1;
select pg_get_serial_sequence('ia', 'id'), pg_get_serial_sequence('ib', 'id'), pg_get_serial_sequence('ia', 'v');
-- expect: error
drop sequence ia_id_seq;
-- expect: error
create table bad_identity (id text generated always as identity);
-- expect: error
create table bad_identity (id numeric generated by default as identity);
-- expect: error
create table bad_identity (id int generated always as identity default 5);
-- expect: error
create table bad_identity (id int generated always as identity generated by default as identity);
-- expect: error
create table bad_identity (id int generated always as identity (increment 0));
create table small_identity (id smallint generated always as identity (maxvalue 2), v int);
insert into small_identity (v) values (1), (2);
-- expect: error
insert into small_identity (v) values (3);
select * from small_identity order by id;
drop table ia;
select sequencename from pg_sequences where sequencename like 'i%' order by 1;

-- ALTER SEQUENCE: RESTART, options (a bound at the old type's limit follows a
-- new AS type), RENAME, OWNED BY, and its errors
create sequence alt_s;
select nextval('alt_s');
alter sequence alt_s restart with 10;
select nextval('alt_s');
alter sequence alt_s restart;
select nextval('alt_s');
alter sequence alt_s increment by 5 maxvalue 100;
select nextval('alt_s'), nextval('alt_s');
-- expect: error
alter sequence alt_s maxvalue 3;
alter sequence alt_s as smallint;
select sequencename, data_type, min_value, max_value, increment_by from pg_sequences where sequencename like 'alt%' order by 1;
alter sequence alt_s rename to alt_s2;
select nextval('alt_s2');
alter sequence if exists alt_nope restart;
-- expect: error
alter sequence alt_nope restart;
create table alt_t (a int);
-- expect: error
alter sequence alt_t restart;
alter sequence alt_s2 owned by alt_t.a;
drop table alt_t;
select count(*) from pg_sequences where sequencename like 'alt%';
create sequence alt_d as integer;
alter sequence alt_d as smallint;
select max_value from pg_sequences where sequencename = 'alt_d';
-- expect: error
alter sequence alt_d restart with 0;
alter sequence alt_d start 5 restart;
select nextval('alt_d');
-- expect: error
alter sequence alt_d no cycle cycle;
