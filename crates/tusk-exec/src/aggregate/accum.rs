//! Accumulators: the running state of one aggregate call for every group.
//!
//! An [`Acc`] keeps one state per group in arrays indexed by group number,
//! and adds a batch of rows in one loop ([`Acc::update`]). The states are
//! PostgreSQL's transition states, in the same arithmetic, so results match
//! digit for digit:
//!
//! | state | functions | kept as | partial columns |
//! |---|---|---|---|
//! | `Count` | count | `i64` | count |
//! | `SumInt` | sum(int2/int4) | `i64` (`int4_sum`) | sum |
//! | `Wide` | sum(int8), avg(int2/int4/int8) | 128-bit sum and count (`int8_avg_accum`) | count, sum |
//! | `Num` | sum/avg(numeric) | numeric sum and count | count, sum |
//! | `Float` | sum(float4/float8) | the float (`float4pl`/`float8pl`, overflow checked) | sum |
//! | `FloatStats` | avg/variance/stddev(float) | `(N, Σx, Sxx)`, Youngs–Cramer (`float8_accum`) | N, Σx, Sxx |
//! | `IntStats` | variance/stddev(int2/int4/int8) | count, 128-bit Σx, 256-bit Σx² | count, Σx, Σx² |
//! | `NumStats` | variance/stddev(numeric) | count and exact decimal Σx, Σx² | count, Σx, Σx² |
//! | `Interval` | sum/avg(interval) | interval sum (`interval_pl`) and count | count, sum |
//! | `MinMaxInt`, `MinMaxFloat` | min/max of integers, dates, times, floats | the value | value |
//! | `MinMaxKeyed` | min/max of numeric, interval, strings | the value and its normalized key | value |
//! | `Bool` | bool_and/bool_or/every | `Option<bool>` | value |
//! | `StringAgg` | string_agg | the bytes so far and the length of the first delimiter | — |
//! | `Bits` | bit_and/bit_or | `Option<i64>` | value |
//! | `ArrayAgg` | array_agg | the values so far (NULLs too) | — |
//! | `Json` | json_agg, jsonb_agg, json[b]_object_agg | the members' JSON text so far | — |
//! | `ArrayAgg` | percentile_cont, percentile_disc, mode | the sorted values (not NULLs; see `ordered_set`) | — |
//!
//! Partial states travel between a Partial and a Finalize aggregate as
//! columns ([`crate::aggregate::funcs::partial_types`]); [`Acc::state`] writes
//! them and [`Acc::combine`] merges them, as PostgreSQL's combine functions
//! do. Exact sums too large for `numeric`'s fast form travel as decimal text.

use super::exact::{numeric_stats, Big, Dec};
use super::fixed::Lane;
use super::funcs::{is_statistic, strict_args};
use super::ordered_set::OrderedSet;
use crate::error::{float_overflow, int8_out_of_range, sqlstate, ExecError, Result};
use crate::numeric::Numeric;
use crate::plan::{AggCall, AggFunc};
use crate::sortkey::{encode_value, KeyOrder};
use crate::value::Value;
use crate::vector::{Data, Vector};
use tusk_storage::DataType;
use tusk_types::float::float_cmp;
use tusk_types::Interval;

/// Which result a statistics state finishes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    Avg,
    VarSamp,
    VarPop,
    StddevSamp,
    StddevPop,
}

impl Stat {
    fn of(func: AggFunc) -> Stat {
        match func {
            AggFunc::Avg => Stat::Avg,
            AggFunc::Variance | AggFunc::VarSamp => Stat::VarSamp,
            AggFunc::VarPop => Stat::VarPop,
            AggFunc::Stddev | AggFunc::StddevSamp => Stat::StddevSamp,
            _ => Stat::StddevPop,
        }
    }
}

/// A 256-bit unsigned sum of 128-bit squares.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wide256 {
    hi: u128,
    lo: u128,
}

impl Wide256 {
    fn add(&mut self, v: u128) {
        let (lo, carry) = self.lo.overflowing_add(v);
        self.lo = lo;
        self.hi += carry as u128;
    }

    fn to_big(self) -> Big {
        Big::from_u128_pair(self.hi, self.lo)
    }

    fn from_big(b: &Big) -> Wide256 {
        let (hi, lo) = b.to_u128_pair();
        Wide256 { hi, lo }
    }
}

