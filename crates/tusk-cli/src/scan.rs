//! Splitting input into SQL statements and backslash commands, like psql.
//!
//! Input arrives a line at a time (from a file, a pipe or the line editor).
//! The [`Scanner`] keeps the text of the statement being collected and the
//! lexical state at the end of the last line, so a statement, a quoted
//! string or a comment may span lines. It recognises just enough SQL lexics
//! to find the `;` that ends a statement:
//!
//! * `'...'` strings (`''` inside), `E'...'` strings (backslash escapes too),
//!   `"..."` identifiers (`""` inside), `$tag$...$tag$` dollar quotes;
//! * `-- ...` comments to the end of the line and nested `/* ... */` comments;
//! * parentheses: a `;` inside them does not end the statement (as in psql);
//! * a backslash outside all of those starts a backslash command that runs to
//!   the end of the line. The statement collected so far stays pending.
//!
//! As in psql, whitespace and `--` comments before a statement's first token
//! are dropped, lines inside a statement are joined with `\n`, and the text
//! handed on includes the terminating `;`. Statements with nothing but
//! comments and semicolons are dropped, since they would run nothing.

/// Something complete that a line of input produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A statement, including its terminating `;`.
    Statement(String),
    /// A backslash command: its name (without the backslash) and arguments.
    Meta(MetaCommand),
}

/// A parsed backslash command line such as `\timing on` or `\d "My Table"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaCommand {
    /// The command name without the backslash, e.g. `timing`, `d`, `q`.
    pub name: String,
    /// Arguments: single-quoted ones with their quotes removed, double-quoted
    /// parts kept verbatim (quotes included) for identifier handling.
    pub args: Vec<String>,
    /// Everything after the command name, as typed (what `\copy` parses).
    pub line: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Normal,
    /// In `'...'`; `true` if backslash escapes apply (`E'...'`).
    Quote(bool),
    /// In `"..."`.
    Ident,
    /// In `$tag$...`; holds the full delimiter, e.g. `$fn$`.
    Dollar(String),
    /// In `/* ... */`, with this nesting depth (>= 1).
    Comment(usize),
}

/// Incremental psql-style statement splitter. See the module docs.
#[derive(Debug, Clone)]
pub struct Scanner {
    buf: String,
    state: State,
    parens: usize,
    /// Whether `buf` holds anything besides comments, whitespace and `;`.
    content: bool,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || !c.is_ascii()
}

fn is_tag_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

/// SQL whitespace, as psql's lexer defines it.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// If `rest` (which starts with `$`) opens a dollar quote, its delimiter.
fn dollar_delimiter(rest: &str) -> Option<&str> {
    for (i, c) in rest.char_indices().skip(1) {
        if c == '$' {
            return Some(&rest[..i + 1]);
        }
        if !(is_tag_start(c) || (i > 1 && c.is_ascii_digit())) {
            return None;
        }
    }
    None
}

impl Scanner {
    pub fn new() -> Scanner {
        Scanner {
            buf: String::new(),
            state: State::Normal,
            parens: 0,
            content: false,
        }
    }

    /// True when no statement text is pending.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Forgets the pending statement (Ctrl-C in the shell).
    pub fn reset(&mut self) {
        *self = Scanner::new();
    }

    /// The character psql shows in its prompt for the current state:
    /// `=` nothing pending, `-` a statement continues, `'`, `"`, `$` inside
    /// a string, identifier or dollar quote, `*` inside a comment, `(` inside
    /// parentheses.
    pub fn prompt_char(&self) -> char {
        match &self.state {
            State::Quote(_) => '\'',
            State::Ident => '"',
            State::Dollar(_) => '$',
            State::Comment(_) => '*',
            State::Normal if self.parens > 0 => '(',
            State::Normal if self.buf.is_empty() => '=',
            State::Normal => '-',
        }
    }

    /// Takes the pending statement, if it has any content (psql's `\g` and
    /// end of input). The lexical state is reset.
    pub fn take_pending(&mut self) -> Option<String> {
        let content = self.content;
        let text = std::mem::take(&mut self.buf);
        self.reset();
        if content {
            Some(text)
        } else {
            None
        }
    }

