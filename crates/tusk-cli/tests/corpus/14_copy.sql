-- COPY ... TO STDOUT: the bytes PostgreSQL writes in text and CSV, with
-- escapes, quoting, NULL strings, headers and every type's output; and the
-- statement's errors. (COPY FROM is compared in tests/copy_psql.rs, which
-- feeds both psql and tusk the same scripts and files.)

create table cp (id int, name text, price numeric(8,2), day date, ok boolean, f float8, c char(4), v varchar(6), big bigint);
insert into cp values
  (1, 'plain', 1.5, '2020-01-31', true, 1.5, 'ab', 'xy', 9000000000),
  (2, null, null, null, null, null, null, null, null),
  (3, E'tab\there', -0.25, '1999-12-31', false, -0.0, 'abcd', '', -1),
  (4, E'line\nbreak\rcr', 0, '2000-02-29', true, 1e100, '', 'a,b', 0),
  (5, 'back\slash', 123456.78, '0044-03-15 BC', null, 0.1, 'q"', 'say"', 42),
  (6, 'comma, "quoted"', 1, '2024-12-25', false, 'NaN', ' x', ' ', 7),
  (7, '\N', 2, 'infinity', true, '-Infinity', 'N', 'NULL', 8),
  (8, '', 3, '-infinity', false, 123456789.125, null, 'é', 9),
  (9, E'\\.', 4, '2001-01-01', true, 2.5e-7, 'ü', 'ñ', 10),
  (10, 'ünïcödé ✓', 5, '2001-01-02', false, 3, 'x', 'y', 11);
copy cp to stdout;
copy cp to stdout with (format csv);
copy cp to stdout with csv header;
copy cp (name, id) to stdout (format text, header);
copy cp (name) to stdout (format csv);
copy cp to stdout (delimiter '|', null 'NULL');
copy cp to stdout (format csv, delimiter ';', null '\N', quote '''', escape '\');
copy cp to stdout (format csv, force_quote (id, name, c));
copy cp (id, v) to stdout (format csv, null 'x');
copy cp (v, id) to stdout (format csv, null 'y', header);
copy (select id, upper(name) as "Upper Name", price * 2 as "x""y" from cp where id < 5 order by id desc) to stdout (header);
copy (select id, upper(name) as "Upper Name", price * 2 as "x""y" from cp where id < 5 order by id desc) to stdout (format csv, header);
copy (select 'a\b'::text as "c\d", E'\t' as "tab	col") to stdout (header);
copy (select count(*), sum(price), min(day), max(name) from cp) to stdout;
copy (select g, g * 1.5, 'r' || g from generate_series(1, 2000) g order by g) to stdout (format csv);
copy (select 1 where false) to stdout;
copy (select '1 year 2 mons 3 days 04:05:06'::interval, '2020-01-01 10:11:12.5'::timestamp, '10:11:12'::time) to stdout;
copy (values ('\.')) to stdout (format csv);
copy (values ('\.', 1)) to stdout (format csv);
copy (values (1, 'a'), (2, null)) to stdout (format csv, force_quote (column1, column2));
copy cp (id, name) to stdout (format 'csv', header on, force_quote *);
copy cp (id, c) to stdout with csv header force quote *;
copy cp (id) to stdout (header 1, freeze false, encoding 'UTF8');
copy cp (id) to stdout using delimiters '|';

-- statement errors
-- expect: error
copy nope to stdout;
-- expect: error
copy cp (nope) to stdout;
-- expect: error
copy cp (id, id) to stdout;
-- expect: error
copy cp to stdout (format csv, format text);
-- expect: error
copy cp to stdout (format xml);
-- expect: error
copy cp to stdout (delimiter 'x');
-- expect: error
copy cp to stdout (quote '"');
-- expect: error
copy cp to stdout (escape '\');
-- expect: error
copy cp to stdout (format csv, quote ',');
-- expect: error
copy cp to stdout (force_quote (id));
-- expect: error
copy cp (name) to stdout (format csv, force_quote (id));
-- expect: error
copy cp to stdout (format csv, force_not_null (id));
-- expect: error
copy cp to stdout (format csv, force_null (id));
-- expect: error
copy cp to stdout (null 'a|b', delimiter '|');
-- expect: error
copy cp to stdout (format csv, null '"');
-- expect: error
copy cp to 'relative/path.txt';
-- expect: error
copy cp to stdout (header match);
-- expect: error
copy cp to stdout (header 2);
-- expect: error
copy cp to stdout (freeze maybe);
-- expect: error
copy cp to stdout (nosuch_option 1);
-- expect: error
copy cp to stdout (delimiter 'ab');
-- expect: error
copy cp to stdout (null);
-- expect: error
copy cp to stdout where id > 1;
-- expect: error
copy cp to stdout (format csv, force_not_null *);
-- expect: error
copy (select nope from cp) to stdout;
create view cpv as select id, name from cp;
-- expect: error
copy cpv to stdout;
copy (select * from cpv where id = 1) to stdout;
