-- The system catalogs as drivers and psql read them: pg_class,
-- pg_attribute, pg_index, pg_constraint, pg_attrdef, pg_type,
-- pg_namespace, information_schema, the catalog functions (format_type,
-- pg_get_indexdef, pg_get_constraintdef, pg_get_expr, ...), the reg types,
-- arrays, and the session functions. Nothing here names the owner or the
-- database (the two clusters differ there).

create table items (id int primary key, name text not null, price numeric(10,2) default 0,
    qty int check (qty >= 0), code varchar(20) unique, created date default current_date);
create index items_name_idx on items (name);
create index items_price_desc on items (price desc nulls last, qty);
create table orders (oid_ bigint, item int, note char(5),
    constraint orders_pk primary key (oid_, item), constraint qty_pos check (item > 0));
create unique index orders_note_u on orders (note);
create view cheap as select id, name from items where price < 10;
create table defaults (a int default -1, b bigint default 3000000000, c text default 'x',
    d varchar(10) default 'y', e numeric default -2.5, f boolean default true,
    g int default (1 + 2) * 3, h float8 default 1.5,
    check (c <> ''), check (a between 1 and 10 or a is null), check (h > 1.5 and f),
    check (a in (1, 2, 3)), check (not f), check (a + 1 > -b));

-- pg_class and pg_namespace.
select c.relname, c.relkind, c.relnatts, c.relchecks, c.relhasindex, c.relpersistence
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'public' order by c.relname;
select relname, relkind from pg_catalog.pg_class where relnamespace = 'public'::regnamespace and relkind = 'i' order by 1;
select nspname from pg_namespace where nspname in ('pg_catalog', 'public', 'information_schema', 'pg_toast') order by 1;
select c.relname, am.amname from pg_class c join pg_am am on am.oid = c.relam
where c.relnamespace = 2200 order by 1;
select relname, relkind from pg_class where oid = 'pg_class'::regclass;
select count(*) > 0 from pg_class where relnamespace = 'pg_catalog'::regnamespace;

-- pg_attribute with format_type.
select attname, attnum, format_type(atttypid, atttypmod), attnotnull, atthasdef, attisdropped
from pg_attribute where attrelid = 'items'::regclass and attnum > 0 order by attnum;
select attname, format_type(atttypid, atttypmod) from pg_attribute
where attrelid = 'orders'::regclass and attnum > 0 order by attnum;
select a.attname from pg_attribute a join pg_class c on c.oid = a.attrelid
where c.relname = 'items_price_desc' order by a.attnum;
select attname, attnum from pg_attribute where attrelid = 'pg_catalog.pg_namespace'::regclass order by attnum;

-- Indexes and constraints, and their definitions.
select c.relname, i.indnatts, i.indisunique, i.indisprimary, i.indkey, i.indoption,
       pg_get_indexdef(i.indexrelid), pg_get_indexdef(i.indexrelid, 1, true)
from pg_index i join pg_class c on c.oid = i.indexrelid
where i.indrelid in ('items'::regclass, 'orders'::regclass) order by c.relname;
select conname, contype, conkey, pg_get_constraintdef(oid), pg_get_constraintdef(oid, true)
from pg_constraint where conrelid = 'items'::regclass order by conname;
select conname, contype, pg_get_constraintdef(oid, true)
from pg_constraint where conrelid = 'defaults'::regclass order by conname;
select conname, contype, conkey from pg_constraint where conrelid = 'orders'::regclass order by 1;

-- Defaults, printed as PostgreSQL prints its stored expressions.
select a.attname, pg_get_expr(d.adbin, d.adrelid), pg_get_expr(d.adbin, d.adrelid, true)
from pg_attrdef d join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
where d.adrelid = 'defaults'::regclass order by d.adnum;
select a.attname, pg_get_expr(d.adbin, d.adrelid, true)
from pg_attrdef d join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
where d.adrelid = 'items'::regclass order by d.adnum;

