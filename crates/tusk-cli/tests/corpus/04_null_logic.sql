-- NULLs: three-valued logic, IS [NOT] NULL, BETWEEN, IN (list), LIKE.

create table tv (p boolean, q boolean);
insert into tv values (true, true), (true, false), (true, null),
  (false, true), (false, false), (false, null),
  (null, true), (null, false), (null, null);
select p, q, p and q, p or q, not p, p = q, p <> q from tv order by p, q;
select p, q from tv where p and q;
select p, q from tv where p or q;
select p, q from tv where not (p and q);
select p, q from tv where p is null;
select p, q from tv where p is not null and q is null;
select count(*) from tv where p = q;

create table n (a int, s text);
insert into n values (1, 'apple'), (2, 'banana'), (3, null), (null, 'cherry'), (5, 'Apple'), (null, null);
select a, a = 1, a <> 1, a < 3, a + 1, a * 0, -a from n;
select a, s, a is null, a is not null, s is null, s is not null from n;
select a from n where a is null;
select s from n where s is not null;
select a from n where a = null;
select a from n where a <> 2;
select a from n where not (a = 1);
select s || '!' from n;
select a::text, s, a::text || s from n;

-- BETWEEN is inclusive and not symmetric
select a from n where a between 2 and 5;
select a from n where a between 5 and 2;
select a from n where a not between 2 and 3;
select 3 between 1 and 5, 6 between 1 and 5, null between 1 and 5, 1 between null and 5;

-- IN (list) with NULLs in either place
select 1 in (1, 2), 3 in (1, 2), 3 in (1, 2, null), 1 in (1, null), null in (1, 2);
select 3 not in (1, 2), 3 not in (1, 2, null), 1 not in (1, null);
select a from n where a in (1, 3, 5);
select a from n where a in (2, null);
select a from n where a not in (1, 2);
select a from n where a not in (1, null);
select s from n where s in ('apple', 'cherry', 'nope');

-- LIKE is case-sensitive; _ is one character, % any run
select 'abc' like 'abc', 'abc' like 'a%', 'abc' like '%c', 'abc' like '_b_', 'abc' like 'a_';
select 'abc' like 'A%', 'abc' like '%', '' like '%', '' like '_', 'a%c' like 'a%c';
select s from n where s like 'a%';
select s from n where s like '%an%';
select s from n where s like '_____';
select s from n where s not like '%a%';
select s, s like '%e%' from n;
select null like 'a', 'a' like null;
