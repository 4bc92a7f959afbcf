-- numeric(p, s) arithmetic and aggregates at the edges of the fast paths:
-- values of 18 digits (64-bit unscaled integers), products and sums that
-- pass 64 and 128 bits, mixed scales, negative values, NaN and the
-- infinities, NULLs, empty groups, and GROUP BY over a few short keys
-- (found by comparison) and over more than eight (hashed), on heap and
-- columnar tables. The 64kB variant spills the grouped aggregates of the
-- larger tables; the parallel variant runs them as Partial/Finalize pairs.

create table fx (
    id int, flag char(1), st char(1), q numeric(15, 2), p numeric(15, 2),
    d numeric(15, 2), t numeric(15, 2), big numeric(18, 0), w numeric(18, 2),
    u numeric
);
insert into fx values
    (1, 'A', 'F', 17.00, 21168.23, 0.04, 0.02, 999999999999999999, 9999999999999999.99, 1.5),
    (2, 'A', 'F', 36.00, 45983.16, 0.09, 0.06, 999999999999999999, 9999999999999999.99, -2.25),
    (3, 'N', 'O', 8.00, 13309.60, 0.10, 0.02, -999999999999999999, -9999999999999999.99, 'NaN'),
    (4, 'N', 'O', 28.00, 28955.64, 0.09, 0.06, -999999999999999999, -9999999999999999.99, 1e30),
    (5, 'R', 'F', 24.00, 22824.48, 0.10, 0.04, 1, 0.01, null),
    (6, 'R', 'F', null, null, null, null, null, null, 'Infinity'),
    (7, 'N', 'F', 32.00, -49620.16, 0.07, 0.02, 123456789012345678, 1234567890123456.78, -1e-20),
    (8, 'A', 'F', -0.01, 0.01, 0.00, 0.00, -1, -0.01, 0);

-- Q1's expressions row by row: scales add up under *, align under + and -.
select id, p * (1 - d), p * (1 - d) * (1 + t), 1 - d, d - 1, q + p, q - p, -q
from fx order by id;
select id, big * big, w * w, big * w, big + big, w - big, big * 10, 10 * big
from fx order by id;
select id, big * big * big, w * w * w * w, u * big, u + w, u - 1, 1 - u
from fx order by id;
-- Past 128 bits and back: exact in the wide form.
select id, (big * big * big * big) / big / big / big from fx where big <> 0 order by id;
select id, big * big - big * big, (w * w * w) - (w * w * w) from fx order by id;

-- Q1 over the small table: sums, averages (their scales), counts, NULLs.
select flag, st, sum(q) as sum_qty, sum(p) as sum_base_price,
    sum(p * (1 - d)) as sum_disc_price, sum(p * (1 - d) * (1 + t)) as sum_charge,
    avg(q) as avg_qty, avg(p) as avg_price, avg(d) as avg_disc, count(*) as count_order
from fx group by flag, st order by flag, st;
-- Sums of 18-digit values pass 64 bits; their squares pass 128.
select flag, sum(big), sum(w), avg(big), avg(w), sum(big * big), sum(w * w), sum(big * w)
from fx group by flag order by flag;
select sum(big * big * big), avg(big * big), sum(u), avg(u), min(u), max(u) from fx;
select flag, sum(u), avg(u), count(u) from fx group by flag order by flag;
-- Empty inputs, groups that are all NULL, a filter that takes every row out.
select sum(q), avg(q), sum(q * p), count(*) from fx where id < 0;
select flag, sum(q), avg(q) from fx where id < 0 group by flag;
select id, sum(q), avg(q), sum(q * d) from fx where id = 6 group by id;
select flag, sum(q) filter (where q > 20), avg(p) filter (where d > 0.05) from fx
group by flag order by flag;

-- Errors: a result past numeric's range; division by zero in a sum's argument.
-- expect: error
select sum(u * 1e131000 * 1e131000) from fx;
-- expect: error
select flag, sum(p / d) from fx group by flag;
-- A CASE keeps the division from the rows that would fail.
select flag, sum(case when d <> 0 then p / d end) from fx group by flag order by flag;