-- pg_type.
select oid, typname, typlen, typbyval, typtype, typcategory, typispreferred, typelem, typarray, typinput, typoutput
from pg_type where oid in (16, 18, 19, 20, 21, 23, 25, 26, 700, 701, 1043, 1082, 1114, 1184, 1186, 1700, 2205, 1007, 1009, 1003) order by oid;
select t.typname from pg_type t where t.typelem = 23 and t.typinput = 'array_in'::regproc;
select typname from pg_type where oid = 'integer[]'::regtype;

-- information_schema.
select table_name, table_type from information_schema.tables
where table_schema = 'public' order by table_name;
select table_name, is_insertable_into from information_schema.tables
where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name;
select table_name, column_name, ordinal_position, data_type, is_nullable,
       character_maximum_length, numeric_precision, numeric_scale, datetime_precision, udt_name
from information_schema.columns where table_schema = 'public' order by table_name, ordinal_position;
select column_name, column_default from information_schema.columns
where table_name = 'defaults' order by ordinal_position;
select constraint_name, constraint_type from information_schema.table_constraints
where table_name = 'items' and constraint_type <> 'CHECK' order by 1;
select constraint_name, column_name, ordinal_position from information_schema.key_column_usage
where table_name in ('items', 'orders') order by 1, 3;
select schema_name from information_schema.schemata order by 1;

-- The reg types.
select 'items'::regclass, 'items'::regclass::oid = (select oid from pg_class where relname = 'items');
select 'pg_catalog.pg_class'::regclass, 'pg_class'::regclass::oid;
select 'integer'::regtype, 'int4'::regtype::oid, 'character varying'::regtype, 'text[]'::regtype;
select 1043::regtype, 1007::regtype, 25::regtype::text;
select 'public'::regnamespace, 'pg_catalog'::regnamespace::oid, 11::regnamespace;
select 0::regclass, '-'::regclass::oid;
select 'items_pkey'::regclass::oid = (select indexrelid from pg_index where indisprimary and indrelid = 'items'::regclass);
-- expect: error
select 'nosuch'::regclass;
-- expect: error
select 'nosuch'::regtype;
-- expect: error
select 'pg_catalog.nosuch'::regclass;
-- expect: error
select 'nosuch'::regnamespace;

-- oid, name and "char".
select 1::oid, '4294967295'::oid, '-1'::oid, 100::oid = 100;
-- expect: error
select 100::oid + 1;
select 'abc'::name, 'a'::"char", 'abc'::"char", 65::"char";
select 'r'::"char" = 'r', 'table'::name = 'table', relname from pg_class where relname = 'items';
-- expect: error
select 'x'::oid;
-- expect: error
select '4294967296'::oid;

-- Arrays.
select array[1, 2, 3], array['a', 'b'], array[1.5, 2], array[true, null];
select '{1,2,NULL}'::int[], '{}'::text[], '{"a b","c,d",NULL,"NULL"}'::text[];
select (array[10, 20, 30])[2], (array[10, 20, 30])[4], (array[10, 20, 30])[0];
select array_to_string(array['a', null, 'c'], ','), array_to_string(array['a', null, 'c'], ',', '*');
select array_upper(array[1, 2, 3], 1), array_lower(array[1, 2, 3], 1), array_length(array[1, 2], 1), cardinality(array[1, 2, 3]);
select array_upper('{}'::int[], 1), array_length('{}'::int[], 1), cardinality('{}'::int[]);
select array_position(array['a', 'b', 'c'], 'b'), array_position(array[1, null, 3], null), array_position(array[1], 5);
select 2 = any(array[1, 2, 3]), 4 = any(array[1, 2, 3]), 2 = any(array[1, null]), 5 = all(array[5, 5]), 5 <> all(array[1, 2]);
select 1 = any('{}'::int[]), null::int = any('{}'::int[]), 1 = all('{}'::int[]);
select id from items where id = any(array[1, 2]) order by id;
select array[1, 2] || 3, 0 || array[1, 2], array[1] || array[2, 3], array_append(array[1], 2), array_cat(array[1], null);
select string_to_array('a,b,,c', ','), string_to_array('a,b,,c', ',', ''), string_to_array('abc', null);
select array(select g from generate_series(1, 4) g order by g desc), array(select 1 where false);
select array[1, 2] = array[1, 2], array[1, 2] < array[1, 3], array[1, 2] < array[1, 2, 0], '{1,NULL}'::int[] = '{1,NULL}'::int[];
select '[0:2]={7,8,9}'::int[], ('[0:2]={7,8,9}'::int[])[0], array_lower('[0:2]={7,8,9}'::int[], 1);
select x, array_agg(y order by y) from (values (1, 'a'), (1, 'b'), (2, null)) v(x, y) group by x order by x;
select array_agg(g) from generate_series(1, 0) g;
-- expect: error
select '{1,2'::int[];
-- expect: error
select array[];
-- expect: error
select 1 = any(5);
-- expect: error
select (5)[1];

