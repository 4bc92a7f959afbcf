create table t (a int, b text);
copy t from stdin;
3	three
4	four
\.
\copy t from 'in.txt'
\copy t from 'in.txt' with (format csv)
copy t (a) from stdin with (format csv, header);
a
5
\.
copy t from stdin;
6	six
x	bad
\.
select * from t order by a;
\copy (select * from t order by a) to 'out.txt' with (format csv)
copy t to stdout;
copy (select a, b from t where a < 3 order by a) to stdout with (format csv, header, force_quote *);
truncate t;
select count(*) from t;
