//! `pg_proc`: the built-in functions tusk has (tusk-exec's function
//! tables), one row per overload, and the oids `regproc` reads and prints.
//!
//! tusk's functions are not PostgreSQL's catalog rows, so their oids are
//! their positions in the function tables above [`FIRST_PROC_OID`]; the
//! internal functions catalog columns name (type input and output, access
//! method handlers) keep PostgreSQL's oids (`values::INTERNAL_FUNCTIONS`).

use super::oids::*;
use super::values::*;
use tusk_exec::func::catalog::{all_procs, Param, Poly, Proc};
use tusk_exec::Value;
use tusk_storage::DataType;

/// The oid of the first function of the tables.
pub(crate) const FIRST_PROC_OID: u32 = 9000;

/// PostgreSQL's pseudo-types of polymorphic parameters.
const ANY: u32 = 2276;
const ANYARRAY: u32 = 2277;
const ANYELEMENT: u32 = 2283;

fn param_oid(p: &Param) -> u32 {
    match p {
        Param::T(t) => t.oid(),
        Param::Any => ANY,
        Param::AnyArray => ANYARRAY,
        Param::AnyElement => ANYELEMENT,
    }
}

fn result_oid(p: &Proc) -> u32 {
    match p.poly {
        Poly::No => p.ret.oid(),
        Poly::Array => ANYARRAY,
        Poly::Element => ANYELEMENT,
    }
}

/// Every function with its oid.
fn numbered() -> impl Iterator<Item = (u32, &'static Proc)> {
    all_procs()
        .enumerate()
        .map(|(i, p)| (FIRST_PROC_OID + i as u32, p))
}

/// The name of function `oid` (`regproc` output).
pub(crate) fn proc_name(oid: u32) -> Option<&'static str> {
    numbered()
        .find(|(o, _)| *o == oid)
        .map(|(_, p)| p.name)
        .or_else(|| INTERNAL_FUNCTIONS.iter().find(|f| f.0 == oid).map(|f| f.1))
}

/// The oids of the functions called `name` (`regproc` input).
pub(crate) fn proc_oids(name: &str) -> Vec<u32> {
    let mut out: Vec<u32> = numbered()
        .filter(|(_, p)| p.name == name)
        .map(|(o, _)| o)
        .collect();
    out.extend(
        INTERNAL_FUNCTIONS
            .iter()
            .filter(|f| f.1 == name)
            .map(|f| f.0),
    );
    out
}

/// `pg_proc`'s rows.
pub(super) fn rows() -> Vec<Vec<Value>> {
    numbered()
        .map(|(o, p)| {
            let volatility = if p.func.volatile() {
                'v'
            } else if p.func.stable() {
                's'
            } else {
                'i'
            };
            vec![
                oid(o),
                name(p.name),
                oid(PG_CATALOG_NAMESPACE),
                oid(BOOTSTRAP_SUPERUSER),
                oid(INTERNAL_LANGUAGE),
                f4(1.0),
                f4(0.0),
                oid(if p.variadic { ANY } else { 0 }),
                regproc_named("-"),
                ch('f'),
                boolean(false),
                boolean(false),
                boolean(p.func.strict()),
                boolean(false),
                ch(volatility),
                ch(if p.func.session() { 'r' } else { 's' }),
                i2(p.params.len() as i16),
                i2(0),
                oid(result_oid(p)),
                array(
                    DataType::OidVector,
                    p.params.iter().map(|x| oid(param_oid(x))).collect(),
                ),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                text(p.name),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ]
        })
        .collect()
}
