//! Operators and coercions, on top of tusk-exec's tables: which casts
//! PostgreSQL applies silently (`cast::cast_context`, PostgreSQL's
//! `pg_cast`), which overload an operator or function means
//! (`func::resolve_operator` / `func::resolve`, PostgreSQL's
//! `func_select_candidate`), and which type several values meet at
//! (`func::common_type`, PostgreSQL's `select_common_type`).
//!
//! A cast is *implicit* when it may happen anywhere (integer to bigint),
//! *assignment* when only storing into a column (bigint to integer,
//! anything to text), and *explicit* when it must be written.

use super::{cast, Binder, Result, B};
use tusk_exec::cast::{cast_context, CastContext};
use tusk_exec::func::{self, ArgType};
use tusk_exec::Expr;
use tusk_storage::DataType;

/// Position in PostgreSQL's numeric promotion order (for unary minus and
/// generate_series' overloads).
pub fn numeric_rank(t: DataType) -> Option<u8> {
    Some(match t {
        DataType::Int2 => 0,
        DataType::Int4 => 1,
        DataType::Int8 => 2,
        DataType::Numeric => 3,
        DataType::Float4 => 4,
        DataType::Float8 => 5,
        _ => return None,
    })
}

/// Whether PostgreSQL casts `from` to `to` implicitly.
pub fn implicit(from: DataType, to: DataType) -> bool {
    cast_context(from, to) == Some(CastContext::Implicit)
}

/// Whether PostgreSQL casts `from` to `to` when storing into a column.
pub fn assignment(from: DataType, to: DataType) -> bool {
    matches!(
        cast_context(from, to),
        Some(CastContext::Implicit | CastContext::Assignment)
    )
}

/// Whether any cast from `from` to `to` exists (explicit included).
pub fn castable(from: DataType, to: DataType) -> bool {
    cast_context(from, to).is_some()
}

impl B {
    /// The argument type resolution sees.
    pub fn arg_type(&self) -> ArgType {
        if self.unknown {
            ArgType::Unknown
        } else {
            ArgType::Known(self.ty())
        }
    }
}

impl Binder<'_> {
    /// `b` as type `t`: an untyped literal is read as `t`, anything else cast.
    pub(crate) fn to_type(&self, b: B, t: DataType) -> Result<Expr> {
        if b.unknown {
            self.convert_unknown(b.e, t)
        } else {
            Ok(cast(b.e, t))
        }
    }

    /// The operands of binary operator `op` with the overload's types, and
    /// the result type.
    pub(crate) fn operator(&self, op: &str, l: B, r: B) -> Result<(Expr, Expr, DataType)> {
        let res = func::resolve_operator(op, l.arg_type(), r.arg_type())?;
        let le = self.to_type(l, res.arg_types[0])?;
        let re = self.to_type(r, res.arg_types[1])?;
        Ok((le, re, res.ret))
    }

    /// The type several values meet at, for construct `context` (`CASE`,
    /// `UNION`, `VALUES`...).
    pub(crate) fn common_type_of(&self, items: &[&B], context: &str) -> Result<DataType> {
        let types: Vec<ArgType> = items.iter().map(|b| b.arg_type()).collect();
        Ok(func::common_type(context, &types)?)
    }

    /// Every item brought to one type (`common_type_of`).
    pub(crate) fn unify_all(&self, items: Vec<B>, context: &str) -> Result<(Vec<Expr>, DataType)> {
        let refs: Vec<&B> = items.iter().collect();
        let t = self.common_type_of(&refs, context)?;
        let out = items
            .into_iter()
            .map(|b| self.to_type(b, t))
            .collect::<Result<Vec<_>>>()?;
        Ok((out, t))
    }
}
