-- Narrowed joins: each join outputs only the columns read above it (a key
-- read only by its own condition, a column read only by a leaf's filter
-- stay below). Every column of the result must still arrive: keys read
-- again above, columns read by ORDER BY, GROUP BY, HAVING, DISTINCT, set
-- operations, window functions, correlated subqueries, LATERAL and a
-- later join's condition; equivalence classes whose key a later join takes
-- from another member; outer, semi, anti and mark joins; NULL keys and
-- duplicates; columnar tables. (The harness also runs this file with
-- work_mem = 64kB, where the hash joins spill, and with parallel plans.)

create table na (k int, j int, v text, f int);
create table nb (k int, j int, w text);
create table nc (j int, m int, x numeric(10, 2));
create table nd (m int, y text) using columnar;
insert into na select g % 50, g % 7, 'a' || g, g % 3 from generate_series(1, 600) g;
insert into na values (null, 1, 'a-null', 0), (5, null, 'a-jnull', 1), (5, 2, 'a-dup', 2), (5, 2, 'a-dup', 2);
insert into nb select g % 40, g % 9, 'b' || g from generate_series(1, 400) g;
insert into nb values (null, null, 'b-null'), (5, 2, 'b-dup'), (5, 2, 'b-dup');
insert into nc select g % 9, g % 11, g * 0.5 from generate_series(1, 90) g;
insert into nc values (null, 1, 1.00), (2, null, 2.00);
insert into nd select g % 11, 'd' || g from generate_series(1, 60) g;
insert into nd values (null, 'd-null'), (3, 'd-dup'), (3, 'd-dup');
analyze na;
analyze nb;
analyze nc;
analyze nd;

-- Keys read only by the joins; a filter-only column; nothing but count(*).
select count(*) from na, nb where na.k = nb.k;
select count(*) from na, nb, nc where na.k = nb.k and nb.j = nc.j and na.f = 1;
select count(*), sum(nc.x) from na join nb on na.k = nb.k join nc on nc.j = nb.j join nd on nd.m = nc.m;
select nd.y, count(*) from na join nb on na.k = nb.k join nc on nc.j = nb.j join nd on nd.m = nc.m
where na.v like 'a1%' group by nd.y order by count(*) desc, nd.y limit 10;
-- Keys read again above the joins: select list, ORDER BY, GROUP BY, HAVING.
select na.k, nb.j, count(*) from na, nb, nc where na.k = nb.k and nb.j = nc.j
group by na.k, nb.j having sum(nc.m) > 40 order by na.k, nb.j limit 20;
select na.v, nb.w from na, nb where na.k = nb.k and na.j = nb.j order by na.f, na.v, nb.w limit 15;
select nc.x from na, nb, nc where na.k = nb.k and nb.j = nc.j order by na.k desc, nc.x limit 5;
-- A class over three tables: a.k = b.k = c.j, the later join may take its
-- key from any member.
select count(*), min(na.v), max(nb.w) from na, nb, nc where na.k = nb.k and nb.k = nc.j;
select count(*) from na, nb, nc where na.k = nc.j and nb.k = nc.j;
select count(*) from na, nb, nc, nd where na.j = nb.j and nb.j = nc.j and nc.j = nd.m and na.f = 1 and nb.w like 'b1%';
select nc.m, count(*) from na, nb, nc where na.j = nb.j and nb.j = nc.j and na.k = nb.k group by nc.m order by nc.m;
-- A condition over three tables, placed at the last join.
select count(*) from na, nb, nc where na.k = nb.k and nb.j = nc.j and na.f + nc.m > nb.j;
-- DISTINCT, set operations and windows over joins.
select distinct na.f, nb.j from na, nb where na.k = nb.k order by 1, 2;
select na.k from na, nb where na.k = nb.k and nb.j = 3 union select nc.j from nc, nd where nc.m = nd.m order by 1;
select na.k, nb.j, row_number() over (partition by na.k order by nb.w, na.v) from na, nb
where na.k = nb.k and na.k < 3 order by 1, 2, 3 limit 20;
-- Outer joins: the nullable side's keys, IS NULL above the join.
select count(*), count(nb.w) from na left join nb on na.k = nb.k and nb.j = 1;
select na.v from na left join nb on na.k = nb.k where nb.k is null order by na.v;
select count(*) from na full join nc on na.j = nc.j where na.v is null or nc.x is null;
select count(*), count(na.v), count(nd.y) from nd right join na on na.j = nd.m;
-- Semi, anti and mark joins beside inner joins.
select count(*) from na, nb where na.k = nb.k and exists (select 1 from nc where nc.j = nb.j and nc.m > 5);
select count(*) from na, nb where na.k = nb.k and not exists (select 1 from nc where nc.j = na.j and nc.m = na.f);
select na.k, nb.j in (select j from nc where m < 3) as marked from na, nb
where na.k = nb.k and na.k between 4 and 6 order by 1, 2 limit 10;
select count(*) from na, nb where na.k = nb.k and (nb.j in (select j from nc where m = 1) or na.f = 2);
-- Correlated subqueries and LATERAL reading join columns.
select na.k, nb.j, (select max(nc.x) from nc where nc.j = nb.j and nc.m > na.f) from na, nb
where na.k = nb.k and na.k = 7 order by 1, 2, 3 limit 10;
select count(*), sum(l.s) from na join nb on na.k = nb.k,
lateral (select sum(nc.m) as s from nc where nc.j = nb.j and nc.m < na.f + 3) l;
-- A CTE and a view over a join; a join below an aggregate read above.
with ab as (select na.k, nb.w from na join nb on na.k = nb.k and na.j = nb.j)
select ab.k, count(*) from ab join nc on ab.k = nc.j group by ab.k order by ab.k;
create view nab as select na.k, na.v, nb.j from na join nb on na.k = nb.k;
select count(*), count(distinct v) from nab join nc on nab.j = nc.j;
select s.k, s.c from (select na.k, count(*) as c from na, nb where na.k = nb.k group by na.k) s, nc
where s.k = nc.j and nc.m = 4 order by s.k, s.c;
