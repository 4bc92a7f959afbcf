//! Choosing a function or operator overload for a call, as PostgreSQL's
//! `func_get_detail` / `func_select_candidate` (parse_func.c) and
//! `oper_select_candidate` (parse_oper.c) do.
//!
//! Arguments are known types or *unknown* (an untyped string literal or a
//! bare NULL). The steps, over the overloads with the right number of
//! arguments:
//! 1. an overload whose parameters equal the argument types wins;
//! 2. otherwise keep the overloads every argument can reach by an implicit
//!    cast (an unknown reaches any type); one left wins, none is
//!    `function f(...) does not exist` (42883);
//! 3. keep those with the most arguments of exactly the parameter type;
//! 4. then those with the most parameters that are exact or the preferred
//!    type of their category (`double precision`, `text`, ...);
//! 5. for unknown arguments, pick the category the remaining overloads take
//!    there (the string category wins a conflict; otherwise a conflict gives
//!    up) and prefer its preferred type;
//! 6. last, if every known argument has one type, assume the unknowns have
//!    it too and keep the overloads that accept that;
//! 7. still more than one: `function f(unknown) is not unique` (42725).
//!
//! Binary operators follow the same steps with one more first: an unknown
//! operand beside a known one is taken to be of the known type when that
//! makes an exact match (`x = '1'`).

use super::catalog::{opers_named, procs_named, Param, Poly};
use super::types::{category, implicit_cast, is_preferred, Category};
use super::Func;
use crate::error::{sqlstate, ExecError, Result};
use tusk_storage::DataType;

/// The type of an argument at the call site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    Known(DataType),
    /// An untyped literal (`'abc'`) or NULL: PostgreSQL's `unknown`.
    Unknown,
}

impl ArgType {
    fn name(self) -> &'static str {
        match self {
            ArgType::Known(t) => t.display_name(),
            ArgType::Unknown => "unknown",
        }
    }
}

/// The chosen overload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// What to evaluate (for an operator: `None`; the binder builds the
    /// operator's node).
    pub func: Option<Func>,
    /// The type each argument must be cast to before the call (an unknown
    /// literal is parsed as this type; `"any"` parameters keep the
    /// argument's type, unknown ones become `text`).
    pub arg_types: Vec<DataType>,
    /// The result type.
    pub ret: DataType,
}

/// A candidate: its parameter types expanded to the call's arity.
struct Cand {
    params: Vec<Param>,
    ret: DataType,
    poly: Poly,
    func: Option<Func>,
}

fn param_category(p: Param) -> (Category, bool) {
    match p {
        Param::T(t) => (category(t), is_preferred(t)),
        Param::Any | Param::AnyArray | Param::AnyElement => (Category::Pseudo, false),
    }
}

fn can_coerce(a: ArgType, p: Param) -> bool {
    match (a, p) {
        (_, Param::Any | Param::AnyElement) | (ArgType::Unknown, _) => true,
        (ArgType::Known(t), Param::AnyArray) => t.is_array(),
        (ArgType::Known(t), Param::T(pt)) => implicit_cast(t, pt),
    }
}

/// The element type a call binds its `anyarray` / `anyelement`
/// parameters to: `Ok(None)` when only unknowns meet them, `Err` when the
/// known arguments disagree (PostgreSQL requires them to match exactly).
fn poly_element(args: &[ArgType], params: &[Param]) -> std::result::Result<Option<DataType>, ()> {
    let mut element = None;
    for (a, p) in args.iter().zip(params) {
        let t = match (a, p) {
            (ArgType::Known(t), Param::AnyArray) => t.element().ok_or(())?,
            (ArgType::Known(t), Param::AnyElement) => *t,
            _ => continue,
        };
        match element {
            None => element = Some(t),
            Some(e) if e == t => {}
            Some(_) => return Err(()),
        }
    }
    Ok(element)
}

fn exact(a: ArgType, p: Param) -> bool {
    matches!((a, p), (ArgType::Known(t), Param::T(pt)) if t == pt)
}

/// Keeps the candidates scoring highest under `score`.
fn keep_best(cands: Vec<Cand>, score: impl Fn(&Cand) -> usize) -> Vec<Cand> {
    let best = cands.iter().map(&score).max().unwrap_or(0);
    cands.into_iter().filter(|c| score(c) == best).collect()
}