pub enum Acc {
    Count(Vec<i64>),
    SumInt(Vec<Option<i64>>),
    Wide {
        sum: Vec<i128>,
        n: Vec<i64>,
        avg: bool,
    },
    Num {
        sum: Vec<Numeric>,
        n: Vec<i64>,
        avg: bool,
    },
    Float {
        sum: Vec<Option<f64>>,
        real: bool,
    },
    FloatStats {
        s: Vec<[f64; 3]>,
        stat: Stat,
    },
    IntStats {
        n: Vec<i64>,
        sx: Vec<i128>,
        sxx: Vec<Wide256>,
        stat: Stat,
    },
    NumStats {
        n: Vec<i64>,
        sx: Vec<Dec>,
        sxx: Vec<Dec>,
        stat: Stat,
    },
    Interval {
        sum: Vec<Interval>,
        n: Vec<i64>,
        avg: bool,
    },
    MinMaxInt {
        val: Vec<Option<i64>>,
        min: bool,
        ty: DataType,
    },
    MinMaxFloat {
        val: Vec<Option<f64>>,
        min: bool,
        real: bool,
    },
    MinMaxKeyed {
        val: Vec<Option<(Box<[u8]>, Value)>>,
        min: bool,
        ty: DataType,
        bytes: usize,
    },
    Bool {
        val: Vec<Option<bool>>,
        and: bool,
    },
    StringAgg {
        val: Vec<Option<(Vec<u8>, usize)>>,
        bytes: usize,
        /// `string_agg(bytea, bytea)`: the result is `bytea`, not text.
        bytea: bool,
    },
    Bits {
        val: Vec<Option<i64>>,
        and: bool,
        ty: DataType,
    },
    ArrayAgg {
        val: Vec<Option<Vec<Value>>>,
        /// The element type.
        ty: DataType,
        bytes: usize,
        /// For an ordered-set aggregate, its final step (the values are
        /// its sorted input).
        set: Option<Box<OrderedSet>>,
    },
    /// The JSON aggregates: each group's members as JSON text (see
    /// `json_agg`).
    Json {
        val: Vec<Option<String>>,
        func: AggFunc,
        /// The arguments' types.
        types: Vec<DataType>,
        bytes: usize,
    },
}

#[inline]
fn int_at(v: &Vector, i: usize) -> i64 {
    match &v.data {
        Data::Int2(d) => d[i] as i64,
        Data::Int4(d) => d[i] as i64,
        Data::Int8(d) => d[i],
        Data::Bool(d) => d[i] as i64,
        _ => 0,
    }
}

#[inline]
fn float_at(v: &Vector, i: usize) -> f64 {
    match &v.data {
        Data::Float4(d) => d[i] as f64,
        Data::Float8(d) => d[i],
        _ => 0.0,
    }
}

fn interval_out_of_range() -> ExecError {
    ExecError::coded(sqlstate::DATETIME_FIELD_OVERFLOW, "interval out of range")
}

/// `interval_pl`: field-wise, each checked.
fn interval_add(a: Interval, b: Interval) -> Result<Interval> {
    Ok(Interval::new(
        a.months
            .checked_add(b.months)
            .ok_or_else(interval_out_of_range)?,
        a.days
            .checked_add(b.days)
            .ok_or_else(interval_out_of_range)?,
        a.micros
            .checked_add(b.micros)
            .ok_or_else(interval_out_of_range)?,
    ))
}

/// `interval_div(span, factor)` of PostgreSQL 15: whole months and days
/// divide separately, fractions cascade down (30-day months, 86400-second
/// days) rounded to microseconds.
pub fn interval_div(span: Interval, factor: f64) -> Interval {
    const SECS_PER_DAY: f64 = 86400.0;
    let tsround = |j: f64| (j * 1e6).round_ties_even() / 1e6;
    let month = (span.months as f64 / factor) as i32;
    let mut day = (span.days as f64 / factor) as i32;
    let month_remainder_days = tsround((span.months as f64 / factor - month as f64) * 30.0);
    let mut sec_remainder = tsround(
        (span.days as f64 / factor - day as f64 + month_remainder_days
            - month_remainder_days.trunc())
            * SECS_PER_DAY,
    );
    if sec_remainder.abs() >= SECS_PER_DAY {
        day += (sec_remainder / SECS_PER_DAY) as i32;
        sec_remainder -= ((sec_remainder / SECS_PER_DAY) as i32) as f64 * SECS_PER_DAY;
    }
    day += month_remainder_days as i32;
    let micros = (span.micros as f64 / factor + sec_remainder * 1e6).round_ties_even() as i64;
    Interval::new(month, day, micros)
}

/// `float8_accum` (Youngs–Cramer) adding `x` to `(N, Σx, Sxx)`.
fn float_accum(s: &mut [f64; 3], x: f64) -> Result<()> {
    let [n0, sx0, mut sxx] = *s;
    let n = n0 + 1.0;
    let sx = sx0 + x;
    if n0 > 0.0 {
        let tmp = x * n - sx;
        sxx += tmp * tmp / (n * n0);
        if sx.is_infinite() || sxx.is_infinite() {
            if !sx0.is_infinite() && !x.is_infinite() {
                return Err(float_overflow());
            }
            sxx = f64::NAN;
        }
    } else if x.is_nan() || x.is_infinite() {
        sxx = f64::NAN;
    }
    *s = [n, sx, sxx];
    Ok(())
}

/// `float8_combine`.
fn float_combine(a: &mut [f64; 3], b: [f64; 3]) -> Result<()> {
    let [n1, sx1, sxx1] = *a;
    let [n2, sx2, sxx2] = b;
    if n1 == 0.0 {
        *a = b;
    } else if n2 != 0.0 {
        let n = n1 + n2;
        let sx = float_add(sx1, sx2)?;
        let tmp = sx1 / n1 - sx2 / n2;
        let sxx = sxx1 + sxx2 + n1 * n2 * tmp * tmp / n;
        if sxx.is_infinite() && !sxx1.is_infinite() && !sxx2.is_infinite() {
            return Err(float_overflow());
        }
        *a = [n, sx, sxx];
    }
    Ok(())
}

/// `float8pl`: an infinite sum of finite operands overflows.
fn float_add(a: f64, b: f64) -> Result<f64> {
    let r = a + b;
    if r.is_infinite() && !a.is_infinite() && !b.is_infinite() {
        return Err(float_overflow());
    }
    Ok(r)
}

