//! Value constructors for the row builders, and the internal functions
//! (type input/output, access method handlers) that `regproc` columns
//! name, with PostgreSQL's oids.

use tusk_exec::array::ArrayValue;
use tusk_exec::Value;
use tusk_storage::DataType;

pub(super) fn oid(o: u32) -> Value {
    Value::Oid {
        ty: DataType::Oid,
        oid: o,
    }
}

pub(super) fn reg(ty: DataType, o: u32) -> Value {
    Value::Oid { ty, oid: o }
}

pub(super) fn xid(x: u32) -> Value {
    Value::Oid {
        ty: DataType::Xid,
        oid: x,
    }
}

pub(super) fn name(s: &str) -> Value {
    Value::Text(tusk_exec::cast::truncate_name(s))
}

pub(super) fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

pub(super) fn ch(c: char) -> Value {
    Value::Text(c.to_string())
}

pub(super) fn boolean(b: bool) -> Value {
    Value::Bool(b)
}

pub(super) fn i2(v: i16) -> Value {
    Value::Int2(v)
}

pub(super) fn i4(v: i32) -> Value {
    Value::Int4(v)
}

pub(super) fn i8(v: i64) -> Value {
    Value::Int8(v)
}

pub(super) fn f4(v: f32) -> Value {
    Value::Float4(v)
}

pub(super) fn array(ty: DataType, items: Vec<Value>) -> Value {
    Value::Array(Box::new(ArrayValue::new(ty, items)))
}

pub(super) fn text_array(items: &[&str]) -> Value {
    array(
        tusk_storage::TEXT_ARRAY,
        items.iter().map(|s| text(s)).collect(),
    )
}

/// PostgreSQL's internal functions that catalog columns of type `regproc`
/// name: (oid, name).
pub(super) const INTERNAL_FUNCTIONS: &[(u32, &str)] = &[
    (3, "heap_tableam_handler"),
    (33, "charout"),
    (34, "namein"),
    (35, "nameout"),
    (38, "int2in"),
    (39, "int2out"),
    (40, "int2vectorin"),
    (41, "int2vectorout"),
    (42, "int4in"),
    (43, "int4out"),
    (44, "regprocin"),
    (45, "regprocout"),
    (46, "textin"),
    (47, "textout"),
    (50, "xidin"),
    (51, "xidout"),
    (54, "oidvectorin"),
    (55, "oidvectorout"),
    (195, "pg_node_tree_in"),
    (196, "pg_node_tree_out"),
    (197, "pg_node_tree_recv"),
    (198, "pg_node_tree_send"),
    (200, "float4in"),
    (201, "float4out"),
    (214, "float8in"),
    (215, "float8out"),
    (330, "bthandler"),
    (460, "int8in"),
    (461, "int8out"),
    (750, "array_in"),
    (751, "array_out"),
    (1044, "bpcharin"),
    (1045, "bpcharout"),
    (1046, "varcharin"),
    (1047, "varcharout"),
    (1084, "date_in"),
    (1085, "date_out"),
    (1143, "time_in"),
    (1144, "time_out"),
    (1150, "timestamptz_in"),
    (1151, "timestamptz_out"),
    (1160, "interval_in"),
    (1161, "interval_out"),
    (1242, "boolin"),
    (1243, "boolout"),
    (1245, "charin"),
    (1312, "timestamp_in"),
    (1313, "timestamp_out"),
    (1701, "numeric_in"),
    (1702, "numeric_out"),
    (1798, "oidin"),
    (1799, "oidout"),
    (2218, "regclassin"),
    (2219, "regclassout"),
    (2220, "regtypein"),
    (2221, "regtypeout"),
    (2400, "array_recv"),
    (2401, "array_send"),
    (2404, "int2recv"),
    (2405, "int2send"),
    (2406, "int4recv"),
    (2407, "int4send"),
    (2408, "int8recv"),
    (2409, "int8send"),
    (2410, "int2vectorrecv"),
    (2411, "int2vectorsend"),
    (2414, "textrecv"),
    (2415, "textsend"),
    (2418, "oidrecv"),
    (2419, "oidsend"),
    (2420, "oidvectorrecv"),
    (2421, "oidvectorsend"),
    (2422, "namerecv"),
    (2423, "namesend"),
    (2424, "float4recv"),
    (2425, "float4send"),
    (2426, "float8recv"),
    (2427, "float8send"),
    (2430, "bpcharrecv"),
    (2431, "bpcharsend"),
    (2432, "varcharrecv"),
    (2433, "varcharsend"),
    (2434, "charrecv"),
    (2435, "charsend"),
    (2436, "boolrecv"),
    (2437, "boolsend"),
    (2440, "xidrecv"),
    (2441, "xidsend"),
    (2444, "regprocrecv"),
    (2445, "regprocsend"),
    (2452, "regclassrecv"),
    (2453, "regclasssend"),
    (2454, "regtyperecv"),
    (2455, "regtypesend"),
    (2460, "numeric_recv"),
    (2461, "numeric_send"),
    (2468, "date_recv"),
    (2469, "date_send"),
    (2470, "time_recv"),
    (2471, "time_send"),
    (2474, "timestamp_recv"),
    (2475, "timestamp_send"),
    (2476, "timestamptz_recv"),
    (2477, "timestamptz_send"),
    (2478, "interval_recv"),
    (2479, "interval_send"),
    (4084, "regnamespacein"),
    (4085, "regnamespaceout"),
    (4087, "regnamespacerecv"),
    (4088, "regnamespacesend"),
    (4092, "regroleout"),
    (4094, "regrolerecv"),
    (4095, "regrolesend"),
    (4098, "regrolein"),
    (6179, "array_subscript_handler"),
    (6180, "raw_array_subscript_handler"),
];

/// A `regproc` value naming internal function `name` (`-`: none).
pub(super) fn regproc_named(name: &str) -> Value {
    let o = INTERNAL_FUNCTIONS
        .iter()
        .find(|f| f.1 == name)
        .map_or(0, |f| f.0);
    reg(DataType::RegProc, o)
}