    /// Scans one line of input (without its line terminator) and returns the
    /// statements and backslash commands it completed, in order.
    pub fn feed_line(&mut self, line: &str) -> Vec<Item> {
        let mut items = Vec::new();
        if !self.buf.is_empty() {
            self.buf.push('\n');
        }
        let mut i = 0;
        while i < line.len() {
            let rest = &line[i..];
            let Some(c) = rest.chars().next() else { break };
            let clen = c.len_utf8();
            match self.state.clone() {
                State::Normal => {
                    if self.buf.is_empty() && is_space(c) {
                        i += clen;
                        continue;
                    }
                    if rest.starts_with("--") {
                        if !self.buf.is_empty() {
                            self.buf.push_str(rest);
                        }
                        break;
                    }
                    if rest.starts_with("/*") {
                        self.state = State::Comment(1);
                        self.buf.push_str("/*");
                        i += 2;
                        continue;
                    }
                    match c {
                        '\\' => {
                            items.push(Item::Meta(parse_meta(&rest[1..])));
                            break;
                        }
                        ';' if self.parens == 0 => {
                            self.buf.push(';');
                            if let Some(stmt) = self.take_pending() {
                                items.push(Item::Statement(stmt));
                            }
                            i += 1;
                            continue;
                        }
                        ';' => {}
                        '\'' => {
                            let mut prev = self.buf.chars().rev();
                            let escapes = matches!(prev.next(), Some('e' | 'E'))
                                && !prev.next().is_some_and(is_ident_char);
                            self.state = State::Quote(escapes);
                            self.content = true;
                        }
                        '"' => {
                            self.state = State::Ident;
                            self.content = true;
                        }
                        '$' if !self.buf.chars().next_back().is_some_and(is_ident_char) => {
                            if let Some(delim) = dollar_delimiter(rest) {
                                self.buf.push_str(delim);
                                self.state = State::Dollar(delim.to_string());
                                self.content = true;
                                i += delim.len();
                                continue;
                            }
                            self.content = true;
                        }
                        '(' => {
                            self.parens += 1;
                            self.content = true;
                        }
                        ')' => {
                            self.parens = self.parens.saturating_sub(1);
                            self.content = true;
                        }
                        c if is_space(c) => {}
                        _ => self.content = true,
                    }
                    self.buf.push(c);
                    i += clen;
                }
                State::Quote(escapes) => {
                    if escapes && c == '\\' {
                        // Keep the backslash and the character it escapes.
                        self.buf.push(c);
                        i += clen;
                        if let Some(n) = line[i..].chars().next() {
                            self.buf.push(n);
                            i += n.len_utf8();
                        }
                        continue;
                    }
                    if c == '\'' {
                        if rest.starts_with("''") {
                            self.buf.push_str("''");
                            i += 2;
                            continue;
                        }
                        self.state = State::Normal;
                    }
                    self.buf.push(c);
                    i += clen;
                }
                State::Ident => {
                    if c == '"' {
                        if rest.starts_with("\"\"") {
                            self.buf.push_str("\"\"");
                            i += 2;
                            continue;
                        }
                        self.state = State::Normal;
                    }
                    self.buf.push(c);
                    i += clen;
                }
                State::Dollar(delim) => {
                    if rest.starts_with(delim.as_str()) {
                        self.buf.push_str(&delim);
                        self.state = State::Normal;
                        i += delim.len();
                        continue;
                    }
                    self.buf.push(c);
                    i += clen;
                }
                State::Comment(depth) => {
                    if rest.starts_with("*/") {
                        self.buf.push_str("*/");
                        self.state = if depth == 1 {
                            State::Normal
                        } else {
                            State::Comment(depth - 1)
                        };
                        i += 2;
                        continue;
                    }
                    if rest.starts_with("/*") {
                        self.buf.push_str("/*");
                        self.state = State::Comment(depth + 1);
                        i += 2;
                        continue;
                    }
                    self.buf.push(c);
                    i += clen;
                }
            }
        }
        if self.buf.trim_matches(is_space).is_empty() && self.state == State::Normal {
            self.buf.clear();
        }
        items
    }
}

/// Whether `sql` holds nothing to run: only whitespace, comments and `;`.
pub fn is_blank(sql: &str) -> bool {
    let mut s = Scanner::new();
    for line in sql.split('\n') {
        // Any statement or backslash command is something to run.
        if !s.feed_line(line).is_empty() {
            return false;
        }
    }
    s.take_pending().is_none()
}

