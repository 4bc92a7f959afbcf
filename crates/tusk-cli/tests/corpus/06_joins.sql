-- Inner joins: JOIN ... ON, JOIN ... USING, comma joins with WHERE equalities,
-- multi-key joins, keys with NULLs and duplicates, self joins, three tables.

create table l (k int, v text);
insert into l values (1, 'a'), (2, 'b'), (2, 'bb'), (null, 'n'), (3, 'c'), (5, 'e');
create table r (k int, w text);
insert into r values (2, 'x'), (2, 'y'), (3, 'z'), (null, 'nn'), (4, 'q'), (3, 'zz');

-- NULL keys never match; duplicates multiply (2 x 2 for k = 2)
select l.k, l.v, r.w from l join r on l.k = r.k;
select l.k, l.v, r.w from l inner join r on l.k = r.k;
select l.k, v, w from l join r on r.k = l.k;
select count(*) from l join r on l.k = r.k;
-- USING merges the key: * shows it once, first
select * from l join r using (k);
select k, v, w from l join r using (k);
select * from l join r on l.k = r.k;
-- comma joins with the equality in WHERE
select l.v, r.w from l, r where l.k = r.k;
select l.v, r.w from l, r where l.k = r.k and r.w <> 'y';
select count(*) from l, r where l.k = r.k and l.v like 'b%';
-- extra conditions in ON
select l.v, r.w from l join r on l.k = r.k and r.w <> 'zz';
-- aliases and self joins
select a.v, b.v from l a join l b on a.k = b.k;
select a.v, b.v from l as a join l as b using (k) where a.v < b.v;
select count(*) from l a, l b where a.k = b.k;
-- join against an empty side
create table empty_r (k int, w text);
select * from l join empty_r using (k);
select count(*) from empty_r e join l on e.k = l.k;

-- multi-key joins, with NULLs in one key column
create table m1 (a int, b int, x text);
insert into m1 values (1, 1, 'p'), (1, 2, 'q'), (2, 1, 'r'), (2, 2, 's'), (null, 1, 't'), (1, null, 'u'), (1, 1, 'v');
create table m2 (a int, b int, y text);
insert into m2 values (1, 1, 'P'), (1, 2, 'Q'), (2, 2, 'S'), (null, 1, 'T'), (1, null, 'U'), (3, 3, 'W');
select m1.x, m2.y from m1 join m2 on m1.a = m2.a and m1.b = m2.b;
select * from m1 join m2 using (a, b);
select x, y from m1 join m2 using (b, a);
select m1.x, m2.y from m1, m2 where m1.a = m2.a and m1.b = m2.b;
select m1.x, m2.y from m1 join m2 on m1.a = m2.b and m1.b = m2.a;

-- text keys, and int keys joined with bigint keys
create table names (name text, id int);
insert into names values ('ann', 1), ('bob', 2), ('cy', 3), ('bob', 4);
create table pets (owner text, pet text);
insert into pets values ('bob', 'cat'), ('ann', 'dog'), ('dee', 'eel'), ('bob', 'fox');
select name, id, pet from names join pets on name = owner;
create table big_keys (id bigint, label text);
insert into big_keys values (1, 'one'), (4, 'four'), (5000000000, 'huge');
select n.name, b.label from names n join big_keys b on n.id = b.id;
select n.name, b.label from names n join big_keys b using (id);

-- three tables, mixing styles
select n.name, p.pet, b.label from names n join pets p on n.name = p.owner join big_keys b on b.id = n.id;
select n.name, p.pet, b.label from names n, pets p, big_keys b where n.name = p.owner and n.id = b.id;
select l.v, r.w, m2.y from l join r using (k) join m2 on m2.a = l.k;

-- joins with generate_series
select g, v from generate_series(1, 4) g join l on l.k = g;
select count(*) from generate_series(1, 100) a(i) join generate_series(50, 500, 2) b(j) on a.i = b.j;
select a.i from generate_series(1, 10) a(i) join generate_series(1, 10) b(i) using (i) where a.i > 8;
-- expressions over joined columns, and WHERE on both sides
select l.k * 10 + r.k, l.v || r.w from l join r on l.k = r.k where l.v <> 'bb' and r.w <> 'x';
-- expect: error
select * from l join r using (nope);
-- expect: error
select * from l join nope on l.k = nope.k;
