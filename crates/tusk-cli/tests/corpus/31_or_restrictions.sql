-- Restrictions implied by an OR over an inner join (TPC-H Q19's shape):
-- each relation's conjuncts of every arm make a restriction of that
-- relation, applied in its scan beside the original OR. NULLs in the
-- restricted columns, duplicate rows, an arm without a conjunct of some
-- relation, nested ORs, three relations, JOIN ... ON, an empty side, and
-- outer joins, where nothing may be derived for a nullable side.

create table ora (a integer, x integer, s varchar(10));
create table orb (b integer, y integer, t char(4));
create table orc (c integer, z integer);
create table orempty (a integer, x integer);

insert into ora select g % 40, case when g % 7 = 0 then null else g % 5 end,
  case when g % 11 = 0 then null else 's' || (g % 3) end
  from generate_series(1, 400) g;
insert into ora select a, x, s from ora where a < 5;
insert into orb select g % 50, case when g % 9 = 0 then null else g % 4 end,
  case when g % 13 = 0 then null else 't' || (g % 2) end
  from generate_series(1, 300) g;
insert into orc select g % 30, g % 3 from generate_series(1, 90) g;
insert into orc values (null, 1), (1, null);

-- Q19's shape: the join key in every arm, each arm restricting both sides.
select count(*), sum(x), sum(y) from ora, orb
where (a = b and x = 1 and s = 's1' and y between 0 and 1)
   or (a = b and x = 2 and y = 3)
   or (a = b and x is null and t = 't0');
select a, x, s, b, y, t from ora, orb
where (a = b and x = 1 and y = 2) or (a = b and x = 3 and y is null)
order by 1, 2, 3, 4, 5, 6;
-- The same as JOIN ... ON, and with the OR in ON.
select count(*) from ora join orb on a = b
where (x = 1 and y = 1) or (x = 4 and t = 't1');
select count(*) from ora join orb on (a = b and x = 1 and y = 1) or (a = b and x = 4 and t = 't1');
select count(*) from ora join orb on a = b and ((x = 1 and y = 1) or (x = 4 and y = 0));
-- An arm without a conjunct of ora: only orb is restricted.
select count(*) from ora, orb where a = b and ((x = 1 and y = 1) or y = 3);
-- Arms that are not conjunctions, nested ORs, NOT.
select count(*) from ora, orb
where a = b and ((x = 1 and (y = 1 or y is null)) or (x > 3 and (t = 't0' or y = 2)));
select count(*) from ora, orb where a = b and (x = 1 or y = 1);
select count(*) from ora, orb where a = b and not ((x = 1 and y = 1) or (x = 2 and y = 2));
select count(*) from ora, orb where a = b and ((x = 1 and y = 1) or (x = 2 and y = 2)) is not true;
-- Conjuncts over both sides that are not the join key stay in the join.
select count(*) from ora, orb where a = b and ((x = 1 and x + y = 3) or (x = 2 and y < x));
-- Three relations: each gets the OR of its own conjuncts.
select count(*), sum(z) from ora, orb, orc
where a = b and b = c and ((x = 1 and y = 1 and z = 0) or (x = 2 and y = 2 and z = 1) or (s = 's2' and z = 2 and y = 0));
select count(*) from ora, orb, orc
where (a = b and c = a and x = 1 and z = 1) or (a = b and c = b and y = 2 and z is null);
-- Without a join key: an OR over a cross product.
select count(*) from ora, orc where (x = 1 and z = 2) or (x = 3 and z = 0);
-- An empty side.
select count(*) from orempty e, orb where (e.a = b and e.x = 1 and y = 1) or (e.a = b and e.x = 2);
select count(*) from ora, orb, orempty e where ora.a = b and ((e.x = 1 and y = 1) or (ora.x = 2 and e.a = 3));
-- Volatile arms are left alone.
select count(*) from ora, orb where a = b and ((x = 1 and random() >= 0) or (x = 2 and y = 2));
-- A subquery in an arm.
select count(*) from ora, orb
where a = b and ((x = 1 and y in (select z from orc where c = 3)) or (x = 2 and y = 1));
select count(*) from ora, orb
where a = b and ((x = 1 and exists (select 1 from orc where c = a and z = y)) or (x = 2 and y = 1));
-- Outer joins: nothing is derived for the nullable side, and NULL-extended
-- rows keep satisfying arms that test for them.
select count(*) from ora left join orb on (a = b and x = 1 and y = 1) or (a = b and x = 2 and y = 2);
select count(*), count(b) from ora left join orb on a = b
where (x = 1 and y = 1) or (x = 2 and y is null);
select count(*), count(a) from ora right join orb on a = b
where (x = 1 and y = 1) or (x is null and y = 2);
select count(*), count(a), count(b) from ora full join orb on a = b
where (x = 1 and y = 1) or (x is null and y = 0) or (x = 3 and b is null);
select count(*), count(b) from orc join (ora left join orb on a = b) on c = a
where (z = 1 and y is null) or (z = 2 and y = 1);
select count(*) from orc left join (ora join orb on a = b) on c = a
  and ((z = 1 and x = 1 and y = 1) or (z = 2 and x = 2 and y = 0));
-- Semi and anti joins beside the OR.
select count(*) from ora, orb
where a = b and ((x = 1 and y = 1) or (x = 2 and y = 0))
  and exists (select 1 from orc where c = a);
select count(*) from ora, orb
where a = b and ((x = 1 and y = 1) or (x = 2 and y = 0))
  and not exists (select 1 from orc where c = b and z = 1);
-- Grouped and ordered output over the restricted join.
select x, y, count(*) from ora, orb
where (a = b and x in (1, 2) and y = 1) or (a = b and x = 3 and t is null)
group by x, y order by 1, 2;

-- The derived restrictions compare decimals with integer literals: numeric
-- comparisons against a constant of another scale, both ways, with NULLs,
-- negative values, mixed scales and values too big for the fast path.
create table ornum (d decimal(15,2), n numeric);
insert into ornum values (1, 1), (1.5, 1.50), (2.35, 2.345), (-3, -3.000), (null, null),
  (24, 24.0), (23.99, 23.999), (0, 0.00), (-0.01, -0.001),
  (9999999999999.99, 123456789012345678901234567890.123456789);
select d, n from ornum where d >= 1 order by d;
select d from ornum where d < 24 order by d;
select d from ornum where d = 1.5 order by d;
select d from ornum where d = 1.500 or d = -3.0 order by d;
select d from ornum where d <= 2.349 and d > -0.005 order by d;
select n from ornum where n > 1.5 order by n;
select n from ornum where n = 1.5 or n = -3 or n = 24 order by n;
select n from ornum where n < 2.3450 order by n;
select n from ornum where n <> 0 order by n;
select n from ornum where n >= 123456789012345678901234567890 order by n;
select n from ornum where n < 100000000000000000000000000000000000000000 order by n;
select count(*) from ora, ornum where (x = 1 and d >= 1 and d <= 11) or (x = 2 and d >= 10 and d <= 20);