-- Keys found by comparison: char(n) ignores trailing blanks, NULL is a group.
create table gk (a char(3), b varchar(5), v numeric(12, 3));
insert into gk values ('x', 'p', 1.125), ('x  ', 'p', 2.250), ('y', 'p', -1.000),
    (null, 'p', 5.5), (null, null, 0.001), ('x', null, 7), ('y', 'p', null);
select a, b, count(*), sum(v), avg(v) from gk group by a, b order by a, b;
select a, count(*), sum(v) from gk group by a order by a nulls first;
-- Nine keys and more: the groups move from comparison to the hash table.
insert into gk select chr(97 + g % 12), (g % 3)::text, g / 7.0 from generate_series(1, 200) g;
select a, b, count(*), sum(v), avg(v) from gk group by a, b order by a, b;
select count(*) from (select a, b from gk group by a, b) s;

-- A larger table, grouped by few and by many keys (these spill at 64kB).
create table fxl (g int, flag char(1), st char(1), q numeric(15, 2), p numeric(15, 2),
    d numeric(15, 2), t numeric(15, 2));
insert into fxl select g, substr('ANR', g % 3 + 1, 1), substr('FO', g % 2 + 1, 1),
    (g % 50 + 1)::numeric(15, 2), (g * 7919 % 100000) / 100.0 + 900,
    (g % 11) / 100.0, (g % 9) / 100.0
from generate_series(1, 30000) g;
insert into fxl values (0, 'A', 'F', null, null, null, null), (-1, null, null, 1.00, -2.00, 0.50, 0.50);
select flag, st, sum(q), sum(p), sum(p * (1 - d)), sum(p * (1 - d) * (1 + t)),
    avg(q), avg(p), avg(d), count(*)
from fxl where g <= 29000 group by flag, st order by flag, st;
select g % 997 as k, sum(p * (1 - d) * (1 + t)), avg(p), count(*)
from fxl group by g % 997 order by k limit 20;
select flag, (g % 400)::text as k, sum(q * p), avg(t) from fxl
group by flag, (g % 400)::text order by flag, k limit 15;
select count(*), sum(s), min(s), max(s) from (
    select g % 3000 as k, sum(p * (1 - d)) as s from fxl group by g % 3000) x;

-- The same over a columnar table.
set default_table_access_method = columnar;
create table fxc (g int, flag char(1), st char(1), q numeric(15, 2), p numeric(15, 2),
    d numeric(15, 2), t numeric(15, 2), big numeric(18, 0));
insert into fxc select g, flag, st, q, p, d, t, (g::numeric * 99999999999999) % 999999999999999999
from fxl;
reset default_table_access_method;
select flag, st, sum(q), sum(p), sum(p * (1 - d)), sum(p * (1 - d) * (1 + t)),
    avg(q), avg(p), avg(d), count(*)
from fxc where g <= 29000 group by flag, st order by flag, st;
select flag, sum(big), avg(big), sum(big * big), sum(big * q) from fxc group by flag order by flag;
select g % 997 as k, sum(p * (1 - d) * (1 + t)), avg(p), count(*)
from fxc group by g % 997 order by k limit 20;
select sum(q), avg(q), count(*) from fxc where g > 100000;

-- Values that fit 128 bits whose sums per group do not: the exact wide form.
create table wide (k int, v numeric(38, 0), s numeric(38, 2));
insert into wide select g % 2, 99999999999999999999999999999999999999 * (1 - 2 * (g % 3 / 2)),
    999999999999999999999999999999999999.99 from generate_series(1, 12) g;
select k, sum(v), avg(v), sum(s), avg(s), sum(v + 0), count(*) from wide group by k order by k;
select sum(v), sum(s), avg(s), sum(s * 1), sum(-s) from wide;
