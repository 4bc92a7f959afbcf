-- Dates, times, timestamps, timestamptz and intervals: literals, input and
-- output, arithmetic, functions, time zones, and the engine's operations
-- (sort, group, join, distinct, indexes, windows, COPY) over them.

set timezone = 'UTC';
set datestyle = 'ISO, MDY';

-- literals and input forms
select date '1998-12-01', date 'January 8, 1999', date '1999-01-08', date '1/8/1999', date '19990108';
select time '04:05:06.789', time '04:05 PM', time '24:00', time '040506';
select timestamp '2004-10-19 10:23:54', timestamp '2004-10-19 10:23:54.123456', timestamp 'epoch';
select timestamptz '2004-10-19 10:23:54+02', timestamptz '2004-10-19 10:23:54 America/New_York';
select date 'infinity', date '-infinity', timestamp 'infinity', timestamptz '-infinity';
select date '0044-03-15 BC', timestamp '0001-01-01 00:00 BC', date '4714-11-24 BC';
select '2000-02-29'::date, '2001-02-28'::date + 1, '2000-12-31'::date - '2000-01-01'::date;
select interval '1 day', interval '1 year 2 months 3 days 04:05:06.5', interval '-1 day +02:00', interval 'P1Y2M3DT4H5M6S';
select interval '1' year, interval '1-2' year to month, interval '3 4:05:06' day to second, interval '3 4:05:06.789' day to second(1);
select interval '10' day, interval '10' hour, interval '10' minute, interval '10.5' second, interval '1.2345' second(2);
select interval '1 2' day to hour, interval '1 2:03' day to minute, interval '2:03' hour to minute, interval '2:03:04' hour to second, interval '3:04' minute to second;
select interval '1 day 2 hours' minute, interval '1 year 5 months' year, interval '100 days' month;
select interval '@ 1 hour ago', interval '1 week', interval '1 millennium', interval '1 decade 1 century';
select '1 day'::interval, '-2 hours'::interval, '1.5 years'::interval;

-- output of edge values
select timestamp '294276-12-31 23:59:59.999999', date '5874897-12-31', timestamp '4713-01-01 BC';
select time '00:00:00.000001', time '23:59:59.999999', interval '0', interval '-0.000001 sec';

-- bad input
-- expect: error
select date '2000-13-01';
-- expect: error
select date '2000-02-30';
-- expect: error
select date 'abc';
-- expect: error
select '2000-01-01 25:00'::timestamp;
-- expect: error
select 'tomorrowish'::timestamp;
-- expect: error
select '294277-01-01'::timestamp;
-- expect: error
select '5874898-01-01'::date;
-- expect: error
select time '25:00';
-- expect: error
select interval 'one day';
-- expect: error
select '2000-01-01 12:00 Mars/Olympus'::timestamptz;
-- expect: error
select interval '90' day to hour (3);

-- arithmetic
select date '2000-01-31' + 1, 1 + date '2000-01-31', date '2000-01-01' - 1, date '2000-03-01' - date '2000-02-01';
select date '2000-01-31' + interval '1 month', date '2000-03-31' - interval '1 month', interval '1 day' + date '2000-01-01';
select date '2000-01-01' + time '12:34', time '01:00' + date '2000-01-01';
select timestamp '2000-01-31 10:00' + interval '1 month 1 day 1 hour', timestamp '2000-01-01' - interval '1 year';
select timestamp '2001-01-01' - timestamp '2000-01-01 12:00', timestamp '2000-01-01' - timestamp '2001-06-01 03:04:05';
select timestamptz '2000-01-01 00:00+00' + interval '36 hours', timestamptz '2000-01-01' - timestamptz '1999-12-25 12:00';
select time '23:00' + interval '2 hours', time '01:00' - interval '3 hours', time '12:00' - time '10:30';
select interval '1 day' + interval '2 hours', interval '1 month' - interval '1 day', - interval '1 year 2 days';
select interval '1 day' * 2, 2.5 * interval '1 hour', interval '1 month' * 1.5, interval '3 days' / 2, interval '1 year' / 7;
select interval '1 hour' * 0.1, interval '1 day' / 1000000;
select date '1998-12-01' - interval '90' day;
select date 'infinity' + 1, timestamp 'infinity' + interval '1 day', date '-infinity' - 10;
-- expect: error
select date 'infinity' - date '2000-01-01';
-- expect: error
select timestamp 'infinity' - timestamp '2000-01-01';
-- expect: error
select date '5874897-12-31' + 1;
-- expect: error
select timestamp '294276-12-31' + interval '1 day';
-- expect: error
select date '2000-01-01' + 2147483647;
-- expect: error
select interval '1 day' / 0;
-- expect: error
select interval '2147483647 days' + interval '1 day';
-- expect: error
select date '2000-01-01' + 1::bigint;
-- expect: error
select date '2000-01-01' + date '2000-01-01';

