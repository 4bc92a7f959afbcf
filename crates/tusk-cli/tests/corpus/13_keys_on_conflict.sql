-- PRIMARY KEY and UNIQUE constraints, unique and multi-column indexes of
-- any type with ASC/DESC and NULLS options, and INSERT ... ON CONFLICT.

-- column and table forms; the primary key's column becomes NOT NULL
create table acc (id int primary key, email text unique, region int, code varchar(8), unique (region, code));
insert into acc values (1, 'a@x', 1, 'A1'), (2, 'b@x', 1, 'A2'), (3, null, 2, 'A1');
-- expect: error
insert into acc values (1, 'c@x', 3, 'Z');
-- expect: error
insert into acc values (4, 'a@x', 3, 'Z');
-- expect: error
insert into acc values (4, 'd@x', 1, 'A1');
-- expect: error
insert into acc values (null, 'e@x', 9, 'Q');
-- NULLs never conflict in a unique index
insert into acc values (5, null, 3, null), (6, null, 3, null), (7, null, null, 'A1');
select * from acc order by id;
-- a duplicate within one statement fails the whole statement
-- expect: error
insert into acc values (10, 'z@x', 5, 'k'), (11, 'z@x', 6, 'k');
select count(*) from acc where id >= 10;
-- the key's lookups go through the index
select email from acc where id = 2;
select id from acc where region = 1 and code = 'A2';
select id from acc where region = 3 order by id;
select id from acc where email is null order by id;

-- UPDATE checks uniqueness against the other rows
-- expect: error
update acc set email = 'b@x' where id = 1;
update acc set email = 'new@x' where id = 1;
update acc set id = id + 100 where id = 7;
select id, email from acc order by id;
-- expect: error
update acc set id = 2 where id = 1;

-- constraint names, as PostgreSQL chooses them
create table names_t (a int, b int, c text, constraint my_pk primary key (a), unique (b, c), unique (c));
-- expect: error
insert into names_t values (1, 1, 'x'), (1, 2, 'y');
insert into names_t values (1, 1, 'x');
-- expect: error
insert into names_t values (2, 1, 'x');
-- expect: error
insert into names_t values (3, 9, 'x');
-- expect: error
drop index my_pk;
-- expect: error
drop index names_t_b_c_key;
-- a relation already named like the index: the next name
create table dup_key (k int);
create table dup (k int unique);
insert into dup values (1);
-- expect: error
insert into dup values (1);
-- a named constraint whose name is taken
-- expect: error
create table other (a int constraint dup_key unique);
-- errors in constraint definitions
-- expect: error
create table bad (a int primary key, b int primary key);
-- expect: error
create table bad (a int, primary key (a), primary key (a));
-- expect: error
create table bad (a int, unique (nope));
-- expect: error
create table bad (a int, primary key (a, a));
-- expect: error
create table bad (a int, unique (a, a));
-- expect: error
create table bad (a int, b int, constraint c1 unique (a), constraint c1 unique (b));
-- a redundant UNIQUE equal to the primary key adds no index
create table red (a int primary key unique, b int, unique (a));
insert into red values (1, 1);
-- expect: error
insert into red values (1, 2);

-- multi-column keys with DESC and NULLS, text keys
create table ev (k text, ts int, v int);
insert into ev select 'k' || (g % 5), g, g * 10 from generate_series(1, 2000) g;
insert into ev values (null, 1, 1), ('k1', null, 2), (null, null, 3);
create index ev_k_ts on ev (k, ts desc);
create index ev_ts_nf on ev (ts nulls first);
create unique index ev_v on ev (v desc nulls last);
select ts, v from ev where k = 'k3' and ts > 1980 order by ts;
select count(*) from ev where k = 'k3' and ts between 100 and 200;
select count(*) from ev where k = 'k1' and ts <= 10;
select count(*) from ev where k = 'k1' and ts < 10 and ts > 3;
select count(*) from ev where k = 'k1' and ts is null;
select count(*) from ev where k is null;
select count(*) from ev where k >= 'k3';
select count(*) from ev where k < 'k1';
select count(*) from ev where ts < 5;
select count(*) from ev where ts is null;
select v from ev where v = 20000;
select count(*) from ev where v > 19900;
select count(*) from ev where v >= 30 and v < 100;
-- comparisons with wider integers and out-of-range bounds
select count(*) from ev where ts < 3000000000;
select count(*) from ev where ts > 3000000000;
select count(*) from ev where ts = 3000000000;
select count(*) from ev where ts > -3000000000 and ts < 4;
-- expect: error
create unique index ev_k_unique on ev (k);
create unique index ev_k_ts_unique on ev (k, ts);
create index if not exists ev_k_ts on ev (ts);
-- expect: error
create index ev_k_ts on ev (ts);
drop index ev_k_ts;
drop index ev_k_ts_unique;
select count(*) from ev where k = 'k2';

