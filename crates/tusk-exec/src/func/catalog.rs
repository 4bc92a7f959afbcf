//! The built-in functions as data: one row per overload, like PostgreSQL's
//! `pg_proc` (name, parameter types, variadic, result type), plus the
//! [`Func`] that computes it. [`super::resolve()`] searches this table; it is
//! the one place that says which signatures exist. Rows follow PostgreSQL 15's
//! catalog for the types tusk has (no `bit` or geometry,
//! so a call PostgreSQL finds ambiguous among those may resolve here).
//!
//! `"any"` parameters (`concat`, `format`, `quote_literal(anyelement)`)
//! accept every type, an untyped literal as `text`; a variadic row repeats
//! its last parameter one or more times.
//!
//! The operators of the same resolution are in [`OPERATORS`] (PostgreSQL's
//! `pg_operator`), for `+ - * / %`, the comparisons and `||`.

use super::Func;
use tusk_storage::DataType;

/// A parameter type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    T(DataType),
    /// PostgreSQL's `"any"`: any type, each argument its own.
    Any,
    /// `anyarray`: any array type; with `anyelement` in the same call, the
    /// array of that element type.
    AnyArray,
    /// `anyelement`: any type, the same for every `anyelement` of the call
    /// (and the element type of its `anyarray`).
    AnyElement,
}

impl Param {
    /// Whether the parameter is `anyarray` or `anyelement`.
    pub fn is_polymorphic(self) -> bool {
        matches!(self, Param::AnyArray | Param::AnyElement)
    }
}

/// A polymorphic result type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Poly {
    /// `ret` as written.
    No,
    /// `anyarray`: the array of the call's element type.
    Array,
    /// `anyelement`: the call's element type.
    Element,
}

/// One overload.
#[derive(Debug, Clone, Copy)]
pub struct Proc {
    pub name: &'static str,
    pub params: &'static [Param],
    /// The last parameter repeats (`VARIADIC "any"`).
    pub variadic: bool,
    /// The result type (unless `poly` says it is polymorphic).
    pub ret: DataType,
    pub poly: Poly,
    pub func: Func,
}

use DataType as D;
use Param::Any;
const I2: Param = Param::T(D::Int2);
const I4: Param = Param::T(D::Int4);
const I8: Param = Param::T(D::Int8);
const F4: Param = Param::T(D::Float4);
const F8: Param = Param::T(D::Float8);
const NUM: Param = Param::T(D::Numeric);
const TEXT: Param = Param::T(D::Text);
const BPCHAR: Param = Param::T(D::Bpchar);
const DATE: Param = Param::T(D::Date);
const TIME: Param = Param::T(D::Time);
const TS: Param = Param::T(D::Timestamp);
const TSTZ: Param = Param::T(D::TimestampTz);
const IV: Param = Param::T(D::Interval);
const BYTEA: Param = Param::T(D::Bytea);
const NAME: Param = Param::T(D::Name);
const JSON: Param = Param::T(D::Json);
const JSONB: Param = Param::T(D::Jsonb);
const TEXTS: Param = Param::T(tusk_storage::TEXT_ARRAY);
const BOOL: Param = Param::T(D::Bool);

pub(crate) const fn p(
    name: &'static str,
    params: &'static [Param],
    ret: DataType,
    func: Func,
) -> Proc {
    Proc {
        name,
        params,
        variadic: false,
        ret,
        poly: Poly::No,
        func,
    }
}

pub(crate) const fn variadic(
    name: &'static str,
    params: &'static [Param],
    ret: DataType,
    func: Func,
) -> Proc {
    Proc {
        name,
        params,
        variadic: true,
        ret,
        poly: Poly::No,
        func,
    }
}

/// An overload with a polymorphic result.
pub(crate) const fn poly(
    name: &'static str,
    params: &'static [Param],
    poly: Poly,
    func: Func,
) -> Proc {
    Proc {
        name,
        params,
        variadic: false,
        ret: DataType::Text,
        poly,
        func,
    }
}