-- comparisons across types
select date '2000-01-01' = timestamp '2000-01-01', date '2000-01-01' < timestamp '2000-01-01 00:00:01';
select timestamp '2000-01-01 05:00' = timestamptz '2000-01-01 05:00+00', date '2000-01-02' > timestamptz '2000-01-01 23:00+00';
select interval '1 day' = interval '24 hours', interval '1 month' = interval '30 days', interval '1 year' > interval '360 days';
select time '10:00' < time '10:00:00.000001', date 'infinity' > date '5874897-12-31', date '-infinity' < date '4714-11-24 BC';
select date '2000-01-01' between date '1999-12-31' and timestamp '2000-01-01 00:00', date '2000-01-01' in (timestamp '2000-01-01', timestamp '2000-01-02');
select greatest(date '2000-01-01', timestamp '2000-01-01 10:00'), least(interval '1 day', interval '23 hours'), coalesce(null::date, date '2000-01-01');

-- casts
select date '2000-01-01'::timestamp, date '2000-01-01'::timestamptz, timestamp '2000-01-01 13:14:15'::date, timestamp '2000-01-01 13:14:15'::time;
select timestamptz '2000-01-01 13:14:15+00'::timestamp, timestamptz '2000-01-01 23:14:15+00'::date, time '10:00'::interval, interval '26 hours'::time;
select date '2000-01-01'::text, timestamp '2000-01-01 10:00'::varchar, interval '1 day'::text, '2000-01-01'::text::date;
select cast('2000-01-01' as date), cast(timestamp '2000-01-01 12:00' as date), cast('1 hour' as interval);
-- expect: error
select date '2000-01-01'::int;
-- expect: error
select 1::date;
-- expect: error
select interval '1 day'::date;

-- extract and date_part
select extract(year from date '2000-03-04'), extract(month from date '2000-03-04'), extract(day from date '2000-03-04'), extract(dow from date '2000-03-04');
select extract(epoch from timestamp '2001-02-16 20:38:40.12'), extract(second from timestamp '2001-02-16 20:38:40.12'), extract(milliseconds from time '17:12:28.5');
select extract(century from date '2000-12-16'), extract(millennium from date '2001-02-16'), extract(decade from date '0044-03-15 BC'), extract(year from date '0044-03-15 BC');
select extract(isodow from date '2001-02-18'), extract(isoyear from date '2006-01-01'), extract(week from date '2006-01-01'), extract(doy from date '2001-02-16'), extract(quarter from date '2001-11-16');
select extract(julian from date '2006-01-01'), extract(epoch from timestamptz '2001-02-16 20:38:40.12-08'), extract(timezone from timestamptz '2001-02-16 20:38:40+00');
select extract(epoch from interval '5 days 3 hours'), extract(hour from interval '5 days 3 hours'), extract(month from interval '2 years 3 months'), extract(year from interval '-1 year');
select extract(hour from time '17:12:28.5'), extract(microseconds from time '17:12:28.5');
select date_part('year', date '2000-03-04'), date_part('dow', timestamp '2000-03-04'), date_part('epoch', interval '1 day'), date_part('second', timestamp '2001-02-16 20:38:40.12');
select date_part('hour', time '04:05:06'), date_part('epoch', timestamptz '2000-01-01 00:00+00'), date_part('day', interval '3 days 4 hours');
select extract(year from date 'infinity'), extract(day from date 'infinity'), date_part('epoch', timestamp '-infinity');
-- expect: error
select extract(hour from date '2000-01-01');
-- expect: error
select extract(foo from timestamp '2000-01-01');
-- expect: error
select date_part('dow', interval '1 day');