/// `float4pl`, in single precision.
fn real_add(a: f64, b: f64) -> Result<f64> {
    let (a, b) = (a as f32, b as f32);
    let r = a + b;
    if r.is_infinite() && !a.is_infinite() && !b.is_infinite() {
        return Err(float_overflow());
    }
    Ok(r as f64)
}

fn float_finish(s: [f64; 3], stat: Stat) -> Value {
    let [n, sx, sxx] = s;
    let v = match stat {
        Stat::Avg if n == 0.0 => return Value::Null,
        Stat::Avg => sx / n,
        Stat::VarPop | Stat::StddevPop if n == 0.0 => return Value::Null,
        Stat::VarSamp | Stat::StddevSamp if n <= 1.0 => return Value::Null,
        Stat::VarPop => sxx / n,
        Stat::VarSamp => sxx / (n - 1.0),
        Stat::StddevPop => (sxx / n).sqrt(),
        Stat::StddevSamp => (sxx / (n - 1.0)).sqrt(),
    };
    Value::Float8(v)
}

fn numeric_dec(n: &Numeric) -> Dec {
    Dec::parse(&n.to_string()).unwrap_or_else(|| Dec::from_i128(0))
}

fn dec_numeric(d: &Dec) -> Result<Numeric> {
    Ok(Numeric::from_text(&d.to_text())?)
}

fn dec_add(a: &Dec, b: &Dec) -> Dec {
    let s = a.scale.max(b.scale);
    let x = a.mag.mul(&Big::pow10(s - a.scale));
    let y = b.mag.mul(&Big::pow10(s - b.scale));
    if a.neg == b.neg {
        return Dec {
            neg: a.neg,
            mag: x.add(&y),
            scale: s,
        };
    }
    let (mag, neg) = if x >= y {
        (x.sub(&y), a.neg)
    } else {
        (y.sub(&x), b.neg)
    };
    Dec {
        neg: neg && !mag.is_zero(),
        mag,
        scale: s,
    }
}

fn stats_finish(n: i64, sx: &Dec, sxx: &Dec, stat: Stat) -> Result<Value> {
    let (sample, stddev) = match stat {
        Stat::VarSamp => (true, false),
        Stat::VarPop => (false, false),
        Stat::StddevSamp => (true, true),
        _ => (false, true),
    };
    match numeric_stats(n, sx, sxx, sample, stddev) {
        Some(d) => Ok(Value::Numeric(dec_numeric(&d)?)),
        None => Ok(Value::Null),
    }
}

fn int_value(ty: DataType, v: i64) -> Value {
    match ty {
        DataType::Int2 => Value::Int2(v as i16),
        DataType::Int4 => Value::Int4(v as i32),
        DataType::Date => Value::Date(v as i32),
        DataType::Time => Value::Time(v),
        DataType::Timestamp => Value::Timestamp(v),
        DataType::TimestampTz => Value::TimestampTz(v),
        _ => Value::Int8(v),
    }
}

fn text_of(v: &Value) -> &str {
    match v {
        Value::Text(s) => s,
        _ => "",
    }
}

impl Acc {
    pub fn new(call: &AggCall) -> Acc {
        use DataType as T;
        let arg = call.args.first().map(|a| a.data_type());
        let ty = arg.unwrap_or(T::Int8);
        let float = matches!(ty, T::Float4 | T::Float8);
        let min = call.func == AggFunc::Min;
        match call.func {
            AggFunc::CountStar | AggFunc::Count => Acc::Count(vec![]),
            AggFunc::Sum | AggFunc::Avg if ty == T::Interval => Acc::Interval {
                sum: vec![],
                n: vec![],
                avg: call.func == AggFunc::Avg,
            },
            AggFunc::Sum if matches!(ty, T::Int2 | T::Int4) => Acc::SumInt(vec![]),
            AggFunc::Sum if float => Acc::Float {
                sum: vec![],
                real: ty == T::Float4,
            },
            AggFunc::Sum | AggFunc::Avg if matches!(ty, T::Int2 | T::Int4 | T::Int8) => Acc::Wide {
                sum: vec![],
                n: vec![],
                avg: call.func == AggFunc::Avg,
            },
            AggFunc::Sum | AggFunc::Avg if !float => Acc::Num {
                sum: vec![],
                n: vec![],
                avg: call.func == AggFunc::Avg,
            },
            f if (f == AggFunc::Avg || is_statistic(f)) && float => Acc::FloatStats {
                s: vec![],
                stat: Stat::of(f),
            },
            f if is_statistic(f) && ty == T::Numeric => Acc::NumStats {
                n: vec![],
                sx: vec![],
                sxx: vec![],
                stat: Stat::of(f),
            },
            f if is_statistic(f) => Acc::IntStats {
                n: vec![],
                sx: vec![],
                sxx: vec![],
                stat: Stat::of(f),
            },
            AggFunc::Min | AggFunc::Max => match ty {
                T::Int2 | T::Int4 | T::Int8 | T::Date | T::Time | T::Timestamp | T::TimestampTz => {
                    Acc::MinMaxInt {
                        val: vec![],
                        min,
                        ty,
                    }
                }
                T::Float4 | T::Float8 => Acc::MinMaxFloat {
                    val: vec![],
                    min,
                    real: ty == T::Float4,
                },
                _ => Acc::MinMaxKeyed {
                    val: vec![],
                    min,
                    ty,
                    bytes: 0,
                },
            },
            AggFunc::BoolAnd | AggFunc::Every | AggFunc::BoolOr => Acc::Bool {
                val: vec![],
                and: call.func != AggFunc::BoolOr,
            },
            AggFunc::StringAgg => Acc::StringAgg {
                val: vec![],
                bytes: 0,
                bytea: ty == T::Bytea,
            },
            AggFunc::BitAnd | AggFunc::BitOr => Acc::Bits {
                val: vec![],
                and: call.func == AggFunc::BitAnd,
                ty,
            },
            AggFunc::ArrayAgg => Acc::ArrayAgg {
                val: vec![],
                ty,
                bytes: 0,
                set: None,
            },
            f if super::json_agg::is_json_agg(f) => Acc::Json {
                val: vec![],
                func: f,
                types: call.args.iter().map(|a| a.data_type()).collect(),
                bytes: 0,
            },
            f if f.is_ordered_set() => Acc::ArrayAgg {
                val: vec![],
                ty,
                bytes: 0,
                set: Some(Box::new(OrderedSet::new(call))),
            },
            // Every function is matched above; statistics of other types
            // were refused by the binder.
            _ => Acc::Count(vec![]),
        }
    }

