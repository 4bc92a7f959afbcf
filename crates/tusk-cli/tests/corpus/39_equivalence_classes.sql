-- Equivalence classes: the equalities of a region of inner joins pool
-- into classes, and the join order search joins any two tables holding
-- members of one class (a.k = b.k and b.k = c.k also join a to c), as
-- PostgreSQL's EquivalenceClasses do. Shared keys over three and four
-- tables, NULL keys, duplicates, two members in one table, a class over a
-- columnar table (sampled by ANALYZE), and outer joins, whose ON
-- equalities never join their nullable side to the other tables' keys.

create table eqa (k int, v text);
create table eqb (k int, w int);
create table eqc (k int, x int);
create table eqd (k1 int, k2 int, y text);
create table eqcol (k int, z int) using columnar;
insert into eqa select g % 40, 'a' || g from generate_series(1, 400) g;
insert into eqa values (null, 'a-null'), (null, 'a-null2'), (7, 'a-dup'), (7, 'a-dup');
insert into eqb select g % 25, g from generate_series(1, 200) g;
insert into eqb values (null, -1), (39, 39), (39, 39);
insert into eqc select g % 10, g * 3 from generate_series(1, 60) g;
insert into eqc values (null, 0), (7, 7), (33, 33);
insert into eqd select g % 12, (g * 5) % 12, 'd' || g from generate_series(1, 90) g;
insert into eqd values (null, 3, 'd-null'), (4, null, 'd-null2'), (5, 5, 'd-same');
insert into eqcol select g % 30, g from generate_series(1, 3000) g;
insert into eqcol values (null, -5), (7, -7);
analyze eqa;
analyze eqb;
analyze eqc;
analyze eqd;
analyze eqcol;

