-- generate_series(a, b[, step]) in FROM, with and without aliases.

select * from generate_series(1, 5);
select * from generate_series(1, 10, 3);
select * from generate_series(10, 1, -4);
select * from generate_series(5, 1);
select * from generate_series(3, 3);
select * from generate_series(-2, 2);
select count(*) from generate_series(1, 1000);
select g from generate_series(1, 4) g;
select g from generate_series(1, 4) as g;
select x from generate_series(1, 4) s(x);
select s.x, x * x from generate_series(1, 4) as s(x);
select g * 2, g % 3, g::text || 'x' from generate_series(1, 6) g;
select generate_series from generate_series(7, 8);
select sum(g), min(g), max(g), count(*) from generate_series(1, 100) g;
select g from generate_series(2147483640, 2147483647, 3) g;
select i from generate_series(1, 20) as t(i) where i % 7 = 0;
select i, i / 2 from generate_series(0, 9, 2) t(i) order by i desc;
select a.i, b.j from generate_series(1, 3) a(i), generate_series(2, 5) b(j) where a.i = b.j;
-- expect: error
select * from generate_series(1, 5, 0);

-- Numeric series: exact steps, the scale the additions give each value.
select * from generate_series(0.10, 0.3, 0.1);
select * from generate_series(5, 1.5, -1.25);
select * from generate_series(1, 10.0, 2.5);
select * from generate_series(1, null::numeric);
select count(*), sum(g), min(g), max(g) from generate_series(1, 1e5) g;
select generate_series(1.5, 4);
select * from generate_series(3.0, 1);
-- expect: error
select * from generate_series(1, 'nan'::numeric);
-- expect: error
select * from generate_series('-infinity'::numeric, 3);
-- expect: error
select * from generate_series(1, 3, 'nan'::numeric);
-- expect: error
select * from generate_series(1, 3::numeric, 0);
-- expect: error
select * from generate_series(1, 3, 0);
