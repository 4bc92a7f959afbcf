-- Types: smallint, real, double precision, numeric(p, s), char(n) and
-- varchar(n) semantics, casts and their errors.

create table ty (a smallint, b real, c double precision, d numeric(6, 2), e char(3), f varchar(4));
insert into ty values (1, 1.5, 2.25, 3.14159, 'a', 'abc'), (-32768, -0.1, 1e300, -999.999, 'abc', 'abcd'), (null, null, null, null, null, null);
select * from ty;
select a + 1, b * 2, c / 3, d * 2 from ty;
select e = 'a', e = 'a  ', e || '|', length(e), f || '|' from ty;
select e, count(*) from ty group by e;
select 'a'::char(3) = 'a   '::char(3), 'abcd'::varchar(2), 'ab'::char(4) || 'x';
select 1.234::numeric(10, 2), 12345.678::numeric(8, 1), 0.5::numeric(3, 0);
select 32767::smallint, 2147483647::int, 9223372036854775807::bigint;
select 1.5::real, 0.1::double precision, 1e-5::float8, 'NaN'::float8, '-Infinity'::float8;
select 3.7::int, -3.5::int, 2.5::smallint, 1e10::bigint;
select '12'::int + 1, ' 42 '::int, 'true'::boolean, 't'::bool, 'off'::boolean;
select 0.00000000000000000001 < 9223372036854775807::numeric;
select 0.04050000332100027232 > 9223372032559808512::bigint;
select 1e30::numeric * 1e30::numeric;
-- expect: error
insert into ty (d) values (12345.6);
-- expect: error
insert into ty (f) values ('abcde');
insert into ty (f) values ('abc   ');
-- expect: error
select 32768::smallint;
-- expect: error
select 'abc'::numeric;
-- expect: error
select ''::int;
-- expect: error
select 'x'::boolean;
-- expect: error
select '1e400'::float8;
