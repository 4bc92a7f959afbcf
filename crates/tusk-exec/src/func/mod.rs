//! Built-in scalar functions: what they compute, and how a call is chosen.
//!
//! A call is an [`crate::expr::Expr::Call`] holding a [`Func`], its
//! arguments and its result type. The binder gets all three from
//! [`resolve::resolve`], which picks the overload of a name from the table in
//! [`catalog`] (PostgreSQL's `pg_proc`, for the functions tusk has) with
//! PostgreSQL's rules, and tells which casts to put on the arguments. By the
//! time a call is evaluated, every argument has its parameter's type, so a
//! kernel dispatches on the vectors' representation only.
//!
//! ## Strictness, volatility, errors
//!
//! Almost every function is *strict*: a NULL argument gives a NULL result and
//! the kernel never looks at that row. Kernels also skip rows outside the
//! active mask (see the `expr` module doc). So a kernel raises an error only
//! for a row PostgreSQL would have computed: `sqrt(x)` under
//! `WHERE x >= 0 AND ...` never sees a negative `x`. The exceptions are
//! written per function (`concat`, `concat_ws`, `format`, `quote_nullable`).
//! [`Func::volatile`] tells the constant folder which calls it must leave
//! alone (`random()`).
//!
//! ## What the binder calls
//!
//! - A call `f(a, b)`: [`resolve()`]`("f", &[type of a, type of b])` gives the
//!   [`Func`], the type to cast each argument to (an untyped literal is
//!   parsed as that type) and the result type; build
//!   [`Expr::call`](crate::expr::Expr::call)`(func, args, ret)`.
//! - A binary operator: [`resolve_operator`] gives the operand types (both
//!   cast to them) and the result; build `Expr::arith` (`+ - * / %`),
//!   `Expr::cmp`, `Expr::concat` (`||`, non-text operands cast to text),
//!   `Expr::Regex` (`~ ~* !~ !~*`) or `Expr::Like` (`~~` ...).
//! - CASE, COALESCE, GREATEST, LEAST, NULLIF, IN lists, VALUES and UNION
//!   columns: [`common_type`] picks the type every part is cast to.
//! - Syntax that PostgreSQL's grammar turns into these functions:
//!   `POSITION(a IN b)` is `position(b, a)`; `SUBSTRING(s FROM i FOR n)` is
//!   `substring(s, i, n)`, `SUBSTRING(s FROM pattern)` `substring(s, pattern)`,
//!   `SUBSTRING(s SIMILAR p ESCAPE e)` `substring(s, p, e)`;
//!   `TRIM([BOTH|LEADING|TRAILING] [chars] FROM s)` is `btrim|ltrim|rtrim(s
//!   [, chars])`; `x LIKE p ESCAPE e` is `x LIKE like_escape(p, e)`;
//!   `x SIMILAR TO p [ESCAPE e]` is `x ~ similar_to_escape(p [, e])`;
//!   `x BETWEEN a AND b` is `x >= a AND x <= b`, and `BETWEEN SYMMETRIC` is
//!   `(x >= a AND x <= b) OR (x >= b AND x <= a)`.
//!
//! Families: [`math`] (numbers), [`string`] (text), `bytea` (`bytea`
//! and `uuid`), [`regex`] (regular
//! expression syntax), [`regexp`] (the functions over patterns, `SIMILAR
//! TO`, LIKE's escape), [`format`](mod@format) (`format`,
//! `quote_*`), `numeric_fns` (the numeric versions: the seam to the
//! arbitrary-precision numeric type), [`datetime`] (the clock, `extract`,
//! `date_trunc`, `to_char` and the other date/time functions).

pub mod arrays;
mod bytea;
pub mod catalog;
pub mod datetime;
pub mod format;
pub mod json;
mod libm;
pub mod math;
mod md5;
mod numeric_fns;
pub(crate) mod random;
mod sha2;
mod sleep;
mod width_bucket;
pub use random::{put_generator, take_generator, GeneratorState};
pub mod regex;
pub mod regexp;
pub mod resolve;
pub mod string;
pub mod system;
pub mod types;

pub use catalog::Proc;
pub use resolve::{common_type, is_set_returning, resolve, resolve_operator, ArgType, Resolved};

use crate::error::Result;
use crate::expr::{any_null, live};
use crate::value::Value;
use crate::vector::Vector;
use tusk_storage::DataType;

