-- Errors: the first "ERROR:" line must match PostgreSQL's.

-- integer overflow
-- expect: error
select 2147483647 + 1;
-- expect: error
select -2147483647 - 2;
-- expect: error
select 100000 * 100000;
-- expect: error
select (-2147483647 - 1) / -1;
-- expect: error
select (-2147483647 - 1) * -1;
-- expect: error
select 3000000000::int;
-- expect: error
select cast(3000000000 as int);
-- expect: error
select 9223372036854775807 + 1;
-- expect: error
select -9223372036854775807 - 2;
-- expect: error
select 9223372036854775807 * 2;
-- expect: error
select (-9223372036854775807 - 1) / -1;
-- expect: error
select 4000000000 * 4000000000;
select 100000::bigint * 100000, 2147483647 + 1::bigint;

-- division by zero
-- expect: error
select 1 / 0;
-- expect: error
select 1 % 0;
-- expect: error
select 5::bigint / 0;
-- expect: error
select 5 / (3 - 3);
select 0 / 5, 0 % 5;

-- unknown tables and columns
-- expect: error
select * from nope;
-- expect: error
select count(*) from nope;
-- expect: error
insert into nope values (1);
-- expect: error
delete from nope where a = 1;
create table e (a int, b text);
-- expect: error
select zz from e;
-- expect: error
select e.zz from e;
-- expect: error
select a from e where zz = 1;
-- expect: error
select a from e order by zz;
-- expect: error
select x.a from e;
-- expect: error
insert into e (a, zz) values (1, 2);
-- expect: error
delete from e where zz = 1;
-- expect: error
drop table nope;

-- bad input for an integer
-- expect: error
insert into e values ('abc', 1);
-- expect: error
insert into e values ('12x', 'y');
-- expect: error
insert into e values ('', 'y');
-- expect: error
select 'abc'::int;
-- expect: error
select cast('1.5' as int);
-- expect: error
select '99999999999'::int;
-- expect: error
select 'x'::bigint;
-- expect: error
select '99999999999999999999'::bigint;

-- syntax errors
-- expect: error
selec 1;
-- expect: error
select 1 +;
-- expect: error
select * from e where;
-- expect: error
select * from;
-- expect: error
create table (a int);
-- expect: error
select a b c from e;
-- expect: error
insert into e values (1, 'x';

-- errors raised while rows are processed
insert into e values (0, 'zero'), (1, 'one'), (2, 'two');
-- expect: error
select 10 / a from e;
select 10 / a from e where a <> 0;
-- expect: error
select a + 2147483647 from e;
-- expect: error
select sum(10 % a) from e;
-- expect: error
select b::int from e;
-- a failed statement changes nothing
-- expect: error
insert into e values (5, 'five'), (1 / 0, 'boom');
-- expect: error
insert into e select a + 2147483646, b from e;
-- expect: error
create table e2 as select 1 / a as x from e;
select count(*), sum(a) from e;
-- expect: error
select * from e2;
-- expect: error
delete from e where 1 / a = 1;
select count(*) from e;

-- Reserved key words are not bare identifiers: a column reference or a
-- relation name that is one is a syntax error (after a dot it is a label).
-- expect: error
select case;
-- expect: error
select from where;
-- expect: error
select 1 from where;
-- expect: error
select end;
-- expect: error
select select;
-- expect: error
select table;
-- expect: error
select * from select;
select 1 as case, 2 as from;
select "case" from (select 1 as case) s;

-- an undefined relation is named as written, with its schema when qualified
-- expect: error
select * from public.no_such_relation;
-- expect: error
select * from no_such_relation;
-- expect: error
select * from pg_catalog.no_such_relation;
