-- A subquery that stays a SubPlan is computed only for the rows where its
-- expression reaches it, as PostgreSQL evaluates a SubPlan inside the
-- expression: not in a CASE branch not taken, not in a COALESCE argument
-- after a non-NULL one, not after an AND / OR term that decided, not in a
-- later pair of a row comparison that an earlier pair decided. Each
-- subquery below returns two rows (or divides by zero) for some outer
-- rows, which must never reach it. Also: a subquery that constant folding
-- removed from its expression is not computed at all, and NULLIF has the
-- type of its first argument under a cross-type integer `=`.

create table sr (a int, b int);
insert into sr values (2, 1), (4, 0), (5, 2), (3, 3), (5, null), (null, 1);
create table sd (k int, v text);
insert into sd values (5, 'five'), (5, 'cinq'), (3, 'three'), (2, 'two'), (null, 'none');
create table sb (c0 text, c1 boolean);
insert into sb values ('b', false), ('a', true), ('b', false);

-- CASE: the branch runs only for the rows that take it.
select a, case when a = 5 then 'dup' else (select v from sd where k = sr.a) end from sr;
select a, case when a <> 5 then (select v from sd where k = sr.a) end from sr;
select a, case a when 5 then null else (select v from sd where k = sr.a) end from sr where a is not null;
-- expect: error
select a, case when a = 3 then 'x' else (select v from sd where k = sr.a) end from sr;
select a from sr where case when a = 5 then false else (select v from sd where k = sr.a) is not null end;

-- COALESCE: later arguments only where the earlier ones are NULL.
select a, coalesce(case when a = 5 then 'first' end, (select v from sd where k = sr.a)) from sr;
select a from sr where coalesce(a = 5, (select v from sd where k = sr.a) = 'two');

-- AND / OR: a term after one that decided is not evaluated.
select a from sr where a <> 5 and (select v from sd where k = sr.a) is not null;
select a from sr where a = 5 or (select v from sd where k = sr.a) = 'two';
select a, (a <> 5 and (select v from sd where k = sr.a) = 'two') from sr;
select a, (a = 5 or (select v from sd where k = sr.a) = 'two') from sr;
select ((b.c0 / b.c0) between coalesce(b.c0, b.c0) and (select -1 from sr cs0 where cs0.a = b.c0))
  from (values (2), (4), (5), (3)) b(c0);
-- expect: error
select a from sr where a <> 3 and (select v from sd where k = sr.a) is not null;

-- Row comparisons: a later pair only where the earlier pairs are equal.
select a from sr where (a, (select v from sd where k = sr.a)) < (4, 'zzz');
select a from sr where (a, (select v from sd where k = sr.a)) >= (4, 'a');
select a, (a, 10 / b) < (3, 1) from sr;
select a from sr where (a, 10 / b) < any (select a, b from sr s2 where a <> 4);
select a from sr where row(a, 10 / b) >= all (select a, b from sr s2 where a = 5);
select count(*) from sr a cross join sb b
  where (3, (null in (select v from sd))) < ((- 3), (select c1 from sb cs0 where cs0.c1 = b.c1));
select a from sr where ((null::int > 1), a, 1) >= row(false, (select k from sd where k = sr.a), 0);
-- expect: error
select a from sr where (a, (select v from sd where k = sr.a)) >= (5, 'a');

-- A subquery that folding removed is not run: `'10' <> 'x%'` decides the
-- row `<>` for every row.
select count(*) from sb a join sb b on a.c0 = b.c0
  where (((select c1 from sb cs0 where cs0.c0 = a.c0), '10') not in ((false, 'x%')));
select count(*) from sb a where (select c1 from sb cs0 where cs0.c0 = a.c0) or true;
-- expect: error
select count(*) from sb a where (select c1 from sb cs0 where cs0.c0 = a.c0) or a.c1;

-- The subquery's value is read above the filter too: computed for the
-- passing rows only.
select * from (select a, (select v from sd where k = sr.a) as v from sr) q where a <> 5;
select a, v from (select a, (select v from sd where k = sr.a and k <> 5) as v from sr) q
  where v is not null or a = 5;

