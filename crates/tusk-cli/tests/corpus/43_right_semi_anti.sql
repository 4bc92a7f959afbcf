-- EXISTS and NOT EXISTS (semi and anti joins) whose preserved side is much
-- smaller than the subquery: tusk builds the preserved side and probes it
-- with the subquery's rows (Hash Right Semi Join / Hash Right Anti Join),
-- where the other way round it builds the subquery. Both shapes get the
-- same inputs here: NULL keys and duplicate keys on both sides, a join
-- filter beside the key (every matching pair tested, not the first one),
-- two keys, empty sides, and (in the differential test's other runs)
-- parallel plans. tusk builds the preserved side only where the
-- subquery's table would spill, so the right variants run under a small
-- work_mem: 256kB (the preserved side fits), 64kB (it spills too).

create table big (k int, s int, v int, note text);
insert into big select g % 3000, g % 11, g % 7, 'b' || g from generate_series(1, 40000) g;
insert into big select null, g % 11, g % 7, 'null k' from generate_series(1, 300) g;
insert into big values (5, null, 1, 'null s'), (6, 3, null, 'null v');
create table small (k int, s int, tag text);
insert into small select g * 7 % 4000, g % 13, 't' || g from generate_series(1, 600) g;
insert into small select g, g % 13, 'dup' || g from generate_series(1, 50) g;
insert into small values (null, 1, 'null k'), (null, null, 'all null'), (3500, 2, 'no match'),
  (3600, null, 'no match null s'), (5, null, 'null s');
create table mid (k int, s int, pad text);
insert into mid select g % 5000, g % 17, repeat('p', 20) || g from generate_series(1, 7000) g;
insert into mid select null, g % 17, 'null k' from generate_series(1, 40) g;
create table nothing (k int, s int, v int);
analyze big;
analyze mid;
analyze small;
analyze nothing;
set work_mem = '256kB';

-- small preserved side, big subquery: the right variants
select count(*), count(k), sum(k), count(distinct tag) from small
where exists (select 1 from big where big.k = small.k);
select count(*), count(k), sum(k), count(s) from small
where not exists (select 1 from big where big.k = small.k);
select k, s, tag from small
where not exists (select 1 from big where big.k = small.k) order by tag;
-- a filter beside the key: a pair must pass it to count as a match
select count(*), sum(k), sum(s) from small
where exists (select 1 from big where big.k = small.k and big.s <> small.s);
select count(*), sum(k), sum(s) from small
where not exists (select 1 from big where big.k = small.k and big.s <> small.s);
select k, s, tag from small
where not exists (select 1 from big where big.k = small.k and big.s <> small.s and big.v > 2)
order by tag;
-- two keys
select count(*), sum(k) from small
where exists (select 1 from big where big.k = small.k and big.s = small.s);
select count(*), sum(k) from small
where not exists (select 1 from big where big.k = small.k and big.s = small.s);
-- a filtered preserved side and a filtered subquery
select count(*), sum(k) from small
where s < 5 and exists (select 1 from big where big.k = small.k and big.v = 3);
select count(*), sum(k) from small
where s < 5 and not exists (select 1 from big where big.k = small.k and big.v = 3);
-- the result feeding an aggregate and a join
select small.s, count(*) from small
where exists (select 1 from big where big.k = small.k) group by small.s order by 1;
select count(*), sum(b.v) from small join big b on b.k = small.s
where not exists (select 1 from big where big.k = small.k);

-- a preserved side that spills at work_mem = 64kB, still smaller than the subquery
set work_mem = '64kB';
select count(*), count(k), sum(k), count(distinct pad) from mid
where exists (select 1 from big where big.k = mid.k);
select count(*), count(k), sum(k), sum(s) from mid
where not exists (select 1 from big where big.k = mid.k);
select count(*), sum(k), sum(s) from mid
where exists (select 1 from big where big.k = mid.k and big.s <> mid.s);
select count(*), count(k), sum(k), sum(s) from mid
where not exists (select 1 from big where big.k = mid.k and big.s <> mid.s);
select k, s from mid
where k is not null and not exists (select 1 from big where big.k = mid.k and big.s < mid.s)
order by k, s limit 20;

set work_mem = '256kB';

-- empty sides
select count(*) from nothing where exists (select 1 from big where big.k = nothing.k);
select count(*) from nothing where not exists (select 1 from big where big.k = nothing.k);
select count(*), sum(k) from small where exists (select 1 from nothing where nothing.k = small.k);
select count(*), sum(k) from small where not exists (select 1 from nothing where nothing.k = small.k);
select count(*) from small
where exists (select 1 from big where big.k = small.k and big.v > 100);
select count(*), sum(k) from small
where not exists (select 1 from big where big.k = small.k and big.v > 100);

-- TPC-H Q4's and Q21's shapes: a selective outer query, EXISTS over the big table
select s, count(*) from small
where tag like 't1%' and exists (select * from big where big.k = small.k and big.v < big.s)
group by s order by s;
select small.s, count(*) from small join big b1 on b1.k = small.k and b1.v = 0
where exists (select * from big b2 where b2.k = b1.k and b2.s <> b1.s)
  and not exists (select * from big b3 where b3.k = b1.k and b3.s <> b1.s and b3.v > 4)
group by small.s order by small.s;

reset work_mem;
-- big preserved side, small subquery: the subquery built, as before
select count(*), count(k), sum(k) from big
where exists (select 1 from small where small.k = big.k);
select count(*), count(k), sum(k), count(s) from big
where not exists (select 1 from small where small.k = big.k);
select count(*), sum(k) from big
where exists (select 1 from small where small.k = big.k and small.s <> big.s);
select count(*), sum(k), count(v) from big
where not exists (select 1 from small where small.k = big.k and small.s <> big.s);
