-- Two ways a parallel plan meets a full memory limit (in the differential
-- test's work_mem = 64kB runs, and with parallel plans forced):
--
-- * a Partial aggregate with many groups flushes its groups and starts over
--   instead of spilling, and the Finalize merges the states of a group
--   from several flushes: keys in runs (a table loaded in key order) and
--   scattered, NULL keys, NULL arguments, every partial state kind, an
--   empty input, a HAVING over the merged result;
-- * a Parallel Hash Join whose build side is far larger than the planner
--   thinks (a correlated filter the estimate multiplies) spills with a
--   fan-out chosen when it spills, and partitions that are still too big
--   are split again.

create table runs (k bigint, v int, n numeric(12, 2), t text) using columnar;
insert into runs select g / 4, case when g % 11 = 0 then null else g % 1000 end,
  (g % 997) * 1.25, 't' || (g % 13) from generate_series(1, 40000) g;
insert into runs select null, g, g * 0.5, null from generate_series(1, 300) g;
create table scattered (k int, v int, n numeric(12, 2)) using columnar;
insert into scattered select (g * 7919) % 6007, g % 100, (g % 89) * 0.01
  from generate_series(1, 30000) g;
insert into scattered select null, null, null from generate_series(1, 50) g;
analyze runs;
analyze scattered;

select k, count(*), sum(v), sum(n), avg(n), min(t), max(v)
from runs group by k order by k limit 20;

select k, count(*), sum(v), sum(n), avg(n), min(t), max(v)
from runs group by k order by k desc nulls first limit 20;

select count(*), sum(c), sum(s), max(a)
from (select k, count(*) c, sum(n) s, avg(v) a from runs group by k) x;

select k, sum(n) from runs group by k having sum(n) > 4900 order by k;

select k, count(*), sum(v), avg(v), sum(n), stddev(v), bool_and(v > 50)
from scattered group by k order by count(*) desc, k limit 15;

select count(*), sum(c), sum(s) from
  (select k, count(v) c, sum(n) s from scattered group by k) x;

select k, count(*), sum(n) from scattered where v > 1000 group by k;

select k, t, count(*), sum(n) from runs where k < 2000 group by k, t
order by k, t limit 25;

-- A build side the estimate underrates: v and w are equal, so the two
-- conditions select the same rows, but the planner multiplies them.
create table wide (id int, v int, w int, pad text) using columnar;
insert into wide select g, g % 100, g % 100, repeat('p', 60) || g
  from generate_series(1, 30000) g;
insert into wide select null, 1, 1, 'null id' from generate_series(1, 20) g;
create table probe (id int, x int) using columnar;
insert into probe select g % 40000, g from generate_series(1, 60000) g;
insert into probe values (null, 0);
analyze wide;
analyze probe;

select count(*), sum(p.x), max(w.pad), min(length(w.pad))
from probe p join wide w on p.id = w.id
where w.v < 90 and w.w < 90;

select count(*), count(w.id), sum(p.x)
from probe p left join wide w on p.id = w.id and w.v < 95 and w.w < 95;

select count(*) from probe p
where exists (select 1 from wide w where w.id = p.id and w.v < 80 and w.w < 80);

select count(*) from probe p
where not exists (select 1 from wide w where w.id = p.id and w.v < 80 and w.w < 80);

select count(*), sum(p.x) from probe p join wide w on p.id = w.id
where w.v < 0 and w.w < 0;
