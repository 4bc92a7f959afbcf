-- Cursors: DECLARE, FETCH, MOVE, CLOSE in transaction blocks, WITH HOLD
-- cursors across commits, and PostgreSQL's errors, going forward (SCROLL
-- cursors and going back: 33_scroll_cursors.sql).

create table cur_t as select g as id, g * 2 as v, 'row ' || g as t from generate_series(1, 10) g;

-- expect: error
declare c1 cursor for select 1;
-- expect: error
fetch c1;
-- expect: error
close c1;
-- expect: error
move c1;

begin;
declare c1 cursor for select id, v from cur_t order by id;
fetch 3 from c1;
fetch next from c1;
fetch forward 2 in c1;
fetch c1;
move 2 in c1;
fetch all from c1;
fetch 1 from c1;
fetch all from c1;
select name, is_holdable, is_binary from pg_cursors;
close c1;
-- expect: error
fetch c1;
rollback;

-- ABSOLUTE and RELATIVE forward, FORWARD ALL, MOVE counts.
begin;
declare c2 no scroll cursor for select id from cur_t where id % 2 = 0 order by id;
fetch 0 from c2;
fetch absolute 2 from c2;
fetch relative 2 from c2;
move forward 1 in c2;
fetch forward all from c2;
move all in c2;
fetch absolute 20 from c2;
close c2;
declare c3 cursor for select id from cur_t order by id desc;
move absolute 3 in c3;
fetch 2 from c3;
move forward all in c3;
fetch next from c3;
commit;

-- Going back is refused, and fails the block.
begin;
declare c4 no scroll cursor for select id from cur_t order by id;
fetch 2 from c4;
-- expect: error
fetch prior from c4;
-- expect: error
fetch c4;
rollback;
begin;
declare c4 no scroll cursor for select id from cur_t order by id;
fetch 3 from c4;
-- expect: error
fetch absolute 1 from c4;
rollback;
begin;
declare c4 no scroll cursor for select id from cur_t order by id;
fetch 1 from c4;
-- expect: error
fetch 0 from c4;
rollback;
begin;
declare c4 no scroll cursor for select id from cur_t order by id;
-- expect: error
fetch backward 1 from c4;
rollback;
begin;
declare c4 no scroll cursor for select id from cur_t order by id;
-- expect: error
fetch last from c4;
rollback;

-- Duplicate names, CLOSE ALL, cursors end with their transaction.
begin;
declare c5 cursor for select 1;
-- expect: error
declare c5 cursor for select 2;
rollback;
begin;
declare c5 cursor for select id from cur_t order by id;
declare c6 cursor for select t from cur_t order by id;
fetch 1 from c6;
close all;
select count(*) from pg_cursors;
-- expect: error
fetch c5;
rollback;
begin;
declare c7 cursor for select id from cur_t order by id;
commit;
-- expect: error
fetch c7;

-- WITH HOLD cursors live on after the commit (rows computed then), and
-- can be declared outside a block.
begin;
declare h1 cursor with hold for select id, t from cur_t where id > 6 order by id;
fetch 1 from h1;
commit;
fetch 2 from h1;
select name, is_holdable from pg_cursors;
update cur_t set t = 'changed' where id > 6;
fetch all from h1;
close h1;
declare h2 cursor with hold for select count(*) from cur_t;
fetch h2;
close h2;
begin;
declare h3 cursor with hold for select id from cur_t order by id;
rollback;
-- expect: error
fetch h3;

-- Cursors see the data as of their DECLARE.
begin;
declare s1 cursor for select count(*), sum(v) from cur_t;
insert into cur_t values (11, 22, 'new');
fetch s1;
select count(*) from cur_t;
rollback;

-- An error while the cursor computes its rows reaches the FETCH.
begin;
declare e1 cursor for select 10 / (id - 5) from cur_t;
-- expect: error
fetch 6 from e1;
rollback;

-- Queries over joins, aggregates and the catalog.
begin;
declare j1 cursor for select a.id, b.v from cur_t a join cur_t b on a.id = b.id * 2 order by a.id;
fetch all from j1;
declare a1 cursor for select id % 3, count(*), sum(v) from cur_t group by 1 order by 1;
fetch 2 from a1;
fetch all in a1;
declare k1 cursor for select relname from pg_class where relname = 'cur_t';
fetch k1;
commit;
