-- Views keep meaning what they meant when they were made, as PostgreSQL's
-- stored query trees do: `*` expands once, renames follow, and DROP knows
-- the views that depend on a relation.

create table vt (a int, b text, c numeric);
insert into vt values (1, 'x', 1.5), (2, null, null), (3, 'z', 2.25), (3, 'z', 2.25);

-- `*` is the column list of the moment.
create view v_star as select * from vt;
create view v_star_q as select v.*, 1 as one from vt v where a > 1;
create view v_using as select * from vt x join (select a, c as c2 from vt) y using (a) where x.b is not null;
alter table vt add column d int default 7;
select * from v_star;
select * from v_star_q;
select * from v_using;
select * from vt;

-- Renamed columns: references, qualified references, output names kept.
create view v_cols as
  select a, vt.b, a + 1 as a1, c * 2 as c2
  from vt
  where a > 1 and vt.b is not null
  order by a desc, b;
create view v_nested as select s.a, s.b from (select a, b from vt) s where s.a <> 2;
create view v_agg as select a, count(*) as n, max(b) from vt group by a having count(*) > 0;
alter table vt rename column a to aa;
select * from v_cols;
select * from v_nested;
select * from v_agg;
select * from v_star;
alter table vt rename column b to "B b";
select * from v_cols;
select * from v_star_q;

-- Renamed tables, with and without aliases, and views of views.
create view v_of_view as select a, a1 from v_cols where a1 > 3;
alter table vt rename to vt2;
select * from v_cols;
select * from v_star_q;
select * from v_of_view;
alter table v_cols rename to v_cols2;
select * from v_of_view;
alter table v_cols2 rename column a1 to a_plus_one;
select * from v_cols2;
select * from v_of_view;

-- A column added later is not in a view made before it, so dropping it
-- breaks nothing; a column a view uses cannot go without CASCADE.
alter table vt2 drop column d;
select * from v_star;
-- expect: error
alter table vt2 drop column c;

-- DROP refuses while views depend on the relation, CASCADE takes them too.
-- expect: error
drop table vt2;
-- expect: error
drop view v_cols2;
drop view v_of_view;
drop view v_cols2;
drop table vt2 cascade;
-- expect: error
select * from v_star;
-- expect: error
select * from v_nested;

-- Empty tables and NULLs through a renamed view.
create table ve (k int, v int);
create view ve_v as select k, sum(v) as s from ve group by k;
select * from ve_v;
insert into ve values (1, null), (1, null), (null, 5);
alter table ve rename column v to w;
select * from ve_v;
drop view ve_v;
drop table ve;

-- DROP COLUMN ... CASCADE also drops the views over the views that used
-- the column, and leaves the views that did not use it.
create table vd (x int, y int);
insert into vd values (1, 2), (null, 3);
create view vd_all as select * from vd;
create view vd_over as select x from vd_all;
create view vd_y as select y from vd;
create view vd_x as select x from vd;
-- expect: error
alter table vd drop column y;
select * from vd_over;
alter table vd drop column y cascade;
-- expect: error
select * from vd_over;
-- expect: error
select * from vd_all;
-- expect: error
select * from vd_y;
select * from vd_x;
drop table vd cascade;
