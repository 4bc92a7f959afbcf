//! The COPY statement as PostgreSQL 15's grammar reads it.
//!
//! sqlparser reads COPY too, but only some of PostgreSQL's option
//! spellings (not `HEADER on`, `HEADER match`, `FORMAT 'csv'`,
//! `FORCE_QUOTE *`, multi-character option strings, `WHERE`). So a command
//! string that is one COPY statement is read here instead ([`parse`]),
//! following `CopyStmt` of PostgreSQL's `gram.y`:
//!
//! ```text
//! COPY [BINARY] table [(cols)] FROM|TO [PROGRAM] 'file'|STDIN|STDOUT
//!      [[USING] DELIMITERS 'c'] [WITH] options [WHERE condition]
//! COPY (query) TO [PROGRAM] 'file'|STDOUT [WITH] options
//! options: ( name [value] [, ...] )  -- value: a word, string, number, * or (list)
//!        | legacy keywords: BINARY, FREEZE, DELIMITER [AS] 's', NULL [AS] 's', CSV,
//!          HEADER, QUOTE [AS] 's', ESCAPE [AS] 's', FORCE QUOTE cols|*,
//!          FORCE NOT NULL cols, FORCE NULL cols, ENCODING 's'
//! ```
//!
//! Options become [`DefElem`]s, PostgreSQL's generic option nodes, which
//! `options` checks. COPY statements inside longer command strings still
//! come from sqlparser; [`CopyStatement::from_sqlparser`] maps them onto
//! the same form.

use crate::error::{char_position, sqlstate, SqlError};
use crate::names::ident;
use crate::parse::syntax_error;
use crate::session::Result;
use sqlparser::ast as A;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{IsOptional, Parser};
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// An option's value (PostgreSQL's `copy_generic_opt_arg`).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A word, a string, `true`/`false`/`on`, or a number's text.
    Str(String),
    /// An integer (what `defGetBoolean` reads as 0 and 1).
    Int(i64),
    /// `*`.
    Star,
    /// `(a, b)`.
    List(Vec<String>),
}

/// One option (PostgreSQL's `DefElem`): its name, value and position in
/// the statement (1-based characters) for error carets.
#[derive(Debug, Clone, PartialEq)]
pub struct DefElem {
    pub name: String,
    pub arg: Option<Arg>,
    pub position: Option<usize>,
}

impl DefElem {
    fn new(name: &str, arg: Option<Arg>, position: Option<usize>) -> DefElem {
        DefElem {
            name: name.into(),
            arg,
            position,
        }
    }
}

/// What COPY reads or writes.
#[derive(Debug, Clone, PartialEq)]
pub enum CopySource {
    Table {
        name: A::ObjectName,
        columns: Vec<A::Ident>,
    },
    Query(Box<A::Query>),
}

/// Where the data goes or comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum CopyTarget {
    /// STDIN or STDOUT: the client.
    Client,
    File(String),
    Program(String),
}

/// A COPY statement.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyStatement {
    pub source: CopySource,
    pub to: bool,
    pub target: CopyTarget,
    pub options: Vec<DefElem>,
    /// COPY FROM's `WHERE` condition, and where the clause starts.
    pub where_clause: Option<(A::Expr, usize)>,
}

/// PostgreSQL's `syntax error at or near "x"` for token `t`.
fn unexpected(sql: &str, t: &TokenWithSpan) -> SqlError {
    match &t.token {
        Token::EOF => SqlError::coded(sqlstate::SYNTAX_ERROR, "syntax error at end of input")
            .at(sql.trim_end().chars().count() + 1),
        other => {
            let e = SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                format!("syntax error at or near \"{other}\""),
            );
            match char_position(sql, t.span.start) {
                Some(p) => e.at(p),
                None => e,
            }
        }
    }
}

/// An unquoted word's text in lower case.
fn word(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    }
}

/// A string constant's text (`'...'`, `E'...'`, `$$...$$`).
fn string(t: &Token) -> Option<String> {
    match t {
        Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => Some(s.clone()),
        Token::DollarQuotedString(d) => Some(d.value.clone()),
        _ => None,
    }
}