    /// Makes room for `groups` groups (new ones start empty).
    pub fn grow(&mut self, groups: usize) {
        match self {
            Acc::Count(c) => c.resize(groups, 0),
            Acc::SumInt(v) => v.resize(groups, None),
            Acc::Wide { sum, n, .. } => {
                sum.resize(groups, 0);
                n.resize(groups, 0);
            }
            Acc::Num { sum, n, .. } => {
                sum.resize(groups, Numeric::from_i64(0));
                n.resize(groups, 0);
            }
            Acc::Float { sum, .. } => sum.resize(groups, None),
            Acc::FloatStats { s, .. } => s.resize(groups, [0.0; 3]),
            Acc::IntStats { n, sx, sxx, .. } => {
                n.resize(groups, 0);
                sx.resize(groups, 0);
                sxx.resize(groups, Wide256::default());
            }
            Acc::NumStats { n, sx, sxx, .. } => {
                n.resize(groups, 0);
                sx.resize(groups, Dec::from_i128(0));
                sxx.resize(groups, Dec::from_i128(0));
            }
            Acc::Interval { sum, n, .. } => {
                sum.resize(groups, Interval::default());
                n.resize(groups, 0);
            }
            Acc::MinMaxInt { val, .. } => val.resize(groups, None),
            Acc::MinMaxFloat { val, .. } => val.resize(groups, None),
            Acc::MinMaxKeyed { val, .. } => val.resize(groups, None),
            Acc::Bool { val, .. } => val.resize(groups, None),
            Acc::StringAgg { val, .. } => val.resize(groups, None),
            Acc::Bits { val, .. } => val.resize(groups, None),
            Acc::ArrayAgg { val, .. } => val.resize(groups, None),
            Acc::Json { val, .. } => val.resize(groups, None),
        }
    }

    /// Empties every group (for reuse, e.g. by a window frame).
    pub fn reset(&mut self) {
        let n = self.groups();
        self.grow(0);
        if let Acc::MinMaxKeyed { bytes, .. }
        | Acc::StringAgg { bytes, .. }
        | Acc::ArrayAgg { bytes, .. }
        | Acc::Json { bytes, .. } = self
        {
            *bytes = 0;
        }
        self.grow(n);
    }

    fn groups(&self) -> usize {
        match self {
            Acc::Count(c) => c.len(),
            Acc::SumInt(v) => v.len(),
            Acc::Wide { n, .. } | Acc::Num { n, .. } | Acc::Interval { n, .. } => n.len(),
            Acc::IntStats { n, .. } | Acc::NumStats { n, .. } => n.len(),
            Acc::Float { sum, .. } => sum.len(),
            Acc::FloatStats { s, .. } => s.len(),
            Acc::MinMaxInt { val, .. } => val.len(),
            Acc::MinMaxFloat { val, .. } => val.len(),
            Acc::MinMaxKeyed { val, .. } => val.len(),
            Acc::Bool { val, .. } => val.len(),
            Acc::StringAgg { val, .. } => val.len(),
            Acc::Bits { val, .. } => val.len(),
            Acc::ArrayAgg { val, .. } => val.len(),
            Acc::Json { val, .. } => val.len(),
        }
    }

    /// Bytes per group of the fixed part of the state.
    pub fn group_bytes(&self) -> usize {
        match self {
            Acc::Count(_) => 8,
            Acc::SumInt(_) => 16,
            Acc::Wide { .. } => 24,
            Acc::Num { .. } => std::mem::size_of::<Numeric>() + 8,
            Acc::Float { .. } => 16,
            Acc::FloatStats { .. } => 24,
            Acc::IntStats { .. } => 56,
            Acc::NumStats { .. } => 8 + 2 * std::mem::size_of::<Dec>() + 32,
            Acc::Interval { .. } => 24,
            Acc::MinMaxInt { .. } | Acc::MinMaxFloat { .. } | Acc::Bits { .. } => 16,
            Acc::MinMaxKeyed { .. } => std::mem::size_of::<Option<(Box<[u8]>, Value)>>(),
            Acc::Bool { .. } => 1,
            Acc::StringAgg { .. } => std::mem::size_of::<Option<(Vec<u8>, usize)>>(),
            Acc::ArrayAgg { .. } => std::mem::size_of::<Option<Vec<Value>>>(),
            Acc::Json { .. } => std::mem::size_of::<Option<String>>(),
        }
    }