/// Every built-in function overload.
pub static PROCS: &[Proc] = &[
    // Mathematical functions (PostgreSQL 15 documentation, table 9.5).
    p("abs", &[I2], D::Int2, Func::Abs),
    p("abs", &[I4], D::Int4, Func::Abs),
    p("abs", &[I8], D::Int8, Func::Abs),
    p("abs", &[F4], D::Float4, Func::Abs),
    p("abs", &[F8], D::Float8, Func::Abs),
    p("abs", &[NUM], D::Numeric, Func::Abs),
    p("mod", &[I2, I2], D::Int2, Func::Mod),
    p("mod", &[I4, I4], D::Int4, Func::Mod),
    p("mod", &[I8, I8], D::Int8, Func::Mod),
    p("mod", &[NUM, NUM], D::Numeric, Func::Mod),
    p("div", &[NUM, NUM], D::Numeric, Func::Div),
    p("sign", &[F8], D::Float8, Func::Sign),
    p("sign", &[NUM], D::Numeric, Func::Sign),
    p("ceil", &[F8], D::Float8, Func::Ceil),
    p("ceil", &[NUM], D::Numeric, Func::Ceil),
    p("ceiling", &[F8], D::Float8, Func::Ceil),
    p("ceiling", &[NUM], D::Numeric, Func::Ceil),
    p("floor", &[F8], D::Float8, Func::Floor),
    p("floor", &[NUM], D::Numeric, Func::Floor),
    p("round", &[F8], D::Float8, Func::Round),
    p("round", &[NUM], D::Numeric, Func::Round),
    p("round", &[NUM, I4], D::Numeric, Func::Round),
    p("trunc", &[F8], D::Float8, Func::Trunc),
    p("trunc", &[NUM], D::Numeric, Func::Trunc),
    p("trunc", &[NUM, I4], D::Numeric, Func::Trunc),
    p("sqrt", &[F8], D::Float8, Func::Sqrt),
    p("sqrt", &[NUM], D::Numeric, Func::Sqrt),
    p("cbrt", &[F8], D::Float8, Func::Cbrt),
    p("power", &[F8, F8], D::Float8, Func::Power),
    p("power", &[NUM, NUM], D::Numeric, Func::Power),
    p("pow", &[F8, F8], D::Float8, Func::Power),
    p("pow", &[NUM, NUM], D::Numeric, Func::Power),
    p("exp", &[F8], D::Float8, Func::Exp),
    p("exp", &[NUM], D::Numeric, Func::Exp),
    p("ln", &[F8], D::Float8, Func::Ln),
    p("ln", &[NUM], D::Numeric, Func::Ln),
    p("log10", &[F8], D::Float8, Func::Log10),
    p("log10", &[NUM], D::Numeric, Func::Log10),
    p("log", &[F8], D::Float8, Func::Log10),
    p("log", &[NUM], D::Numeric, Func::Log10),
    p("log", &[NUM, NUM], D::Numeric, Func::Log),
    p("pi", &[], D::Float8, Func::Pi),
    p("degrees", &[F8], D::Float8, Func::Degrees),
    p("radians", &[F8], D::Float8, Func::Radians),
    p("sin", &[F8], D::Float8, Func::Sin),
    p("cos", &[F8], D::Float8, Func::Cos),
    p("tan", &[F8], D::Float8, Func::Tan),
    p("cot", &[F8], D::Float8, Func::Cot),
    p("asin", &[F8], D::Float8, Func::Asin),
    p("acos", &[F8], D::Float8, Func::Acos),
    p("atan", &[F8], D::Float8, Func::Atan),
    p("sinh", &[F8], D::Float8, Func::Sinh),
    p("cosh", &[F8], D::Float8, Func::Cosh),
    p("tanh", &[F8], D::Float8, Func::Tanh),
    p(
        "width_bucket",
        &[F8, F8, F8, I4],
        D::Int4,
        Func::WidthBucket,
    ),
    p(
        "width_bucket",
        &[NUM, NUM, NUM, I4],
        D::Int4,
        Func::WidthBucket,
    ),
    p("factorial", &[I8], D::Numeric, Func::Factorial),
    p("scale", &[NUM], D::Int4, Func::Scale),
    p("min_scale", &[NUM], D::Int4, Func::MinScale),
    p("trim_scale", &[NUM], D::Numeric, Func::TrimScale),
    variadic("num_nulls", &[Any], D::Int4, Func::NumNulls),
    variadic("num_nonnulls", &[Any], D::Int4, Func::NumNonnulls),
    p("atan2", &[F8, F8], D::Float8, Func::Atan2),
    p("gcd", &[I4, I4], D::Int4, Func::Gcd),
    p("gcd", &[I8, I8], D::Int8, Func::Gcd),
    p("lcm", &[I4, I4], D::Int4, Func::Lcm),
    p("lcm", &[I8, I8], D::Int8, Func::Lcm),
    p("random", &[], D::Float8, Func::Random),
    // PostgreSQL's result type is `void`, which prints as an empty string.
    p("setseed", &[F8], D::Text, Func::SetSeed),
    // `void` too.
    p("pg_sleep", &[F8], D::Text, Func::PgSleep),
    // String functions (tables 9.9 and 9.10).
    p("length", &[TEXT], D::Int4, Func::Length),
    p("length", &[BPCHAR], D::Int4, Func::Length),
    p("char_length", &[TEXT], D::Int4, Func::Length),
    p("char_length", &[BPCHAR], D::Int4, Func::Length),
    p("character_length", &[TEXT], D::Int4, Func::Length),
    p("character_length", &[BPCHAR], D::Int4, Func::Length),
    p("octet_length", &[TEXT], D::Int4, Func::OctetLength),
    p("octet_length", &[BPCHAR], D::Int4, Func::OctetLength),
    p("bit_length", &[TEXT], D::Int4, Func::BitLength),
    // Binary string functions (tables 9.11 and 9.12) and `uuid`'s.
    p("length", &[BYTEA], D::Int4, Func::ByteaLength),
    p("octet_length", &[BYTEA], D::Int4, Func::OctetLength),
    p("bit_length", &[BYTEA], D::Int4, Func::BitLength),
    p("byteacat", &[BYTEA, BYTEA], D::Bytea, Func::ByteaCat),
    p("substr", &[BYTEA, I4, I4], D::Bytea, Func::ByteaSubstr),
    p("substr", &[BYTEA, I4], D::Bytea, Func::ByteaSubstr),
    p("substring", &[BYTEA, I4, I4], D::Bytea, Func::ByteaSubstr),
    p("substring", &[BYTEA, I4], D::Bytea, Func::ByteaSubstr),
    p("position", &[BYTEA, BYTEA], D::Int4, Func::BytePosition),
    p("get_byte", &[BYTEA, I4], D::Int4, Func::GetByte),
    p("set_byte", &[BYTEA, I4, I4], D::Bytea, Func::SetByte),
    p("encode", &[BYTEA, TEXT], D::Text, Func::Encode),
    p("decode", &[TEXT, TEXT], D::Bytea, Func::Decode),
    p("convert_to", &[TEXT, NAME], D::Bytea, Func::ConvertTo),
    p("convert_from", &[BYTEA, NAME], D::Text, Func::ConvertFrom),
    p("md5", &[BYTEA], D::Text, Func::Md5),
    p("sha224", &[BYTEA], D::Bytea, Func::Sha224),
    p("sha256", &[BYTEA], D::Bytea, Func::Sha256),
    p("sha384", &[BYTEA], D::Bytea, Func::Sha384),
    p("sha512", &[BYTEA], D::Bytea, Func::Sha512),
    p("gen_random_uuid", &[], D::Uuid, Func::GenRandomUuid),
    p("upper", &[TEXT], D::Text, Func::Upper),
    p("lower", &[TEXT], D::Text, Func::Lower),
    p("initcap", &[TEXT], D::Text, Func::Initcap),
    p("substr", &[TEXT, I4, I4], D::Text, Func::Substr),
    p("substr", &[TEXT, I4], D::Text, Func::Substr),
    p("substring", &[TEXT, I4, I4], D::Text, Func::Substr),
    p("substring", &[TEXT, I4], D::Text, Func::Substr),
    p("substring", &[TEXT, TEXT], D::Text, Func::SubstringRegex),
    p(
        "substring",
        &[TEXT, TEXT, TEXT],
        D::Text,
        Func::SubstringSimilar,
    ),
    p("strpos", &[TEXT, TEXT], D::Int4, Func::Strpos),
    // `POSITION(a IN b)` is `position(b, a)`.
    p("position", &[TEXT, TEXT], D::Int4, Func::Strpos),
    p("btrim", &[TEXT], D::Text, Func::Btrim),
    p("btrim", &[TEXT, TEXT], D::Text, Func::Btrim),
    p("ltrim", &[TEXT], D::Text, Func::Ltrim),
    p("ltrim", &[TEXT, TEXT], D::Text, Func::Ltrim),
    p("rtrim", &[TEXT], D::Text, Func::Rtrim),
    p("rtrim", &[TEXT, TEXT], D::Text, Func::Rtrim),
    p("replace", &[TEXT, TEXT, TEXT], D::Text, Func::Replace),
    p("split_part", &[TEXT, TEXT, I4], D::Text, Func::SplitPart),
    p("left", &[TEXT, I4], D::Text, Func::Left),
    p("right", &[TEXT, I4], D::Text, Func::Right),
    p("lpad", &[TEXT, I4], D::Text, Func::Lpad),
    p("lpad", &[TEXT, I4, TEXT], D::Text, Func::Lpad),
    p("rpad", &[TEXT, I4], D::Text, Func::Rpad),
    p("rpad", &[TEXT, I4, TEXT], D::Text, Func::Rpad),
    p("repeat", &[TEXT, I4], D::Text, Func::Repeat),
    p("reverse", &[TEXT], D::Text, Func::Reverse),
    variadic("concat", &[Any], D::Text, Func::Concat),
    variadic("concat_ws", &[TEXT, Any], D::Text, Func::ConcatWs),
    p("starts_with", &[TEXT, TEXT], D::Bool, Func::StartsWith),
    p("md5", &[TEXT], D::Text, Func::Md5),
    p("chr", &[I4], D::Text, Func::Chr),
    p("ascii", &[TEXT], D::Int4, Func::Ascii),
    p("translate", &[TEXT, TEXT, TEXT], D::Text, Func::Translate),
    p("format", &[TEXT], D::Text, Func::Format),
    variadic("format", &[TEXT, Any], D::Text, Func::Format),
    p("quote_ident", &[TEXT], D::Text, Func::QuoteIdent),
    p("quote_literal", &[TEXT], D::Text, Func::QuoteLiteral),
    p("quote_literal", &[Any], D::Text, Func::QuoteLiteral),
    p("quote_nullable", &[TEXT], D::Text, Func::QuoteNullable),
    p("quote_nullable", &[Any], D::Text, Func::QuoteNullable),
    p("to_hex", &[I4], D::Text, Func::ToHex),
    p("to_hex", &[I8], D::Text, Func::ToHex),
    // JSON functions (section 9.16): the operators' functions callable by
    // name, builders and inspectors.
    p("to_json", &[Param::AnyElement], D::Json, Func::ToJson),
    p("to_jsonb", &[Param::AnyElement], D::Jsonb, Func::ToJsonb),
    p("json_build_object", &[], D::Json, Func::JsonBuildObject),
    variadic("json_build_object", &[Any], D::Json, Func::JsonBuildObject),
    p("jsonb_build_object", &[], D::Jsonb, Func::JsonbBuildObject),
    variadic(
        "jsonb_build_object",
        &[Any],
        D::Jsonb,
        Func::JsonbBuildObject,
    ),
    p("json_build_array", &[], D::Json, Func::JsonBuildArray),
    variadic("json_build_array", &[Any], D::Json, Func::JsonBuildArray),
    p("jsonb_build_array", &[], D::Jsonb, Func::JsonbBuildArray),
    variadic("jsonb_build_array", &[Any], D::Jsonb, Func::JsonbBuildArray),
    p("jsonb_typeof", &[JSONB], D::Text, Func::JsonbTypeof),
    p("json_typeof", &[JSON], D::Text, Func::JsonTypeof),
    p(
        "jsonb_array_length",
        &[JSONB],
        D::Int4,
        Func::JsonbArrayLength,
    ),
    p("json_array_length", &[JSON], D::Int4, Func::JsonArrayLength),
    p(
        "jsonb_strip_nulls",
        &[JSONB],
        D::Jsonb,
        Func::JsonbStripNulls,
    ),
    p("jsonb_pretty", &[JSONB], D::Text, Func::JsonbPretty),
    p(
        "jsonb_object_field",
        &[JSONB, TEXT],
        D::Jsonb,
        Func::JsonbObjectField,
    ),
    p(
        "jsonb_object_field_text",
        &[JSONB, TEXT],
        D::Text,
        Func::JsonbObjectFieldText,
    ),
    p(
        "jsonb_array_element",
        &[JSONB, I4],
        D::Jsonb,
        Func::JsonbArrayElement,
    ),
    p(
        "jsonb_array_element_text",
        &[JSONB, I4],
        D::Text,
        Func::JsonbArrayElementText,
    ),
    variadic(
        "jsonb_extract_path",
        &[JSONB, TEXT],
        D::Jsonb,
        Func::JsonbExtractPath,
    ),
    variadic(
        "jsonb_extract_path_text",
        &[JSONB, TEXT],
        D::Text,
        Func::JsonbExtractPathText,
    ),
    p(
        "json_object_field",
        &[JSON, TEXT],
        D::Json,
        Func::JsonObjectField,
    ),
    p(
        "json_object_field_text",
        &[JSON, TEXT],
        D::Text,
        Func::JsonObjectFieldText,
    ),
    p(
        "json_array_element",
        &[JSON, I4],
        D::Json,
        Func::JsonArrayElement,
    ),
    p(
        "json_array_element_text",
        &[JSON, I4],
        D::Text,
        Func::JsonArrayElementText,
    ),
    variadic(
        "json_extract_path",
        &[JSON, TEXT],
        D::Json,
        Func::JsonExtractPath,
    ),
    variadic(
        "json_extract_path_text",
        &[JSON, TEXT],
        D::Text,
        Func::JsonExtractPathText,
    ),
    p(
        "jsonb_contains",
        &[JSONB, JSONB],
        D::Bool,
        Func::JsonbContains,
    ),
    p(
        "jsonb_contained",
        &[JSONB, JSONB],
        D::Bool,
        Func::JsonbContained,
    ),
    p("jsonb_exists", &[JSONB, TEXT], D::Bool, Func::JsonbExists),
    p("jsonb_concat", &[JSONB, JSONB], D::Jsonb, Func::JsonbConcat),
    p("jsonb_delete", &[JSONB, TEXT], D::Jsonb, Func::JsonbDelete),
    p(
        "jsonb_delete",
        &[JSONB, I4],
        D::Jsonb,
        Func::JsonbDeleteIndex,
    ),
    p(
        "jsonb_delete",
        &[JSONB, TEXTS],
        D::Jsonb,
        Func::JsonbDeleteKeys,
    ),
    p(
        "jsonb_delete_path",
        &[JSONB, TEXTS],
        D::Jsonb,
        Func::JsonbDeletePath,
    ),
    p(
        "jsonb_set",
        &[JSONB, TEXTS, JSONB],
        D::Jsonb,
        Func::JsonbSet,
    ),
    p(
        "jsonb_set",
        &[JSONB, TEXTS, JSONB, BOOL],
        D::Jsonb,
        Func::JsonbSet,
    ),
    p(
        "jsonb_insert",
        &[JSONB, TEXTS, JSONB],
        D::Jsonb,
        Func::JsonbInsert,
    ),
    p(
        "jsonb_insert",
        &[JSONB, TEXTS, JSONB, BOOL],
        D::Jsonb,
        Func::JsonbInsert,
    ),
    // Regular expressions and pattern helpers (section 9.7).
    p(
        "regexp_replace",
        &[TEXT, TEXT, TEXT],
        D::Text,
        Func::RegexpReplace,
    ),
    p(
        "regexp_replace",
        &[TEXT, TEXT, TEXT, TEXT],
        D::Text,
        Func::RegexpReplace,
    ),
    p("regexp_like", &[TEXT, TEXT], D::Bool, Func::RegexpLike),
    p(
        "regexp_like",
        &[TEXT, TEXT, TEXT],
        D::Bool,
        Func::RegexpLike,
    ),
    p(
        "regexp_match",
        &[TEXT, TEXT],
        tusk_storage::TEXT_ARRAY,
        Func::RegexpMatch,
    ),
    p(
        "regexp_match",
        &[TEXT, TEXT, TEXT],
        tusk_storage::TEXT_ARRAY,
        Func::RegexpMatch,
    ),
    p("regexp_count", &[TEXT, TEXT], D::Int4, Func::RegexpCount),
    p(
        "regexp_count",
        &[TEXT, TEXT, I4],
        D::Int4,
        Func::RegexpCount,
    ),
    p(
        "regexp_count",
        &[TEXT, TEXT, I4, TEXT],
        D::Int4,
        Func::RegexpCount,
    ),
    p("like_escape", &[TEXT, TEXT], D::Text, Func::LikeEscape),
    p("similar_to_escape", &[TEXT], D::Text, Func::SimilarToEscape),
    p(
        "similar_to_escape",
        &[TEXT, TEXT],
        D::Text,
        Func::SimilarToEscape,
    ),
    // Date/time functions (tables 9.33 and 9.26).
    p("now", &[], D::TimestampTz, Func::Now),
    p("transaction_timestamp", &[], D::TimestampTz, Func::Now),
    p(
        "statement_timestamp",
        &[],
        D::TimestampTz,
        Func::StatementTimestamp,
    ),
    p("clock_timestamp", &[], D::TimestampTz, Func::ClockTimestamp),
    p("date_part", &[TEXT, TSTZ], D::Float8, Func::DatePart),
    p("date_part", &[TEXT, TS], D::Float8, Func::DatePart),
    p("date_part", &[TEXT, DATE], D::Float8, Func::DatePart),
    p("date_part", &[TEXT, TIME], D::Float8, Func::DatePart),
    p("date_part", &[TEXT, IV], D::Float8, Func::DatePart),
    p("extract", &[TEXT, TSTZ], D::Numeric, Func::Extract),
    p("extract", &[TEXT, TS], D::Numeric, Func::Extract),
    p("extract", &[TEXT, DATE], D::Numeric, Func::Extract),
    p("extract", &[TEXT, TIME], D::Numeric, Func::Extract),
    p("extract", &[TEXT, IV], D::Numeric, Func::Extract),
    p("date_trunc", &[TEXT, TS], D::Timestamp, Func::DateTrunc),
    p("date_trunc", &[TEXT, TSTZ], D::TimestampTz, Func::DateTrunc),
    p(
        "date_trunc",
        &[TEXT, TSTZ, TEXT],
        D::TimestampTz,
        Func::DateTrunc,
    ),
    p("date_trunc", &[TEXT, IV], D::Interval, Func::DateTrunc),
    p("age", &[TS, TS], D::Interval, Func::Age),
    p("age", &[TSTZ, TSTZ], D::Interval, Func::Age),
    p("age", &[TS], D::Interval, Func::Age),
    p("age", &[TSTZ], D::Interval, Func::Age),
    p("make_date", &[I4, I4, I4], D::Date, Func::MakeDate),
    p("make_time", &[I4, I4, F8], D::Time, Func::MakeTime),
    p(
        "make_timestamp",
        &[I4, I4, I4, I4, I4, F8],
        D::Timestamp,
        Func::MakeTimestamp,
    ),
    p(
        "make_timestamptz",
        &[I4, I4, I4, I4, I4, F8],
        D::TimestampTz,
        Func::MakeTimestampTz,
    ),
    p(
        "make_timestamptz",
        &[I4, I4, I4, I4, I4, F8, TEXT],
        D::TimestampTz,
        Func::MakeTimestampTz,
    ),
    // The binder fills omitted trailing arguments (and named ones) with
    // their defaults, 0.
    p(
        "make_interval",
        &[I4, I4, I4, I4, I4, I4, F8],
        D::Interval,
        Func::MakeInterval,
    ),
    p("to_char", &[TS, TEXT], D::Text, Func::ToChar),
    p("to_char", &[TSTZ, TEXT], D::Text, Func::ToChar),
    p("to_char", &[I4, TEXT], D::Text, Func::ToChar),
    p("to_char", &[I8, TEXT], D::Text, Func::ToChar),
    p("to_char", &[NUM, TEXT], D::Text, Func::ToChar),
    p("to_date", &[TEXT, TEXT], D::Date, Func::ToDate),
    p(
        "to_timestamp",
        &[TEXT, TEXT],
        D::TimestampTz,
        Func::ToTimestamp,
    ),
    p("to_timestamp", &[F8], D::TimestampTz, Func::ToTimestamp),
    p("justify_days", &[IV], D::Interval, Func::JustifyDays),
    p("justify_hours", &[IV], D::Interval, Func::JustifyHours),
    p(
        "justify_interval",
        &[IV],
        D::Interval,
        Func::JustifyInterval,
    ),
    p("isfinite", &[DATE], D::Bool, Func::IsFinite),
    p("isfinite", &[TS], D::Bool, Func::IsFinite),
    p("isfinite", &[TSTZ], D::Bool, Func::IsFinite),
    p("isfinite", &[IV], D::Bool, Func::IsFinite),
    // `(a, b) OVERLAPS (c, d)`; an interval end is bound as `a + b`.
    p(
        "overlaps",
        &[TSTZ, TSTZ, TSTZ, TSTZ],
        D::Bool,
        Func::Overlaps,
    ),
    p("overlaps", &[TS, TS, TS, TS], D::Bool, Func::Overlaps),
    p(
        "overlaps",
        &[TIME, TIME, TIME, TIME],
        D::Bool,
        Func::Overlaps,
    ),
    // `x AT TIME ZONE z` is `timezone(z, x)`.
    p("timezone", &[TEXT, TS], D::TimestampTz, Func::Timezone),
    p("timezone", &[TEXT, TSTZ], D::Timestamp, Func::Timezone),
    p("timezone", &[IV, TS], D::TimestampTz, Func::Timezone),
    p("timezone", &[IV, TSTZ], D::Timestamp, Func::Timezone),
];