/// Reads one COPY statement from sqlparser's tokens.
struct Reader<'s> {
    sql: &'s str,
    p: Parser<'s>,
}

impl Reader<'_> {
    fn peek(&self) -> TokenWithSpan {
        self.p.peek_token()
    }

    fn next(&mut self) -> TokenWithSpan {
        self.p.next_token()
    }

    fn at(&self) -> Option<usize> {
        char_position(self.sql, self.peek().span.start)
    }

    /// Takes the next token if it is the (unquoted) word `w`.
    fn take_word(&mut self, w: &str) -> bool {
        if word(&self.peek().token).as_deref() == Some(w) {
            self.next();
            return true;
        }
        false
    }

    fn expect_word(&mut self, w: &str) -> Result<()> {
        if self.take_word(w) {
            Ok(())
        } else {
            Err(unexpected(self.sql, &self.peek()))
        }
    }

    fn expect_string(&mut self) -> Result<String> {
        let t = self.next();
        string(&t.token).ok_or_else(|| unexpected(self.sql, &t))
    }

    fn expect(&mut self, token: Token) -> Result<()> {
        let t = self.next();
        if t.token == token {
            Ok(())
        } else {
            Err(unexpected(self.sql, &t))
        }
    }

    /// A column name: an identifier (folded as PostgreSQL folds it).
    fn column(&mut self) -> Result<String> {
        let t = self.next();
        match &t.token {
            Token::Word(w) => ident(&A::Ident {
                value: w.value.clone(),
                quote_style: w.quote_style,
                span: t.span,
            }),
            _ => Err(unexpected(self.sql, &t)),
        }
    }

    /// `opt_boolean_or_string`: a word or a string constant.
    fn word_or_string(&mut self) -> Result<String> {
        let t = self.next();
        match &t.token {
            Token::Word(_) => {
                self.p.prev_token();
                self.column()
            }
            other => string(other).ok_or_else(|| unexpected(self.sql, &t)),
        }
    }

    fn statement(&mut self) -> Result<CopyStatement> {
        let mut options = Vec::new();
        self.expect_word("copy")?;
        if word(&self.peek().token).as_deref() == Some("binary") {
            options.push(DefElem::new(
                "format",
                Some(Arg::Str("binary".into())),
                self.at(),
            ));
            self.next();
        }
        let source = if self.peek().token == Token::LParen {
            self.next();
            let q = self
                .p
                .parse_query()
                .map_err(|e| syntax_error(self.sql, &e))?;
            self.expect(Token::RParen)?;
            CopySource::Query(q)
        } else {
            let name = self
                .p
                .parse_object_name(false)
                .map_err(|e| syntax_error(self.sql, &e))?;
            let columns = self
                .p
                .parse_parenthesized_column_list(IsOptional::Optional, false)
                .map_err(|e| syntax_error(self.sql, &e))?;
            CopySource::Table { name, columns }
        };
        let query = matches!(source, CopySource::Query(_));
        let to = if !query && self.take_word("from") {
            false
        } else {
            self.expect_word("to")?;
            true
        };
        let program = self.take_word("program");
        let t = self.next();
        let target = match (word(&t.token).as_deref(), string(&t.token)) {
            (Some("stdin" | "stdout"), _) if !program => CopyTarget::Client,
            (_, Some(s)) if program => CopyTarget::Program(s),
            (_, Some(s)) => CopyTarget::File(s),
            _ => return Err(unexpected(self.sql, &t)),
        };
        if !query {
            let at = self.at();
            let using = self.take_word("using");
            if self.take_word("delimiters") {
                options.push(DefElem::new(
                    "delimiter",
                    Some(Arg::Str(self.expect_string()?)),
                    at,
                ));
            } else if using {
                return Err(unexpected(self.sql, &self.peek()));
            }
        }
        self.take_word("with");
        if self.peek().token == Token::LParen {
            self.next();
            loop {
                options.push(self.generic_option()?);
                if self.peek().token == Token::Comma {
                    self.next();
                    continue;
                }
                self.expect(Token::RParen)?;
                break;
            }
        } else {
            while let Some(o) = self.legacy_option()? {
                options.push(o);
            }
        }
        let mut where_clause = None;
        if !query && word(&self.peek().token).as_deref() == Some("where") {
            let at = self.at().unwrap_or(1);
            self.next();
            let e = self
                .p
                .parse_expr()
                .map_err(|e| syntax_error(self.sql, &e))?;
            where_clause = Some((e, at));
        }
        Ok(CopyStatement {
            source,
            to,
            target,
            options,
            where_clause,
        })
    }

    /// `ColLabel copy_generic_opt_arg`.
    fn generic_option(&mut self) -> Result<DefElem> {
        let at = self.at();
        let t = self.next();
        let name = match &t.token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_lowercase(),
            Token::Word(w) => w.value.clone(),
            _ => return Err(unexpected(self.sql, &t)),
        };
        let t = self.peek();
        let arg = match &t.token {
            Token::Comma | Token::RParen => None,
            Token::Mul => {
                self.next();
                Some(Arg::Star)
            }
            Token::LParen => {
                self.next();
                let mut items = vec![self.word_or_string()?];
                while self.peek().token == Token::Comma {
                    self.next();
                    items.push(self.word_or_string()?);
                }
                self.expect(Token::RParen)?;
                Some(Arg::List(items))
            }
            Token::Number(..) | Token::Minus | Token::Plus => Some(self.number()?),
            _ => Some(Arg::Str(self.word_or_string()?)),
        };
        Ok(DefElem::new(&name, arg, at))
    }

    /// `NumericOnly`: an integer, or a number's text.
    fn number(&mut self) -> Result<Arg> {
        let mut sign = "";
        match self.peek().token {
            Token::Minus => {
                self.next();
                sign = "-";
            }
            Token::Plus => {
                self.next();
            }
            _ => {}
        }
        let t = self.next();
        let Token::Number(n, _) = &t.token else {
            return Err(unexpected(self.sql, &t));
        };
        let text = format!("{sign}{n}");
        Ok(match text.parse::<i64>() {
            Ok(i) if i32::try_from(i).is_ok() => Arg::Int(i),
            _ => Arg::Str(text),
        })
    }

    /// One `copy_opt_item`, or `None` where the options end.
    fn legacy_option(&mut self) -> Result<Option<DefElem>> {
        let at = self.at();
        let Some(w) = word(&self.peek().token) else {
            return Ok(None);
        };
        let str_opt = |r: &mut Self, name: &str| -> Result<Option<DefElem>> {
            r.next();
            r.take_word("as");
            Ok(Some(DefElem::new(
                name,
                Some(Arg::Str(r.expect_string()?)),
                at,
            )))
        };
        match w.as_str() {
            "binary" | "csv" => {
                self.next();
                Ok(Some(DefElem::new("format", Some(Arg::Str(w)), at)))
            }
            "freeze" | "header" => {
                self.next();
                Ok(Some(DefElem::new(&w, Some(Arg::Str("true".into())), at)))
            }
            "delimiter" | "null" | "quote" | "escape" => str_opt(self, &w),
            "encoding" => {
                self.next();
                Ok(Some(DefElem::new(
                    "encoding",
                    Some(Arg::Str(self.expect_string()?)),
                    at,
                )))
            }
            "force" => {
                self.next();
                let name = if self.take_word("quote") {
                    if self.peek().token == Token::Mul {
                        self.next();
                        return Ok(Some(DefElem::new("force_quote", Some(Arg::Star), at)));
                    }
                    "force_quote"
                } else if self.take_word("not") {
                    self.expect_word("null")?;
                    "force_not_null"
                } else {
                    self.expect_word("null")?;
                    "force_null"
                };
                let mut cols = vec![self.column()?];
                while self.peek().token == Token::Comma {
                    self.next();
                    cols.push(self.column()?);
                }
                Ok(Some(DefElem::new(name, Some(Arg::List(cols)), at)))
            }
            _ => Ok(None),
        }
    }
}