-- Session and configuration functions.
select current_setting('DateStyle'), current_setting('nosuch', true);
select set_config('application_name', 'corpus', false);
select current_setting('application_name');
show application_name;
select set_config('application_name', 'corpus two', false), current_setting('application_name');
-- expect: error
select current_setting('nosuch');
-- expect: error
select set_config('nosuch', '1', false);
select current_schema(), current_schemas(true), current_schemas(false);
select pg_typeof(1), pg_typeof('x'::text), pg_typeof(array[1]), pg_typeof(1.5);
select format_type(1043, 14), format_type(1700, 655366), format_type(1042, -1), format_type(1042, null), format_type(23, null), format_type(999999, -1), format_type(null, 1);
select pg_size_pretty(10239::bigint), pg_size_pretty(10240::bigint), pg_size_pretty(8192::bigint * 1000), pg_size_pretty(-10240::bigint);
select pg_size_pretty(10239.5), pg_size_pretty(10240::numeric), pg_size_pretty(123456789012::numeric);
-- expect: error
select pg_size_pretty(10240);
select version() like 'PostgreSQL 15%';
select pg_table_is_visible('items'::regclass), pg_table_is_visible('pg_class'::regclass);
select obj_description('items'::regclass, 'pg_class'), col_description('items'::regclass, 1);
select has_table_privilege('items', 'select'), has_schema_privilege('public', 'usage');
-- expect: error
select has_table_privilege('items', 'frobnicate');
select pg_relation_size('cheap'), pg_relation_size('items') >= 0, pg_total_relation_size('items') >= pg_relation_size('items');
select pg_get_serial_sequence('items', 'id');
select state, query from pg_stat_activity where pid = pg_backend_pid();
select count(*) from pg_stat_activity where pid = pg_backend_pid();
select name, setting, unit, vartype, context from pg_settings
where name in ('DateStyle', 'IntervalStyle', 'search_path', 'statement_timeout', 'lock_timeout') order by name;

-- psql's own queries.
SELECT c.oid::regclass::text, n.nspname, c.relname
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname OPERATOR(pg_catalog.~) '^(items)$' COLLATE pg_catalog.default
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 2, 3;
SELECT n.nspname as "Schema", c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'i' THEN 'index' END as "Type"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','v','m','S','f','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;
SELECT pol.polname, CASE WHEN pol.polroles = '{0}' THEN NULL ELSE pg_catalog.array_to_string(array(select rolname from pg_catalog.pg_roles where oid = any (pol.polroles) order by 1),',') END
FROM pg_catalog.pg_policy pol WHERE pol.polrelid = 'items'::regclass ORDER BY 1;
SELECT oid, stxrelid::pg_catalog.regclass, 'd' = any(stxkind) AS ndist_enabled
FROM pg_catalog.pg_statistic_ext WHERE stxrelid = 'items'::regclass ORDER BY 1;
SELECT c.oid::pg_catalog.regclass FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i
WHERE c.oid = i.inhparent AND i.inhrelid = 'items'::regclass AND c.relkind != 'p' AND c.relkind != 'I' ORDER BY inhseqno;
select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'items' and o.n is not null group by 1, 2 order by 1 asc limit 1;

-- A catalog relation is not a table to write.
-- expect: error
select * from pg_catalog.nosuch;
-- expect: error
select * from information_schema.nosuch;
