//! The sets a pattern gives over a string: `regexp_matches(s, pattern [,
//! flags])`, one `text[]` of capture groups per match (only the first
//! match unless the flags hold `g`), and `regexp_split_to_table(s, pattern
//! [, flags])`, the pieces of `s` between matches (which refuses `g`: it
//! always splits at every match).
//!
//! Matching follows PostgreSQL's `setup_regexp_matches` (see
//! [`crate::func::regexp::pg_matches`]): the split ignores zero-length
//! matches at either end and right after a match, so `regexp_split_to_table
//! ('abc', '')` gives `a`, `b`, `c`. The whole set is found when the call
//! starts.

use super::{Listed, SetRows};
use crate::error::{ExecError, Result};
use crate::func::regex::compile;
use crate::func::regexp::{flags_of, groups_array, pg_matches};
use crate::func::Func;
use crate::value::Value;
use tusk_storage::{DataType, TEXT_ARRAY};

/// Starts `regexp_matches` or `regexp_split_to_table` over non-NULL `args`.
pub(super) fn start(func: Func, args: Vec<Value>) -> Result<Box<dyn SetRows>> {
    let text = |i: usize| match args.get(i) {
        Some(Value::Text(s)) => Ok(s.as_str()),
        other => Err(ExecError::new(format!(
            "{} over a non-text argument {other:?}",
            func.name()
        ))),
    };
    let (s, pattern) = (text(0)?, text(1)?);
    let letters = if args.len() > 2 { text(2)? } else { "" };
    if func == Func::RegexpMatches {
        let mut global = false;
        let flags = flags_of(letters, Some(&mut global), "regexp_matches")?;
        let re = compile(pattern, flags)?;
        let items = pg_matches(&re, s, global, false)
            .iter()
            .map(|caps| Value::Array(Box::new(groups_array(caps))))
            .collect();
        return Ok(Box::new(Listed::new(items, TEXT_ARRAY)));
    }
    let flags = flags_of(letters, None, "regexp_split_to_table")?;
    let re = compile(pattern, flags)?;
    let mut items = Vec::new();
    let mut at = 0;
    for caps in pg_matches(&re, s, true, true) {
        let m = caps.get(0).expect("group 0 is the match");
        items.push(Value::Text(s[at..m.start()].to_string()));
        at = m.end();
    }
    items.push(Value::Text(s[at..].to_string()));
    Ok(Box::new(Listed::new(items, DataType::Text)))
}
