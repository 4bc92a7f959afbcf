-- pg_sleep: a void result (an empty field), NULL for a NULL argument
-- (strict, and no sleep), no wait for a negative or NaN duration, one
-- sleep per row, argument coercion, and a statement_timeout that stops it.

select pg_sleep(0.01);
select pg_sleep(null);
select pg_sleep(-1);
select pg_sleep('nan');
select pg_sleep(0);
select pg_sleep(0.001) is null, pg_sleep(null) is null;
select g, pg_sleep(0.001) from generate_series(1, 3) g;
select count(pg_sleep(0)) from generate_series(1, 5);
select pg_sleep(1) where false;
-- expect: error
select pg_sleep('abc');
-- expect: error
select pg_sleep(1, 2);
set statement_timeout = 50;
-- expect: error
select pg_sleep(5);
reset statement_timeout;
select 'after the timeout';