macro_rules! funcs {
    ($($v:ident => $name:literal,)*) => {
        /// A built-in function (one name; its overloads share the variant and
        /// dispatch on the argument representation and count).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Func {
            $($v,)*
        }

        impl Func {
            /// The SQL name (as EXPLAIN prints it).
            pub fn name(self) -> &'static str {
                match self {
                    $(Func::$v => $name,)*
                }
            }
        }
    };
}

funcs! {
    Abs => "abs",
    Mod => "mod",
    Div => "div",
    Sign => "sign",
    Ceil => "ceil",
    Floor => "floor",
    Round => "round",
    Trunc => "trunc",
    Sqrt => "sqrt",
    Cbrt => "cbrt",
    Power => "power",
    Exp => "exp",
    Ln => "ln",
    Log10 => "log10",
    Log => "log",
    Pi => "pi",
    Degrees => "degrees",
    Radians => "radians",
    Sin => "sin",
    Cos => "cos",
    Tan => "tan",
    Cot => "cot",
    Asin => "asin",
    Acos => "acos",
    Atan => "atan",
    Atan2 => "atan2",
    Sinh => "sinh",
    Cosh => "cosh",
    Tanh => "tanh",
    WidthBucket => "width_bucket",
    Factorial => "factorial",
    Scale => "scale",
    MinScale => "min_scale",
    TrimScale => "trim_scale",
    NumNulls => "num_nulls",
    NumNonnulls => "num_nonnulls",
    Gcd => "gcd",
    Lcm => "lcm",
    Random => "random",
    SetSeed => "setseed",
    PgSleep => "pg_sleep",
    Length => "length",
    OctetLength => "octet_length",
    BitLength => "bit_length",
    Upper => "upper",
    Lower => "lower",
    Initcap => "initcap",
    Substr => "substr",
    SubstringRegex => "substring",
    SubstringSimilar => "substring",
    Strpos => "strpos",
    Btrim => "btrim",
    Ltrim => "ltrim",
    Rtrim => "rtrim",
    Replace => "replace",
    SplitPart => "split_part",
    Left => "left",
    Right => "right",
    Lpad => "lpad",
    Rpad => "rpad",
    Repeat => "repeat",
    Reverse => "reverse",
    Concat => "concat",
    ConcatWs => "concat_ws",
    StartsWith => "starts_with",
    Md5 => "md5",
    ByteaLength => "length",
    ByteaCat => "byteacat",
    ByteaSubstr => "substr",
    BytePosition => "position",
    GetByte => "get_byte",
    SetByte => "set_byte",
    Encode => "encode",
    Decode => "decode",
    ConvertTo => "convert_to",
    ConvertFrom => "convert_from",
    GenRandomUuid => "gen_random_uuid",
    Sha224 => "sha224",
    Sha256 => "sha256",
    Sha384 => "sha384",
    Sha512 => "sha512",
    Chr => "chr",
    Ascii => "ascii",
    Translate => "translate",
    Format => "format",
    QuoteIdent => "quote_ident",
    QuoteLiteral => "quote_literal",
    QuoteNullable => "quote_nullable",
    ToHex => "to_hex",
    RegexpReplace => "regexp_replace",
    RegexpLike => "regexp_like",
    RegexpCount => "regexp_count",
    RegexpMatch => "regexp_match",
    LikeEscape => "like_escape",
    SimilarToEscape => "similar_to_escape",
    Now => "now",
    CurrentTimestamp => "current_timestamp",
    StatementTimestamp => "statement_timestamp",
    ClockTimestamp => "clock_timestamp",
    CurrentDate => "current_date",
    LocalTimestamp => "localtimestamp",
    LocalTime => "localtime",
    RoundTime => "round_time",
    Extract => "extract",
    DatePart => "date_part",
    DateTrunc => "date_trunc",
    Age => "age",
    MakeDate => "make_date",
    MakeTime => "make_time",
    MakeTimestamp => "make_timestamp",
    MakeTimestampTz => "make_timestamptz",
    MakeInterval => "make_interval",
    ToChar => "to_char",
    ToDate => "to_date",
    ToTimestamp => "to_timestamp",
    JustifyDays => "justify_days",
    JustifyHours => "justify_hours",
    JustifyInterval => "justify_interval",
    IsFinite => "isfinite",
    Timezone => "timezone",
    Overlaps => "overlaps",
    ArrayToString => "array_to_string",
    ArrayUpper => "array_upper",
    ArrayLower => "array_lower",
    ArrayLength => "array_length",
    Cardinality => "cardinality",
    ArrayNdims => "array_ndims",
    ArrayDims => "array_dims",
    ArrayPosition => "array_position",
    ArrayAppend => "array_append",
    ArrayPrepend => "array_prepend",
    ArrayCat => "array_cat",
    ArrayRemove => "array_remove",
    StringToArray => "string_to_array",
    StringToTable => "string_to_table",
    FormatType => "format_type",
    PgSizePretty => "pg_size_pretty",
    PgEncodingToChar => "pg_encoding_to_char",
    PgTypeof => "pg_typeof",
    Version => "version",
    CurrentDatabase => "current_database",
    CurrentSchema => "current_schema",
    CurrentSchemas => "current_schemas",
    CurrentUser => "current_user",
    SessionUser => "session_user",
    PgBackendPid => "pg_backend_pid",
    PgPostmasterStartTime => "pg_postmaster_start_time",
    PgIsInRecovery => "pg_is_in_recovery",
    TxidCurrent => "txid_current",
    CurrentSetting => "current_setting",
    SetConfig => "set_config",
    HasTablePrivilege => "has_table_privilege",
    HasSchemaPrivilege => "has_schema_privilege",
    HasDatabasePrivilege => "has_database_privilege",
    PgHasRole => "pg_has_role",
    PgTableIsVisible => "pg_table_is_visible",
    PgTypeIsVisible => "pg_type_is_visible",
    PgFunctionIsVisible => "pg_function_is_visible",
    PgGetUserById => "pg_get_userbyid",
    PgGetIndexdef => "pg_get_indexdef",
    PgGetConstraintdef => "pg_get_constraintdef",
    PgGetExpr => "pg_get_expr",
    PgGetViewdef => "pg_get_viewdef",
    PgGetStatisticsobjdefColumns => "pg_get_statisticsobjdef_columns",
    PgGetSerialSequence => "pg_get_serial_sequence",
    NextVal => "nextval",
    CurrVal => "currval",
    SetVal => "setval",
    LastVal => "lastval",
    PgRelationIsPublishable => "pg_relation_is_publishable",
    ObjDescription => "obj_description",
    PgRelationSize => "pg_relation_size",
    PgTableSize => "pg_table_size",
    PgIndexesSize => "pg_indexes_size",
    PgTotalRelationSize => "pg_total_relation_size",
    JsonbTypeof => "jsonb_typeof",
    JsonTypeof => "json_typeof",
    JsonbArrayLength => "jsonb_array_length",
    JsonArrayLength => "json_array_length",
    ToJson => "to_json",
    ToJsonb => "to_jsonb",
    JsonBuildObject => "json_build_object",
    JsonbBuildObject => "jsonb_build_object",
    JsonBuildArray => "json_build_array",
    JsonbBuildArray => "jsonb_build_array",
    JsonbStripNulls => "jsonb_strip_nulls",
    JsonbPretty => "jsonb_pretty",
    JsonbObjectField => "jsonb_object_field",
    JsonbObjectFieldText => "jsonb_object_field_text",
    JsonbArrayElement => "jsonb_array_element",
    JsonbArrayElementText => "jsonb_array_element_text",
    JsonbExtractPath => "jsonb_extract_path",
    JsonbExtractPathText => "jsonb_extract_path_text",
    JsonObjectField => "json_object_field",
    JsonObjectFieldText => "json_object_field_text",
    JsonArrayElement => "json_array_element",
    JsonArrayElementText => "json_array_element_text",
    JsonExtractPath => "json_extract_path",
    JsonExtractPathText => "json_extract_path_text",
    JsonbContains => "jsonb_contains",
    JsonbContained => "jsonb_contained",
    JsonbExists => "jsonb_exists",
    JsonbExistsAny => "jsonb_exists_any",
    JsonbExistsAll => "jsonb_exists_all",
    JsonbConcat => "jsonb_concat",
    JsonbDelete => "jsonb_delete",
    JsonbDeleteIndex => "jsonb_delete",
    JsonbDeleteKeys => "jsonb_delete",
    JsonbDeletePath => "jsonb_delete_path",
    JsonbSet => "jsonb_set",
    JsonbInsert => "jsonb_insert",
    JsonbEachKey => "jsonb_each",
    JsonbEachValue => "jsonb_each",
    JsonbEachTextValue => "jsonb_each_text",
    JsonEachKey => "json_each",
    JsonEachValue => "json_each",
    JsonEachTextValue => "json_each_text",
    JsonbArrayElements => "jsonb_array_elements",
    JsonbArrayElementsText => "jsonb_array_elements_text",
    JsonbObjectKeys => "jsonb_object_keys",
    JsonArrayElements => "json_array_elements",
    JsonArrayElementsText => "json_array_elements_text",
    JsonObjectKeys => "json_object_keys",
    GenerateSeries => "generate_series",
    GenerateSubscripts => "generate_subscripts",
    Unnest => "unnest",
    RegexpMatches => "regexp_matches",
    RegexpSplitToTable => "regexp_split_to_table",
}

