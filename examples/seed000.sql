-- Seed 000's query: a 10-million-row self join, counted (the seed ran it
-- with work_mem = 1GB; at the default 4MB the join partitions to temp files).
\timing on
drop table if exists t;
create table t as select generate_series(1, 10000000)::int i;
set work_mem = '1GB';
explain analyze select count(*) from t t1 join t t2 using (i);
