-- The WINDOW clause: OVER w takes the definition as it is; OVER (w ...)
-- copies its PARTITION BY and ORDER BY under PostgreSQL's rules.
create table nw (a int, b text, c numeric);
insert into nw values (1, 'x', 1.5), (2, 'y', null), (null, 'x', 2), (2, 'z', 3), (2, 'x', 3);
select a, b, first_value(b) over w, last_value(b) over w from nw window w as (order by a, b rows between unbounded preceding and unbounded following) order by 1, 2;
select a, b, sum(a) over (w order by a), count(*) over w from nw window w as (partition by b) order by 2, 1;
select a, b, rank() over w2, sum(c) over w1 from nw window w1 as (partition by b), w2 as (w1 order by a) order by 2, 1;
select a, b, sum(a) over (w rows between unbounded preceding and current row) from nw window w as (order by a, b) order by 1, 2;
select a, row_number() over w from nw window w as () order by 2;
select a, sum(a) over w from nw window w as (order by a), v as (partition by b) order by 1;
select b, count(*) over w from nw group by b window w as (order by b) order by 1;
-- A definition no call uses.
select a from nw window w as (partition by a) order by 1;
-- Empty input.
select a, sum(a) over w from nw where false window w as (order by a);
-- Errors.
-- expect: error
select a, sum(a) over (w) from nw window w as (order by a rows 1 preceding);
-- expect: error
select a, sum(a) over (w order by b) from nw window w as (order by a);
-- expect: error
select a, sum(a) over (w partition by b) from nw window w as (order by a);
-- expect: error
select a, sum(a) over w from nw window x as (order by a);
-- expect: error
select a, sum(a) over w from nw window w as (order by a), w as (order by b);
-- expect: error
select a, sum(a) over (x) from nw;
-- expect: error
select a, sum(a) over (x order by a) from nw window y as (order by a);
-- A subquery does not see the outer level's windows.
-- expect: error
select (select count(*) over w from nw limit 1) from nw window w as (order by a) limit 1;
select (select count(*) over w from nw window w as (order by a) order by 1 limit 1) from nw window w as (order by b) limit 1;
drop table nw;