impl Func {
    /// Whether the function returns a set of rows (PostgreSQL's
    /// `proretset`): it runs in a FunctionScan (see [`crate::srf`]), never
    /// as a scalar call.
    pub fn set_returning(self) -> bool {
        matches!(
            self,
            Func::GenerateSeries
                | Func::GenerateSubscripts
                | Func::Unnest
                | Func::RegexpMatches
                | Func::RegexpSplitToTable
                | Func::StringToTable
        ) || self.json_set()
    }

    /// Whether it is one of the JSON set-returning functions (see
    /// `srf::json`).
    pub fn json_set(self) -> bool {
        matches!(
            self,
            Func::JsonbArrayElements
                | Func::JsonbArrayElementsText
                | Func::JsonbObjectKeys
                | Func::JsonArrayElements
                | Func::JsonArrayElementsText
                | Func::JsonObjectKeys
                | Func::JsonbEachKey
                | Func::JsonbEachValue
                | Func::JsonbEachTextValue
                | Func::JsonEachKey
                | Func::JsonEachValue
                | Func::JsonEachTextValue
        )
    }

    /// Whether a NULL argument makes the result NULL without a call.
    pub fn strict(self) -> bool {
        !matches!(
            self,
            Func::Concat
                | Func::ConcatWs
                | Func::Format
                | Func::QuoteNullable
                | Func::Overlaps
                | Func::ArrayToString
                | Func::ArrayPosition
                | Func::ArrayAppend
                | Func::ArrayPrepend
                | Func::ArrayCat
                | Func::ArrayRemove
                | Func::StringToArray
                | Func::StringToTable
                | Func::NumNulls
                | Func::NumNonnulls
                | Func::FormatType
                | Func::PgTypeof
                | Func::SetConfig
                | Func::JsonBuildObject
                | Func::JsonbBuildObject
                | Func::JsonBuildArray
                | Func::JsonbBuildArray
        )
    }

