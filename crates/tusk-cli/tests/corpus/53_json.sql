-- json and jsonb: input and output (normal form, duplicate keys,
-- numbers), syntax errors, the operators (-> ->> #> #>> @> <@ ? ?| ?& ||
-- -), comparison and order, grouping and DISTINCT, the builders and
-- inspectors, casts, NULLs and empty inputs, heap and columnar tables.

select '{"b":1,"a":[1,2.0,1e2,-0,1E-2, 0.10]}'::jsonb;
select '{"a":1,"a":2, "aa": 3, "b": {"y":1, "x":2}}'::jsonb;
select '  {"a" : 1,  "a":2}  '::json;
select '"x\u0041\n\"\\\/\b\f\r\t"'::jsonb, '"x\u0041"'::json;
select 'null'::jsonb, 'true'::jsonb, 'false'::json, '"ü"'::jsonb, '[]'::jsonb, '{}'::jsonb;
select '[1, [2, [3, [4]]], {"k": {"k": {}}}]'::jsonb;
select '1e400'::jsonb, '-1.50e-3'::jsonb, '12345678901234567890123456789012345678901234'::jsonb;
-- expect: error
select '{bad'::jsonb;
-- expect: error
select '[1,2'::json;
-- expect: error
select '[1,]'::jsonb;
-- expect: error
select '{"a" 1}'::jsonb;
-- expect: error
select '1.x'::json;
-- expect: error
select '"abc'::json;
-- expect: error
select ''::jsonb;
-- expect: error
select '01'::jsonb;
-- expect: error
select '[1] 2'::jsonb;
-- expect: error
select '"\u0000"'::jsonb;
select '"\u0000"'::json;
-- expect: error
select '"\q"'::json;
select '"\ud83d\ude00"'::jsonb;
-- expect: error
select '"\ud83d"'::jsonb;
select null::jsonb, null::json;
-- tables
create table j (id int, d jsonb, t json);
insert into j values
  (1, '{"a": 1, "tags": ["x", "y"], "n": {"k": [10, 20]}}', '{"a" : 1, "a": 5}'),
  (2, '{"a": 2.0, "b": null}', '[1, 2, 3]'),
  (3, null, null),
  (4, '[]', 'null'),
  (5, '{"a": 1.0, "tags": ["x", "y"], "n": {"k": [10, 20]}}', '1'),
  (6, '[1, "x", null, {"a": 1}]', '"str"'),
  (7, '"tags"', '{"n": {"k": [1]}}'),
  (8, '3', '[]'),
  (9, 'null', '{}'),
  (10, '{}', '{"a": null}');