-- A chain of three: a.k = b.k and b.k = c.k.
select count(*), sum(b.w), sum(c.x) from eqa a, eqb b, eqc c where a.k = b.k and b.k = c.k;
select a.k, count(*) from eqa a, eqb b, eqc c where a.k = b.k and b.k = c.k group by a.k order by a.k;
-- The same class written as a star and with a redundant third equality.
select count(*) from eqa a, eqb b, eqc c where a.k = c.k and b.k = c.k;
select count(*) from eqa a, eqb b, eqc c where a.k = b.k and b.k = c.k and a.k = c.k;
select count(*) from eqa a join eqb b on a.k = b.k join eqc c on c.k = b.k where a.v like 'a1%';
-- Four tables, two classes, one of them over two columns of one table.
select count(*), min(d.y), max(d.y) from eqa a, eqb b, eqc c, eqd d where a.k = b.k and b.k = d.k1 and d.k2 = c.k;
select count(*), min(d.y) from eqa a, eqc c, eqd d where a.k = d.k1 and a.k = d.k2 and c.k = a.k;
select d.y, count(*) from eqb b, eqd d where b.k = d.k1 and b.k = d.k2 group by d.y order by d.y;
select count(*) from eqd d1, eqd d2, eqd d3 where d1.k1 = d2.k2 and d2.k2 = d3.k1 and d3.k1 = d1.k2;
-- A constant in the class.
select count(*) from eqa a, eqb b, eqc c where a.k = b.k and b.k = c.k and a.k = 7;
select count(*) from eqa a, eqb b, eqc c where a.k = b.k and b.k = c.k and c.k < 5;
-- A columnar member.
select count(*), sum(e.z) from eqa a, eqb b, eqcol e where a.k = b.k and b.k = e.k;
select a.k, count(*), sum(e.z) from eqa a, eqc c, eqcol e where a.k = e.k and e.k = c.k group by a.k order by a.k;
-- Outer joins: the ON equality of a left join is not pooled, so no
-- equality is derived across its nullable side; NULL-extended rows stay.
select count(*), count(c.k) from eqa a join eqb b on a.k = b.k left join eqc c on c.k = b.k;
select a.k, b.k, c.k, count(*) from eqa a left join eqb b on a.k = b.k left join eqc c on c.k = b.k group by a.k, b.k, c.k order by 1, 2, 3;
select count(*), count(b.k) from eqa a left join eqb b on a.k = b.k join eqc c on c.k = a.k;
select count(*), count(b.k), count(c.k) from eqa a left join (eqb b join eqc c on b.k = c.k) on a.k = b.k;
select count(*), count(c.k) from eqa a full join eqc c on a.k = c.k join eqb b on b.k = a.k;
-- A WHERE equality over a left join's nullable side makes the join inner.
select count(*) from eqa a left join eqb b on a.k = b.k, eqc c where c.k = b.k;
-- A self-equality is kept as written (it removes NULLs).
select count(*) from eqa a, eqb b where a.k = a.k and a.k = b.k;
select count(*) from eqa a, eqb b where b.k = b.k and a.v like 'a-null%';
-- Semi and anti joins beside a class.
select count(*) from eqa a, eqb b where a.k = b.k and exists (select 1 from eqc c where c.k = b.k);
select count(*) from eqa a, eqb b where a.k = b.k and not exists (select 1 from eqc c where c.k = a.k);
-- Text keys and types that differ (no class across int and bigint).
select count(*) from eqa a1, eqa a2, eqa a3 where a1.v = a2.v and a2.v = a3.v;
select count(*) from eqa a, eqb b, eqc c where a.k = b.k::bigint and b.k = c.k;
-- An empty member.
select count(*) from eqa a, eqb b, eqc c where a.k = b.k and b.k = c.k and c.x < 0;
-- A constant in a class filters every member (PostgreSQL derives b.k = 7
-- from a.k = b.k and a.k = 7), and the members need no join key: the
-- tables are filtered, then joined as a product.
select count(*), sum(b.w) from eqa a, eqb b where a.k = b.k and a.k = 7;
select count(*), sum(b.w) from eqa a join eqb b on a.k = b.k where b.k = 7;
select a.v, b.w, c.x from eqa a, eqb b, eqc c where a.k = b.k and b.k = c.k and c.k = 7 order by 1, 2, 3;
select count(*) from eqa a, eqb b, eqc c where 7 = c.k and a.k = b.k and b.k = c.k;
select count(*) from eqd d, eqb b where d.k1 = b.k and d.k2 = b.k and b.k = 5;
select count(*) from eqd d, eqb b where d.k1 = d.k2 and d.k1 = b.k and d.k2 = 5;
-- Two constants: no row can equal both.
select count(*) from eqa a, eqb b where a.k = b.k and a.k = 7 and b.k = 8;
select count(*) from eqa a, eqb b where a.k = b.k and a.k = 7 and a.k = 7;
-- A NULL constant matches nothing; NULL keys never equal the constant.
select count(*) from eqa a, eqb b where a.k = b.k and a.k = null;
select count(*) from eqa a, eqb b where a.k = b.k and b.k = 39;
-- A constant no member holds, and an empty member.
select count(*) from eqa a, eqb b where a.k = b.k and a.k = 1000;
select count(*) from eqa a, eqb b, eqc c where a.k = b.k and b.k = c.k and c.k = 7 and c.x < 0;
-- Types that differ: int = bigint is no class (the cast is on one side),
-- a bigint constant and a text constant.
select count(*) from eqa a, eqb b where a.k = b.k::bigint and a.k = 7;
select count(*) from eqa a, eqb b where a.k::bigint = b.k and b.k = 7::bigint;
select count(*) from eqa a, eqb b where a.k = b.k and a.k = 7::bigint;
select count(*) from eqa a1, eqa a2 where a1.v = a2.v and a1.v = 'a-dup';
-- A columnar member and an outer join beside the class.
select count(*), sum(e.z) from eqa a, eqcol e where a.k = e.k and e.k = 7;
select count(*), count(c.k) from eqa a join eqb b on a.k = b.k left join eqc c on c.k = b.k where a.k = 7;
select count(*), count(b.k) from eqa a left join eqb b on a.k = b.k where a.k = 7;
-- A parameter as the constant.
prepare eqp(int) as select count(*), sum(b.w) from eqa a, eqb b where a.k = b.k and a.k = $1;
execute eqp(7);
execute eqp(39);
deallocate eqp;