    /// Whether two calls with the same arguments may differ (PostgreSQL's
    /// `provolatile = 'v'`): such calls are never folded or cached.
    pub fn volatile(self) -> bool {
        matches!(
            self,
            Func::Random
                | Func::GenRandomUuid
                | Func::SetSeed
                | Func::PgSleep
                | Func::ClockTimestamp
                | Func::SetConfig
                | Func::TxidCurrent
                | Func::NextVal
                | Func::CurrVal
                | Func::SetVal
                | Func::LastVal
        )
    }

    /// Whether the session computes the call (see [`crate::session`]):
    /// functions of the session's settings, user and catalog. They are
    /// stable (never folded into a plan).
    pub fn session(self) -> bool {
        use Func::*;
        matches!(
            self,
            Version
                | CurrentDatabase
                | CurrentSchema
                | CurrentSchemas
                | CurrentUser
                | SessionUser
                | PgBackendPid
                | PgPostmasterStartTime
                | PgIsInRecovery
                | TxidCurrent
                | CurrentSetting
                | SetConfig
                | HasTablePrivilege
                | HasSchemaPrivilege
                | HasDatabasePrivilege
                | PgHasRole
                | PgTableIsVisible
                | PgTypeIsVisible
                | PgFunctionIsVisible
                | PgGetUserById
                | PgGetIndexdef
                | PgGetConstraintdef
                | PgGetExpr
                | PgGetViewdef
                | PgGetStatisticsobjdefColumns
                | PgGetSerialSequence
                | NextVal
                | CurrVal
                | SetVal
                | LastVal
                | PgRelationIsPublishable
                | ObjDescription
                | PgRelationSize
                | PgTableSize
                | PgIndexesSize
                | PgTotalRelationSize
        )
    }