/// Reads `sql` as one COPY statement (an optional `;` after it), or says
/// `None` when it is not one: it does not start with COPY, or another
/// statement follows (sqlparser reads such command strings).
pub fn parse(sql: &str) -> Option<Result<CopyStatement>> {
    let tokens = match crate::parse::lex(sql) {
        Ok(t) => t,
        Err(_) => return None,
    };
    let first = tokens
        .iter()
        .find(|t| !matches!(t.token, Token::Whitespace(_)))?;
    if word(&first.token).as_deref() != Some("copy") {
        return None;
    }
    let mut r = Reader {
        sql,
        p: Parser::new(&PostgreSqlDialect {}).with_tokens_with_locations(tokens),
    };
    let stmt = match r.statement() {
        Ok(s) => s,
        Err(e) => return Some(Err(e)),
    };
    while r.peek().token == Token::SemiColon {
        r.next();
    }
    let rest = r.peek();
    if rest.token == Token::EOF {
        return Some(Ok(stmt));
    }
    // A statement after the COPY: sqlparser reads the whole string. Text
    // right after the COPY that starts no statement is this one's error.
    let mut probe = r.p;
    if probe.parse_statement().is_ok() {
        None
    } else {
        Some(Err(unexpected(sql, &rest)))
    }
}

impl CopyStatement {
    /// The same statement from sqlparser's AST (a COPY inside a longer
    /// command string).
    pub fn from_sqlparser(s: &A::Statement) -> Result<CopyStatement> {
        let A::Statement::Copy {
            source,
            to,
            target,
            options,
            legacy_options,
            values,
        } = s
        else {
            return Err(SqlError::new("not a COPY statement"));
        };
        if !values.is_empty() {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "COPY FROM STDIN must be the last statement of a command string",
            ));
        }
        let source = match source {
            A::CopySource::Table {
                table_name,
                columns,
            } => CopySource::Table {
                name: table_name.clone(),
                columns: columns.clone(),
            },
            A::CopySource::Query(q) => CopySource::Query(q.clone()),
        };
        let target = match target {
            A::CopyTarget::Stdin | A::CopyTarget::Stdout => CopyTarget::Client,
            A::CopyTarget::File { filename } => CopyTarget::File(filename.clone()),
            A::CopyTarget::Program { command } => CopyTarget::Program(command.clone()),
        };
        let str_arg = |name: &str, v: String| DefElem::new(name, Some(Arg::Str(v)), None);
        let bool_arg = |name: &str, b: bool| str_arg(name, if b { "true" } else { "false" }.into());
        let cols = |c: &[A::Ident]| -> Result<Option<Arg>> {
            Ok(Some(Arg::List(c.iter().map(ident).collect::<Result<_>>()?)))
        };
        let mut out = Vec::new();
        for o in options {
            use A::CopyOption as O;
            out.push(match o {
                O::Format(f) => str_arg("format", f.value.clone()),
                O::Freeze(b) => bool_arg("freeze", *b),
                O::Delimiter(c) => str_arg("delimiter", c.to_string()),
                O::Null(s) => str_arg("null", s.clone()),
                O::Header(b) => bool_arg("header", *b),
                O::Quote(c) => str_arg("quote", c.to_string()),
                O::Escape(c) => str_arg("escape", c.to_string()),
                O::ForceQuote(c) => DefElem::new("force_quote", cols(c)?, None),
                O::ForceNotNull(c) => DefElem::new("force_not_null", cols(c)?, None),
                O::ForceNull(c) => DefElem::new("force_null", cols(c)?, None),
                O::Encoding(s) => str_arg("encoding", s.clone()),
            });
        }
        for o in legacy_options {
            use A::CopyLegacyCsvOption as C;
            use A::CopyLegacyOption as L;
            match o {
                L::Binary => out.push(str_arg("format", "binary".into())),
                L::Delimiter(c) => out.push(str_arg("delimiter", c.to_string())),
                L::Null(s) => out.push(str_arg("null", s.clone())),
                L::Csv(items) => {
                    out.push(str_arg("format", "csv".into()));
                    for item in items {
                        out.push(match item {
                            C::Header => bool_arg("header", true),
                            C::Quote(c) => str_arg("quote", c.to_string()),
                            C::Escape(c) => str_arg("escape", c.to_string()),
                            C::ForceQuote(c) => DefElem::new("force_quote", cols(c)?, None),
                            C::ForceNotNull(c) => DefElem::new("force_not_null", cols(c)?, None),
                        });
                    }
                }
                other => {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        format!(
                            "syntax error at or near \"{}\"",
                            other.to_string().split_whitespace().next().unwrap_or("")
                        ),
                    ))
                }
            }
        }
        Ok(CopyStatement {
            source,
            to: *to,
            target,
            options: out,
            where_clause: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(sql: &str) -> CopyStatement {
        parse(sql)
            .unwrap_or_else(|| panic!("{sql}: not read"))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    fn names(s: &CopyStatement) -> Vec<(String, Option<Arg>)> {
        s.options
            .iter()
            .map(|o| (o.name.clone(), o.arg.clone()))
            .collect()
    }

    fn s(v: &str) -> Option<Arg> {
        Some(Arg::Str(v.into()))
    }

    #[test]
    fn generic_options() {
        let st = ok(
            "COPY t (a, \"B\") FROM 'f.csv' WITH (FORMAT 'csv', HEADER match, Freeze on, \
                     delimiter E'\\t', force_quote *, force_null (a, \"B\"), encoding 'utf8', \
                     header 1, null '')",
        );
        assert!(!st.to);
        assert_eq!(st.target, CopyTarget::File("f.csv".into()));
        assert_eq!(
            names(&st),
            vec![
                ("format".into(), s("csv")),
                ("header".into(), s("match")),
                ("freeze".into(), s("on")),
                ("delimiter".into(), s("\t")),
                ("force_quote".into(), Some(Arg::Star)),
                (
                    "force_null".into(),
                    Some(Arg::List(vec!["a".into(), "B".into()]))
                ),
                ("encoding".into(), s("utf8")),
                ("header".into(), Some(Arg::Int(1))),
                ("null".into(), s("")),
            ]
        );
        assert_eq!(st.options[1].position, Some(50));
    }

    #[test]
    fn legacy_options_and_forms() {
        let st = ok(
            "copy binary t to stdout using delimiters '|' with csv header quote as '''' \
                     force quote * freeze;",
        );
        assert_eq!(
            names(&st),
            vec![
                ("format".into(), s("binary")),
                ("delimiter".into(), s("|")),
                ("format".into(), s("csv")),
                ("header".into(), s("true")),
                ("quote".into(), s("'")),
                ("force_quote".into(), Some(Arg::Star)),
                ("freeze".into(), s("true")),
            ]
        );
        // `force quote *` ends at `*`: the comma is an error.
        assert!(parse("copy t to stdout csv force quote *, freeze")
            .unwrap()
            .is_err());
        let st = ok("copy t from stdin csv force not null a, b force null c where a > 1");
        assert_eq!(
            names(&st)[1..],
            [
                (
                    "force_not_null".into(),
                    Some(Arg::List(vec!["a".into(), "b".into()]))
                ),
                ("force_null".into(), Some(Arg::List(vec!["c".into()]))),
            ]
        );
        assert_eq!(st.where_clause.unwrap().1, 56);
        let st = ok("copy (select 1) to program 'cat'");
        assert_eq!(st.target, CopyTarget::Program("cat".into()));
        assert!(matches!(st.source, CopySource::Query(_)));
    }

    #[test]
    fn other_strings_are_not_read_here() {
        assert!(parse("select 1").is_none());
        assert!(parse("copy t from stdin; select 1").is_none());
        let e = parse("copy (select 1) from stdin").unwrap().unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"from\"");
        let e = parse("copy t to").unwrap().unwrap_err();
        assert_eq!(e.message, "syntax error at end of input");
        let e = parse("copy t to stdout (format csv").unwrap().unwrap_err();
        assert_eq!(e.message, "syntax error at end of input");
    }
}