/// Every overload: this table's, then the array, system and
/// set-returning functions' of their own modules.
pub fn all_procs() -> impl Iterator<Item = &'static Proc> {
    PROCS
        .iter()
        .chain(super::arrays::ARRAY_PROCS)
        .chain(super::system::SYSTEM_PROCS)
        .chain(crate::srf::SET_PROCS)
}

/// The overloads named `name`.
pub fn procs_named(name: &str) -> impl Iterator<Item = &'static Proc> + '_ {
    all_procs().filter(move |p| p.name == name)
}

/// One binary operator overload (PostgreSQL's `pg_operator`): the operand
/// types and the result type. Cross-type rows (`int4 + int8`) exist as in
/// PostgreSQL, so resolution picks PostgreSQL's result type; tusk evaluates
/// them after widening both operands to the result's operand type (the
/// resolver reports that in [`super::Resolved::arg_types`]).
#[derive(Debug, Clone, Copy)]
pub struct Oper {
    pub name: &'static str,
    pub left: DataType,
    pub right: DataType,
    pub ret: DataType,
}

macro_rules! arith_ops {
    ($($name:literal),*) => {
        &[$(
            Oper { name: $name, left: D::Int2, right: D::Int2, ret: D::Int2 },
            Oper { name: $name, left: D::Int2, right: D::Int4, ret: D::Int4 },
            Oper { name: $name, left: D::Int4, right: D::Int2, ret: D::Int4 },
            Oper { name: $name, left: D::Int4, right: D::Int4, ret: D::Int4 },
            Oper { name: $name, left: D::Int2, right: D::Int8, ret: D::Int8 },
            Oper { name: $name, left: D::Int8, right: D::Int2, ret: D::Int8 },
            Oper { name: $name, left: D::Int4, right: D::Int8, ret: D::Int8 },
            Oper { name: $name, left: D::Int8, right: D::Int4, ret: D::Int8 },
            Oper { name: $name, left: D::Int8, right: D::Int8, ret: D::Int8 },
            Oper { name: $name, left: D::Float4, right: D::Float4, ret: D::Float4 },
            Oper { name: $name, left: D::Float4, right: D::Float8, ret: D::Float8 },
            Oper { name: $name, left: D::Float8, right: D::Float4, ret: D::Float8 },
            Oper { name: $name, left: D::Float8, right: D::Float8, ret: D::Float8 },
            Oper { name: $name, left: D::Numeric, right: D::Numeric, ret: D::Numeric },
        )*]
    };
}