-- unique keys of other types
create table typed (n numeric unique, d date unique, c char(4) unique, f float8 unique, b boolean, iv interval unique);
insert into typed values (1.5, '2024-01-01', 'ab', 0.5, true, '1 day');
-- expect: error
insert into typed values (1.50, null, null, null, null, null);
-- expect: error
insert into typed values (null, '2024-01-01', null, null, null, null);
-- expect: error
insert into typed values (null, null, 'ab  ', null, null, null);
-- expect: error
insert into typed values (null, null, null, 0.5, null, null);
-- expect: error
insert into typed values (null, null, null, null, null, '24 hours');
insert into typed values (2, '2024-01-02', 'ac', -0.5, false, '25 hours');
select n, d, c, f from typed where n = 2;
select n from typed where d > '2024-01-01';
select n from typed where c = 'ac';

-- ON CONFLICT DO NOTHING
create table kv (k int primary key, v text, n int default 0);
insert into kv values (1, 'one'), (2, 'two');
insert into kv values (1, 'uno'), (3, 'three') on conflict do nothing;
insert into kv values (2, 'dos') on conflict (k) do nothing;
insert into kv values (4, 'four'), (4, 'cuatro') on conflict do nothing;
insert into kv values (5, 'five') on conflict on constraint kv_pkey do nothing;
select * from kv order by k;
-- ON CONFLICT DO UPDATE with EXCLUDED, WHERE, RETURNING
insert into kv values (1, 'uno') on conflict (k) do update set v = excluded.v, n = kv.n + 1;
insert into kv as t values (2, 'dos'), (6, 'six') on conflict (k) do update set v = t.v || '/' || excluded.v returning k, v;
insert into kv values (3, 'tres') on conflict (k) do update set v = excluded.v where kv.n > 100;
insert into kv values (3, 'tres') on conflict (k) do update set v = excluded.v where excluded.v <> kv.v returning *;
insert into kv select g, 'g' || g from generate_series(1, 8) g on conflict (k) do update set n = kv.n + 10;
select * from kv order by k;
-- errors
-- expect: error
insert into kv values (7, 'a'), (7, 'b') on conflict (k) do update set v = excluded.v;
-- expect: error
insert into kv values (1, 'x') on conflict (v) do nothing;
-- expect: error
insert into kv values (1, 'x') on conflict do update set v = 'z';
-- expect: error
insert into kv values (1, 'x') on conflict on constraint nope do nothing;
-- expect: error
insert into kv values (1, 'x') on conflict (nope) do nothing;
-- expect: error
insert into kv values (1, 'x') on conflict (k) do update set nope = 1;
-- expect: error
insert into kv values (1, 'x') on conflict (k) do update set v = excluded.nope;
-- expect: error
insert into kv values (1, 'x') on conflict (k) do update set k = 2;
select * from kv order by k;
-- multi-column arbiter, in any column order; NULL keys never conflict
create table pair (a int, b text, c int, unique (a, b));
insert into pair values (1, 'x', 1), (1, null, 1);
insert into pair values (1, 'x', 2), (1, null, 2) on conflict (b, a) do update set c = pair.c + excluded.c;
select * from pair order by a, b, c;
-- a unique index made by CREATE UNIQUE INDEX is an arbiter but not a constraint
create table ui (a int, b int);
create unique index ui_a on ui (a);
insert into ui values (1, 1);
insert into ui values (1, 5) on conflict (a) do update set b = excluded.b;
-- expect: error
insert into ui values (1, 6) on conflict on constraint ui_a do nothing;
select * from ui;
-- correlated subqueries whose inner scan takes the outer row's values as index keys
create table outer_t (x int, y text);
insert into outer_t values (1, 'k1'), (2, 'k2'), (3, null), (null, 'k4'), (400, 'k0');
select x, (select count(*) from ev where ev.k = outer_t.y and ev.ts < outer_t.x * 100) from outer_t order by x;
select x, (select v from ev where ev.v = outer_t.x * 10) from outer_t order by x;
select x from outer_t where exists (select 1 from acc where acc.id = outer_t.x) order by x;
select x, (select max(ts) from ev where k = 'k2' and ts between outer_t.x and outer_t.x + 50) from outer_t order by x;
-- DEFAULT in a SET list is the column's default
update kv set n = 5 where k <= 3;
insert into kv values (1, 'x') on conflict (k) do update set n = default, v = excluded.v || '!';
update kv set n = default where k = 2;
select * from kv order by k;
