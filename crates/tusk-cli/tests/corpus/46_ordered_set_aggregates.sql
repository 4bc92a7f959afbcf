-- Ordered-set aggregates: percentile_cont, percentile_disc and mode,
-- WITHIN GROUP (ORDER BY ...); NULL values are skipped, the direct
-- argument is checked once per group.
create table os (g int, i int, f float8, n numeric, t text, d date, iv interval);
insert into os values
  (1, 5, 1.5, 1.0, 'b', '2024-01-03', '1 day'),
  (1, 1, -2.25, 1.00, 'a', '2024-01-01', '3 hours'),
  (1, null, null, null, null, null, null),
  (1, 5, 1.5, 2, 'b', '2024-01-02', '2 days 4 hours'),
  (2, 7, 'nan', 3.5, 'z', '2023-12-31', '1 mon'),
  (2, 3, 'infinity', 3.50, 'y', '2024-02-29', '-1 day'),
  (2, 3, '-infinity', 0, 'y', '2024-02-28', '30 days'),
  (3, null, null, null, null, null, null);
select percentile_cont(0.5) within group (order by i), percentile_disc(0.5) within group (order by i), mode() within group (order by i) from os;
select g, percentile_cont(0.25) within group (order by f), percentile_disc(0.75) within group (order by f desc) from os group by g order by g;
select g, percentile_cont(0.4) within group (order by n), percentile_disc(0.4) within group (order by n), mode() within group (order by n) from os group by g order by g;
select g, percentile_disc(0.5) within group (order by t), mode() within group (order by t desc) from os group by g order by g;
select g, percentile_disc(0.1) within group (order by d), percentile_cont(0.5) within group (order by iv) from os group by g order by g;
select percentile_cont(0.3) within group (order by iv), percentile_cont(0.9) within group (order by iv desc) from os;
select g, percentile_cont(array[0, 0.25, null, 1]) within group (order by i) from os group by g order by g;
select percentile_disc(array[0.5, 0.1]) within group (order by t) from os;
select percentile_cont(0) within group (order by i), percentile_cont(1) within group (order by i), percentile_cont(-0.0) within group (order by i) from os;
select percentile_cont(null) within group (order by i), percentile_disc(null::float8) within group (order by t) from os;
select g, percentile_cont(0.5) within group (order by i) filter (where i > 2) from os group by g order by g;
select g from os group by g having percentile_disc(0.5) within group (order by i) > 2 order by g;
select g, mode() within group (order by i) from os group by g order by mode() within group (order by i) nulls first, g;
-- Ties: the first of the most frequent in the sort order.
select mode() within group (order by x), mode() within group (order by x desc) from (values (1), (2), (2), (3), (3), (null), (null), (null)) v(x);
select mode() within group (order by x) from (values ('b'::text), ('a'), ('b'), ('a')) v(x);
-- Empty input and all-NULL input.
select percentile_cont(0.5) within group (order by i), mode() within group (order by t) from os where false;
select g, percentile_cont(0.5) within group (order by i), mode() within group (order by t) from os where false group by g;
select percentile_disc(0.5) within group (order by i) from os where g = 3;
-- Many rows: the sort spills at a small work_mem, and the scan may run in parallel.
create table osbig as select k % 7 as g, (k * 7919) % 10007 as v, ((k * 31) % 97)::text as s from generate_series(1, 20000) k;
select g, percentile_cont(0.5) within group (order by v), percentile_disc(0.9) within group (order by v), mode() within group (order by s), count(*) from osbig group by g order by g;
select percentile_cont(array[0.1, 0.5, 0.99]) within group (order by v desc) from osbig;
-- The direct argument from a parameter, and from an expression over constants.
prepare os_p(float8) as select percentile_disc($1) within group (order by v) from osbig;
execute os_p(0.5);
execute os_p(0.01);
execute os_p(null);
select percentile_cont(1.0 / 3) within group (order by v), percentile_disc(abs(-0.5)) within group (order by s) from osbig;
-- Errors.
-- expect: error
select percentile_cont(1.5) within group (order by i) from os;
-- expect: error
select percentile_cont(-0.1) within group (order by i) from os where false;
-- expect: error
select percentile_cont('nan') within group (order by i) from os;
-- expect: error
select percentile_cont(array[0.5, 2]) within group (order by i) from os;
-- expect: error
select percentile_cont(0.5) within group (order by t) from os;
-- expect: error
select percentile_disc(0.5) within group (order by i, t) from os;
-- expect: error
select mode(1) within group (order by i) from os;
-- expect: error
select percentile_cont(0.5) from os;
-- expect: error
select sum(i) within group (order by i) from os;
-- expect: error
select percentile_disc(distinct 0.5) within group (order by i) from os;
-- expect: error
select percentile_cont(0.5) within group (order by i) over () from os;
-- expect: error
select percentile_cont(0.5) within group (order by sum(i)) from os;
-- expect: error
select i from os where percentile_cont(0.5) within group (order by i) > 1;
drop table os;
drop table osbig;