/// PostgreSQL's `func_select_candidate` over candidates that all accept
/// the arguments; `None` when no single one can be chosen.
fn select_candidate(args: &[ArgType], mut cands: Vec<Cand>) -> Option<Cand> {
    let known = |i: usize| !matches!(args[i], ArgType::Unknown);
    // Most exact matches.
    cands = keep_best(cands, |c| {
        (0..args.len())
            .filter(|&i| exact(args[i], c.params[i]))
            .count()
    });
    if cands.len() == 1 {
        return cands.pop();
    }
    // Most exact-or-preferred matches where coercion is needed.
    cands = keep_best(cands, |c| {
        (0..args.len())
            .filter(|&i| known(i) && (exact(args[i], c.params[i]) || param_category(c.params[i]).1))
            .count()
    });
    if cands.len() == 1 {
        return cands.pop();
    }
    let nunknown = (0..args.len()).filter(|&i| !known(i)).count();
    if nunknown == 0 {
        return None;
    }
    // Resolve the unknown positions by category.
    let mut slots: Vec<Option<(Category, bool)>> = vec![None; args.len()];
    let mut resolved = true;
    for i in (0..args.len()).filter(|&i| !known(i)) {
        let mut slot: Option<(Category, bool)> = None;
        let mut conflict = false;
        for c in &cands {
            let (cat, pref) = param_category(c.params[i]);
            match slot {
                None => slot = Some((cat, pref)),
                Some((s, p)) if s == cat => slot = Some((s, p || pref)),
                Some(_) if cat == Category::String => slot = Some((cat, pref)),
                Some(_) => conflict = true,
            }
        }
        if conflict && slot.is_none_or(|(s, _)| s != Category::String) {
            resolved = false;
            break;
        }
        slots[i] = slot;
    }
    if resolved {
        let kept: Vec<Cand> = cands
            .iter()
            .filter(|c| {
                (0..args.len()).filter(|&i| !known(i)).all(|i| {
                    let (cat, pref) = param_category(c.params[i]);
                    let (scat, spref) = slots[i].expect("resolved slot");
                    cat == scat && (!spref || pref)
                })
            })
            .map(|c| Cand {
                params: c.params.clone(),
                ret: c.ret,
                poly: c.poly,
                func: c.func,
            })
            .collect();
        if kept.len() == 1 {
            return kept.into_iter().next();
        }
    }
    // Last gasp: unknowns take the single type of the known arguments.
    if nunknown < args.len() {
        let mut ty = None;
        for a in args {
            if let ArgType::Known(t) = a {
                match ty {
                    None => ty = Some(*t),
                    Some(u) if u == *t => {}
                    Some(_) => return None,
                }
            }
        }
        let t = ArgType::Known(ty?);
        let mut fits = cands
            .into_iter()
            .filter(|c| c.params.iter().all(|p| can_coerce(t, *p)));
        let first = fits.next();
        if fits.next().is_none() {
            return first;
        }
    }
    None
}

/// The types the arguments take for candidate `c`. Polymorphic
/// parameters take the call's element type (`text` if only unknowns meet
/// them: [`resolve`] refuses that case first).
fn finish(args: &[ArgType], c: Cand) -> Resolved {
    let element = poly_element(args, &c.params)
        .ok()
        .flatten()
        .unwrap_or(DataType::Text);
    let array = element.array_of().unwrap_or(DataType::Text);
    let arg_types = args
        .iter()
        .zip(&c.params)
        .map(|(a, p)| match (a, p) {
            (_, Param::T(t)) => *t,
            (ArgType::Known(t), Param::Any | Param::AnyArray) => *t,
            (ArgType::Unknown, Param::Any) => DataType::Text,
            (ArgType::Unknown, Param::AnyArray) => array,
            (_, Param::AnyElement) => element,
        })
        .collect();
    Resolved {
        func: c.func,
        arg_types,
        ret: match c.poly {
            Poly::No => c.ret,
            Poly::Array => array,
            Poly::Element => element,
        },
    }
}

