-- width_bucket over double precision and numeric, factorial, scale,
-- min_scale, trim_scale, num_nulls / num_nonnulls, sinh / cosh / tanh and
-- string_to_table: values, NULLs, edges and PostgreSQL's errors.
create table wb (x float8, n numeric, k int);
insert into wb values (0.5, 0.5, 4), (5, 5.00, 4), (-1, -1, 2), (10, 10, 3), (9.999, 9.999, 3), (null, null, 3), (2.5, 2.50, null), (7.5, 7.5, 5), (7.5, 7.5, 5);
select x, k, width_bucket(x, 0, 10, k) from wb order by x, k;
select n, k, width_bucket(n, 0, 10, k) from wb order by n, k;
select n, width_bucket(n, 10, 0, 4) from wb order by n;
select x, width_bucket(x, 10, 0, 4) from wb order by x;
select width_bucket(5.35, 0.024, 10.06, 5), width_bucket(5.35::float8, 0.024, 10.06, 5);
select width_bucket(0, -1e308, 1e308, 10), width_bucket('infinity'::float8, 0, 1, 3), width_bucket('-infinity'::float8, 0, 1, 3);
select width_bucket(0.5, 0, 1, 2147483647), width_bucket(0.5::float8, 0, 1, 2147483647);
select width_bucket(3.3, 1, 5, 7), width_bucket(-3.3, -1, -5, 7);
-- expect: error
select width_bucket(1, 0, 10, 0);
-- expect: error
select width_bucket(1.0, 0, 10, -1);
-- expect: error
select width_bucket(1, 5, 5, 3);
-- expect: error
select width_bucket(1.5, 5.5, 5.5, 3);
-- expect: error
select width_bucket('nan'::float8, 0, 1, 3);
-- expect: error
select width_bucket('nan'::numeric, 0, 1, 3);
-- expect: error
select width_bucket(1, 0, 'infinity'::float8, 3);
-- expect: error
select width_bucket(2, 0, 1, 2147483647);
select factorial(0), factorial(1), factorial(5), factorial(20), factorial(25);
select factorial(k) from wb order by k;
select length(factorial(1000)::text);
-- expect: error
select factorial(-1);
-- expect: error
select factorial(40000);
select n, scale(n), min_scale(n), trim_scale(n) from wb order by n;
select scale(1.000), min_scale(1.000), trim_scale(1.000), trim_scale(0.00), min_scale(0.00);
select scale(123.4500), min_scale(123.4500), trim_scale(-123.4500), trim_scale(100);
select scale('nan'::numeric), min_scale('infinity'::numeric), trim_scale('nan'::numeric), trim_scale('-infinity'::numeric);
select trim_scale(1e-40), min_scale(1.5e-30), scale(1e20), trim_scale(1e20);
select num_nulls(1, null, 'a', null::int), num_nonnulls(1, null, 'a', null::int);
select num_nulls(x, n, k), num_nonnulls(x, n, k) from wb order by 1, 2;
select num_nulls(null), num_nonnulls(null);
select sinh(0), cosh(0), tanh(0), sinh(1), cosh(1), tanh(1);
select sinh(-2.5), cosh(-2.5), tanh(-2.5), tanh(100), sinh(1000), cosh(1000), sinh(-1000);
select sinh('nan'::float8), cosh('infinity'::float8), tanh('-infinity'::float8);
select x, sinh(x), cosh(x), tanh(x) from wb order by x;
select * from string_to_table('a,b,,c', ',');
select * from string_to_table('a,b,,c', ',', '') with ordinality;
select * from string_to_table('abc', null);
select * from string_to_table('abc', '');
select * from string_to_table('', ',');
select * from string_to_table(null, ',');
select string_to_table('x|y|z', '|', 'y');
drop table wb;
