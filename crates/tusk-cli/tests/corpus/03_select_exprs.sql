-- SELECT lists: expressions, aliases, *, arithmetic, casts, ||, booleans.

select 1;
select 1 + 2 * 3, (1 + 2) * 3, 7 - 10, -5, - -5;
select 7 / 2, -7 / 2, 7 / -2, 7 % 3, -7 % 3, 7 % -3, 0 / 5;
select 2147483647 - 1, -2147483647 - 1, 2147483647::bigint + 1;
select 9223372036854775807, -9223372036854775807 - 1;
select 1 = 1, 1 <> 1, 1 != 2, 1 < 2, 2 <= 2, 3 > 4, 4 >= 4;
select true, false, true and false, true or false, not true;
select 'abc', 'it''s', '';
select 'abc' || 'def', 'a' || '' || 'b';
select 'n' || 1::text, 12::text || 34::text;
select '42'::int + 1, '  7'::int, '-3'::bigint * 2, cast('10' as int) / 3;
select 5::bigint, cast(5 as bigint), 5::text, cast(123 as text), 3000000000::bigint;
select cast(2147483647 as bigint) * 2;
select 'abc' < 'abd', 'a' < 'B', 'Z' < 'a', 'abc' = 'abc', '' < 'a';

create table nums (a int, b int, s text);
insert into nums values (1, 2, 'one'), (3, 4, 'three'), (5, 6, 'five'), (7, 0, 'seven');
select * from nums;
select a, b, a + b, a - b, a * b, b / a, a % 2 from nums;
select a as x, b as "Y", a * 10 as "a times ten" from nums;
select nums.a, nums.s from nums;
select n.a + n.b as total, n.s from nums n;
select n.a, s || '-' || a::text as label from nums as n;
select a > b, a = 7 and b = 0, s = 'one' or a > 4 from nums;
select *, a + b from nums;
select s, * from nums;
select a::bigint * 3000000000, (a * 1000)::text from nums;
select 100, 'const', a from nums where a = 3;
select a from nums where a * 2 > b + 3;
select a, b from nums where a > 1 and b > 1 or s = 'one';
select a, b from nums where a > 1 and (b > 1 or s = 'one');
select a from nums where not (a > 1);
select a from nums where s = 'five' and a = 5;
select a from nums where false;
select a from nums where true;

-- The names unaliased items get (PostgreSQL's FigureColname), read back by
-- name through a subquery: ARRAY[...] is "array", a subscript takes its
-- base's name, a cast to an array type its element type's, and a bare
-- boolean constant (an A_Const since PostgreSQL 15) "?column?".
select "array" from (select array[1, 2]) s;
select "array" from (select (array[1, 2])[2]) s;
select x from (select x[1] from (select array[3, 4] x) a) s;
select "int4" from (select '{1,2}'::int[]) s;
select "varchar" from (select cast('{a}' as varchar[])) s;
select "?column?" from (select true) s;
select "bool" from (select 'true'::bool) s;
-- expect: error
select abd from (select 1 as abc) s;

-- enable_mergejoin is accepted and shown like the other enable_* settings.
set enable_mergejoin = off;
show enable_mergejoin;
select name, setting, category from pg_settings where name in ('enable_mergejoin', 'enable_hashjoin');
reset enable_mergejoin;
show enable_mergejoin;