/// Picks among `cands` (all with `args.len()` parameters); `Err(true)` when
/// none accepts the arguments, `Err(false)` when several remain.
fn choose(args: &[ArgType], cands: Vec<Cand>) -> std::result::Result<Resolved, bool> {
    if let Some(i) = cands
        .iter()
        .position(|c| args.iter().zip(&c.params).all(|(a, p)| exact(*a, *p)))
    {
        let c = cands.into_iter().nth(i).unwrap();
        return Ok(finish(args, c));
    }
    let mut fit: Vec<Cand> = cands
        .into_iter()
        .filter(|c| {
            args.iter().zip(&c.params).all(|(a, p)| can_coerce(*a, *p))
                && poly_element(args, &c.params).is_ok()
        })
        .collect();
    match fit.len() {
        0 => Err(true),
        1 => Ok(finish(args, fit.pop().unwrap())),
        _ => select_candidate(args, fit)
            .map(|c| finish(args, c))
            .ok_or(false),
    }
}

fn arg_list(args: &[ArgType]) -> String {
    args.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
}

/// Resolves a call of the built-in function `name` (lower case, as the
/// parser folds it) on arguments of types `args`.
/// Whether `name` is a set-returning function (see [`crate::srf`]).
pub fn is_set_returning(name: &str) -> bool {
    procs_named(name).any(|p| p.func.set_returning())
}

pub fn resolve(name: &str, args: &[ArgType]) -> Result<Resolved> {
    let cands: Vec<Cand> = procs_named(name)
        .filter_map(|p| {
            let fixed = p.params.len();
            let params: Vec<Param> = if p.variadic {
                if args.len() < fixed {
                    return None;
                }
                (0..args.len())
                    .map(|i| p.params[i.min(fixed - 1)])
                    .collect()
            } else if args.len() == fixed {
                p.params.to_vec()
            } else {
                return None;
            };
            Some(Cand {
                params,
                ret: p.ret,
                poly: p.poly,
                func: Some(p.func),
            })
        })
        .collect();
    // Polymorphic parameters met only by unknowns have no type to take.
    let undetermined = |c: &Cand| {
        c.params.iter().any(|p| p.is_polymorphic())
            && matches!(poly_element(args, &c.params), Ok(None))
    };
    if !cands.is_empty() && cands.iter().all(undetermined) {
        return Err(ExecError::coded(
            sqlstate::DATATYPE_MISMATCH,
            "could not determine polymorphic type because input has type unknown",
        ));
    }
    choose(args, cands).map_err(|missing| {
        let sig = format!("{name}({})", arg_list(args));
        if missing {
            ExecError::coded(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function {sig} does not exist"),
            )
            .with_hint(
                "No function matches the given name and argument types. \
                 You might need to add explicit type casts.",
            )
        } else {
            ExecError::coded(
                sqlstate::AMBIGUOUS_FUNCTION,
                format!("function {sig} is not unique"),
            )
            .with_hint(
                "Could not choose a best candidate function. \
                 You might need to add explicit type casts.",
            )
        }
    })
}

/// PostgreSQL's error for a binary operator with no match for its operand
/// types (type names as PostgreSQL prints them; a row is `record`).
pub fn no_operator(left: &str, op: &str, right: &str) -> ExecError {
    ExecError::coded(
        sqlstate::UNDEFINED_FUNCTION,
        format!("operator does not exist: {left} {op} {right}"),
    )
    .with_hint(
        "No operator matches the given name and argument types. \
         You might need to add explicit type casts.",
    )
}