macro_rules! cmp_ops {
    ($($name:literal),*) => {
        &[$(
            Oper { name: $name, left: D::Bool, right: D::Bool, ret: D::Bool },
            Oper { name: $name, left: D::Int2, right: D::Int2, ret: D::Bool },
            Oper { name: $name, left: D::Int2, right: D::Int4, ret: D::Bool },
            Oper { name: $name, left: D::Int4, right: D::Int2, ret: D::Bool },
            Oper { name: $name, left: D::Int4, right: D::Int4, ret: D::Bool },
            Oper { name: $name, left: D::Int2, right: D::Int8, ret: D::Bool },
            Oper { name: $name, left: D::Int8, right: D::Int2, ret: D::Bool },
            Oper { name: $name, left: D::Int4, right: D::Int8, ret: D::Bool },
            Oper { name: $name, left: D::Int8, right: D::Int4, ret: D::Bool },
            Oper { name: $name, left: D::Int8, right: D::Int8, ret: D::Bool },
            Oper { name: $name, left: D::Float4, right: D::Float4, ret: D::Bool },
            Oper { name: $name, left: D::Float4, right: D::Float8, ret: D::Bool },
            Oper { name: $name, left: D::Float8, right: D::Float4, ret: D::Bool },
            Oper { name: $name, left: D::Float8, right: D::Float8, ret: D::Bool },
            Oper { name: $name, left: D::Numeric, right: D::Numeric, ret: D::Bool },
            Oper { name: $name, left: D::Text, right: D::Text, ret: D::Bool },
            Oper { name: $name, left: D::Bpchar, right: D::Bpchar, ret: D::Bool },
            Oper { name: $name, left: D::Date, right: D::Date, ret: D::Bool },
            Oper { name: $name, left: D::Time, right: D::Time, ret: D::Bool },
            Oper { name: $name, left: D::Timestamp, right: D::Timestamp, ret: D::Bool },
            Oper { name: $name, left: D::TimestampTz, right: D::TimestampTz, ret: D::Bool },
            Oper { name: $name, left: D::Interval, right: D::Interval, ret: D::Bool },
            Oper { name: $name, left: D::Oid, right: D::Oid, ret: D::Bool },
            Oper { name: $name, left: D::Name, right: D::Name, ret: D::Bool },
            Oper { name: $name, left: D::Char, right: D::Char, ret: D::Bool },
            Oper { name: $name, left: D::Bytea, right: D::Bytea, ret: D::Bool },
            Oper { name: $name, left: D::Uuid, right: D::Uuid, ret: D::Bool },
            Oper { name: $name, left: D::Jsonb, right: D::Jsonb, ret: D::Bool },
        )*]
    };
}