-- date_trunc
select date_trunc('month', timestamp '2000-03-04 05:06:07'), date_trunc('year', timestamp '2000-03-04 05:06:07'), date_trunc('hour', timestamp '2000-03-04 05:06:07.8');
select date_trunc('week', timestamp '2000-03-04 05:06:07'), date_trunc('quarter', timestamp '2000-08-04'), date_trunc('decade', timestamp '2009-03-04'), date_trunc('century', timestamp '2000-03-04'), date_trunc('millennium', timestamp '2001-03-04');
select date_trunc('day', timestamptz '2000-03-04 05:06:07+00'), date_trunc('month', date '2000-03-04'), date_trunc('milliseconds', timestamp '2000-03-04 05:06:07.123456');
select date_trunc('day', timestamptz '2001-02-16 20:38:40+00', 'Australia/Sydney'), date_trunc('hour', interval '3 days 04:05:06'), date_trunc('year', interval '15 months');
select date_trunc('day', timestamp 'infinity');
-- expect: error
select date_trunc('foo', timestamp '2000-01-01');
-- expect: error
select date_trunc('week', interval '10 days');

-- age, make_*, justify_*, isfinite
select age(timestamp '2001-04-10', timestamp '1957-06-13'), age(timestamp '1957-06-13', timestamp '2001-04-10'), age(timestamp '2000-03-31', timestamp '2000-02-29 12:00');
select age(timestamptz '2001-04-10 00:00+00', timestamptz '2000-01-01 12:00+00'), age(date '2001-01-01', date '2000-01-31');
select age(timestamp '2000-01-01') > interval '20 years', age(current_date::timestamp) = interval '0';
select make_date(2013, 7, 15), make_date(-44, 3, 15), make_time(8, 15, 23.5), make_timestamp(2013, 7, 15, 8, 15, 23.5), make_timestamptz(2013, 7, 15, 8, 15, 23.5);
select make_timestamptz(2013, 7, 15, 8, 15, 23.5, 'America/New_York'), make_interval(1, 2, 3, 4, 5, 6, 7.5), make_interval(days => 10), make_interval(hours => 1, mins => 30), make_interval();
select make_interval(secs => 1.25), make_interval(2), make_interval(years => 1, days => -1);
-- expect: error
select make_date(2013, 2, 30);
-- expect: error
select make_date(0, 1, 1);
-- expect: error
select make_time(24, 1, 0);
-- expect: error
select make_timestamp(2013, 13, 1, 0, 0, 0);
select justify_days(interval '35 days'), justify_hours(interval '27 hours'), justify_interval(interval '1 mon -1 hour'), justify_days(interval '-35 days'), justify_hours(interval '-50 hours');
select isfinite(date '2001-02-16'), isfinite(date 'infinity'), isfinite(timestamp '-infinity'), isfinite(timestamptz '2000-01-01'), isfinite(interval '4 hours');

-- to_char, to_date, to_timestamp
select to_char(timestamp '2002-04-20 17:31:12.66', 'HH12:MI:SS'), to_char(timestamp '2002-04-20 17:31:12.66', 'YYYY-MM-DD HH24:MI:SS.MS'), to_char(date '2002-04-20', 'Day, DD Month YYYY');
select to_char(timestamp '2002-04-20 17:31:12.66', 'FMDay FMMonth DDth YY Q WW IW J'), to_char(timestamp '2002-04-20 07:31', 'HH AM hh pm'), to_char(timestamp '0044-03-15 BC', 'YYYY BC');
select to_char(timestamptz '2002-04-20 17:31:12+00', 'YYYY-MM-DD HH24:MI TZ OF'), to_char(timestamp 'infinity', 'YYYY'), to_char(date '2000-01-01', '"quarter" Q');
select to_date('05 Dec 2000', 'DD Mon YYYY'), to_date('2000-12-05', 'YYYY-MM-DD'), to_date('20001205', 'YYYYMMDD'), to_timestamp('05 Dec 2000 10:11', 'DD Mon YYYY HH24:MI');
select to_timestamp(1284352323), to_timestamp(0), to_timestamp(1284352323.5), to_timestamp('infinity'::float8);
-- expect: error
select to_date('2000-13-01', 'YYYY-MM-DD');
-- expect: error
select to_date('abcd-01-01', 'YYYY-MM-DD');
-- expect: error
select to_timestamp('nan'::float8);

