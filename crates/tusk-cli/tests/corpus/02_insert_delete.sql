-- INSERT VALUES (single and multi-row), INSERT SELECT, DELETE ... WHERE.

create table items (id int not null, name text, qty bigint);
insert into items values (1, 'apple', 10);
insert into items values (2, 'pear', 0), (3, 'plum', null), (4, null, 7), (5, 'fig', -3);
select * from items;
-- column list in a different order; missing columns become NULL
insert into items (name, id) values ('kiwi', 6);
insert into items (id) values (7);
select id, name, qty from items where id >= 6;
-- expressions in VALUES
insert into items values (8, 'melon' || 's', 2 * 21);
select * from items where id = 8;
-- INSERT SELECT
create table copy (id int, name text, qty bigint);
insert into copy select * from items where qty is not null;
select * from copy;
insert into copy (id, name) select id + 100, name from items where id <= 2;
select * from copy where id > 100;
insert into copy select g, 'gen', g * 10 from generate_series(200, 204) g;
select count(*), sum(qty) from copy;
-- inserting a table into itself doubles it
insert into copy select * from copy;
select count(*) from copy;

-- DELETE ... WHERE
delete from copy where id > 100;
select * from copy;
delete from copy where qty < 5 or name is null;
select * from copy;
delete from copy where id = 12345;
select count(*) from copy;
delete from copy where qty is not null;
select count(*) from copy;
-- the table still works after everything was deleted
insert into copy values (1, 'one', 1);
select * from copy;

-- NOT NULL is enforced; a failing statement changes nothing
-- expect: error
insert into items values (null, 'nobody', 1);
-- expect: error
insert into items values (9, 'ok', 1), (null, 'bad', 2);
select count(*) from items;
-- expect: error
insert into items (name) values ('no id');
-- a value that does not fit the column
-- expect: error
insert into items values (3000000000, 'big', 1);
select count(*) from items;
