-- LIKE as a substring search: patterns of literals and `%` only are
-- matched by prefix, suffix and substring tests (the others by the general
-- matcher), a constant pattern is compiled once per batch, and on a
-- columnar table a LIKE on a dictionary-encoded string column is tested
-- once per dictionary entry. Corner cases: escapes, `_`, empty patterns
-- and texts, NULLs, multibyte text, ILIKE, NOT LIKE, a pattern ending in
-- `\`, overlapping head and tail.

create table lt (id int, t text, v varchar(20), c char(6));
insert into lt values
    (1, 'special requests', 'special requests', 'ab'),
    (2, 'a special, quiet requests x', 'x', 'abc'),
    (3, 'requests special', 'requests', 'a'),
    (4, 'specialrequests', '', ''),
    (5, '', null, null),
    (6, null, 'ñandú', 'ñ'),
    (7, 'aba', 'abba', 'ba'),
    (8, 'abba', 'ABBA', 'AB'),
    (9, '100%', '50% off', '%'),
    (10, 'a_b', 'a\b', '_'),
    (11, 'caféine', 'CAFÉ', 'é'),
    (12, 'SPECIAL REQUESTS', 'Special Requests', 'x');

-- Substring search, anchored and not.
select id from lt where t like '%special%requests%' order by id;
select id from lt where t not like '%special%requests%' order by id;
select id, t like '%special%requests%' from lt order by id;
select id from lt where t like 'special%' order by id;
select id from lt where t like '%requests' order by id;
select id from lt where t like 'special%requests' order by id;
select id from lt where t like '%quiet%' order by id;
select id from lt where v like '%a%' order by id;
-- Head and tail may not overlap: 'aba' is not 'ab' % 'ba'.
select id from lt where t like 'ab%ba' order by id;
select id from lt where t like 'a%a' order by id;
select id from lt where t like '%b%b%' order by id;

-- No `%`: equality; the empty pattern matches only the empty string.
select id from lt where t like 'aba' order by id;
select id from lt where t like '' order by id;
select id from lt where t not like '' order by id;
select id from lt where t like '%' order by id;
select id from lt where t like '%%' order by id;
select id from lt where t like '%%%special%%requests%%' order by id;

-- `_` goes to the general matcher.
select id from lt where t like '_b_' order by id;
select id from lt where t like '%_b%' order by id;
select id from lt where t like 'caf_ine' order by id;
select id from lt where v like '_and_' order by id;
select id from lt where t like '%_' order by id;
select id from lt where t like '_%_%_' order by id;

-- Escapes: `\%`, `\_`, `\\`, an escaped ordinary character.
select id from lt where t like '%\%' order by id;
select id from lt where t like '100\%' order by id;
select id from lt where t like 'a\_b' order by id;
select id from lt where v like 'a\\b' order by id;
select id from lt where t like '\a%' order by id;
select id from lt where t like '%\%%' order by id;
select id from lt where t like 'a%' escape '#' order by id;
select id from lt where t like 'a#_b' escape '#' order by id;
select id from lt where t like '%#%' escape '#' order by id;
select id from lt where t like '%a_b%' escape '' order by id;

-- A pattern ending in `\`: false when the text ends first, an error
-- when matching reaches it with text left.
select 'a' like 'a\';
select '' like '%\';
select 'abc' like 'x%\';
-- expect: error
select 'ab' like 'a\';
-- expect: error
select 'abc' like '%\';
-- expect: error
select id from lt where t like '%s%\' order by id;

-- NULLs: a NULL text or pattern gives NULL, never true or false.
select id, t like '%a%', t not like '%a%' from lt where t is null or id = 1 order by id;
select 'abc' like null, null like 'a%', null::text not like null;
select id from lt where t like null;
select count(*) from lt where (t like '%e%') is null;
select id, t like v from lt order by id;
select id, v like t from lt order by id;
select id from lt where t like v || '%' order by id;

-- Multibyte text: `_` is one character, `%` runs of characters; a
-- multibyte literal is found only at character boundaries.
select id from lt where t like '%é%' order by id;
select id from lt where t like 'caf%' order by id;
select id from lt where v like 'ñ%' order by id;
select id from lt where v like '%ú' order by id;
select id from lt where t like 'caf_%' order by id;
select 'ñandú' like '_and_', 'ñandú' like '__and_', 'ñ' like '_', 'ñ' like '__';
select 'aé' like '%é', 'aé' like '%\é', 'éé' like '%é%é%';

-- ILIKE folds ASCII letters only, as PostgreSQL under the C collation.
select id from lt where t ilike '%SPECIAL%requests%' order by id;
select id from lt where t not ilike '%special%REQUESTS%' order by id;
select id from lt where v ilike 'abba' order by id;
select id from lt where v ilike 'café' order by id;
select id from lt where v ilike 'caf%' order by id;
select id from lt where t ilike '%É%' order by id;
select id from lt where v ilike '%A%' order by id;
select id from lt where t ilike 'a_B%' order by id;
select 'ABC' ilike 'a%c', 'Ñ' ilike 'ñ', 'x' ilike '', '' ilike '%';

-- char(n) operands, on patterns whose outcome the padding blanks do not
-- change. (PostgreSQL's bpcharlike matches a char(n) value with its
-- padding, `'ab'::char(6) LIKE 'ab'` is false; tusk keeps char(n) values
-- without it and answers true: a known difference, not exercised here.)
select id from lt where c like 'a%' order by id;
select id from lt where c like '%\%%' order by id;
select id from lt where c ilike 'AB%' order by id;

-- Patterns from a column, and mixed with other conditions.
select a.id, b.id from lt a, lt b where a.t like '%' || b.v || '%' and b.v <> '' order by 1, 2;
select id from lt where t like '%s%' and id > 2 and v not like '%q%' order by id;
select id from lt where t like '%special%' or v like 'ñ%' order by id;
select id, case when t like 'spec%' then 'a' when t like '%ue%' then 'b' else 'c' end from lt order by id;

-- A columnar table with dictionary-encoded strings (few distinct values in
-- a row group of 12,000 rows) and one with plain strings (all distinct),
-- NULLs among both; the same queries on heap tables on PostgreSQL.
create table dict (id int, kind text, name varchar(40), tag char(8)) using columnar;
insert into dict
select g,
       case g % 9
           when 0 then 'STANDARD POLISHED BRASS'
           when 1 then 'MEDIUM POLISHED TIN'
           when 2 then 'PROMO BURNISHED COPPER'
           when 3 then 'special%requests'
           when 4 then 'ñandú_bird'
           when 5 then ''
           when 6 then 'medium polished brass'
           when 7 then null
           else 'a\b'
       end,
       'name ' || g || case when g % 5 = 0 then ' special requests' else '' end,
       case g % 4 when 0 then 'AB' when 1 then 'ab%' when 2 then null else 'ñ' end
from generate_series(1, 12000) g;
select count(*) from dict where kind like '%BRASS';
select count(*) from dict where kind not like 'MEDIUM POLISHED%';
select count(*) from dict where kind like 'PROMO%';
select count(*) from dict where kind ilike '%brass%';
select count(*) from dict where kind not ilike '%polished%';
select count(*) from dict where kind like '%\%%';
select count(*) from dict where kind like '%\_%';
select count(*) from dict where kind like '%\\%';
select count(*) from dict where kind like '_andú%';
select count(*) from dict where kind like '';
select count(*) from dict where kind not like '';
select count(*) from dict where kind like '%';
select count(*) from dict where kind like null;
select count(*) from dict where kind is null or kind like 'STANDARD%';
select count(*) from dict where (kind like '%a%') is null;
select count(*) from dict where kind like '%O%' and id % 2 = 0;
select count(*) from dict where kind like '%O%' and kind not like '%TIN';
select count(*) from dict where kind like '%O%' and tag like 'A%';
select count(*) from dict where tag ilike 'ab%';
select kind, count(*) from dict where kind not like '%POLISHED%' group by kind order by kind;
select id, kind from dict where kind like 'ñ%' and id < 40 order by id;
select count(*) from dict where name like '%special%requests%';
select count(*) from dict where name not like '%special%requests%';
select count(*) from dict where name like 'name 1%';
select count(*) from dict where name ilike 'NAME 1_ %';
select count(*) from dict where kind = 'special%requests' and kind like 'special%';
select count(*) from dict where kind in ('', 'a\b') and kind not like '%\\%';
-- The pattern ending in `\` raises only where matching reaches it.
-- expect: error
select count(*) from dict where kind like 'STANDARD%\';
select count(*) from dict where kind like 'x%\';
-- A division by zero in a later condition is still reached for the rows
-- LIKE keeps.
-- expect: error
select count(*) from dict where kind like 'PROMO%' and 1 / (id % 9 - 2) > 0;
select count(*) from dict where kind like 'PROMO%' and 1 / (id % 9 - 1) > 0;
-- After a DELETE, and with rows in the delta.
delete from dict where id % 3 = 0;
insert into dict values (20001, 'PROMO TIN', 'x special requests', 'AB'), (20002, null, null, null);
select count(*) from dict where kind like 'PROMO%';
select count(*) from dict where kind not like '%BRASS';
select count(*) from dict where name like '%special%requests%';
select id from dict where kind like 'PROMO T%' order by id;
