-- Outer, cross and non-equi joins: LEFT/RIGHT/FULL [OUTER] JOIN, CROSS JOIN,
-- comma joins without equalities, ON true, inequality conditions, NATURAL
-- joins, parenthesized join trees; NULL keys, duplicates and empty sides.

create table l (k int, v text);
insert into l values (1, 'a'), (2, 'b'), (2, 'bb'), (null, 'n'), (3, 'c'), (5, 'e');
create table r (k int, w text);
insert into r values (2, 'x'), (2, 'y'), (3, 'z'), (null, 'nn'), (4, 'q'), (3, 'zz');
create table e (k int, w text);

-- the crash that came first: joins with no equality
select * from l, r;
select count(*) from l cross join r;
select l.v, r.w from l join r on true;
select l.v, r.w from l join r on l.k < r.k;
select l.v, r.w from l, r where l.k + 1 = r.k * 1 or l.v = 'a';
select count(*) from l, r, l l2;
select * from l, e;
select * from e cross join l;

-- LEFT JOIN keeps unmatched left rows with NULLs
select l.k, l.v, r.w from l left join r on l.k = r.k;
select l.k, l.v, r.w from l left outer join r on l.k = r.k and r.w <> 'zz';
select l.v, r.w from l left join r on l.k = r.k where r.w is null;
select l.v, r.w from l left join r on l.k = r.k where r.w = 'x';
select l.v, count(r.w) from l left join r on l.k = r.k group by l.v;
select * from l left join e on l.k = e.k;
select * from e left join l on l.k = e.k;
select l.v, r.w from l left join r on l.k < r.k;

-- RIGHT and FULL
select l.v, r.k, r.w from l right join r on l.k = r.k;
select l.v, r.w from l right outer join r on l.k = r.k where l.v is null;
select l.k, l.v, r.k, r.w from l full join r on l.k = r.k;
select l.k, l.v, r.k, r.w from l full outer join r on l.k = r.k and l.v <> 'bb';
select * from l full join e on l.k = e.k;
select * from e full join e e2 on e.k = e2.k;
-- PostgreSQL refuses FULL JOIN on a condition without equality keys
-- expect: error
select l.v, r.w from l full join r on l.k < r.k;

-- USING and NATURAL
select * from l left join r using (k);
select * from l right join r using (k);
select * from l full join r using (k);
select k from l full join r using (k);
create table n1 (k int, x int);
insert into n1 values (1, 10), (2, 20), (null, 30);
create table n2 (k int, x int, y int);
insert into n2 values (1, 10, 100), (2, 21, 200), (null, 30, 300);
select * from n1 natural join n2;
select * from n1 natural left join n2;
select * from n1 natural full join n2;

-- join trees
select l.v, r.w, n1.x from l join r on l.k = r.k left join n1 on n1.k = l.k;
select l.v, r.w, n1.x from l left join (r join n1 on r.k = n1.k) on l.k = r.k;
select count(*) from (l left join r on l.k = r.k) full join n1 on n1.k = r.k;
select a.v, b.v from l a left join l b on a.k = b.k + 1;

-- outer joins with aggregates and ORDER BY
select l.v, sum(r.k) from l left join r on l.k = r.k group by l.v order by l.v;
select r.w, count(l.v) from l right join r on l.k = r.k group by r.w order by 1;