-- the clock: deterministic uses only
select now() = current_timestamp, now() = transaction_timestamp(), now() > '2000-01-01', statement_timestamp() >= now();
select current_date = now()::date, localtimestamp = now()::timestamp, localtime = now()::time, clock_timestamp() >= now();
select current_timestamp(0) <= now() + interval '1 second', localtimestamp(2) is not null, localtime(3) is not null;
select pg_typeof_check from (select now() - now() as pg_typeof_check) s;
select date_trunc('day', now()) <= now(), extract(year from current_date) >= 2024, age(now()) <= interval '1 second';
select 'now'::timestamptz = now(), 'today'::date = current_date, 'tomorrow'::date = current_date + 1, 'yesterday'::timestamp = current_date - 1;
begin;
select now() = statement_timestamp();
select now() = statement_timestamp();
select now() < statement_timestamp();
commit;

-- time zones
set timezone = 'America/New_York';
show timezone;
select timestamptz '2000-01-01 12:00+00', timestamptz '2000-07-01 12:00+00', timestamptz '2000-01-01 12:00';
select timestamp '2000-01-01 12:00'::timestamptz, timestamptz '2000-01-01 12:00+00'::timestamp, timestamptz '2000-01-01 03:00+00'::date;
select timestamptz '2021-03-14 01:30' + interval '1 day', timestamptz '2021-03-14 01:30' + interval '24 hours', timestamptz '2021-11-07 01:30';
select timestamp '2021-03-14 02:30'::timestamptz, timestamptz '2021-11-07 00:00' + interval '1 day' - timestamptz '2021-11-07 00:00';
select extract(hour from timestamptz '2000-01-01 12:00+00'), extract(timezone from timestamptz '2000-07-01 12:00+00'), extract(timezone_hour from timestamptz '2000-01-01 00:00');
select date_trunc('day', timestamptz '2000-01-01 03:00+00'), date_trunc('month', timestamptz '2000-07-15 12:00'), to_char(timestamptz '2000-07-01 12:00+00', 'HH24:MI TZ OF');
select timestamp '2000-01-01 12:00' at time zone 'UTC', timestamptz '2000-01-01 12:00+00' at time zone 'Asia/Tokyo', timestamp '2000-01-01 12:00' at time zone 'Europe/Paris';
select timestamp '2000-01-01 12:00' at time zone '+05', timestamp '2000-01-01 12:00' at time zone 'EST', timestamptz '2000-01-01 12:00+00' at time zone interval '-08:00';
select '2000-01-01 12:00'::timestamp at time zone 'UTC' at time zone 'Asia/Kolkata';
-- expect: error
select timestamp '2000-01-01 12:00' at time zone 'Mars/Olympus';
-- expect: error
select timestamp '2000-01-01 12:00' at time zone interval '1 day';
set timezone = 'Asia/Kolkata';
select timestamptz '2000-01-01 12:00+00', now() = current_timestamp, current_date = (now() at time zone 'Asia/Kolkata')::date;
set timezone = '+03';
show timezone;
select timestamptz '2000-01-01 12:00+00', timestamp '2000-01-01 12:00'::timestamptz;
set timezone = 'UTC';
-- expect: error
set timezone = 'Nowhere/Special';
show timezone;
select timestamptz '2000-01-01 12:00+05:30';

