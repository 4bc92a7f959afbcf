-- ORDER BY [ASC|DESC] (NULLs last ascending, first descending) and LIMIT.
-- Every ORDER BY here is total, so the row order is fully defined.

create table o (id int, grp text, score int);
insert into o values (1, 'b', 30), (2, 'a', null), (3, 'c', 10), (4, 'a', 20),
  (5, null, 40), (6, 'b', 10), (7, 'a', 30), (8, null, null);
select id, grp, score from o order by id;
select id from o order by id desc;
select id, score from o order by score, id;
select id, score from o order by score asc, id asc;
select id, score from o order by score desc, id;
select id, grp from o order by grp, id desc;
select id, grp from o order by grp desc, id;
select grp, score, id from o order by grp, score desc, id;
select id, score * 2 as double from o order by double desc, id;
select id, -id as neg from o order by neg;
select id from o order by id % 3, id;
select id, grp from o where score >= 20 order by id;
select grp, count(*) from o group by grp order by grp;
select grp, sum(score) as total from o group by grp order by total desc, grp;
select id, grp || '-' || id::text as tag from o where grp is not null order by tag;
-- LIMIT only with a total order
select id from o order by id limit 3;
select id, score from o order by score desc, id limit 4;
select id from o order by id desc limit 1;
select id from o order by id limit 0;
select id from o order by id limit 100;
select g from generate_series(1, 1000) g order by g desc limit 5;
select g, g % 10 as r from generate_series(1, 50) g order by r, g desc limit 7;
-- text sorts by bytes (the clusters use the C collation)
create table words (w text);
insert into words values ('banana'), ('Apple'), ('apple'), (''), ('a'), ('Banana'), ('b'), ('aa'), (null);
select w from words order by w;
select w from words order by w desc;
select w, w || 'z' as wz from words where w is not null order by wz limit 4;
-- ordering through a join
select l.id, r.id from o l join o r on l.grp = r.grp where l.id < r.id order by l.id, r.id;