const ARITH: &[Oper] = arith_ops!("+", "-", "*", "/");
const COMPARE: &[Oper] = cmp_ops!("=", "<>", "<", "<=", ">", ">=");
macro_rules! opers {
    ($($name:literal $l:ident $r:ident $ret:ident),* $(,)?) => {
        &[$(Oper { name: $name, left: D::$l, right: D::$r, ret: D::$ret },)*]
    };
}

const OTHER: &[Oper] = opers![
    "%" Int2 Int2 Int2, "%" Int4 Int4 Int4, "%" Int8 Int8 Int8, "%" Numeric Numeric Numeric,
    "||" Text Text Text,
    "=" Xid Xid Bool, "<>" Xid Xid Bool,
    // Pattern matching: `~~` is LIKE, `~~*` ILIKE, `~` and `~*` regular
    // expressions, `!` their negations.
    "~" Text Text Bool, "~*" Text Text Bool, "!~" Text Text Bool, "!~*" Text Text Bool,
    "~~" Text Text Bool, "~~*" Text Text Bool, "!~~" Text Text Bool, "!~~*" Text Text Bool,
];

/// Date and time arithmetic, and comparisons across date/time types
/// (the kernels are the types helper's; resolution needs the rows so that,
/// as in PostgreSQL, `'1' + '1'` is ambiguous rather than numeric).
const DATETIME: &[Oper] = opers![
    "+" Date Int4 Date, "+" Int4 Date Date, "-" Date Int4 Date, "-" Date Date Int4,
    "+" Date Interval Timestamp, "+" Interval Date Timestamp, "-" Date Interval Timestamp,
    "+" Date Time Timestamp, "+" Time Date Timestamp,
    "+" Timestamp Interval Timestamp, "+" Interval Timestamp Timestamp,
    "-" Timestamp Interval Timestamp, "-" Timestamp Timestamp Interval,
    "+" TimestampTz Interval TimestampTz, "+" Interval TimestampTz TimestampTz,
    "-" TimestampTz Interval TimestampTz, "-" TimestampTz TimestampTz Interval,
    "+" Time Interval Time, "+" Interval Time Time, "-" Time Interval Time,
    "-" Time Time Interval,
    "+" Interval Interval Interval, "-" Interval Interval Interval,
    "*" Interval Float8 Interval, "*" Float8 Interval Interval, "/" Interval Float8 Interval,
];