-- tables: storage, NULLs, empty inputs
create table ev (id int primary key, d date, ts timestamp, tz timestamptz, t time, iv interval);
select count(*), min(d), max(ts), min(tz), max(t), min(iv), max(iv) from ev;
select d, count(*) from ev group by d;
insert into ev values
  (1, '2000-01-01', '2000-01-01 10:00', '2000-01-01 10:00+00', '10:00', '1 day'),
  (2, '2000-01-02', '2000-01-02 11:30', '2000-01-02 11:30+02', '11:30', '2 days'),
  (3, '1999-12-31', '1999-12-31 23:59:59.5', '1999-12-31 23:59:59.5-01', '23:59:59.5', '-1 day'),
  (4, null, null, null, null, null),
  (5, '2000-01-01', '2000-01-01 00:00', '2000-01-01 00:00+00', '00:00', '24 hours'),
  (6, 'infinity', 'infinity', 'infinity', '24:00', '1 month'),
  (7, '-infinity', '-infinity', '-infinity', '00:00:00.000001', '30 days'),
  (8, '0044-03-15 BC', '0044-03-15 12:00 BC', '0044-03-15 12:00+00 BC', '12:00', '1 year -1 sec');
select * from ev order by id;
select id, d + 1, ts + interval '1 hour', tz - interval '1 day', t + interval '30 minutes', iv * 2 from ev order by id;
select id from ev order by d, id;
select id from ev order by ts desc nulls last, id;
select id from ev order by tz nulls first, id;
select id from ev order by t, id;
select id from ev order by iv, id;
select d, count(*) from ev group by d order by d;
select iv, count(*) from ev group by iv order by iv;
select distinct d from ev order by d;
select count(distinct iv), count(distinct d), count(ts), count(*) from ev;
select min(d), max(d), min(ts), max(ts), min(tz), max(tz), min(t), max(t), min(iv), max(iv) from ev;
select sum(iv), avg(iv) from ev where id <> 6;
select id from ev where d = '2000-01-01' order by id;
select id from ev where ts >= '2000-01-01' and ts < '2000-01-02' order by id;
select id from ev where tz between '2000-01-01' and '2000-01-03' order by id;
select id from ev where d < ts order by id;
select id from ev where iv > interval '1 day' order by id;
select id from ev where d is null or t is null;
select id, ts - d as since_midnight from ev where id in (1, 2, 3, 5) order by id;
select id, extract(year from d), date_part('month', ts), to_char(ts, 'YYYY/MM/DD') from ev order by id;
update ev set d = d + 7, iv = iv + interval '1 hour' where id = 1;
select d, iv from ev where id = 1;
delete from ev where ts < '1000-01-01';
select id from ev order by id;
-- expect: error
insert into ev values (1, '2000-01-01', null, null, null, null);
-- expect: error
insert into ev (id, d) values (20, '2000-02-30');
-- expect: error
insert into ev (id, ts) values (21, 'garbage');
insert into ev (id, d, ts) values (22, '2000-02-29'::timestamp, '2000-02-29'::date);
select d, ts from ev where id = 22;

-- dates as keys: joins, grouping and sorting with enough rows to spill
create table days as select g as n, date '2000-01-01' + g as d, timestamp '2000-01-01' + g * interval '1 hour' as ts from generate_series(0, 19999) g;
create table events as select g as n, date '2000-01-01' + (g % 5000) as d, timestamptz '2000-01-01 00:00+00' + (g % 777) * interval '1 day' as tz, (g % 100) * interval '1 minute' as iv from generate_series(1, 30000) g;
select count(*) from days join events using (d);
select count(*), min(days.n), max(events.n) from days join events on days.ts = events.tz;
select d, count(*) from events group by d order by count(*) desc, d limit 5;
select count(*) from (select distinct d from events) s;
select count(*) from (select distinct tz from events) s;
select iv, count(*) from events group by iv order by iv desc limit 3;
select extract(year from d) as y, count(*) from events group by 1 order by 1;
select date_trunc('month', tz) as m, count(*) from events group by 1 order by 1 limit 4;
select d from events order by d desc, n limit 3;
select tz from events order by tz limit 2;
select d, n from days where d in (select d from events where n < 10) order by d;
select count(*) from days where not exists (select 1 from events where events.d = days.d);
select count(*) from days left join events on days.d = events.d where events.n is null;
select min(d), max(d) from (select d from days union select d from events) u;
select count(*) from (select d from days intersect select d from events) i;
select count(*) from (select ts::date from days except select d from events) e;

