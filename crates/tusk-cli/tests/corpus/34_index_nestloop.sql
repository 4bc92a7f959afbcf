-- Index nested loop joins: a small outer side probing a btree of the
-- inner table once per row (PostgreSQL's Nested Loop over a parameterised
-- Index Scan). With enable_hashjoin off tusk takes this plan wherever an
-- index serves the join keys (PostgreSQL takes a nested loop or a merge
-- join: the answers must agree). NULL keys, duplicate keys, no matches, an
-- empty outer side, a composite index joined on its leading column only,
-- rows deleted and updated in the transaction, left, semi and anti joins,
-- semi joins run from their unique side, keys of another integer width,
-- and filters on both sides.

create table big (k int, k2 int, v text, n numeric);
insert into big select g % 500, g % 7, 'v' || g, g from generate_series(1, 5000) g;
insert into big values (null, 1, 'null key', -1), (null, null, 'null keys', -2);
create index big_k_k2 on big (k, k2);
create table small (id int, tag text, wide bigint);
insert into small values (1, 'one', 1), (2, 'two', 2), (2, 'two again', 2), (null, 'null', null),
  (501, 'none', 501), (499, 'last', 499), (0, 'zero', 0), (7, 'seven', 7000000000);
create table nothing (id int);
analyze big;
analyze small;
analyze nothing;
set enable_hashjoin = off;

-- inner join on the leading column of a composite index: duplicates on both sides
select s.tag, b.v from small s join big b on b.k = s.id order by 1, 2;
select s.id, count(*), min(b.n), max(b.n) from small s join big b on b.k = s.id group by s.id order by 1;
-- both columns of the index
select s.tag, b.v from small s join big b on b.k = s.id and b.k2 = s.id % 7 order by 1, 2;
-- filters on the inner table and a join filter
select s.tag, b.v from small s join big b on b.k = s.id where b.k2 > 3 and b.v like 'v1%' order by 1, 2;
select s.tag, b.v from small s join big b on b.k = s.id and b.n > s.id * 10 order by 1, 2;
-- a key of a wider type: bigint values probe an int index (7000000000 is out of range)
select s.tag, count(*) from small s join big b on b.k = s.wide group by s.tag order by 1;
-- an expression as the outer key
select s.tag, count(*) from small s join big b on b.k = s.id + 1 group by s.tag order by 1;
-- left join: unmatched and NULL-keyed outer rows come back NULL-extended
select s.tag, b.v from small s left join big b on b.k = s.id and b.k2 = 0 order by 1, 2;
select s.tag, count(b.v) from small s left join big b on b.k = s.id group by s.tag order by 1;
-- semi and anti joins
select s.tag from small s where exists (select 1 from big b where b.k = s.id) order by 1;
select s.tag from small s where not exists (select 1 from big b where b.k = s.id) order by 1;
select s.tag from small s where s.id in (select b.k from big b where b.k2 = 2) order by 1;
select s.tag from small s where exists (select 1 from big b where b.k = s.id and b.n > 4990) order by 1;
-- an empty outer side, and no matches at all
select * from nothing o join big b on b.k = o.id;
select o.id, b.v from nothing o left join big b on b.k = o.id;
select s.tag from small s join big b on b.k = s.id + 100000;
select count(*) from small s where not exists (select 1 from big b where b.k = s.id + 100000);

-- rows deleted and updated inside a transaction are seen as the transaction sees them
begin;
delete from big where k = 1 and k2 < 3;
update big set v = v || ' updated', k2 = 6 where k = 2;
update big set k = 499 where k = 498;
select s.tag, b.k2, b.v from small s join big b on b.k = s.id where s.id in (1, 2) order by 1, 2, 3;
select s.tag, count(*) from small s join big b on b.k = s.id group by s.tag order by 1;
select s.tag from small s where exists (select 1 from big b where b.k = s.id and b.v like '%updated') order by 1;
rollback;
select s.tag, count(*) from small s join big b on b.k = s.id group by s.tag order by 1;
-- and after the transaction commits (the old versions are dead tuples)
begin;
delete from big where k = 0;
update big set n = n + 1 where k = 499;
commit;
select s.tag, count(*), sum(b.n) from small s left join big b on b.k = s.id group by s.tag order by 1;
select s.tag from small s where not exists (select 1 from big b where b.k = s.id) order by 1;

-- three tables: the probes feed another join
select s.tag, b.v, c.tag from small s join big b on b.k = s.id join small c on c.id = b.k2 order by 1, 2, 3;

-- a semi join whose subquery side is unique on its keys (a primary key,
-- filtered, or itself semi-joined) runs from that side, probing the other
create table keyed (id int primary key, kind text);
insert into keyed select g, case when g % 3 = 0 then 'x' else 'y' end from generate_series(-5, 600) g;
analyze keyed;
select b.k, count(*), sum(b.n) from big b where b.k in (select id from keyed where kind = 'x' and id < 40) group by b.k order by 1;
select count(*) from big b where b.k in (select id from keyed where id in (select id from small)) and b.k2 <> 3;
select b.v from big b where b.k in (select id from keyed where id = 499 or id is null) and b.n > 4000 order by 1;
select count(*) from big b where b.k in (select id from keyed where id > 1000);
select count(*) from big b where b.k in (select k from keyed where kind = 'y');
begin;
update big set k = 3 where k = 4;
delete from keyed where id = 6;
select b.k, count(*) from big b where b.k in (select id from keyed where kind = 'x' and id < 10) group by b.k order by 1;
rollback;

reset enable_hashjoin;
-- the default settings choose the plan by cost: the same answers
select s.tag, count(*) from small s join big b on b.k = s.id group by s.tag order by 1;
select s.tag from small s where not exists (select 1 from big b where b.k = s.id) order by 1;
