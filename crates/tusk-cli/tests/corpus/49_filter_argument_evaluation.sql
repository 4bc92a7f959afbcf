-- An aggregate's arguments are computed only for the rows its FILTER
-- keeps: a row the FILTER removes never raises an error from them, in plain,
-- ordered, DISTINCT and window aggregates.
create table fa (g int, d int, n numeric(10, 2), s text);
insert into fa values (1, 0, 1.50, 'x'), (1, 2, 2.50, 'y'), (2, 0, null, null), (2, 5, 3.00, 'z'), (3, 0, 4.00, 'w');
select sum(10 / d) filter (where d <> 0) from fa;
select g, sum(10 / d) filter (where d <> 0), avg(n / d) filter (where d > 0), count(*) from fa group by g order by g;
select g, string_agg((10 / d)::text, ',' order by 10 / d) filter (where d <> 0) from fa group by g order by g;
select g, array_agg(n / d order by g) filter (where d <> 0) from fa group by g order by g;
select count(distinct 100 / d) filter (where d <> 0) from fa;
select sum((s || '1')::int) filter (where s is null) from fa;
select percentile_cont(0.5) within group (order by 10 / d) filter (where d <> 0) from fa;
select g, d, sum(10 / d) filter (where d <> 0) over (partition by g) from fa order by g, d;
select g, d, max(n / d) filter (where d <> 0) over (order by g, d) from fa order by g, d;
-- expect: error
select sum(10 / d) filter (where d >= 0) from fa;
-- expect: error
select sum(10 / d) filter (where d <> 0 or g = 3) over () from fa;
drop table fa;
