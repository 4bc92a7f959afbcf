-- Subqueries: scalar, IN / NOT IN with NULLs, EXISTS / NOT EXISTS,
-- ANY / ALL / SOME, correlated at several depths, in FROM, in the select
-- list, in HAVING; and their errors.

create table t (a int, b int);
insert into t values (1, 10), (2, 20), (2, 21), (3, null), (null, 40);
create table s (a int, c text);
insert into s values (1, 'x'), (2, 'y'), (2, 'yy'), (4, 'z'), (null, 'n');
create table e (a int);

-- scalar
select (select max(a) from s);
select a, (select c from s where s.a = t.a and c <> 'yy') from t;
select a, (select count(*) from s where s.a = t.a) from t;
select a, (select sum(a) from s where s.a > t.a) from t;
select a from t where b > (select avg(b) from t);
select (select a from e);
-- expect: error
select (select a from s);
-- expect: error
select a, (select c from s where s.a = t.a) from t;
-- expect: error
select (select a, c from s limit 1);

-- IN and NOT IN, three-valued
select a from t where a in (select a from s);
select a from t where a not in (select a from s);
select a from t where a not in (select a from s where a is not null);
select a from t where a in (select a from e);
select a from t where a not in (select a from e);
select a, a in (select a from s) from t;
select a, a not in (select a from s where a is not null) from t;
select a, b in (select a * 10 from s) from t;
select a from t where (a, b) in (select a, a * 10 from s);
select a from t where a in (select a from s where s.c = 'y');

-- EXISTS
select a from t where exists (select 1 from s where s.a = t.a);
select a from t where not exists (select 1 from s where s.a = t.a);
select a from t where exists (select 1 from s where s.a > t.a and s.c like 'y%');
select a from t where exists (select 1 from e);
select a from t where not exists (select 1 from e);
select a, exists (select 1 from s where s.a = t.a) from t;
select count(*) from t where exists (select * from s);

-- ANY / ALL / SOME
select a from t where a = any (select a from s);
select a from t where a > any (select a from s);
select a from t where a >= all (select a from s where a is not null);
select a from t where a > all (select a from s);
select a from t where a < some (select a from s);
select a from t where a <> all (select a from e);
select a, a < all (select a from s) from t;

-- correlated at depth two, and in HAVING
select a from t where exists (select 1 from s where s.a = t.a and exists (select 1 from t t2 where t2.a = s.a and t2.b > t.b));
select a, count(*) from t group by a having count(*) > (select count(*) from s where s.a = t.a);
select a from t where b = (select max(b) from t t2 where t2.a = t.a);

-- in FROM
select * from (select a, b * 2 as bb from t) as x where bb > 20;
select x.a, y.c from (select a from t) x join (select a, c from s) y on x.a = y.a;
select count(*) from (select distinct a from t) q;
select q.a from (select a from t where a > 1) as q(a) order by 1;
-- expect: error
select * from (select a from t);