    /// Bytes held beyond the fixed part (strings).
    pub fn extra_bytes(&self) -> usize {
        match self {
            Acc::MinMaxKeyed { bytes, .. }
            | Acc::StringAgg { bytes, .. }
            | Acc::ArrayAgg { bytes, .. }
            | Acc::Json { bytes, .. } => *bytes,
            _ => 0,
        }
    }

    /// Adds the rows of a batch: `args` are the call's evaluated arguments,
    /// `take` the rows that pass its FILTER (all when `None`), `groups` each
    /// row's group (all in group 0 when `None`). Rows with a NULL in a
    /// strict argument are skipped.
    pub fn update(
        &mut self,
        call: &AggCall,
        args: &[&Vector],
        n: usize,
        take: Option<&[bool]>,
        groups: Option<&[u32]>,
    ) -> Result<()> {
        let rows: Vec<u32> = (0..n as u32)
            .filter(|&i| take.is_none_or(|t| t[i as usize]))
            .collect();
        self.update_rows(call, args, &rows, groups)
    }

    /// Adds the non-NULL rows `rows` of a fixed-point lane (the argument
    /// of a `sum` or `avg` over numeric, see [`super::fixed`]), each to its
    /// group in `groups`; false (nothing added) for any other state.
    pub fn update_lane(&mut self, lane: &Lane, rows: &[u32], groups: &[u32]) -> Result<bool> {
        let Acc::Num { sum, n, .. } = self else {
            return Ok(false);
        };
        // Few groups (Q1 has four): the batch's rows are summed per group in
        // plain 128-bit integers first and each group's state takes one
        // addition. Integer sums are exact in any order, and a state's
        // scale is the largest scale added to it either way; if a batch
        // sum overflows, nothing has been added yet and the rows go one by
        // one below (through the exact wide form).
        const FEW: usize = 64;
        if sum.len() <= FEW {
            let (mut part, mut count) = ([0i128; FEW], [0i64; FEW]);
            let mut fits = true;
            for &i in rows {
                let i = i as usize;
                if lane.is_null(i) {
                    continue;
                }
                let k = groups[i] as usize;
                match part[k].checked_add(lane.values[i]) {
                    Some(v) => part[k] = v,
                    None => {
                        fits = false;
                        break;
                    }
                }
                count[k] += 1;
            }
            if fits {
                for k in (0..sum.len()).filter(|&k| count[k] > 0) {
                    sum[k].checked_add_assign(&Numeric::from_parts(part[k], lane.scale))?;
                    n[k] += count[k];
                }
                return Ok(true);
            }
        }
        for &i in rows {
            let i = i as usize;
            if lane.is_null(i) {
                continue;
            }
            let k = groups[i] as usize;
            sum[k].checked_add_assign(&lane.numeric(i))?;
            n[k] += 1;
        }
        Ok(true)
    }