    /// Whether the result depends on when it is computed, though not within
    /// one statement (PostgreSQL's `provolatile = 's'` among the functions
    /// that read the clock or the session's time zone): never folded into a
    /// plan, which may be kept and run in a later transaction.
    pub fn stable(self) -> bool {
        matches!(
            self,
            Func::Now
                | Func::CurrentTimestamp
                | Func::StatementTimestamp
                | Func::CurrentDate
                | Func::LocalTimestamp
                | Func::LocalTime
                | Func::Age
        ) || (self.session() && !self.volatile())
    }

    /// Evaluates over `n` rows: `args` hold the evaluated arguments, of
    /// types `types`; the result has type `ty`.
    pub fn eval(
        self,
        args: &[Vector],
        types: &[DataType],
        ty: DataType,
        n: usize,
        active: Option<&[bool]>,
    ) -> Result<Vector> {
        let call = Call {
            args,
            types,
            ty,
            n,
            nulls: if self.strict() {
                any_null(args, n)
            } else {
                None
            },
            active,
        };
        match self {
            Func::Concat | Func::ConcatWs | Func::Format | Func::QuoteNullable => {
                format::eval(self, &call)
            }
            Func::Random | Func::SetSeed => random::eval(self, &call),
            Func::WidthBucket => width_bucket::eval(self, &call),
            Func::Factorial => numeric_fns::factorial(&call),
            Func::NumNulls | Func::NumNonnulls => Ok(count_nulls(self, &call)),
            Func::PgSleep => sleep::eval(&call),
            Func::Length
            | Func::OctetLength
            | Func::BitLength
            | Func::Upper
            | Func::Lower
            | Func::Initcap
            | Func::Substr
            | Func::Strpos
            | Func::Btrim
            | Func::Ltrim
            | Func::Rtrim
            | Func::Replace
            | Func::SplitPart
            | Func::Left
            | Func::Right
            | Func::Lpad
            | Func::Rpad
            | Func::Repeat
            | Func::Reverse
            | Func::StartsWith
            | Func::Md5
            | Func::Chr
            | Func::Ascii
            | Func::Translate
            | Func::ToHex => string::eval(self, &call),
            Func::QuoteIdent | Func::QuoteLiteral => format::eval(self, &call),
            Func::ByteaLength
            | Func::ByteaCat
            | Func::ByteaSubstr
            | Func::BytePosition
            | Func::GetByte
            | Func::SetByte
            | Func::Encode
            | Func::Decode
            | Func::ConvertTo
            | Func::ConvertFrom
            | Func::GenRandomUuid
            | Func::Sha224
            | Func::Sha256
            | Func::Sha384
            | Func::Sha512 => bytea::eval(self, &call),
            Func::SubstringRegex
            | Func::SubstringSimilar
            | Func::RegexpReplace
            | Func::RegexpLike
            | Func::RegexpCount
            | Func::RegexpMatch
            | Func::LikeEscape
            | Func::SimilarToEscape => regexp::eval(self, &call),
            Func::Now
            | Func::CurrentTimestamp
            | Func::StatementTimestamp
            | Func::ClockTimestamp
            | Func::CurrentDate
            | Func::LocalTimestamp
            | Func::LocalTime
            | Func::RoundTime
            | Func::Extract
            | Func::DatePart
            | Func::DateTrunc
            | Func::Age
            | Func::MakeDate
            | Func::MakeTime
            | Func::MakeTimestamp
            | Func::MakeTimestampTz
            | Func::MakeInterval
            | Func::ToChar
            | Func::ToDate
            | Func::ToTimestamp
            | Func::JustifyDays
            | Func::JustifyHours
            | Func::JustifyInterval
            | Func::IsFinite
            | Func::Timezone
            | Func::Overlaps => datetime::eval(self, &call),
            Func::ArrayToString
            | Func::ArrayUpper
            | Func::ArrayLower
            | Func::ArrayLength
            | Func::Cardinality
            | Func::ArrayNdims
            | Func::ArrayDims
            | Func::ArrayPosition
            | Func::ArrayAppend
            | Func::ArrayPrepend
            | Func::ArrayCat
            | Func::ArrayRemove
            | Func::StringToArray => arrays::eval(self, &call),
            Func::JsonbTypeof
            | Func::JsonTypeof
            | Func::JsonbArrayLength
            | Func::JsonArrayLength
            | Func::ToJson
            | Func::ToJsonb
            | Func::JsonBuildObject
            | Func::JsonbBuildObject
            | Func::JsonBuildArray
            | Func::JsonbBuildArray
            | Func::JsonbStripNulls
            | Func::JsonbPretty
            | Func::JsonbObjectField
            | Func::JsonbObjectFieldText
            | Func::JsonbArrayElement
            | Func::JsonbArrayElementText
            | Func::JsonbExtractPath
            | Func::JsonbExtractPathText
            | Func::JsonObjectField
            | Func::JsonObjectFieldText
            | Func::JsonArrayElement
            | Func::JsonArrayElementText
            | Func::JsonExtractPath
            | Func::JsonExtractPathText
            | Func::JsonbContains
            | Func::JsonbContained
            | Func::JsonbExists
            | Func::JsonbExistsAny
            | Func::JsonbExistsAll
            | Func::JsonbConcat
            | Func::JsonbDelete
            | Func::JsonbDeleteIndex
            | Func::JsonbDeleteKeys
            | Func::JsonbDeletePath
            | Func::JsonbSet
            | Func::JsonbInsert => crate::env::with(|env| json::eval(self, &call, env.settings)),
            Func::FormatType | Func::PgSizePretty | Func::PgEncodingToChar | Func::PgTypeof => {
                system::eval(self, &call)
            }
            f if f.session() => crate::session::eval(f, &call),
            f if f.set_returning() => Err(crate::error::ExecError::coded(
                crate::error::sqlstate::FEATURE_NOT_SUPPORTED,
                "set-valued function called in context that cannot accept a set",
            )),
            _ => math::eval(self, &call),
        }
    }
}

