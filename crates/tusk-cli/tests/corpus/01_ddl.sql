-- CREATE TABLE with every promised type, NOT NULL, DROP TABLE [IF EXISTS],
-- CREATE TABLE AS SELECT.

create table ints (a int, b integer, c int4, d bigint, e int8);
insert into ints values (1, 2, 3, 4, 5), (-2147483648, 2147483647, 0, -9223372036854775808, 9223372036854775807);
select * from ints;
select a, e from ints where d > 0;

create table texts (t text, v varchar(10), c char(4));
insert into texts values ('hello', 'world', 'ab'), ('', '', ''), ('x y', 'z', 'abcd');
-- char(n) pads with blanks on output: 'ab' prints as 'ab  '
select t, v, c from texts;
select t from texts where c = 'ab';
select v || '!' from texts where t = 'hello';

create table flags (id int not null, ok boolean, note text not null);
insert into flags values (1, true, 'yes'), (2, false, 'no'), (3, null, 'unknown');
select * from flags;
select id from flags where ok;
select id from flags where not ok;
select id, ok from flags where ok is null;

create table t_upper (ID INT, Name TEXT);
insert into t_upper values (7, 'seven');
select id, name from t_upper;
select ID, NAME from T_UPPER;

-- CREATE TABLE AS SELECT: column names come from the select list
create table ctas as select a, d, a::bigint * 2 as twice from ints;
select * from ctas;
select twice from ctas where a = 1;
create table ctas_series as select g as n, g * g as sq from generate_series(1, 5) g;
select n, sq from ctas_series;
create table ctas_empty as select a, b from ints where false;
select count(*) from ctas_empty;
insert into ctas_empty values (10, 20);
select a, b from ctas_empty;

-- DROP TABLE
drop table ctas;
-- expect: error
select * from ctas;
drop table if exists ctas;
drop table if exists never_existed;
-- expect: error
drop table never_existed;
-- a dropped name can be created again, with another shape
create table ctas (x text);
insert into ctas values ('again');
select * from ctas;
drop table ctas, ctas_series;
-- expect: error
select * from ctas_series;
-- expect: error
create table ints (z int);
