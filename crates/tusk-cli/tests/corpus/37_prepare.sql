-- SQL-level PREPARE / EXECUTE / DEALLOCATE: named prepared statements of
-- the session, with declared or inferred parameter types.
create table pt (a int, b text);
insert into pt values (1, 'x'), (2, 'y'), (null, 'z'), (2, 'w');
prepare p1 (int) as select * from pt where a = $1;
execute p1(1);
execute p1(2);
-- Arguments are assigned to the parameter's type.
execute p1('2');
execute p1(1.6);
execute p1(null);
-- expect: error
execute p1;
-- expect: error
execute p1(1, 2);
-- expect: error
execute p1('abc');
-- expect: error
execute p1('a'::text);
-- expect: error
execute nosuch;
-- expect: error
execute nosuch(1);
-- expect: error
prepare p1 as select 1;
-- Types inferred from the context.
prepare p2 as select $1 + 1, $2::text;
execute p2(41, 'hi');
execute p2(null, null);
prepare p7 as select * from pt where a = $1 and b = $2;
execute p7(1, 'x');
execute p7(3, 'x');
-- Data changes, with and without RETURNING.
prepare p3 (text) as insert into pt values (length($1), $1) returning *;
execute p3('hello');
execute p3('');
prepare p4 (int) as update pt set b = 'u' where a = $1;
execute p4(2);
prepare p5 as delete from pt where a is null;
execute p5;
execute p5;
select * from pt order by a, b;
-- Errors at execution.
prepare p6 (int, int) as select $1 / $2;
-- expect: error
execute p6(1, 0);
execute p6(6, 3);
-- expect: error
prepare p8 as create table q (a int);
prepare p9 (int) as select (select count(*) from pt) + $1;
-- expect: error
execute p9((select 1));
-- expect: error
execute p9(a);
execute p9(1);
-- A plan made before DDL is made again; a changed result is an error.
alter table pt add column c int;
execute p9(1);
prepare p10 as select * from pt order by a, b;
execute p10;
alter table pt drop column c;
-- expect: error
execute p10;
-- DEALLOCATE.
deallocate p1;
-- expect: error
execute p1(1);
-- expect: error
deallocate p1;
deallocate prepare p2;
deallocate all;
-- expect: error
execute p3('x');
prepare p1 (bigint) as select count(*) from pt where a < $1;
execute p1(3);
-- pg_prepared_statements lists SQL's prepared statements.
deallocate all;
prepare a1 (int, text) as select $1, $2;
prepare a2 as select 1;
select name, parameter_types, from_sql, custom_plans from pg_prepared_statements order by name;
execute a2;
select name, generic_plans from pg_prepared_statements order by name;
select pg_typeof(parameter_types) from pg_prepared_statements where name = 'a1';
deallocate a1;
select name from pg_prepared_statements;
deallocate all;
select count(*) from pg_prepared_statements;