-- windows ordered by dates, with RANGE offsets
create table sales (d date, amount int);
insert into sales values ('2000-01-01', 10), ('2000-01-02', 20), ('2000-01-02', 5), ('2000-01-04', 40), ('2000-01-08', 80), (null, 1);
select d, amount, sum(amount) over (order by d) from sales order by d, amount;
select d, amount, sum(amount) over (order by d range between interval '2 days' preceding and current row) from sales order by d, amount;
select d, amount, count(*) over (order by d range between current row and interval '3 days' following) from sales order by d, amount;
select d, amount, lag(d) over (order by d, amount), d - lag(d) over (order by d, amount) from sales order by d, amount;
select d, rank() over (order by d desc) from sales order by d desc nulls last, amount;
create table readings (ts timestamp, v int);
insert into readings select timestamp '2000-01-01' + g * interval '10 minutes', g from generate_series(0, 30) g;
select ts, sum(v) over (order by ts range between interval '30 minutes' preceding and current row) from readings order by ts limit 8;
select ts, avg(v) over (order by ts desc range between current row and interval '1 hour' following) from readings order by ts limit 5;

-- indexes and keys on dates and timestamps
create table cal (d date primary key, note text);
insert into cal select date '2020-01-01' + g, 'day ' || g from generate_series(0, 999) g;
create index cal_note_idx on cal (note);
create table stamps (ts timestamp, tz timestamptz, iv interval);
create unique index stamps_ts_idx on stamps (ts);
create index stamps_tz_idx on stamps (tz desc);
insert into stamps select timestamp '2020-01-01' + g * interval '1 minute', timestamptz '2020-01-01 00:00+00' + g * interval '1 second', g * interval '1 second' from generate_series(1, 2000) g;
select note from cal where d = '2020-03-01';
select count(*) from cal where d between '2020-02-01' and '2020-02-29';
select d from cal where d > date '2022-09-20' order by d;
select ts from stamps where ts = '2020-01-01 00:10';
select count(*) from stamps where tz >= '2020-01-01 00:30+00' and tz < '2020-01-01 00:31+00';
select count(*) from stamps where ts < timestamp '2020-01-01 01:00';
select count(*) from cal where d = timestamp '2020-03-01';
-- expect: error
insert into cal values ('2020-01-05', 'dup');
-- expect: error
insert into stamps (ts) values ('2020-01-01 00:01');
insert into cal values ('2020-01-05', 'dup') on conflict (d) do update set note = excluded.note;
select * from cal where d = '2020-01-05';

-- CASE, COALESCE and UNION bring dates and timestamps to one type
select case when true then date '2000-01-01' else timestamp '2000-01-02 03:00' end;
select coalesce(null, timestamp '2000-01-01 10:00', date '2000-01-01');
select d from (select date '2000-01-01' as d union all select timestamp '2000-01-02 12:00') u order by d;
select x from (values (date '2000-01-01'), ('2000-01-03'), (null)) v(x) order by x;
select * from (values (interval '1 day'), (interval '1 hour'), ('1 minute')) v(x) order by x;

-- COPY of date/time columns
copy ev to stdout;
copy (select d, ts, iv from ev where id < 4 order by id) to stdout with (format csv, header);
create table ev_copy (d date, ts timestamp, tz timestamptz, t time, iv interval);
insert into ev_copy values
  ('2000-01-01', '2000-01-01 10:00:00', '2000-01-01 10:00:00+00', '10:00:00', '1 day'),
  ('infinity', '-infinity', 'infinity', '24:00:00', '-1 years -2 mons'),
  (null, null, null, null, null),
  ('0044-03-15 BC', '0044-03-15 12:00:00 BC', '2000-06-01 12:00:00+05', '00:00:00.5', '00:00:00.000001');
