-- LATERAL: subqueries and set-returning functions in FROM that read the
-- FROM items before them, and the errors without LATERAL.

create table t (a int, n int, s text);
create table u (x int, y text, z int);
create table empty_t (a int, n int);
insert into t values (1, 2, 'one'), (2, 0, 'two'), (3, 3, 'three'), (null, 1, 'null'), (3, 1, 'three again');
insert into u values (1, 'a', 10), (1, 'b', 20), (1, 'c', 30), (2, 'd', 40), (3, 'e', 50), (null, 'f', 60), (3, null, 70);

-- the top rows per outer row
select t.a, s.y from t, lateral (select y from u where x = t.a order by y limit 2) s order by 1, 2;
select t.a, t.s, s.y from t cross join lateral (select y from u where x = t.a order by z desc limit 1) s order by 1, 2, 3;
select t.a, s.y, s.z from t join lateral (select y, z from u where x = t.a) s on s.z > 20 order by 1, 2, 3;
select t.a, s.y from t inner join lateral (select y from u where x = t.a and y is not null offset 1) s on true order by 1, 2;
-- LEFT JOIN LATERAL keeps the outer rows that get nothing
select t.a, s.y from t left join lateral (select y from u where x = t.a order by y limit 1) s on true order by 1, 2;
select t.a, s.y, s.z from t left join lateral (select y, z from u where x = t.a) s on s.z >= 30 order by 1, 2, 3;
select t.a, s.y from t left join lateral (select y from u where x = t.a and false) s on true order by 1, 2;
-- aggregates per outer row (an empty group still gives a row)
select t.a, s.c, s.m from t, lateral (select count(*) c, max(z) m from u where x = t.a) s order by 1, 2;
select t.a, s.total from t, lateral (select sum(z) total from u where x = t.a or x is null) s order by 1, 2;
-- expressions of the outer row only
select t.a, s.b, s.c from t, lateral (select t.a + 1 as b, t.n * 2 as c) s order by 1, 2;
select * from t, lateral (select a) s order by 1, 2;
-- several levels: each item reads the ones before it
select t.a, s.y, r.w from t, lateral (select y, z from u where x = t.a) s, lateral (select s.z + t.n as w) r order by 1, 2, 3;
select t.a, s.k from t, lateral (select count(*) as k from u, lateral (select u.z where u.x = t.a) v) s order by 1, 2;
-- set-returning functions in FROM are lateral without the keyword
select t.a, g from t, generate_series(1, t.n) g order by 1, 2;
select t.a, g from t, lateral generate_series(t.n, 1, -1) g order by 1, 2 desc;
select t.a, g from t left join lateral generate_series(1, t.n) g on g > 1 order by 1, 2;
select t.a, g from t cross join generate_series(0, t.n - 1) as g order by 1, 2;
select count(*) from t, generate_series(1, t.n) g, generate_series(1, g) h;
-- empty outer side, empty inner side
select * from empty_t, lateral (select * from u where x = empty_t.a) s;
select * from t, lateral (select * from empty_t where empty_t.a = t.a) s;
select t.a, s.a from t left join lateral (select * from empty_t where empty_t.a = t.a) s on true order by 1, 2;
-- lateral inside a subquery, with a correlated outer reference
select t.a, (select count(*) from u, lateral (select u.z where u.x = t.a) v) from t order by 1;
select count(*) from t where exists (select 1 from u, lateral (select u.z + t.n as q) w where w.q > 60);
-- grouping and ordering over a lateral join
select s.y, count(*) from t, lateral (select y from u where x = t.a) s group by s.y order by 1;
select t.s from t, lateral (select 1 from u where u.x = t.a limit 1) s order by 1;

-- without LATERAL a subquery cannot see its siblings
-- expect: error
select * from t, (select * from u where x = t.a) s;
-- expect: error
select * from t join (select * from u where u.x = t.a) s on true;
-- expect: error
select * from t, (select t.a) s;
-- the right side of a RIGHT or FULL join cannot be lateral
-- expect: error
select * from t right join lateral (select * from u where x = t.a) s on true;
-- expect: error
select * from t full join lateral (select * from u where x = t.a) s on true;
-- a lateral item cannot see items after it
-- expect: error
select * from lateral (select * from u where x = t.a) s, t;
-- a subquery in FROM may still read an outer query's columns
select t.a, (select max(q) from (select z + t.n as q from u) w) from t order by 1;

-- subqueries in an outer join's ON condition that read both sides (run
-- per row of one side, reading the other laterally)
create table ja (x int);
create table jb (y int);
create table jc (k int, j int, z int);
insert into ja values (1), (2), (null), (4);
insert into jb values (1), (2), (3), (null);
insert into jc values (1, 1, 1), (1, 2, 2), (2, 2, 2), (2, 3, 3), (4, null, 4);
select * from ja left join jb on jb.y = (select max(z) from jc where jc.k = ja.x and jc.j = jb.y) order by 1, 2;
select * from ja left join jb on exists (select 1 from jc where jc.k = ja.x and jc.j = jb.y) order by 1, 2;
select * from ja left join jb on jb.y in (select z from jc where jc.k = ja.x and jc.j >= jb.y) and ja.x > 1 order by 1, 2;
select * from ja left join jb on jb.y not in (select j from jc where jc.k = ja.x) order by 1, 2;
select * from ja right join jb on exists (select 1 from jc where jc.k = ja.x and jc.j = jb.y) order by 1, 2;
select * from ja right join jb on jb.y = (select max(z) from jc where jc.k = ja.x and jc.j = jb.y) order by 1, 2;
select ja.x, jb.y, t.s from ja left join jb on exists (select 1 from jc where jc.k = ja.x and jc.j = jb.y) cross join lateral (select ja.x + coalesce(jb.y, 0) as s) t order by 1, 2;
select count(*) from ja left join jb on (select count(*) from jc where jc.k = ja.x or jc.j = jb.y) > 1;
-- expect: error
select * from ja full join jb on exists (select 1 from jc where jc.k = ja.x and jc.j = jb.y);