/// Resolves the binary operator `op` (`+`, `=`, `||`, ...). The argument
/// types in the result are those to cast both operands to: for cross-type
/// operators (`int4 + int8`), both become the wider type, which gives
/// PostgreSQL's result.
pub fn resolve_operator(op: &str, left: ArgType, right: ArgType) -> Result<Resolved> {
    let args = [left, right];
    let not_found = || no_operator(left.name(), op, right.name());
    if let Some(r) = json_operator(op, left, right) {
        return r.ok_or_else(not_found);
    }
    if let Some(r) = array_operator(op, left, right) {
        return r.ok_or_else(not_found);
    }
    if op == "||" {
        // byteacat: bytea on one side, bytea or an untyped literal on the
        // other.
        let bytea_or_unknown =
            |a: ArgType| matches!(a, ArgType::Unknown | ArgType::Known(DataType::Bytea));
        let bytea = ArgType::Known(DataType::Bytea);
        if (left == bytea || right == bytea) && bytea_or_unknown(left) && bytea_or_unknown(right) {
            return Ok(Resolved {
                func: Some(crate::func::Func::ByteaCat),
                arg_types: vec![DataType::Bytea, DataType::Bytea],
                ret: DataType::Bytea,
            });
        }
        // textcat, anytextcat, textanycat: one side must be a string.
        let stringy = |a: ArgType| {
            matches!(a, ArgType::Unknown) || matches!(a, ArgType::Known(t) if t.is_string())
        };
        if !stringy(left) && !stringy(right) {
            return Err(not_found());
        }
        return Ok(Resolved {
            func: None,
            arg_types: vec![DataType::Text, DataType::Text],
            ret: DataType::Text,
        });
    }
    let cands = || {
        opers_named(op)
            .map(|o| Cand {
                params: vec![Param::T(o.left), Param::T(o.right)],
                ret: o.ret,
                poly: Poly::No,
                func: None,
            })
            .collect::<Vec<_>>()
    };
    // An unknown beside a known type: try that type for both.
    let assumed = match (left, right) {
        (ArgType::Unknown, ArgType::Known(t)) | (ArgType::Known(t), ArgType::Unknown) => {
            let both = [ArgType::Known(t), ArgType::Known(t)];
            cands()
                .into_iter()
                .find(|c| both.iter().zip(&c.params).all(|(a, p)| exact(*a, *p)))
        }
        _ => None,
    };
    let chosen = match assumed {
        Some(c) => finish(&args, c),
        None => match choose(&args, cands()) {
            Ok(r) => r,
            Err(true) => return Err(not_found()),
            Err(false) => {
                return Err(ExecError::coded(
                    sqlstate::AMBIGUOUS_FUNCTION,
                    format!(
                        "operator is not unique: {} {op} {}",
                        left.name(),
                        right.name()
                    ),
                )
                .with_hint(
                    "Could not choose a best candidate operator. \
                     You might need to add explicit type casts.",
                ))
            }
        },
    };
    // Widen cross-type numeric operands, and comparisons between types
    // with an implicit cast, to one type (what tusk's kernels take); other
    // mixed operators (`date + integer`) keep their own operand types.
    let (l, r) = (chosen.arg_types[0], chosen.arg_types[1]);
    let numeric = category(l) == Category::Numeric && category(r) == Category::Numeric;
    let common = if l == r {
        Some(l)
    } else if numeric && chosen.ret != DataType::Bool {
        Some(chosen.ret)
    } else if chosen.ret == DataType::Bool && implicit_cast(l, r) {
        Some(r)
    } else if chosen.ret == DataType::Bool && implicit_cast(r, l) {
        Some(l)
    } else {
        None
    };
    Ok(Resolved {
        func: None,
        arg_types: match common {
            Some(t) => vec![t, t],
            None => vec![l, r],
        },
        ret: chosen.ret,
    })
}

/// The `json`/`jsonb` operators (see `json::OPERATORS`): `None` when
/// neither operand is `json` or `jsonb` (or, for the operators other
/// types share, `||` and `-`, when the operands are not both `jsonb` or
/// `jsonb` and an untyped literal); `Some(None)` when no row fits.
fn json_operator(op: &str, left: ArgType, right: ArgType) -> Option<Option<Resolved>> {
    use crate::func::json::OPERATORS;
    let is_json = |a: ArgType| matches!(a, ArgType::Known(DataType::Json | DataType::Jsonb));
    if !is_json(left) && !is_json(right) {
        return None;
    }
    let rows = || OPERATORS.iter().filter(|o| o.name == op);
    rows().next()?;
    if matches!(op, "||" | "-") {
        let jsonb_or_unknown =
            |a: ArgType| matches!(a, ArgType::Unknown | ArgType::Known(DataType::Jsonb));
        if !(jsonb_or_unknown(left) && (op == "-" || jsonb_or_unknown(right))) {
            return None;
        }
    }
    let fits = |a: ArgType, t: DataType| match a {
        ArgType::Unknown => true,
        ArgType::Known(k) => k == t || implicit_cast(k, t),
    };
    // An exact match first (`-> 1` is a position), then the first row the
    // operands reach (an untyped `-> 'a'` is a key).
    let exact = rows().find(|o| {
        let same = |a: ArgType, t: DataType| a == ArgType::Known(t);
        same(left, o.left) && same(right, o.right)
    });
    let chosen = exact.or_else(|| rows().find(|o| fits(left, o.left) && fits(right, o.right)));
    Some(chosen.map(|o| Resolved {
        func: Some(o.func),
        arg_types: vec![o.left, o.right],
        ret: o.ret,
    }))
}

