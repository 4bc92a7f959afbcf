-- UPDATE (with FROM and RETURNING), DELETE (with USING and RETURNING),
-- INSERT ... RETURNING, INSERT ... SELECT; NULLs and type errors.

create table acc (id int not null, bal int, note text);
insert into acc values (1, 100, 'a'), (2, 200, 'b'), (3, null, 'c'), (4, 400, null);
update acc set bal = bal + 1 where id = 1;
select * from acc order by id;
update acc set bal = bal * 2, note = note || '!' where bal > 150 returning id, bal, note;
update acc set note = 'x' where false;
update acc set bal = 0 returning *;
select * from acc order by id;
update acc set bal = id * 10;
create table adj (id int, delta int);
-- Two rows of adj match id 2: the row is updated once (which join row
-- wins is unspecified in PostgreSQL, so both carry the same delta).
insert into adj values (1, 5), (2, 7), (2, 7), (9, 1);
update acc set bal = bal + adj.delta from adj where acc.id = adj.id;
select * from acc order by id;
delete from acc where id = 4 returning *;
delete from acc using adj where acc.id = adj.id and adj.delta > 6 returning acc.id;
select * from acc order by id;
insert into acc values (10, 1, 'n') returning id, bal + 1 as next;
insert into acc (id, note) values (11, 'only note') returning *;
insert into acc select id + 100, bal, note from acc where id < 10 returning id;
select count(*), sum(bal) from acc;
-- expect: error
update acc set id = null where id = 1;
-- expect: error
update acc set nosuch = 1;
-- expect: error
update acc set bal = 'abc';
-- expect: error
insert into acc values (null, 1, 'x');
delete from acc;
select count(*) from acc;