macro_rules! cross_cmp {
    ($($l:ident $r:ident),*) => {
        &[$(
            Oper { name: "=", left: D::$l, right: D::$r, ret: D::Bool },
            Oper { name: "<>", left: D::$l, right: D::$r, ret: D::Bool },
            Oper { name: "<", left: D::$l, right: D::$r, ret: D::Bool },
            Oper { name: "<=", left: D::$l, right: D::$r, ret: D::Bool },
            Oper { name: ">", left: D::$l, right: D::$r, ret: D::Bool },
            Oper { name: ">=", left: D::$l, right: D::$r, ret: D::Bool },
        )*]
    };
}

const DATETIME_CMP: &[Oper] = cross_cmp!(
    Date Timestamp, Timestamp Date, Date TimestampTz, TimestampTz Date,
    Timestamp TimestampTz, TimestampTz Timestamp
);

/// Every binary operator overload.
pub static OPERATORS: &[&[Oper]] = &[ARITH, COMPARE, OTHER, DATETIME, DATETIME_CMP];

/// The binary operators named `name`.
pub fn opers_named(name: &str) -> impl Iterator<Item = &'static Oper> + '_ {
    OPERATORS
        .iter()
        .flat_map(|t| t.iter())
        .filter(move |o| o.name == name)
}