/// Parses the text after a backslash: the command name, then arguments
/// separated by whitespace. `'...'` arguments lose their quotes (`''` is a
/// quote); `"..."` parts are kept with their quotes.
pub fn parse_meta(text: &str) -> MetaCommand {
    let name_end = text
        .find(|c: char| is_space(c) || c == '\\')
        .unwrap_or(text.len());
    let name = text[..name_end].to_string();
    let mut args = Vec::new();
    let mut chars = text[name_end..].chars().peekable();
    loop {
        while chars.next_if(|&c| is_space(c)).is_some() {}
        let Some(&first) = chars.peek() else { break };
        if first == '\\' {
            // `\\` ends this command's arguments (psql's command separator);
            // anything after it is ignored here.
            break;
        }
        let mut arg = String::new();
        while let Some(&c) = chars.peek() {
            if is_space(c) {
                break;
            }
            chars.next();
            match c {
                '\'' => {
                    while let Some(q) = chars.next() {
                        if q == '\'' {
                            if chars.next_if_eq(&'\'').is_some() {
                                arg.push('\'');
                                continue;
                            }
                            break;
                        }
                        arg.push(q);
                    }
                }
                '"' => {
                    arg.push('"');
                    while let Some(q) = chars.next() {
                        arg.push(q);
                        if q == '"' {
                            if chars.next_if_eq(&'"').is_some() {
                                arg.push('"');
                                continue;
                            }
                            break;
                        }
                    }
                }
                c => arg.push(c),
            }
        }
        args.push(arg);
    }
    MetaCommand {
        name,
        args,
        line: text[name_end..].to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmt(s: &str) -> Item {
        Item::Statement(s.to_string())
    }

    fn meta(name: &str, args: &[&str]) -> Item {
        Item::Meta(MetaCommand {
            name: name.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            line: String::new(),
        })
    }

    /// A command's name and arguments (its raw line is tested apart).
    fn name_args(m: MetaCommand) -> (String, Vec<String>) {
        (m.name, m.args)
    }

    /// Feeds `text` line by line; returns all items plus the pending rest.
    fn split(text: &str) -> (Vec<Item>, Option<String>) {
        let mut s = Scanner::new();
        let mut items = Vec::new();
        for line in text.split('\n') {
            items.extend(s.feed_line(line).into_iter().map(|i| match i {
                Item::Meta(m) => Item::Meta(MetaCommand {
                    line: String::new(),
                    ..m
                }),
                other => other,
            }));
        }
        (items, s.take_pending())
    }

    #[test]
    fn simple_statements() {
        assert_eq!(
            split("select 1; select 2;\nselect 3;"),
            (
                vec![stmt("select 1;"), stmt("select 2;"), stmt("select 3;")],
                None
            )
        );
    }

    #[test]
    fn multi_line_statement_and_leading_comments() {
        let (items, rest) = split("-- header\n\n  select\n  *  -- all\nfrom t;\n");
        assert_eq!(items, vec![stmt("select\n  *  -- all\nfrom t;")]);
        assert_eq!(rest, None);
    }

    #[test]
    fn unterminated_statement_is_pending() {
        assert_eq!(
            split("select 1;\nselect 2"),
            (vec![stmt("select 1;")], Some("select 2".into()))
        );
    }

    #[test]
    fn semicolons_inside_quotes() {
        let (items, _) = split("select 'a;b', \"c;d\", E'e\\';f', 'g'';h';");
        assert_eq!(
            items,
            vec![stmt("select 'a;b', \"c;d\", E'e\\';f', 'g'';h';")]
        );
        // Without E, a backslash is an ordinary character.
        let (items, _) = split("select 'a\\'; select 2;");
        assert_eq!(items, vec![stmt("select 'a\\';"), stmt("select 2;")]);
        // `xe'...'` is the identifier xe followed by a plain string.
        let (items, _) = split("select xe'a\\'; select 2;");
        assert_eq!(items, vec![stmt("select xe'a\\';"), stmt("select 2;")]);
    }

    #[test]
    fn multi_line_strings() {
        let mut s = Scanner::new();
        assert_eq!(s.feed_line("insert into t values ('a;"), vec![]);
        assert_eq!(s.prompt_char(), '\'');
        assert_eq!(
            s.feed_line("b');"),
            vec![stmt("insert into t values ('a;\nb');")]
        );
        assert_eq!(s.prompt_char(), '=');
    }

    #[test]
    fn dollar_quotes() {
        let (items, _) = split("select $$a;b$$, $fn$ $$; $fn$;\nselect $1;");
        assert_eq!(
            items,
            vec![stmt("select $$a;b$$, $fn$ $$; $fn$;"), stmt("select $1;")]
        );
        // `$` inside an identifier does not open a quote.
        let (items, _) = split("select a$b$ from t; select 2;");
        assert_eq!(items, vec![stmt("select a$b$ from t;"), stmt("select 2;")]);
        let mut s = Scanner::new();
        assert!(s.feed_line("select $x$ line1;").is_empty());
        assert_eq!(s.prompt_char(), '$');
        assert_eq!(
            s.feed_line("line2 $x$;"),
            vec![stmt("select $x$ line1;\nline2 $x$;")]
        );
    }

    #[test]
    fn block_comments_nest() {
        let (items, _) = split("select /* a; /* b; */ c; */ 1; select 2;");
        assert_eq!(
            items,
            vec![stmt("select /* a; /* b; */ c; */ 1;"), stmt("select 2;")]
        );
        let mut s = Scanner::new();
        assert!(s.feed_line("/* open").is_empty());
        assert_eq!(s.prompt_char(), '*');
        assert_eq!(
            s.feed_line("*/ select 1;"),
            vec![stmt("/* open\n*/ select 1;")]
        );
    }

    #[test]
    fn parentheses_hold_semicolons() {
        let mut s = Scanner::new();
        assert!(s.feed_line("select (1;").is_empty());
        assert_eq!(s.prompt_char(), '(');
        assert_eq!(s.feed_line(");"), vec![stmt("select (1;\n);")]);
    }

    #[test]
    fn empty_statements_are_dropped() {
        assert_eq!(split(";;\n -- c\n/* only */;\n"), (vec![], None));
        assert!(is_blank(""));
        assert!(is_blank(" ; ;"));
        assert!(is_blank("-- hi"));
        assert!(is_blank("/* x */"));
        assert!(!is_blank("select 1"));
        assert!(!is_blank("select 1;;"));
    }

    #[test]
    fn backslash_commands() {
        let (items, rest) = split("\\timing on\nselect 1;\n  \\d   t  \n\\q");
        assert_eq!(
            items,
            vec![
                meta("timing", &["on"]),
                stmt("select 1;"),
                meta("d", &["t"]),
                meta("q", &[])
            ]
        );
        assert_eq!(rest, None);
        // A backslash command mid-statement leaves the statement pending,
        // exactly like psql.
        let (items, rest) = split("select 1 \\timing\nselect 2;");
        assert_eq!(
            items,
            vec![meta("timing", &[]), stmt("select 1 \nselect 2;")]
        );
        assert_eq!(rest, None);
        // Backslashes inside strings are not commands.
        let (items, _) = split("select '\\d';");
        assert_eq!(items, vec![stmt("select '\\d';")]);
    }

    #[test]
    fn meta_arguments() {
        assert_eq!(
            name_args(parse_meta("d \"My Table\"")),
            ("d".to_string(), vec!["\"My Table\"".into()])
        );
        assert_eq!(
            name_args(parse_meta("echo 'it''s' x")),
            ("echo".to_string(), vec!["it's".into(), "x".into()])
        );
        assert_eq!(
            name_args(parse_meta("d public.\"T\"x")),
            ("d".to_string(), vec!["public.\"T\"x".into()])
        );
        assert_eq!(name_args(parse_meta("q\\\\x")), ("q".to_string(), vec![]));
        assert_eq!(name_args(parse_meta("")), ("".to_string(), vec![]));
        assert_eq!(parse_meta("copy t from 'a b'").line, " t from 'a b'");
        // Unterminated quotes do not panic.
        assert_eq!(parse_meta("d \"abc").args, vec!["\"abc".to_string()]);
        assert_eq!(parse_meta("d 'abc").args, vec!["abc".to_string()]);
    }

    #[test]
    fn multibyte_text() {
        let (items, _) = split("select 'héllo; 日本' as \"ü;\"; select 2;");
        assert_eq!(
            items,
            vec![stmt("select 'héllo; 日本' as \"ü;\";"), stmt("select 2;")]
        );
    }
}