    /// Adds rows `rows` of `args` (a selection; rows with a NULL in a strict
    /// argument are skipped), each to its group in `groups` (indexed by row;
    /// all in group 0 when `None`).
    pub fn update_rows(
        &mut self,
        call: &AggCall,
        args: &[&Vector],
        rows: &[u32],
        groups: Option<&[u32]>,
    ) -> Result<()> {
        let strict = &args[..strict_args(call).min(args.len())];
        let owned: Vec<u32>;
        let rows = if strict.iter().any(|a| a.nulls.is_some()) {
            owned = rows
                .iter()
                .copied()
                .filter(|&i| strict.iter().all(|a| !a.is_null(i as usize)))
                .collect();
            &owned[..]
        } else {
            rows
        };
        let g = |i: usize| groups.map_or(0, |g| g[i] as usize);
        let a = args.first().copied();
        match self {
            Acc::Count(c) => {
                if groups.is_none() {
                    c[0] += rows.len() as i64;
                } else {
                    for &i in rows {
                        c[g(i as usize)] += 1;
                    }
                }
            }
            Acc::SumInt(v) => {
                let a = a.unwrap();
                for &i in rows {
                    let (k, x) = (g(i as usize), int_at(a, i as usize));
                    v[k] = Some(v[k].unwrap_or(0).wrapping_add(x));
                }
            }
            Acc::Wide { sum, n, .. } => {
                let a = a.unwrap();
                for &i in rows {
                    let k = g(i as usize);
                    sum[k] += int_at(a, i as usize) as i128;
                    n[k] += 1;
                }
            }
            Acc::Num { sum, n, .. } => {
                let Data::Numeric(d) = &a.unwrap().data else {
                    return Err(ExecError::new(
                        "numeric aggregate over a non-numeric column",
                    ));
                };
                for &i in rows {
                    let k = g(i as usize);
                    sum[k].checked_add_assign(&d[i as usize])?;
                    n[k] += 1;
                }
            }
            Acc::Float { sum, real } => {
                let a = a.unwrap();
                for &i in rows {
                    let k = g(i as usize);
                    let x = float_at(a, i as usize);
                    sum[k] = Some(match sum[k] {
                        None => x,
                        Some(s) if *real => real_add(s, x)?,
                        Some(s) => float_add(s, x)?,
                    });
                }
            }
            Acc::FloatStats { s, .. } => {
                let a = a.unwrap();
                for &i in rows {
                    float_accum(&mut s[g(i as usize)], float_at(a, i as usize))?;
                }
            }
            Acc::IntStats { n, sx, sxx, .. } => {
                let a = a.unwrap();
                for &i in rows {
                    let (k, x) = (g(i as usize), int_at(a, i as usize));
                    n[k] += 1;
                    sx[k] += x as i128;
                    sxx[k].add((x as i128 * x as i128) as u128);
                }
            }
            Acc::NumStats { n, sx, sxx, .. } => {
                let Data::Numeric(d) = &a.unwrap().data else {
                    return Err(ExecError::new(
                        "numeric aggregate over a non-numeric column",
                    ));
                };
                for &i in rows {
                    let k = g(i as usize);
                    let x = numeric_dec(&d[i as usize]);
                    let sq = Dec {
                        neg: false,
                        mag: x.mag.mul(&x.mag),
                        scale: 2 * x.scale,
                    };
                    n[k] += 1;
                    sx[k] = dec_add(&sx[k], &x);
                    sxx[k] = dec_add(&sxx[k], &sq);
                }
            }
            Acc::Interval { sum, n, .. } => {
                let Data::Interval(d) = &a.unwrap().data else {
                    return Err(ExecError::new(
                        "interval aggregate over a non-interval column",
                    ));
                };
                for &i in rows {
                    let k = g(i as usize);
                    sum[k] = interval_add(sum[k], d[i as usize])?;
                    n[k] += 1;
                }
            }
            Acc::MinMaxInt { val, min, .. } => {
                let a = a.unwrap();
                for &i in rows {
                    let (k, x) = (g(i as usize), int_at(a, i as usize));
                    let better = match val[k] {
                        None => true,
                        Some(cur) => (*min && x < cur) || (!*min && x > cur),
                    };
                    if better {
                        val[k] = Some(x);
                    }
                }
            }
            Acc::MinMaxFloat { val, min, .. } => {
                let a = a.unwrap();
                for &i in rows {
                    let (k, x) = (g(i as usize), float_at(a, i as usize));
                    let better = match val[k] {
                        None => true,
                        // On ties the newer value wins, as in PostgreSQL's
                        // float8larger/smaller: -0 and 0 compare equal.
                        Some(cur) => {
                            let o = float_cmp(x, cur);
                            (*min && o.is_le()) || (!*min && o.is_ge())
                        }
                    };
                    if better {
                        val[k] = Some(x);
                    }
                }
            }
            Acc::MinMaxKeyed {
                val,
                min,
                ty,
                bytes,
            } => {
                let a = a.unwrap();
                let (mut key, mut scratch) = (Vec::new(), String::new());
                for &i in rows {
                    let k = g(i as usize);
                    key.clear();
                    encode_value(a, i as usize, KeyOrder::asc(*ty), &mut key, &mut scratch);
                    let better = match &val[k] {
                        None => true,
                        // On ties the newer value wins, as in PostgreSQL's
                        // numeric_larger and interval_larger: 0.0 and 0.00
                        // share a key. bpchar_larger keeps the older value,
                        // and other strings with equal keys are equal.
                        Some((cur, _)) => {
                            let o = key.as_slice().cmp(cur);
                            let strings =
                                matches!(ty, DataType::Text | DataType::Varchar | DataType::Bpchar);
                            let tie = o.is_eq() && !strings;
                            tie || (*min && o.is_lt()) || (!*min && o.is_gt())
                        }
                    };
                    if better {
                        let v = a.value_as(i as usize, *ty);
                        if let Some((old, ov)) = &val[k] {
                            *bytes -= old.len() + text_of(ov).len();
                        }
                        *bytes += key.len() + text_of(&v).len();
                        val[k] = Some((key.clone().into_boxed_slice(), v));
                    }
                }
            }
            Acc::Bool { val, and } => {
                let Data::Bool(d) = &a.unwrap().data else {
                    return Err(ExecError::new(
                        "boolean aggregate over a non-boolean column",
                    ));
                };
                for &i in rows {
                    let k = g(i as usize);
                    let x = d[i as usize];
                    val[k] = Some(match val[k] {
                        None => x,
                        Some(cur) if *and => cur && x,
                        Some(cur) => cur || x,
                    });
                }
            }
            Acc::StringAgg { val, bytes, .. } => {
                let (Data::Text(v) | Data::Bytea(v), Some(&delim)) =
                    (&a.unwrap().data, args.get(1))
                else {
                    return Err(ExecError::new("string_agg expects text arguments"));
                };
                let (Data::Text(dl) | Data::Bytea(dl)) = &delim.data else {
                    return Err(ExecError::new("string_agg expects text arguments"));
                };
                for &i in rows {
                    let (k, i) = (g(i as usize), i as usize);
                    let d: &[u8] = if delim.is_null(i) { b"" } else { dl.get(i) };
                    let (buf, first) = val[k].get_or_insert_with(|| (Vec::new(), usize::MAX));
                    let before = buf.len();
                    buf.extend_from_slice(d);
                    if *first == usize::MAX {
                        *first = d.len();
                    }
                    buf.extend_from_slice(v.get(i));
                    *bytes += buf.len() - before;
                }
            }
            Acc::ArrayAgg { val, ty, bytes, .. } => {
                let a = a.unwrap();
                for &i in rows {
                    let (k, i) = (g(i as usize), i as usize);
                    let v = a.value_as(i, *ty);
                    *bytes += std::mem::size_of::<Value>()
                        + match &v {
                            Value::Text(s) => s.len(),
                            _ => 0,
                        };
                    val[k].get_or_insert_with(Vec::new).push(v);
                }
            }
            Acc::Json {
                val,
                func,
                types,
                bytes,
            } => crate::env::with(|env| -> Result<()> {
                for &i in rows {
                    let k = g(i as usize);
                    let before = val[k].as_ref().map_or(0, String::len);
                    super::json_agg::push_row(
                        *func,
                        &mut val[k],
                        args,
                        types,
                        i as usize,
                        env.settings,
                    )?;
                    *bytes += val[k].as_ref().map_or(0, String::len) - before;
                }
                Ok(())
            })?,
            Acc::Bits { val, and, .. } => {
                let a = a.unwrap();
                for &i in rows {
                    let (k, x) = (g(i as usize), int_at(a, i as usize));
                    val[k] = Some(match val[k] {
                        None => x,
                        Some(cur) if *and => cur & x,
                        Some(cur) => cur | x,
                    });
                }
            }
        }
        Ok(())
    }