/// The array operators (`anyarray`): comparisons between arrays of one
/// type, and `||` joining two arrays (`array_cat`) or an array and an
/// element (`array_append`, `array_prepend`). `None` when neither operand
/// is an array; `Some(None)` when no operator fits.
fn array_operator(op: &str, left: ArgType, right: ArgType) -> Option<Option<Resolved>> {
    let array = |a: ArgType| match a {
        ArgType::Known(t) if t.is_array() => Some(t),
        _ => None,
    };
    let (la, ra) = (array(left), array(right));
    if la.is_none() && ra.is_none() {
        return None;
    }
    let known = |a: ArgType| match a {
        ArgType::Known(t) => Some(t),
        ArgType::Unknown => None,
    };
    let same = |t: DataType| {
        Some(Resolved {
            func: None,
            arg_types: vec![t, t],
            ret: DataType::Bool,
        })
    };
    Some(match op {
        "=" | "<>" | "<" | "<=" | ">" | ">=" => match (la, ra) {
            (Some(l), Some(r)) if l == r => same(l),
            (Some(t), None) if known(right).is_none() => same(t),
            (None, Some(t)) if known(left).is_none() => same(t),
            _ => None,
        },
        "||" => {
            let elem_fits = |a: ArgType, e: DataType| match a {
                ArgType::Unknown => true,
                ArgType::Known(t) => implicit_cast(t, e),
            };
            let call = |func: Func, l: DataType, r: DataType, ret: DataType| Resolved {
                func: Some(func),
                arg_types: vec![l, r],
                ret,
            };
            match (la, ra) {
                (Some(l), Some(r)) if l.element() == r.element() => {
                    let t = l.element()?.array_of()?;
                    Some(call(Func::ArrayCat, t, t, t))
                }
                (Some(t), None) if known(right).is_none() => {
                    let t = t.element()?.array_of()?;
                    Some(call(Func::ArrayCat, t, t, t))
                }
                (None, Some(t)) if known(left).is_none() => {
                    let t = t.element()?.array_of()?;
                    Some(call(Func::ArrayCat, t, t, t))
                }
                (Some(t), None) if elem_fits(right, t.element()?) => {
                    let e = t.element()?;
                    let t = e.array_of()?;
                    Some(call(Func::ArrayAppend, t, e, t))
                }
                (None, Some(t)) if elem_fits(left, t.element()?) => {
                    let e = t.element()?;
                    let t = e.array_of()?;
                    Some(call(Func::ArrayPrepend, e, t, t))
                }
                _ => None,
            }
        }
        _ => None,
    })
}

/// PostgreSQL's `select_common_type`: the type that the branches of CASE,
/// the arguments of COALESCE, GREATEST, LEAST and NULLIF, the items of an
/// IN list with its left side, the columns of VALUES rows and of UNION arms
/// are all cast to. `context` names the construct in errors (`CASE`,
/// `COALESCE`, `UNION`...). For CASE, pass the ELSE result first, then the
/// THEN results, as PostgreSQL does (its error messages depend on it).
///
/// The first known type leads; a later one of the same category replaces
/// it when it is reached implicitly but cannot be cast back (`integer`, then
/// `numeric`), unless the leader is its category's preferred type. Types of
/// different categories are `CASE types integer and text cannot be matched`
/// (42804); a type that cannot reach the result implicitly is `COALESCE
/// could not convert type time without time zone to date` (42846). Only
/// unknowns: `text`.
pub fn common_type(context: &str, types: &[ArgType]) -> Result<DataType> {
    let mut lead: Option<DataType> = None;
    for t in types {
        let ArgType::Known(n) = *t else { continue };
        let Some(p) = lead else {
            lead = Some(n);
            continue;
        };
        if n == p {
            continue;
        }
        if category(n) != category(p) {
            return Err(ExecError::coded(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "{context} types {} and {} cannot be matched",
                    p.display_name(),
                    n.display_name()
                ),
            ));
        }
        if !is_preferred(p) && implicit_cast(p, n) && !implicit_cast(n, p) {
            lead = Some(n);
        }
    }
    let Some(result) = lead else {
        return Ok(DataType::Text);
    };
    for t in types {
        if let ArgType::Known(n) = *t {
            if !implicit_cast(n, result) {
                return Err(ExecError::coded(
                    sqlstate::CANNOT_COERCE,
                    format!(
                        "{context} could not convert type {} to {}",
                        n.display_name(),
                        result.display_name()
                    ),
                ));
            }
        }
    }
    Ok(result)
}
