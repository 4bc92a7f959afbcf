-- Seed 000's query: a 10-million-row self join, counted.
\timing on
drop table if exists t;
create table t as select generate_series(1, 10000000)::int i;
explain analyze select count(*) from t t1 join t t2 using (i);