    /// The final value of group `k`, of type `ty` (the call's result type).
    pub fn finish(&self, k: usize, ty: DataType) -> Result<Value> {
        Ok(match self {
            Acc::Count(c) => Value::Int8(c[k]),
            Acc::SumInt(v) => v[k].map_or(Value::Null, Value::Int8),
            Acc::Wide { sum, n, avg } => match (n[k], *avg) {
                (0, _) => Value::Null,
                (_, false) => Value::Numeric(Numeric::from_i128(sum[k])),
                (c, true) => {
                    Value::Numeric(Numeric::from_i128(sum[k]).checked_div(&Numeric::from_i64(c))?)
                }
            },
            Acc::Num { sum, n, avg } => match (n[k], *avg) {
                (0, _) => Value::Null,
                (_, false) => Value::Numeric(sum[k].clone()),
                (c, true) => Value::Numeric(sum[k].checked_div(&Numeric::from_i64(c))?),
            },
            Acc::Float { sum, real } => match sum[k] {
                None => Value::Null,
                Some(s) if *real => Value::Float4(s as f32),
                Some(s) => Value::Float8(s),
            },
            Acc::FloatStats { s, stat } => float_finish(s[k], *stat),
            Acc::IntStats { n, sx, sxx, stat } => stats_finish(
                n[k],
                &Dec::from_i128(sx[k]),
                &Dec {
                    neg: false,
                    mag: sxx[k].to_big(),
                    scale: 0,
                },
                *stat,
            )?,
            Acc::NumStats { n, sx, sxx, stat } => stats_finish(n[k], &sx[k], &sxx[k], *stat)?,
            Acc::Interval { sum, n, avg } => match (n[k], *avg) {
                (0, _) => Value::Null,
                (_, false) => Value::Interval(sum[k]),
                (c, true) => Value::Interval(interval_div(sum[k], c as f64)),
            },
            Acc::MinMaxInt { val, .. } => val[k].map_or(Value::Null, |v| int_value(ty, v)),
            Acc::MinMaxFloat { val, real, .. } => match val[k] {
                None => Value::Null,
                Some(v) if *real => Value::Float4(v as f32),
                Some(v) => Value::Float8(v),
            },
            Acc::MinMaxKeyed { val, .. } => val[k].as_ref().map_or(Value::Null, |(_, v)| v.clone()),
            Acc::Bool { val, .. } => val[k].map_or(Value::Null, Value::Bool),
            Acc::StringAgg { val, bytea, .. } => match &val[k] {
                None => Value::Null,
                Some((buf, first)) if *bytea => Value::Bytea(buf[*first..].to_vec()),
                Some((buf, first)) => {
                    Value::Text(String::from_utf8_lossy(&buf[*first..]).into_owned())
                }
            },
            Acc::Bits { val, ty, .. } => val[k].map_or(Value::Null, |v| int_value(*ty, v)),
            Acc::ArrayAgg {
                val,
                set: Some(set),
                ..
            } => set.finish(val[k].as_deref(), ty)?,
            Acc::ArrayAgg { val, .. } => match &val[k] {
                None => Value::Null,
                Some(items) => {
                    Value::Array(Box::new(crate::array::ArrayValue::new(ty, items.clone())))
                }
            },
            Acc::Json { val, func, .. } => super::json_agg::finish(*func, val[k].as_ref())?,
        })
    }

