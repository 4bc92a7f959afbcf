-- Joins big enough to spill when work_mem is small (the second tusk run of
-- the differential test uses work_mem = 64kB): uniform keys, duplicates,
-- NULL keys, skew, one repeated key, text and multi-column keys.
create table sa as select g as id, g % 1000 as grp, 'name ' || g as name from generate_series(1, 30000) g;
create table sb as select g as id, (g * 7) % 30011 as ref from generate_series(1, 25000) g;
insert into sb select null, g from generate_series(1, 100) g;
insert into sa select null, 0, 'nobody' from generate_series(1, 50) g;
select count(*), sum(sa.id), sum(sb.ref) from sa join sb using (id);
select count(*) from sa join sb on sa.id = sb.ref;
select sa.grp, count(*) from sa join sb on sa.id = sb.ref group by sa.grp order by sa.grp limit 5;
-- duplicates multiply: 1000 groups x 30 rows joined to 30 rows per key
select count(*) from sa x join sa y on x.grp = y.grp where x.id <= 3000;
-- one key repeated many times on both sides
create table hot as select 7 as k, g as v from generate_series(1, 6000) g;
insert into hot select g, g from generate_series(1, 2000) g;
select count(*), sum(h1.v) from hot h1 join hot h2 on h1.k = h2.k where h2.v < 10;
select count(*) from hot h1 join sa on h1.k = sa.grp;
-- text and multi-column keys take the byte-key path
select count(*) from sa x join sa y on x.name = y.name;
select count(*) from sa x join sb y on x.id = y.id and x.grp = y.ref % 1000;
select x.name, y.ref from sa x join sb y on x.id = y.id where y.ref between 100 and 110 order by x.name;
