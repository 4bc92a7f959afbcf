-- SCROLL cursors: every FETCH / MOVE direction, PostgreSQL's positions
-- (before the first row, after the last) and counts, WITH HOLD, cursors
-- PostgreSQL makes scrollable on its own, and NO SCROLL errors. The big
-- cursors' rows pass work_mem = 64kB, so its variant spills them.

create table sc_t (id int, v int, t text);
insert into sc_t select g, case when g % 4 = 0 then null else g * 10 end, 'row ' || g from generate_series(1, 8) g;
create table sc_big as select g as id, repeat('x', 40) || g as pad from generate_series(1, 20000) g;
create table sc_empty (id int);

-- Every direction on a scrollable cursor.
begin;
declare c1 scroll cursor for select id, v, t from sc_t order by id;
fetch 3 from c1;
fetch prior from c1;
fetch backward 2 from c1;
fetch prior from c1;
fetch next from c1;
fetch last from c1;
fetch next from c1;
fetch prior from c1;
fetch first from c1;
fetch absolute 5 from c1;
fetch absolute -2 from c1;
fetch absolute -8 from c1;
fetch absolute -9 from c1;
fetch absolute 9 from c1;
fetch relative -1 from c1;
fetch relative 0 from c1;
fetch relative 2 from c1;
fetch relative -3 from c1;
fetch relative 20 from c1;
fetch relative -20 from c1;
fetch forward 0 from c1;
fetch 0 from c1;
fetch -2 from c1;
fetch backward -2 from c1;
fetch forward -1 from c1;
fetch forward all from c1;
fetch backward all from c1;
fetch all from c1;
fetch backward 3 from c1;
fetch absolute 0 from c1;
fetch relative 0 from c1;
fetch backward 1 from c1;
commit;

-- MOVE: counts and positions.
begin;
declare m1 scroll cursor for select id from sc_t order by id;
move forward 3 in m1;
fetch m1;
move backward 2 in m1;
fetch m1;
move last in m1;
fetch m1;
move prior in m1;
move 0 in m1;
move backward all in m1;
move 0 in m1;
fetch m1;
move forward all in m1;
move backward all in m1;
move all in m1;
move relative 0 in m1;
move absolute 3 in m1;
move 0 in m1;
move absolute -1 in m1;
move absolute 0 in m1;
move backward 5 in m1;
move relative 2 in m1;
fetch relative 0 from m1;
move first in m1;
move -1 in m1;
move -1 in m1;
move absolute 100 in m1;
move 100 in m1;
fetch backward 2 from m1;
close m1;
commit;

-- Empty results.
begin;
declare e1 scroll cursor for select id from sc_empty;
fetch next from e1;
fetch prior from e1;
fetch last from e1;
fetch first from e1;
fetch absolute -1 from e1;
fetch relative 0 from e1;
move backward all in e1;
move all in e1;
fetch backward all from e1;
declare e2 scroll cursor for select id from sc_t where id > 100;
fetch all from e2;
fetch backward all from e2;
rollback;

-- NULLs and a single row.
begin;
declare n1 scroll cursor for select v, t from sc_t where v is null order by id;
fetch all from n1;
fetch prior from n1;
fetch first from n1;
fetch last from n1;
declare n2 scroll cursor for select null::int as x;
fetch n2;
fetch prior n2;
fetch next n2;
fetch last n2;
rollback;

-- Scrollable cursors over joins, aggregates and VALUES (stored, since
-- their plans cannot run backward).
begin;
declare j1 scroll cursor for select a.id, b.v from sc_t a join sc_t b on a.id = b.id order by 1;
fetch last from j1;
fetch backward 3 from j1;
fetch absolute 2 from j1;
declare a1 scroll cursor for select v is null as missing, count(*) from sc_t group by 1 order by 1;
fetch all from a1;
fetch first from a1;
fetch relative 1 from a1;
fetch prior from a1;
declare v1 scroll cursor for values (1, 'a'), (2, null), (3, 'c');
fetch last from v1;
fetch backward all from v1;
commit;

-- Big results: the store spills under work_mem = 64kB.
begin;
declare b1 scroll cursor for select id, pad from sc_big order by id;
fetch absolute 15000 from b1;
fetch relative -14000 from b1;
move forward all in b1;
fetch backward 3 from b1;
fetch absolute 3 from b1;
move absolute -1 in b1;
fetch prior from b1;
move backward all in b1;
fetch next from b1;
declare b2 scroll cursor for select count(*), sum(id) from sc_big;
fetch b2;
fetch prior b2;
fetch first b2;
declare b3 scroll cursor for select id % 7 as k, max(pad) from sc_big group by 1 order by 1;
fetch last from b3;
fetch absolute 2 from b3;
commit;