select id, d, t from j;
select id, d -> 'a', d ->> 'a', d -> 0, d ->> 1, d -> -1 from j;
select id, t -> 'a', t ->> 'a', t -> 0, t ->> 1, t -> -1, t -> 'n' -> 'k' from j;
select id, d #> '{n,k}', d #>> '{n,k,1}', d #> '{}', t #> '{n,k,0}', t #>> '{n}' from j;
select id, d #> '{a,0}', d #> '{tags,-1}', d #> '{tags,x}', d #> array['n', null] from j;
select id, d @> '{"a": 1}', d <@ '{"a": 1, "tags": ["x", "y", "z"], "n": {"k": [10, 20, 30]}}', d @> '[1]', d @> '1' from j;
select id, d ? 'a', d ? 'x', d ?| array['b', 'tags'], d ?& array['a', 'tags'], d ?& '{}'::text[] from j;
select id, d || '{"z": true}', d || '[9]', d - 'a' from j where jsonb_typeof(d) in ('object', 'array');
select id, d - 0, d - -1, d - 'x', d - 9 from j where jsonb_typeof(d) = 'array';
-- expect: error
select d - 'a' from j where id = 8;
-- expect: error
select d - 0 from j where id = 1;
select id, jsonb_typeof(d), json_typeof(t) from j;
select id, jsonb_array_length(d) from j where jsonb_typeof(d) = 'array';
select id, json_array_length(t) from j where json_typeof(t) = 'array';
-- expect: error
select jsonb_array_length(d) from j where id = 1;
-- expect: error
select jsonb_array_length(d) from j where id = 8;
-- expect: error
select json_array_length(t) from j where id = 5;
select '[1,2,3]'::jsonb -> 5, '{"a":1}'::jsonb -> 1, '1'::jsonb -> 0, '1'::jsonb -> -1, '1'::json -> 0;
select '{"a":1}'::jsonb -> null, null::jsonb -> 'a', '{"a":null}'::jsonb ->> 'a', '{"a":null}'::jsonb -> 'a';
-- comparison, order, grouping
select id, d from j order by d, id;
select id, d from j order by d desc nulls last, id;
select d, count(*) from j group by d;
select distinct d from j;
select a.id, b.id from j a join j b on a.d = b.d and a.id < b.id;
select id from j where d = '{"tags":["x","y"],"a":1,"n":{"k":[10,20]}}';
select id from j where d > '{}' and d < '{"a": 1, "b": 2}';
select '[]'::jsonb < 'null'::jsonb, '1'::jsonb < '[0]', '{"a":1}'::jsonb > '[1,2]', '1.0'::jsonb = '1', '"a"'::jsonb < '1';
-- expect: error
select max(d), min(d) from j;
select greatest('1'::jsonb, '"a"', '[]'), least('{"a":1}'::jsonb, '{"a":0}');
select id, d in ('{}', '3', '"tags"') from j;
select id, case d when '3' then 'three' when '{}' then 'empty' end from j;
select id, d is distinct from '3' from j;
-- expect: error
select t = t from j;
-- expect: error
select t from j order by t;
-- builders and inspectors
select jsonb_build_object('a', 1, 'b', 'x', 'c', null, 'd', true, 'a', 2);
select json_build_object('a', 1, 'b', 'x', 'c', null, 'd', 1.50), json_build_object(), jsonb_build_object();
select json_build_array(1, 'x', null, 2.5, false), jsonb_build_array(), jsonb_build_array(1, '{"a":1}'::jsonb, '[1]'::json);
-- expect: error
select jsonb_build_object('a');
-- expect: error
select json_build_object(null, 1);
select json_build_object(1, 2), jsonb_build_object(true, 'x');
select to_json('a"b'::text), to_jsonb(1.50), to_json(true), to_jsonb(null::int), to_json(array[1,2]), to_jsonb(array['a', null]);
select to_json(date '2020-01-02'), to_json(timestamp '2020-01-02 03:04:05.5'), to_jsonb('NaN'::numeric), to_json(interval '1 day');
select to_json(x), to_jsonb(x) from generate_series(1, 3) x;
select jsonb_strip_nulls('{"a": null, "b": [null, {"c": null, "d": 1}]}');
select jsonb_pretty('{"a":[1,{"b":[]}],"c":{}}');
select jsonb_pretty('1'), jsonb_pretty('[]');
select id, jsonb_extract_path(d, 'n', 'k'), jsonb_extract_path_text(d, 'a'), json_extract_path(t, 'n'), json_extract_path_text(t, 'a') from j;
select jsonb_object_field(d, 'a'), jsonb_object_field_text(d, 'a'), jsonb_array_element(d, 0), json_object_field(t, 'a') from j where id in (1, 6);
select jsonb_contains('{"a":[1,2]}', '{"a":[2]}'), jsonb_exists('["a"]', 'a'), jsonb_concat('{"a":1}', '{"a":2}');
-- casts
select '1.5'::jsonb::numeric, '1.5'::jsonb::int, '2'::jsonb::bigint, '1e2'::jsonb::float8, 'true'::jsonb::boolean;
-- expect: error
select '"1"'::jsonb::int;
-- expect: error
select 'null'::jsonb::int;
-- expect: error
select '[]'::jsonb::numeric;
-- expect: error
select '1'::jsonb::boolean;
select d::text, t::text, d::json, t::jsonb from j where id in (1, 2, 6);
select '{"b":1, "a":2}'::json::jsonb, '{"b": 1}'::jsonb::json, '{"x": 1}'::text::jsonb;
select (d ->> 'a')::numeric + 1 from j where d ? 'a';
select cast(d -> 'n' -> 'k' -> 0 as int) * 2 from j where d ? 'n';
-- in expressions, aggregates and subqueries
select count(*) filter (where d @> '{"tags":["x"]}'), count(d ? 'a' or null) from j;
select d ->> 'a' as a, count(*) from j where jsonb_typeof(d) = 'object' group by d ->> 'a' order by 1;
select id from j where d -> 'n' is not null and d -> 'n' -> 'k' @> '[20]';
select id, (select count(*) from j j2 where j2.d @> j.d) from j where d is not null;
select coalesce(d -> 'zz', '"none"'), nullif(d, '3') from j where id in (1, 8);
-- empty inputs
create table je (d jsonb, t json);
select d -> 'a', t -> 'a' from je;
select count(d), count(t) from je;
-- updates and deletes
update j set d = d || '{"updated": true}' where jsonb_typeof(d) = 'object';
select id, d from j where d ? 'updated';
delete from j where d @> '{"a": 2}';
select count(*) from j;
-- columnar tables
create table jc (id int, d jsonb, t json) using columnar;
insert into jc select id, d, t from j;
select id, d, t, d -> 'a' from jc;
select d, count(*) from jc group by d;
select id from jc where d @> '{"tags": ["y"]}';
select id from jc where d = '{}' or d > '{"z": 1, "zz": 2, "zzz": 3, "zzzz": 4, "zzzzz": 5}';
-- indexes
-- expect: error
create index on j (t);
-- a json column in COPY
copy (select id, d, t from j where id <= 2 order by id) to stdout;
-- aggregates
create table ja (g int, k text, v int, d jsonb);
insert into ja values (1, 'a', 1, '{"x": 1}'), (1, 'b', null, '[1, 2]'), (1, 'a', 3, null), (2, 'c', 4, '"s"'), (3, null, 5, '1.50');
select g, json_agg(v), jsonb_agg(v), json_agg(d), jsonb_agg(d), json_agg(k) from ja group by g;
select g, json_agg(v order by v desc nulls last), jsonb_agg(k order by k) from ja group by g;
select json_object_agg(k, v), jsonb_object_agg(k, v) from ja where k is not null;
select g, json_object_agg(k, d), jsonb_object_agg(k, d) from ja where k is not null group by g;
select json_agg(x), jsonb_agg(x) from generate_series(1, 0) x;
select json_agg(distinct v), jsonb_agg(v) filter (where v > 1) from ja;
-- expect: error
select json_object_agg(k, v) from ja;
-- expect: error
select jsonb_object_agg(k, v) from ja;
-- expect: error
select json_agg('x');
select json_object_agg('k', 1), jsonb_object_agg(1, 'x');
select g, jsonb_agg(row_number) from (select g, row_number() over (partition by g order by v) from ja) s group by g;
select jsonb_agg(d) -> 0, jsonb_agg(d) @> '[[1, 2]]' from ja;
set work_mem = '64kB';
select count(*), max(length(j::text)) from (select x % 100 as g, jsonb_agg(x) as j from generate_series(1, 20000) x group by x % 100) s;
select count(*), sum(jsonb_array_length(j)) from (select x % 5000 as g, jsonb_agg(x) as j from generate_series(1, 20000) x group by x % 5000) s;
reset work_mem;
-- set-returning functions
select * from jsonb_array_elements('[1, "x", null, {"a": [1]}, []]');
select * from jsonb_array_elements_text('[1, "x", null, {"a": [1]}, "\n"]');
select jsonb_array_elements('[1, 2]'), jsonb_array_elements_text('["a", "b"]');
select * from json_array_elements('[1, {"a" : 2},"x", null, [ 1 ,2 ] ]');
select * from json_array_elements_text('[1, {"a" : 2},"x", null]');
select * from jsonb_object_keys('{"b":1,"a":2,"b":3, "aa": 4}');
select * from json_object_keys('{"b":1,"a":2,"b":3, "aa": 4}');
select id, e from j, jsonb_array_elements(d -> 'tags') e;
select id, k from j, jsonb_object_keys(d) k where jsonb_typeof(d) = 'object';
select id, count(*) from j left join lateral jsonb_array_elements(case when jsonb_typeof(d) = 'array' then d end) e on true group by id;
select * from jsonb_array_elements(null);
select * from jsonb_array_elements('[]');
-- expect: error
select * from jsonb_array_elements('1');
-- expect: error
select * from jsonb_array_elements('{}');
-- expect: error
select * from jsonb_object_keys('[]');
-- expect: error
select * from jsonb_object_keys('"x"');
-- expect: error
select * from json_array_elements('1');
-- expect: error
select * from json_array_elements_text('{}');
-- expect: error
select * from json_object_keys('[]');
select sum(e::int) from jsonb_array_elements_text('[1, 2, 3]') e;
-- json has no equality: no grouping, DISTINCT or ordering by it
-- expect: error
select t, count(*) from j group by t;
-- expect: error
select distinct t from j;
-- expect: error
select distinct id, t from j;
select distinct t::text from j;
select t::jsonb, count(*) from j group by t::jsonb;
-- editing paths: jsonb_set, jsonb_insert, #-, - text[]
select jsonb_set('[1,2]', '{5}', '3'), jsonb_set('[1,2]', '{-5}', '3'), jsonb_set('[1,2]', '{-5}', '3', false), jsonb_set('[1,2]', '{-1}', '9');
select jsonb_set('[]', '{0}', '3'), jsonb_set('[]', '{-1}', '3'), jsonb_set('[1, [2, 3]]', '{1, 0}', '"x"');
select jsonb_set('{"a":{"b":1}}', '{a,c}', '3'), jsonb_set('{"a":{"b":1}}', '{x,c}', '3'), jsonb_set('{"a":1}', '{a,c}', '3');
select jsonb_set('{"a":1}', '{a}', 'null'), jsonb_set('{"a":1}', '{a}', null), jsonb_set('{"a":1}', '{}', '2'), jsonb_set('{"a":1}', '{b}', '2', false);
select jsonb_set(d, '{a}', '"changed"') from j where jsonb_typeof(d) = 'object';
-- expect: error
select jsonb_set('[1,2]', '{x}', '3');
-- expect: error
select jsonb_set('1', '{a}', '3');
-- expect: error
select jsonb_set('{"a":1}', '{NULL}', '2');
select jsonb_insert('[1,2]', '{1}', '9'), jsonb_insert('[1,2]', '{1}', '9', true), jsonb_insert('[1,2]', '{-1}', '9', true), jsonb_insert('[1,2]', '{9}', '9');
select jsonb_insert('{"a":1}', '{b}', '9'), jsonb_insert('{"a": [0, 1]}', '{a, 0}', '"new"'), jsonb_insert('[]', '{0}', '1');
-- expect: error
select jsonb_insert('{"a":1}', '{a}', '9');
select '[1,2,3]'::jsonb #- '{1}', '{"a":{"b":1,"c":2}}'::jsonb #- '{a,b}', '{"a":1}'::jsonb #- '{x}', '{"a":[1,2]}'::jsonb #- '{a,-1}', '[1]'::jsonb #- '{}';
-- expect: error
select '1'::jsonb #- '{0}';
-- expect: error
select '[1,2]'::jsonb #- '{x}';
select '[1,2]'::jsonb - '{1}'::text[], '{"a":1,"b":2,"c":3}'::jsonb - '{a,b}'::text[], '["a","b"]'::jsonb - array['a'];
select jsonb_delete_path('{"a": [1, {"b": 2}]}', '{a,1,b}'), jsonb_delete('{"a":1}', 'a');
update j set d = jsonb_set(d, '{n,k,0}', '99') where d ? 'n';
select id, d -> 'n' from j where d ? 'n';
-- json[b]_each[_text]: two columns, key and value
select * from jsonb_each('{"b": 1, "a": [1, 2], "c": null, "d": "x"}');
select * from jsonb_each_text('{"b": 1, "a": [1, 2], "c": null, "d": "x"}');
select * from json_each('{"a":1,"b":"x","a":null, "c" : { "n" : 1 }}');
select * from json_each_text('{"a":1,"b":"x","a":null}');
select key, value from jsonb_each('{"k": true}');
select t.key, t.value from jsonb_each('{"k": true}') t;
select k, v from jsonb_each('{"x": 1, "y": 2}') as t(k, v) where v::int > 1;
select id, e.key, e.value from j, jsonb_each(d) e where jsonb_typeof(d) = 'object' order by id, e.key;
select id, count(e.key) from j left join lateral jsonb_each(case when jsonb_typeof(d) = 'object' then d end) e on true group by id;
select * from jsonb_each('{}');
select * from jsonb_each(null);
select * from jsonb_each('{"a": 1}') with ordinality;
-- expect: error
select * from jsonb_each('[]');
-- expect: error
select * from jsonb_each_text('1');
-- expect: error
select * from json_each('[]');
-- expect: error
select * from json_each_text('"x"');
-- equal documents with different text (1.0 and 1) in a columnar table
create table jc2 (d jsonb) using columnar;
insert into jc2 select case when x % 2 = 0 then '{"a": 1.0}'::jsonb else '{"a": 2}' end from generate_series(1, 1000) x;
select count(*) from jc2 where d = '{"a": 1}';
select count(*) from jc2 where d in ('{"a": 1}', '{"a": 3}');
select count(*) from jc2 where d <> '{"a": 1}';
select count(*) from jc2 where d < '{"a": 1.5}';
select count(distinct d) from jc2;
select count(*) from jc2 a join (values ('{"a": 1}'::jsonb)) v(d) on a.d = v.d;
select count(*) from jc2 where d in (select '{"a": 1.00}'::jsonb);