    /// The partial state of group `k`, one value per partial column.
    pub fn state(&self, k: usize, result: DataType) -> Result<Vec<Value>> {
        let num = |v: i128| Value::Numeric(Numeric::from_i128(v));
        Ok(match self {
            Acc::Count(c) => vec![Value::Int8(c[k])],
            Acc::SumInt(v) => vec![v[k].map_or(Value::Null, Value::Int8)],
            Acc::Wide { sum, n, .. } => vec![Value::Int8(n[k]), num(sum[k])],
            Acc::Num { sum, n, .. } => vec![Value::Int8(n[k]), Value::Numeric(sum[k].clone())],
            Acc::Float { .. } | Acc::MinMaxInt { .. } | Acc::MinMaxFloat { .. } => {
                vec![self.finish(k, result)?]
            }
            Acc::MinMaxKeyed { .. } | Acc::Bool { .. } | Acc::Bits { .. } => {
                vec![self.finish(k, result)?]
            }
            Acc::FloatStats { s, .. } => s[k].iter().map(|&x| Value::Float8(x)).collect(),
            Acc::IntStats { n, sx, sxx, .. } => vec![
                Value::Int8(n[k]),
                Value::Text(sx[k].to_string()),
                Value::Text(sxx[k].to_big().to_decimal()),
            ],
            Acc::NumStats { n, sx, sxx, .. } => vec![
                Value::Int8(n[k]),
                Value::Text(sx[k].to_text()),
                Value::Text(sxx[k].to_text()),
            ],
            Acc::Interval { sum, n, .. } => vec![Value::Int8(n[k]), Value::Interval(sum[k])],
            Acc::StringAgg { .. } | Acc::ArrayAgg { .. } | Acc::Json { .. } => {
                return Err(ExecError::new(
                    "string_agg, array_agg and the JSON aggregates have no partial form",
                ));
            }
        })
    }

    /// Merges a partial state (`state`, as [`Acc::state`] wrote it) into
    /// group `k`.
    pub fn combine(&mut self, k: usize, state: &[Value]) -> Result<()> {
        let int = |v: &Value| match v {
            Value::Int8(x) => *x,
            _ => 0,
        };
        match self {
            Acc::Count(c) => c[k] += int(&state[0]),
            Acc::SumInt(v) => {
                if let Value::Int8(x) = state[0] {
                    v[k] = Some(match v[k] {
                        None => x,
                        Some(cur) => cur.checked_add(x).ok_or_else(int8_out_of_range)?,
                    });
                }
            }
            Acc::Wide { sum, n, .. } => {
                n[k] += int(&state[0]);
                if let Value::Numeric(x) = &state[1] {
                    sum[k] += x
                        .as_small()
                        .filter(|&(_, scale)| scale == 0)
                        .map(|(v, _)| v)
                        .ok_or_else(|| ExecError::new("a partial integer sum is not an integer"))?;
                }
            }
            Acc::Num { sum, n, .. } => {
                n[k] += int(&state[0]);
                if let Value::Numeric(x) = &state[1] {
                    sum[k] = sum[k].checked_add(x)?;
                }
            }
            Acc::Float { sum, real } => {
                let x = match state[0] {
                    Value::Float4(x) => x as f64,
                    Value::Float8(x) => x,
                    _ => return Ok(()),
                };
                sum[k] = Some(match sum[k] {
                    None => x,
                    Some(s) if *real => real_add(s, x)?,
                    Some(s) => float_add(s, x)?,
                });
            }
            Acc::FloatStats { s, .. } => {
                let f = |v: &Value| match v {
                    Value::Float8(x) => *x,
                    _ => 0.0,
                };
                float_combine(&mut s[k], [f(&state[0]), f(&state[1]), f(&state[2])])?;
            }
            Acc::IntStats { n, sx, sxx, .. } => {
                n[k] += int(&state[0]);
                sx[k] += text_of(&state[1]).parse::<i128>().unwrap_or(0);
                let add = Big::from_decimal(text_of(&state[2]));
                sxx[k] = Wide256::from_big(&sxx[k].to_big().add(&add));
            }
            Acc::NumStats { n, sx, sxx, .. } => {
                n[k] += int(&state[0]);
                let d = |v: &Value| Dec::parse(text_of(v)).unwrap_or_else(|| Dec::from_i128(0));
                sx[k] = dec_add(&sx[k], &d(&state[1]));
                sxx[k] = dec_add(&sxx[k], &d(&state[2]));
            }
            Acc::Interval { sum, n, .. } => {
                n[k] += int(&state[0]);
                if let Value::Interval(x) = state[1] {
                    sum[k] = interval_add(sum[k], x)?;
                }
            }
            Acc::MinMaxInt { .. }
            | Acc::MinMaxFloat { .. }
            | Acc::MinMaxKeyed { .. }
            | Acc::Bool { .. }
            | Acc::Bits { .. } => {
                // The partial value is an input like any other.
                if state[0].is_null() {
                    return Ok(());
                }
                let mut v = Vector::with_capacity(state_type(&state[0]), 1);
                v.push_value(&state[0]);
                let call = AggCall {
                    func: AggFunc::Count,
                    args: vec![],
                    distinct: false,
                    filter: None,
                    order_by: vec![],
                    result: DataType::Int8,
                };
                let groups = [k as u32];
                self.update_rows(&call, &[&v], &[0], Some(&groups))?;
            }
            Acc::StringAgg { .. } | Acc::ArrayAgg { .. } | Acc::Json { .. } => {
                return Err(ExecError::new(
                    "string_agg, array_agg and the JSON aggregates have no partial form",
                ));
            }
        }
        Ok(())
    }
}

/// The vector type that holds a state value (NULL as bigint: it is skipped).
fn state_type(v: &Value) -> DataType {
    v.data_type().unwrap_or(DataType::Int8)
}
