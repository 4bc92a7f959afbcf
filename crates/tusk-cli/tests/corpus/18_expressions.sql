-- Expressions: CASE, COALESCE, NULLIF, GREATEST/LEAST, IS [NOT] DISTINCT
-- FROM, IS TRUE/FALSE/UNKNOWN, IN lists, math and string functions,
-- regular expressions, SIMILAR TO; errors only where PostgreSQL raises them.

create table v (i int, j int, s text, b boolean, n numeric);
insert into v values (1, 0, 'abc', true, 1.5), (2, 5, 'AbC', false, -2.25), (null, 3, null, null, null), (4, null, '', true, 0), (-7, -2, 'x y z', false, 100.125);

select i, case when i > 1 then 'big' when i = 1 then 'one' else 'other' end from v;
select i, case i when 1 then 'a' when 2 then 'b' end from v;
select case when j = 0 then 0 else i / j end from v;
select coalesce(i, j, -1), coalesce(s, 'none'), nullif(i, 2) from v;
select greatest(i, j), least(i, j, 3), greatest(s, 'b') from v;
select i is distinct from j, i is not distinct from 1, null is distinct from null from v;
select b is true, b is not true, b is false, b is unknown, b is not unknown from v;
select i in (1, 2, null), i not in (1, 2), s in ('abc', 'x y z') from v;
select abs(i), mod(i, 3), sign(n), round(n), round(n, 1), trunc(n), ceil(n), floor(n) from v;
select sqrt(4.0), power(2, 10), exp(1.0), ln(10.0), log(100.0), log(2, 8.0);
select length(s), upper(s), lower(s), initcap(s), reverse(s) from v;
select substring(s from 2 for 2), substr(s, 2), position('b' in s), strpos(s, 'C') from v;
select trim('  x  '), ltrim('xxaxx', 'x'), rtrim('xxaxx', 'x'), btrim(s, 'a') from v;
select replace(s, 'b', 'B'), split_part('a,b,c', ',', 2), left(s, 2), right(s, 2) from v;
select lpad(s, 5, '*'), rpad(s, 5), repeat(s, 2), concat(s, i, b), concat_ws('-', s, i) from v;
select starts_with(s, 'a'), md5(s), chr(65), ascii('A') from v;
select s ~ 'b', s ~* 'B', s !~ '^a', s !~* 'C$' from v;
select s similar to '%b%', s not similar to 'a%' from v;
select s like 'a%', s ilike 'A%', s like '%\_%' escape '\' from v;
select 'ñ' ilike 'Ñ', upper('ñ'), lower('Ä');
select i + j * 2 - i % 3, -i, +i, i / 2, i::numeric / 3 from v;
-- errors PostgreSQL raises only for rows it evaluates
select i from v where j <> 0 and i / j > 0;
select case when j = 0 then null else 10 / j end from v;
select coalesce(1, 1 / 0);
-- expect: error
select i / j from v;
-- expect: error
select 1 / 0 from v where false;
-- expect: error
select sqrt(-1);
-- expect: error
select abs('x');
-- expect: error
select nosuchfunction(1);

-- BETWEEN [NOT] [ASYMMETRIC | SYMMETRIC]: a symmetric range takes its
-- bounds in either order; the low bound ends at the first AND outside
-- parentheses and CASE.
select 2 between symmetric 3 and 1, 2 not between symmetric 3 and 1, 5 between symmetric 3 and 1, 2 between asymmetric 3 and 1, 2 between symmetric (3) and 1;
select x, x between symmetric 1 + 1 and case when x > 2 and x < 5 then 4 else 0 end from generate_series(0, 6) x order by 1;
select x from generate_series(0, 6) x where x not between symmetric 5 and 2 order by 1;
select x from generate_series(0, 6) x where x not between asymmetric 5 and 2 order by 1;
select null between symmetric 1 and 2, 1 between symmetric null and 2, 3 between symmetric null and 2, 1 not between symmetric null and 2;
select 'b' between symmetric 'c' and 'a', 'b' between symmetric 'a' and 'a';
select (select max(x) from generate_series(1, 3) x) between symmetric 4 and 2;
create view v_between_symmetric as select x, x between symmetric 4 and 2 as inside from generate_series(1, 5) x;
select * from v_between_symmetric order by 1;
drop view v_between_symmetric;
-- expect: error
select 1 between symmetric 'x' and 2;
-- expect: error
select 1 between symmetric 2;
-- expect: error
select (1 between symmetric 2);
-- expect: error
select 1 between "symmetric" and 2;