-- WITH HOLD scrollable cursors keep every row after the commit.
begin;
declare h1 scroll cursor with hold for select id, v from sc_t order by id;
fetch 3 from h1;
commit;
fetch prior from h1;
fetch first from h1;
fetch last from h1;
update sc_t set v = -1 where id = 1;
fetch absolute 1 from h1;
fetch backward all from h1;
move forward all in h1;
fetch -2 from h1;
close h1;
declare h2 scroll cursor with hold for select id from sc_big where id > 19990 order by id;
fetch last from h2;
fetch absolute 3 from h2;
fetch relative -2 from h2;
close h2;
begin;
declare h3 scroll cursor with hold for select id, pad from sc_big order by id;
fetch absolute 12345 from h3;
commit;
fetch prior from h3;
fetch last from h3;
fetch absolute 2 from h3;
close h3;
update sc_t set v = 10 where id = 1;

-- WITH HOLD without SCROLL: scrollable when the plan can go backward.
begin;
declare h4 cursor with hold for select id from sc_t order by id;
fetch 2 from h4;
commit;
fetch prior from h4;
fetch last from h4;
close h4;
begin;
declare h5 no scroll cursor with hold for select id from sc_t order by id;
fetch 2 from h5;
commit;
fetch 1 from h5;
fetch absolute 5 from h5;
fetch relative 2 from h5;
-- expect: error
fetch prior from h5;
close h5;
begin;
declare h6 no scroll cursor with hold for select id from sc_t order by id;
fetch all from h6;
commit;
fetch next from h6;
move all in h6;
-- expect: error
fetch first from h6;
close h6;

-- Cursors declared without SCROLL: PostgreSQL scrolls a scan or a sort.
begin;
declare d1 cursor for select id from sc_t order by id;
fetch 2 from d1;
fetch prior from d1;
fetch last from d1;
fetch absolute 3 from d1;
declare d2 cursor for select id, t from sc_t where id > 5;
fetch all from d2;
fetch backward all from d2;
declare d3 cursor for select * from generate_series(1, 5) g;
fetch 3 from d3;
fetch first from d3;
declare d4 cursor for select id from sc_t order by id limit 3;
move all in d4;
fetch backward 2 from d4;
declare d5 cursor for values (1), (2);
fetch 2 from d5;
fetch prior from d5;
commit;

-- ... but not a join, an aggregate or a SELECT without FROM.
begin;
declare x1 cursor for select count(*) from sc_t;
fetch x1;
-- expect: error
fetch prior from x1;
rollback;
begin;
declare x2 cursor for select a.id from sc_t a join sc_t b on a.id = b.id;
fetch 2 from x2;
-- expect: error
fetch absolute 1 from x2;
rollback;
begin;
declare x3 cursor for select 1;
fetch x3;
-- expect: error
fetch first from x3;
rollback;
begin;
declare x4 cursor for select v, count(*) from sc_t group by v;
move all in x4;
-- expect: error
move backward all in x4;
rollback;

-- NO SCROLL: forward directions work, backward ones fail.
begin;
declare ns no scroll cursor for select id from sc_t order by id;
fetch absolute 0 from ns;
fetch first from ns;
fetch absolute 3 from ns;
fetch relative 2 from ns;
move 0 in ns;
-- expect: error
fetch forward 0 from ns;
rollback;
begin;
declare ns no scroll cursor for select id from sc_t order by id;
fetch 2 from ns;
-- expect: error
move backward 1 in ns;
rollback;
begin;
declare ns no scroll cursor for select id from sc_t order by id;
fetch 2 from ns;
-- expect: error
fetch absolute -1 from ns;
rollback;
begin;
declare ns no scroll cursor for select id from sc_t order by id;
fetch 2 from ns;
-- expect: error
fetch relative -1 from ns;
rollback;
begin;
declare ns no scroll cursor for select id from sc_t order by id;
fetch 5 from ns;
-- expect: error
move backward all in ns;
rollback;

-- pg_cursors reports scrollability.
begin;
declare p1 scroll cursor for select id from sc_t;
declare p2 no scroll cursor for select id from sc_t;
declare p3 cursor for select id from sc_t order by id;
declare p4 cursor for select count(*) from sc_t;
select name, is_scrollable from pg_cursors order by name;
commit;

-- Errors inside a scrollable cursor's query reach the FETCH (tusk
-- computes a batch of rows at a time, so the failing row is fetched).
begin;
declare z1 scroll cursor for select 10 / (id - 5) from sc_t;
-- expect: error
fetch last from z1;
rollback;
-- expect: error
fetch next from z1;
-- expect: error
declare z2 scroll cursor for select 1;
