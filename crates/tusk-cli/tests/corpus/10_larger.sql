-- Tables of 10^4 .. 10^5 rows: joins and aggregates that leave the toy sizes.

create table big as select g as id, g % 1000 as k, (g * 7) % 100 as m from generate_series(1, 100000) g;
create table dim as select g as k, 'k' || g::text as name from generate_series(0, 999) g;
select count(*), sum(id), min(k), max(k), sum(m) from big;
select count(*) from big join dim using (k);
select count(*), sum(big.id), min(name), max(name) from big join dim on big.k = dim.k where m < 10;
select m, count(*), sum(id), min(id), max(id) from big group by m order by m limit 5;
select k, count(*) from big where k < 3 group by k;
select dim.name, count(*) from big, dim where big.k = dim.k and big.id <= 2500 group by dim.name order by dim.name limit 10;

-- sparse keys (a multiplicative sequence modulo 2^31 - 1), joined with themselves
create table sparse as select ((g * 48271::bigint) % 2147483647)::int i from generate_series(1, 50000) g;
select count(*), min(i), max(i) from sparse;
select count(*) from sparse a join sparse b using (i);
select count(*) from sparse s join big on s.i = big.id;
select i from sparse order by i limit 5;
select i from sparse order by i desc limit 3;

-- duplicate-heavy keys: every key of dup occurs 100 times
create table dup as select g % 100 as d from generate_series(1, 10000) g;
select count(*) from dup a join dup b using (d);
select count(*) from dup a join dup b on a.d = b.d where a.d < 10;

-- DELETE on a larger table, then the same queries again
delete from big where k >= 500;
select count(*), sum(id) from big;
select count(*) from big join dim using (k);
delete from big where m = 0 or id % 2 = 0;
select count(*), min(id), max(id) from big;
insert into big select id + 100000, k, m from big where id < 1000;
select count(*), max(id) from big;
