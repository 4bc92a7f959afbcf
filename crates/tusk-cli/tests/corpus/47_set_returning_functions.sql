-- Set-returning functions in FROM and in the select list: generate_series
-- over integers, numerics and timestamps, unnest (one or several arrays),
-- generate_subscripts, regexp_matches and regexp_split_to_table, WITH
-- ORDINALITY, scalar functions in FROM (one row), and several calls in one
-- select list read side by side (the longest sets the row count, the
-- others give NULLs).
create table sr (id int, s text, n int);
insert into sr values (1, 'a,b,c', 2), (2, '', 3), (3, null, 1), (4, 'x', null), (4, 'x', null);
-- generate_series
select * from generate_series(1, 5, 2);
select * from generate_series(5, 1, -2) g;
select * from generate_series(1, 0) g;
select * from generate_series(1::bigint, 3);
select * from generate_series(1, 3) with ordinality;
select * from generate_series(1, 3) with ordinality as g(v, o);
select * from generate_series(0.5, 2.0, 0.5);
select * from generate_series(1, null::int);
select * from generate_series('2020-01-30'::timestamp, '2020-05-01', '1 month');
select * from generate_series('2020-03-01'::timestamp, '2020-01-01', '-1 month -3 days');
select * from generate_series('2020-01-01'::timestamp, '2020-01-01', '1 hour');
select g::date from generate_series('2021-01-01'::date, '2021-01-05', '2 days') g;
select count(*) from generate_series('2020-01-01'::timestamptz, '2020-12-31', '1 week');
-- expect: error
select * from generate_series(1, 3, 0);
-- expect: error
select * from generate_series('2020-01-01'::timestamp, '2020-01-02', '0 days');
-- expect: error
select * from generate_series('1', '3');
-- expect: error
select * from generate_series(1, 'a');
-- expect: error
select * from generate_series(1, 3) as g(x, y);
-- unnest
select * from unnest(array[3, null, 1]);
select * from unnest(array[3, null, 1]) with ordinality as u(x, n) order by x nulls first;
select * from unnest('{}'::int[]);
select * from unnest(null::text[]);
select * from unnest(array['a', 'b'], array[1, 2, 3]);
select * from unnest(array['a', 'b'], array[1, 2, 3]) with ordinality as t(l, n, o);
select u from unnest(array[1.5, 2.25]) u;
select id, x from sr, unnest(string_to_array(sr.s, ',')) x order by id, x;
select id, x from sr left join lateral unnest(string_to_array(sr.s, ',')) x on true order by id, x;
select id, x, o from sr, unnest(string_to_array(s, ',')) with ordinality as u(x, o) order by 1, 3;
-- expect: error
select * from unnest(1);
-- Subqueries in the arguments, uncorrelated and lateral.
select * from unnest((select array_agg(id order by id) from sr)) u;
select * from unnest(array(select s from sr order by id desc)) with ordinality u;
select a.id, x from sr a, unnest(array(select b.id from sr b where b.id < a.id)) x order by 1, 2;
select * from generate_series(1, (select max(n) from sr));
select * from generate_series(1, (select n from sr where false));
-- expect: error
select * from generate_series(1, (select n from sr));
-- generate_subscripts
select * from generate_subscripts(array[5, 6, 7], 1);
select * from generate_subscripts(array[5, 6, 7], 1, true);
select * from generate_subscripts(array[5, 6, 7], 2);
select * from generate_subscripts('{}'::int[], 1);
-- regexp_split_to_table, regexp_matches, regexp_match
select * from regexp_split_to_table('the quick brown fox', '\s+');
select * from regexp_split_to_table('abc', '');
select * from regexp_split_to_table('a,b,,c,', ',') with ordinality;
select * from regexp_split_to_table('', ',');
select * from regexp_split_to_table('aXbxc', 'x', 'i');
select * from regexp_split_to_table('the quick', '\s*');
select * from regexp_split_to_table(',a,', ',');
-- expect: error
select * from regexp_split_to_table('a,b', ',', 'g');
-- expect: error
select * from regexp_split_to_table('a,b', ',', 'z');
select * from regexp_matches('foobarbequebaz', '(bar)(beque)');
select * from regexp_matches('foobarbequebazilbarfbonk', '(b[^b]+)(b[^b]+)', 'g');
select * from regexp_matches('abc', 'x');
select * from regexp_matches('abab', 'a(x)?b', 'g');
select * from regexp_matches('abc', '', 'g');
select * from regexp_matches('abc', '^', 'g');
select regexp_matches('aXbX', 'x', 'gi');
select regexp_match('foobarbequebaz', 'bar(b)?(e)');
select regexp_match('abc', 'x');
select regexp_match('abc', 'B', 'i');
select (regexp_match('2020-01-15', '(\d+)-(\d+)-(\d+)'))[2];
select regexp_match(s, '[b-z]') from sr order by id;
-- expect: error
select regexp_match('abc', 'b', 'g');
-- Scalar functions in FROM: one row.
select * from upper('abc');
select * from abs(-3) as a;
select * from lower(null::text) l;
select id, x from sr, length(sr.s) x order by id, x;
-- Several set-returning calls in the select list run side by side.
select generate_series(1, 3), generate_series(1, 2);
select generate_series(1, 2) as a, unnest(array['x', 'y', 'z']) as b;
select id, generate_series(1, n), unnest(string_to_array(s, ',')) from sr order by 1, 2, 3;
select generate_series(1, 2) + generate_series(10, 12);
select id, regexp_split_to_table(s, ',') from sr order by 1, 2;
select id, regexp_matches(s, '[a-c]', 'g') from sr order by 1, 2;
select unnest(array[1, 2]) x, 'k' order by x desc;
select count(*), count(g), count(u) from (select generate_series(1, n) g, unnest(array[1, 2, 3]) u from sr) q;
select generate_series(1, 3) where false;
select generate_subscripts(array['a', 'b'], 1) i, unnest(array['a', 'b']) v;
select *, generate_series(1, 2) g from sr order by id, g;
select sr.*, unnest(array[1, 2]) from sr where id < 3 order by 1, 4;
-- After grouping, HAVING and window functions (PostgreSQL's ProjectSet
-- sits above them).
select generate_series(1, 2), count(*) from sr;
select id, generate_series(1, count(*)::int) from sr group by id order by 1, 2;
select n, generate_series(1, n), count(*) from sr group by n order by 1, 2;
select unnest(array[min(id), max(id)]) from sr;
select sum(id), generate_series(1, 2) from sr having sum(id) > 100;
select id, generate_series(1, 2) g, row_number() over (order by id, n) from sr order by 3, 2;
select generate_series(1, 3) g, sum(count(*)) over () from sr order by g;
select distinct id, generate_series(1, 2) from sr order by 1, 2;
select generate_series(1, 2) from sr group by id order by 1;
select regexp_split_to_table(string_agg(s, ',' order by id), ',') x from sr order by x;
-- expect: error
select id, generate_series(1, n) from sr group by id;
-- Nested calls: one level of side-by-side calls per nesting depth.
select generate_series(1, generate_series(1, 3));
select generate_series(1, generate_series(1, 3)), generate_series(5, 6);
select generate_series(1, generate_series(1, 2)) + unnest(array[10, 20, 30]) order by 1;
select id, unnest(string_to_array(regexp_split_to_table(s, ';'), ',')) from (values (1, 'a,b;c'), (2, ';x,')) v(id, s) order by 1, 2;
select generate_series(1, generate_series(1, count(*)::int)) from sr;
select abs(generate_series(-1, generate_series(0, 1))) order by 1;
-- Errors: placement.
-- expect: error
select 1 where generate_series(1, 2) > 1;
-- expect: error
select * from sr join generate_series(1, 2) g on g = generate_series(1, 2);
-- expect: error
select * from generate_series(1, generate_series(1, 2));
-- expect: error
insert into sr values (generate_series(1, 2), 'a', 1), (5, 'b', 1);
insert into sr select generate_series(5, 6), 'q', 0;
select * from sr where id >= 5 order by id;
drop table sr;
