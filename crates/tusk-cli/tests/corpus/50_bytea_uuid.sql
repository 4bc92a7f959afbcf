-- bytea and uuid: input forms, output, comparison and order, grouping,
-- joins, indexes, heap and columnar tables, the binary string functions,
-- encode/decode, casts, aggregates, and PostgreSQL's errors. The 64kB
-- variant spills the sorts and hash aggregates of the larger tables; the
-- parallel variant runs them with workers.

create table bu (id int, u uuid, b bytea);
insert into bu values
    (1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x0001ff'),
    (2, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'abc'),
    (3, '{00000000-0000-0000-0000-000000000001}', ''),
    (4, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\x'),
    (5, null, null),
    (6, '00000000000000000000000000000000', 'a\\b\101'),
    (7, 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a12', '\x00'),
    (8, '7fffffff-ffff-ffff-ffff-ffffffffffff', '\x0000'),
    (9, '80000000-0000-0000-0000-000000000000', '\xff'),
    (10, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'abc');
select * from bu order by id;
select id, u, b from bu order by u, id;
select id, u, b from bu order by u desc nulls last, id;
select id, b from bu order by b, id;
select id, b from bu order by b desc, id;
select u, count(*), string_agg(b, '\x2c' order by id) from bu group by u order by u;
select b, count(*), array_agg(id order by id) from bu group by b order by b;
select distinct u from bu order by u;
select count(distinct u), count(distinct b), count(u), count(b) from bu;
select id from bu where u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' order by id;
select id from bu where u > '80000000-0000-0000-0000-000000000000' order by id;
select id from bu where u <> 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' order by id;
select id from bu where b = 'abc' order by id;
select id from bu where b < '\x01' order by id;
select id from bu where b >= 'a' order by id;
select id from bu where b is distinct from '\x00' order by id;
select id from bu where u in ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '00000000-0000-0000-0000-000000000000') order by id;
select x.id, y.id from bu x join bu y on x.u = y.u where x.id < y.id order by 1, 2;
select x.id, y.id from bu x join bu y on x.b = y.b where x.id < y.id order by 1, 2;
select x.id, y.id from bu x left join bu y on x.b = y.b and x.id <> y.id order by 1, 2;
select id, u = lag(u) over (order by u, id), b < lead(b) over (order by id) from bu order by id;
select greatest(u, 'b0000000-0000-0000-0000-000000000000'), least(b, '\x0101') from bu order by id;
select coalesce(u, '11111111-1111-1111-1111-111111111111'), nullif(b, 'abc') from bu order by id;
select case when b = '' then 'empty' when b is null then 'null' else 'some' end from bu order by id;

-- Functions over bytea.
select id, length(b), octet_length(b), bit_length(b), md5(b) from bu order by id;
select id, b || '\xee', '\xee'::bytea || b, b || b from bu order by id;
select id, substring(b from 2), substring(b from 2 for 1), substr(b, 0, 2), substr(b, -1) from bu order by id;
select id, position('\x00'::bytea in b), position('' in b), position('bc'::bytea in b) from bu order by id;
select id, encode(b, 'hex'), encode(b, 'base64'), encode(b, 'escape') from bu order by id;
select id, decode(encode(b, 'base64'), 'base64') = b, decode(encode(b, 'hex'), 'hex') = b, decode(encode(b, 'escape'), 'escape') = b from bu order by id;
select get_byte('\x1234ff'::bytea, 0), get_byte('\x1234ff'::bytea, 2), set_byte('\x1234ff'::bytea, 1, 65), set_byte('\x12'::bytea, 0, 300);
select decode('YWJj', 'base64'), decode(' YW Jj  ', 'BASE64'), decode('YWI=YWI=', 'base64'), decode('', 'base64');
select decode('0a0B ff', 'hex'), decode('a\\000\\\\b', 'escape'), encode('\x5c00ff41'::bytea, 'escape');
select length(encode(decode(repeat('ab', 57), 'hex'), 'base64')), length(encode(decode(repeat('ab', 58), 'hex'), 'base64'));
select encode(decode(repeat('00', 120), 'hex'), 'base64');
select convert_to('héllo', 'UTF8'), convert_from('\x68c3a96c6c6f', 'utf-8'), convert_from(convert_to('ü', 'UTF8'), 'UTF8');
select length('abc'::bytea), md5('abc'::bytea), md5('abc'), byteacat('\x01', '\x02');
select id, sha224(b), sha256(b) from bu order by id;
select id, sha384(b), sha512(b) from bu order by id;
select sha256(decode(repeat('61', n), 'hex')) from generate_series(54, 66) n;
select sha512(decode(repeat('61', n), 'hex')) from generate_series(108, 132, 4) n;
select sha256('abc'), sha224(''), encode(sha256(convert_to('héllo', 'UTF8')), 'hex');
select string_agg(b, '\x00'::bytea) from bu;
select string_agg(b, null) from bu where id > 8;
select string_agg(b, '\x7c') from bu where false;
select '\x41'::bytea = '\x41', '\x41'::bytea < '\x4100'::bytea, '\x41'::bytea > '\x40ff'::bytea, ''::bytea < '\x00'::bytea;
select 'x'::text || '\x41'::bytea, '\x41'::bytea || 'B';

-- bytea_output = escape: printable bytes as they are, others in octal.
set bytea_output = escape;
show bytea_output;
select id, b, b::text from bu order by id;
select '\x5c00ff7e7f1f20'::bytea, ''::bytea, encode('\x5c00ff'::bytea, 'escape');
select array_agg(b order by id) from bu where id < 7;
reset bytea_output;
show bytea_output;
-- expect: error
set bytea_output = 'base64';

-- Casts and text forms.
select u::text, b::text, upper(u::text) from bu order by id;
select 'abc'::text::bytea, '\x4142'::text::bytea, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::text::uuid;
select pg_typeof(u), pg_typeof(b), pg_typeof(b || b), pg_typeof(gen_random_uuid()) from bu limit 1;
select length(gen_random_uuid()::text), gen_random_uuid() = gen_random_uuid(), substr(gen_random_uuid()::text, 15, 1);
select '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}'::uuid[], '{"\\x01",NULL,""}'::bytea[];
select array_agg(u order by id) from bu where id < 4;
select array_agg(b order by id) from bu where id < 5;

-- Columnar tables and indexes.
create table buc (id int, u uuid, b bytea) using columnar;
insert into buc select * from bu;
select * from buc order by id;
select u, count(*) from buc group by u order by u;
select id from buc where u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' order by id;
select id from buc where b > 'a' order by id;
create table bui (u uuid primary key, b bytea unique, n int);
insert into bui select u, b, id from bu where id in (1, 3, 6, 8, 9);
set enable_seqscan = off;
select n from bui where u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
select n from bui where b = '\x0000';
select n from bui where u > '7fffffff-ffff-ffff-ffff-ffffffffffff' order by u;
select n from bui where b < '\x01' order by b;
reset enable_seqscan;
-- expect: error
insert into bui values ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x99', 1);
-- expect: error
insert into bui values ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a99', '\x0000', 1);

-- Larger tables: sorts and aggregates that spill at 64kB.
create table bbig as
    select g as id,
           ('00000000-0000-0000-0000-' || lpad(to_hex(g % 5000), 12, '0'))::uuid as u,
           decode(lpad(to_hex(g % 3000), 8, '0'), 'hex') as b
    from generate_series(1, 30000) g;
select count(*), count(distinct u), count(distinct b) from bbig;
select u, count(*), min(id), max(id) from bbig group by u order by count(*) desc, u limit 5;
select b, count(*) from bbig group by b order by b desc limit 5;
select id, u, b from bbig order by u desc, b, id limit 5;
select count(*) from bbig x join bbig y on x.u = y.u and x.b = y.b;
select md5(string_agg(b, '' order by id)) from bbig;

-- Errors.
-- expect: error
select '\x0'::bytea;
-- expect: error
select '\xzz'::bytea;
-- expect: error
select '\q'::bytea;
-- expect: error
select '\400'::bytea;
-- expect: error
select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1'::uuid;
-- expect: error
select ' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
-- expect: error
select 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-'::uuid;
-- expect: error
select 'a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
-- expect: error
select '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
-- expect: error
select 'g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid;
-- expect: error
select get_byte('\x1234'::bytea, 2);
-- expect: error
select get_byte(''::bytea, 0);
-- expect: error
select set_byte('\x12'::bytea, -1, 0);
-- expect: error
select decode('YWJ', 'base64');
-- expect: error
select decode('Y===', 'base64');
-- expect: error
select decode('YW*j', 'base64');
-- expect: error
select decode('abc', 'hex');
-- expect: error
select decode('ag', 'hex');
-- expect: error
select decode('a\q', 'escape');
-- expect: error
select encode('abc'::bytea, 'base32');
-- expect: error
select convert_from('\x61ff62', 'UTF8');
-- expect: error
select convert_from('\x6100', 'UTF8');
-- expect: error
select convert_from('\xc328', 'UTF8');
-- expect: error
select convert_to('a', 'no_such_encoding');
-- expect: error
select substring('\x0102'::bytea from 1 for -1);
-- expect: error
select max(u) from bu;
-- expect: error
select min(b) from bu;
-- expect: error
select sum(b) from bu;
-- expect: error
select sha256('abc'::text);
-- expect: error
select 1::bytea;
-- expect: error
select 1::uuid;
-- expect: error
select '\x41'::bytea::uuid;
-- expect: error
select u + 1 from bu;
-- expect: error
select b || 1 from bu;
-- expect: error
select u = 'abc'::text from bu;
-- expect: error
insert into bu values (11, 'not a uuid', null);
-- expect: error
insert into bu values (11, null, '\xabc');
