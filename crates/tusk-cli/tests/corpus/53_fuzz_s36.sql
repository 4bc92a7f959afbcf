-- Cases from differential fuzzing (seed 20261503, rounds 654, 334 and
-- 885), reduced, with neighbours:
-- * a subquery inside a row NOT IN list can be left by folding both alone
--   (a plain WHERE conjunct, which makes its mark join a semi or anti
--   join) and inside other conjuncts, which then read the mark as the
--   value it has on every row the join passes;

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

