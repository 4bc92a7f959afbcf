-- Cases from differential fuzzing (seed 20261503, rounds 654, 334 and
-- 885; seed 20261601, round 327), reduced, with neighbours:
-- * a subquery inside a row NOT IN list can be left by folding both alone
--   (a plain WHERE conjunct, which makes its mark join a semi or anti
--   join) and inside other conjuncts, which then read the mark as the
--   value it has on every row the join passes;
-- * a row comparison (`<`, `<=`, `>`, `>=`) over the nullable side of an
--   outer join does not make the join inner (PostgreSQL's
--   find_nonnullable_rels does not look into a RowCompareExpr), so its
--   NULL-extended rows reach it and raise its errors;
-- * an `IN` subquery whose test reads no column of the query's relations
--   (only constants and other subqueries' values) stays a SubPlan in
--   PostgreSQL: its test is folded as written, and a constant that
--   overflows fails even where a constant pair of the flattened test would
--   have been false first;
-- * the expressions of a join's key clauses count in the cost of merging
--   and of probing a hash bucket, so the method (and the rows whose keys
--   are computed) is PostgreSQL's.

create table ma (c0 timestamp, c1 int);
insert into ma values (null, null), ('2000-01-01', 1), ('2000-01-02', 5), ('2000-01-01', -2), ('2000-01-01', -3), ('1999-12-31 23:59:59.5', 0), ('-infinity', 1), ('-infinity', -4);
create table mb (c0 date, c1 text);
insert into mb values ('2000-01-01', ''), ('infinity', 'ab'), ('1999-12-31', 'x%'), ('infinity', '10'), ('2000-01-02', 'x%'), ('2000-01-02', 'x%');
create table me (c0 timestamp, c1 int);

select distinct (a.c0 <= a.c0) from mb a, ma b where (((b.c0 in (select sq.c0 from ma sq)), b.c1, ((null <= 0.5) or (b.c1 <= b.c1))) not in ((null, 1, false), row(false, -2, false), row(false, null, null)));
select b.c0, b.c1 from ma b where (((b.c0 in (select sq.c0 from ma sq)), b.c1) not in ((null, 1), row(false, null))) order by 1, 2;
select b.c0, b.c1 from ma b where (((b.c0 in (select sq.c0 from ma sq)), b.c1) not in ((false, 1), row(false, null))) order by 1, 2;
select b.c0, b.c1 from ma b where (((b.c0 in (select sq.c0 from ma sq)), b.c1) not in ((false, -2), row(false, null))) order by 1, 2;
select b.c0, b.c1 from ma b where (((b.c0 in (select sq.c0 from me sq)), b.c1) not in ((false, 1), row(false, null))) order by 1, 2;
select b.c0, b.c1 from ma b where (((b.c0 in (select sq.c0 from ma sq where sq.c1 > 0)), b.c1) not in ((false, 1), row(false, null))) order by 1, 2;
select b.c0, b.c1 from ma b where (((b.c0 in (select sq.c0 from ma sq)), b.c1) in ((true, 1), row(true, null), row(true, 5))) order by 1, 2;
-- EXISTS alone and inside an OR: an anti join, the OR reading false.
select b.c0, b.c1 from ma b where ((exists (select 1 from ma sq where sq.c1 = b.c1 + 1)), b.c1) not in ((true, 1), row(true, null)) order by 1, 2;
select b.c0, b.c1 from ma b where ((exists (select 1 from ma sq where sq.c1 = b.c1 + 1)), b.c1) not in ((false, 1), row(false, null)) order by 1, 2;
select b.c0, b.c1 from ma b where ((exists (select 1 from me sq where sq.c1 = b.c1)), b.c1) not in ((true, 1), row(true, null)) order by 1, 2;
-- Correlated IN, pulled up as a semi join.
select b.c0, b.c1 from ma b where (((b.c0 in (select sq.c0 from ma sq where sq.c1 = b.c1)), b.c1) not in ((false, 1), row(false, null))) order by 1, 2;
select b.c0, b.c1 from ma b where (((b.c0 in (select sq.c0 from ma sq where sq.c1 <> b.c1)), b.c1) not in ((false, 5), row(false, null))) order by 1, 2;
select count(*) from mb a, ma b where (((b.c0 in (select sq.c0 from ma sq)), b.c1) not in ((null, 1), row(false, null)));
-- The OR reads the mark first: true for the row with c1 = 0, whose
-- division is never computed.
select b.c0 from ma b where (((b.c0 in (select sq.c0 from ma sq)), 10 / b.c1) not in ((false, 1), row(false, null)));

create table ra (c0 bigint, c1 numeric);
insert into ra values (9, 3), (2, -0.001), (-1, -1.25), (0, -1.25);
create table rb (c0 bigint, c1 text);
insert into rb values (7, 'b '), (-8, 'b '), (-2, 'A'), (-2, 'A'), (-9, 'b'), (-3, 'A');
create table rc (c0 bigint, c1 text);

-- expect: error
select sum((null * b.c1)), count(*) from rb a right join ra b on a.c0 = b.c0 where ((a.c0, 2147483647, (-5)::text) >= row((1 / b.c0), (-2 - 4), a.c1));
-- expect: error
select count(*) from ra b left join rb a on a.c0 = b.c0 where (a.c0, 1) < (1 / b.c0, 2);
-- expect: error
select count(*) from ra b left join rc a on a.c0 = b.c0 where (a.c0, 1) > (1 / b.c0, 2);
-- expect: error
select count(*) from ra b where (null::bigint, 1) < (1 / b.c0, 2);
select count(*) from ra b left join rb a on a.c0 = b.c0 where (a.c0, 1) < (1 / (b.c0 + 10), 2);
select count(*) from ra b left join rb a on a.c0 = b.c0 + 9 where (a.c0, a.c1) > (-5, 'A');
select b.c0, a.c1 from ra b left join rb a on a.c0 = b.c0 - 9 where (a.c0, a.c1) <= (-5, 'A') order by 1, 2;
select b.c0, a.c1 from ra b left join rb a on a.c0 = b.c0 - 9 where (a.c0, a.c1) >= (-9, 'b') order by 1, 2;
select b.c0, a.c1 from ra b full join rb a on a.c0 = b.c0 - 9 where (b.c0, a.c1) >= (0, 'A') order by 1, 2;
select b.c0, a.c1 from ra b left join rb a on a.c0 = b.c0 - 9 where (a.c0, a.c1) = (-9, 'b') order by 1, 2;
select b.c0, a.c1 from ra b left join rc a on a.c0 = b.c0 where (a.c0, a.c1) < (1, 'x') order by 1, 2;

create table ia (c0 text);
insert into ia values ('A'), ('A');
create table ie (c0 text);

-- expect: error
select b.c0, min((- -4)), count(*) from ia a join ia b on a.c0 = b.c0 where ((date '2024-02-29', (-2 - 9223372036854775807), (select max(s.c0) from ia s)) in (select date 'infinity', 7, rq.c0 from ia rq where (date '2024-02-29' <> date 'infinity'))) group by b.c0;
-- expect: error
select count(*) from ia a where ((1, 3 / 0, (select max(s.c0) from ia s)) in (select 2, 7, rq.c0 from ia rq));
-- expect: error
select count(*) from ia a where ((1, 3 / 0, (select max(s.c0) from ie s)) in (select 2, 7, rq.c0 from ie rq));
-- expect: error
select count(*) from ia a where ((1, 3 / 0) in (select 2, 7 from ia rq));
-- The test reads a column of the query: flattened, `1 = 2` is false
-- first and the division is never folded.
select count(*) from ia a where ((1, 3 / 0, a.c0) in (select 2, 7, rq.c0 from ia rq));
select count(*) from ia a where ((1, -2 - 9223372036854775807, (select max(s.c0) from ia s), a.c0) in (select 2, 7, rq.c0, rq.c0 from ia rq));
select count(*) from ia a where ((1, (select max(s.c0) from ia s)) in (select 1, rq.c0 from ia rq));
select count(*) from ia a where ((1, (select max(s.c0) from ie s)) in (select 1, rq.c0 from ia rq));
select count(*) from ia a where ((1, (select max(s.c0) from ia s)) in (select 2, rq.c0 from ia rq));
select count(*) from ia a where ((1, (select max(s.c0) from ia s)) not in (select 2, rq.c0 from ia rq));

-- The join clauses' expressions count in the choice of a merge join over a
-- hash join, as in PostgreSQL's cost_qual_eval of the merge and hash
-- clauses: with `a.c0 % a.c1 = NULLIF(b.c0, b.c0)` the merge join wins,
-- which sorts its outer side (computing every key: division by zero)
-- where the hash join would skip it over an empty (all-NULL) hash table.
create table ka (c0 numeric, c1 numeric, c2 timestamp);
insert into ka values (null, -1.25, '1999-12-31 23:59:59.5'), (-0.001, -1.25, '2000-01-01 00:00'), (-0.001, -1.25, '2000-01-01 12:30'), (0.00, null, '2000-01-01 12:30'), (-1.25, 0.00, null), (0.00, -0.001, '-infinity');
create table ke (c0 numeric, c1 numeric);
-- expect: error
select distinct nullif((100.125 * 0.00), a.c1) from ka a, ka b where ((a.c0 % a.c1) = nullif(b.c0, b.c0));
-- expect: error
select count(*) from ka a, ka b where (a.c0 % a.c1) = nullif(b.c0, b.c0);
select count(*) from ka a join ka b on (a.c0 / a.c1) = (b.c0 * null);
select count(*) from ka a, ka b where (a.c0 % nullif(a.c1, 0)) = nullif(b.c0, b.c0);
select a.c0, b.c1 from ka a, ka b where (a.c0 + 1) = (b.c1 + 1) order by 1, 2;
-- expect: error
select count(*) from ka a, ke b where (a.c0 % a.c1) = nullif(b.c0, b.c0);
select count(*) from ka a left join ka b on (a.c0 * 2) = nullif(b.c0, b.c1);