-- The same subqueries over a join, and in an aggregate's argument.
select s.a, count(*) from sr s join sd d on s.a = d.k
  where s.a <> 5 and (select v from sd where k = s.a) is not null group by s.a;
select sum(case when a = 5 then 0 else (select k from sd where k = sr.a) end) from sr;
select a, count(case when a = 5 then 1 else (select k from sd where k = sr.a) end), count(*)
  from sr group by a;
select max(coalesce(case when a = 5 then 'x' end, (select v from sd where k = sr.a))) from sr;
-- expect: error
select sum(case when a = 3 then 0 else (select k from sd where k = sr.a) end) from sr;

-- NULLIF has its first argument's type when `=` takes both types as they
-- are (integers of two widths, floats of two widths).
select nullif(5, 9223372036854775807), pg_typeof(nullif(5, 9223372036854775807));
select pg_typeof(nullif(5::int2, 7)), pg_typeof(nullif(5::int8, 7)), pg_typeof(nullif(5, 7::int2));
select pg_typeof(nullif(1.5::float4, 2.5::float8)), nullif(1.5::float4, 1.5::float8);
select nullif(5, 5::int8), nullif(5::int2, 5::int8), nullif(7::int8, 7);
select pg_typeof(nullif(5, 7.5)), nullif(5, 5.0);
-- expect: error
select nullif(2147483647, 1::bigint) + 1;
-- expect: error
select (date '1999-12-31', nullif(5, 9223372036854775807)) <> all (select date '2024-02-29', null);

-- A semi join whose condition folded to NULL or false returns nothing and
-- evaluates nothing, as PostgreSQL gates it (`(x, NULL) IN (...)`).
select 1 from sr a cross join sr b where ((coalesce(null, 'A'), (b.b / b.b)) in (select null, 3 from sd));
select 1 from sr a cross join sr b where ((coalesce(null, 'A'), (b.b / b.b)) in (select 'b', 3 from sd));
select distinct -1.25 from sb a left join sr b on (b.b between b.b and b.b)
  where (((b.b % b.b), null) = any (select -1, k from sd));
-- expect: error
select 1 from sr a cross join sr b where ((coalesce(null, 'A'), (b.b / b.b)) in (select v, 3 from sd));

-- A semi or anti join stops testing an outer row at its first match, as
-- PostgreSQL's nested loop does: the row comparison's later pair divides by
-- zero only for inner rows after the match.
create table sn (a int, b int);
insert into sn values (1, 5), (7, 2), (3, 0), (3, 1);
select a, b from sn where ((a % 100), (10 / b)) < any (select a, b from sn s2);
select a, b from sn where row((a % 100), (10 / b)) >= all (select a, a from sn s2);
select a, b from sn where not (((a % 100), (10 / b)) < any (select a, b from sn s2));
-- expect: error
select a, b from sn where ((a % 100), (10 / b)) <= any (select a, b from sn s2 where a = 3);

-- A qual list whose later term reads an uncorrelated subquery's value, the
-- rows gathered after the first term (fuzz seed 20261404, round 340: a
-- panic before).
create table qg0 (c0 int, c1 text);
insert into qg0 values (NULL, 'x%'), (5, 'A'), (4, 'a'), (0, 'ab'), (3, 'b '), (-5, 'x%');
create table qg1 (c0 text, c2 int);
insert into qg1 values ('a', 2), ('', 5), ('', -5), ('x%', 4), ('', -3), ('x%', 2), ('', -1), ('10', -1);
create table qg2 (c0 date);
insert into qg2 values (DATE '1999-12-31'), (DATE '2000-01-02');
select (coalesce(10, 9))::int, ((b.c2 * b.c2))::text from qg2 a, qg1 b where ((select min(s.c0) from qg0 s) between b.c2 and (b.c2 % b.c2));
select b.c2 from qg1 b where b.c2 > -5 and (select max(s.c0) from qg0 s where s.c0 < b.c2) is not null and b.c0 <> 'a' order by 1;