/// `num_nulls(...)` and `num_nonnulls(...)`: how many arguments of each
/// row are (not) NULL.
fn count_nulls(f: Func, c: &Call) -> Vector {
    let out = (0..c.n)
        .map(|i| {
            let nulls = c.args.iter().filter(|a| a.is_null(i)).count() as i32;
            if f == Func::NumNulls {
                nulls
            } else {
                c.args.len() as i32 - nulls
            }
        })
        .collect();
    Vector::new(crate::vector::Data::Int4(out), None)
}

/// One evaluation of a function over a batch: the arguments and which rows
/// to compute.
pub struct Call<'a> {
    pub args: &'a [Vector],
    pub types: &'a [DataType],
    pub ty: DataType,
    pub n: usize,
    /// For strict functions: rows with a NULL argument (the result's mask).
    pub nulls: Option<Vec<bool>>,
    active: Option<&'a [bool]>,
}

impl Call<'_> {
    /// Whether row `i` must be computed: active, and (for strict functions)
    /// no argument NULL. Kernels raise errors only for such rows.
    #[inline]
    pub fn computes(&self, i: usize) -> bool {
        live(self.active, i) && !self.nulls.as_ref().is_some_and(|m| m[i])
    }
}

/// A `void` function of one `double precision` argument (`setseed`,
/// `pg_sleep`): `act` runs for each computed row, in row order, and each
/// row's result is the empty text `void` prints as (NULL where an argument
/// is NULL).
fn void_per_row(f: Func, c: &Call, mut act: impl FnMut(f64) -> Result<()>) -> Result<Vector> {
    let crate::vector::Data::Float8(x) = &c.args[0].data else {
        return Err(math::bad_args(f));
    };
    let mut out = crate::vector::Strings::with_capacity(c.n, 0);
    for (i, &s) in x.iter().enumerate() {
        if c.computes(i) {
            act(s)?;
        }
        out.push(b"");
    }
    Ok(Vector::new(crate::vector::Data::Text(out), c.nulls.clone()))
}

/// Evaluates a function a row at a time: `f` gets each computed row's
/// arguments as values (of their argument types) and returns the result
/// (of the call's type); other rows are NULL.
pub(crate) fn eval_rows(c: &Call, mut f: impl FnMut(&[Value]) -> Result<Value>) -> Result<Vector> {
    let mut out = Vector::with_capacity(c.ty, c.n);
    let mut args = Vec::with_capacity(c.args.len());
    for i in 0..c.n {
        if !c.computes(i) {
            out.push_value(&Value::Null);
            continue;
        }
        args.clear();
        args.extend(c.args.iter().zip(c.types).map(|(a, &t)| a.value_as(i, t)));
        out.push_value(&f(&args)?);
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests;
