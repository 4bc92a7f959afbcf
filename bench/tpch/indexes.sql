-- Built after the load (and timed apart from it): an index on lineitem's
-- foreign key to partsupp, which the specification allows beside the
-- primary keys. Without it PostgreSQL runs Q17's and Q20's correlated
-- subqueries as a scan of lineitem per outer row (at SF 0.1 already 107 s
-- and 164 s; hours at SF 1), and gives no reference answer in time.
create index lineitem_l_partkey_l_suppkey_idx on lineitem (l_partkey, l_suppkey);