copy ev_copy to stdout;
copy ev_copy to stdout with (format csv);
select * from ev_copy order by d;

-- typmods: precision of times and timestamps, fields of intervals
create table tm (a timestamp(0), b timestamptz(2), c time(1), d interval day to second(2), e interval year to month, f interval hour, g interval(3));
insert into tm values ('2000-01-01 10:00:00.5', '2000-01-01 10:00:00.555+00', '10:00:00.25', '1 day 02:03:04.567', '1 year 2 months 3 days', '1 day 2 hours 3 minutes', '1.23456 seconds');
insert into tm values ('2000-01-01 23:59:59.7', '1999-12-31 23:59:59.999+00', '23:59:59.99', '-1.005 seconds', '-13 months', '2.5 hours', '-0.0005 seconds');
select * from tm order by a;
copy tm to stdout;
select timestamp(2) '2000-01-01 10:00:00.12345', '2000-01-01 10:00:00.5'::timestamp(0), '10:00:00.123'::time(0), interval '1 day 1 hour' day, '1.5 sec'::interval(0);
select cast('2000-01-01 10:00:00.987654' as timestamp(3)), cast(interval '100 days 3 hours' as interval month);
update tm set a = a + interval '0.7 seconds' where c < '12:00';
select a from tm order by a;

-- untyped literals: which overload PostgreSQL's resolution picks
-- expect: error
select date_part('year', '2000-01-01');
-- expect: error
select extract(year from '2000-01-01 10:00');
-- expect: error
select extract(year from 1);
-- expect: error
select date_trunc('month', '2000-03-04');
-- expect: error
select to_char('2000-01-01', 'YYYY');
-- expect: error
select isfinite('infinity');
-- expect: error
select date '2000-01-01' - '1 day';
-- expect: error
select date '2000-01-01' + '1 day';
-- expect: error
select '1 day' * 2;
select age('2000-01-01', '1999-01-01'), '2000-01-01 12:00' at time zone 'UTC', justify_days('40 days');
select now() - '2000-01-01' > '1 day', timestamp '2000-01-01' - '2000-01-01', interval '1 day' * '2', date '2000-01-01' - '1999-01-01';
select date_trunc('month', current_date) = date_trunc('month', now()), current_date - 1 < current_date;

-- OVERLAPS
select (date '2001-02-16', date '2001-12-21') overlaps (date '2001-10-30', date '2002-10-30');
select (date '2001-02-16', interval '100 days') overlaps (date '2001-10-30', date '2002-10-30');
select (date '2001-10-29', date '2001-10-30') overlaps (date '2001-10-30', date '2001-10-31');
select (date '2001-10-30', date '2001-10-30') overlaps (date '2001-10-30', date '2001-10-31');
select (timestamp '2000-01-01 10:00', null) overlaps (timestamp '2000-01-01 09:00', timestamp '2000-01-01 11:00');
select (timestamp '2000-01-01 10:00', null) overlaps (timestamp '2000-01-01 10:00', timestamp '2000-01-01 11:00');
select (time '10:00', time '12:00') overlaps (time '11:00', time '13:00'), (null::date, null::date) overlaps (date '2000-01-01', date '2000-01-02');
select id, (ts, ts + interval '1 hour') overlaps (timestamp '2000-01-01 10:30', timestamp '2000-01-01 11:00') from ev order by id;

-- SET TIME ZONE, the SQL standard's spelling
set time zone 'America/Los_Angeles';
show time zone;
select timestamptz '2000-01-01 12:00+00';
set time zone -7;
show timezone;
set time zone interval '+02:00' hour to minute;
show timezone;
select timestamptz '2000-01-01 12:00+00';
set time zone local;
set time zone 'UTC';
show time zone;

-- to_char's numeric templates share the name
select to_char(1234.5, '9,999.99'), to_char(-42, 'S999'), to_char(12345678901, '99999999999'), to_char(0.5, 'FM0.00'), to_char(7, '9th');
