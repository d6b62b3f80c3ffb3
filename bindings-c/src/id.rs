//! IDs: decoding, composing, bounds, string formats; and node values from C
//! arrays (shared with the generators).

use core::ffi::c_char;

use snowmint::{Error, Format, Id, IdProblem, Iso8601, Layout, Nodes, Value};

use crate::ffi::{arg, boundary, cstr, out_mut, slice, str_len, write_text, R};
use crate::layout::{layout_value, snowmint_layout};
use crate::{snowmint_status, SNOWMINT_MAX_NODES};

/// An ID split into its parts (filled by `snowmint_decode`).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct snowmint_parts {
    /// The ID.
    pub id: u64,
    /// The time field's raw value (time units since the epoch).
    pub tick: u64,
    /// The start of the ID's time unit, Unix milliseconds.
    pub timestamp_ms: u64,
    /// The sequence value.
    pub sequence: u64,
    /// How many entries of `nodes` are set (the layout's node count).
    pub node_count: usize,
    /// Node values in the layout's node-field order.
    pub nodes: [u64; SNOWMINT_MAX_NODES],
}

/// Splits `id` into its parts. `SNOWMINT_STATUS_INVALID_ID` when it has
/// bits above the layout's width.
#[no_mangle]
pub unsafe extern "C" fn snowmint_decode(
    layout: *const snowmint_layout,
    id: u64,
    out: *mut snowmint_parts,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (l, out) = unsafe { (arg(layout)?, out_mut(out)?) };
        let p = l.layout.decompose(id)?;
        let mut parts = snowmint_parts {
            id: p.id().get(),
            tick: p.tick(),
            timestamp_ms: p.timestamp_ms(),
            sequence: p.sequence(),
            node_count: p.nodes().len(),
            nodes: [0; SNOWMINT_MAX_NODES],
        };
        parts.nodes[..p.nodes().len()].copy_from_slice(p.nodes());
        *out = parts;
        Ok(())
    })
}

/// Node values from parallel arrays of names and values, as the map every
/// language hands the core (`Value::to_nodes`, or a lease's fixed values).
pub(crate) unsafe fn value_by_name(
    names: *const *const c_char,
    values: *const u64,
    count: usize,
) -> R<Value> {
    // SAFETY: the caller promises `count` elements in each array.
    let (names, values) = unsafe { (slice(names, count)?, slice(values, count)?) };
    let mut map = Vec::with_capacity(count);
    for (&n, &v) in names.iter().zip(values) {
        // SAFETY: NULL or a NUL-terminated string.
        map.push((unsafe { cstr(n) }?.to_owned(), Value::from(v)));
    }
    Ok(Value::Map(map))
}

/// Node values in node-field order, as a map by field name: `count` may be
/// short of the layout's node fields (a lease assigns the last one), never
/// longer (the core's error for too many values).
pub(crate) unsafe fn value_by_position(l: &Layout, values: *const u64, count: usize) -> R<Value> {
    // SAFETY: the caller promises `count` elements.
    let values = unsafe { slice(values, count) }?;
    if values.len() > l.nodes().count() {
        l.nodes_from_values(values)?;
    }
    let names = l.nodes().map(|f| f.name().to_owned());
    Ok(Value::Map(
        names.zip(values.iter().map(|&v| v.into())).collect(),
    ))
}

/// Node values by name, checked against `l`.
pub(crate) unsafe fn nodes_by_name(
    l: &Layout,
    names: *const *const c_char,
    values: *const u64,
    count: usize,
) -> R<Nodes> {
    // SAFETY: as `value_by_name`.
    Ok(unsafe { value_by_name(names, values, count) }?.to_nodes(l)?)
}

/// Node values in node-field order.
pub(crate) unsafe fn nodes_by_value(l: &Layout, values: *const u64, count: usize) -> R<Nodes> {
    // SAFETY: the caller promises `count` elements.
    Ok(l.nodes_from_values(unsafe { slice(values, count) }?)?)
}

/// Builds an ID from a time (Unix ms), a sequence value and node values in
/// node-field order (`node_count` of them; `nodes` may be NULL when 0).
#[no_mangle]
pub unsafe extern "C" fn snowmint_compose(
    layout: *const snowmint_layout,
    time_ms: u64,
    sequence: u64,
    nodes: *const u64,
    node_count: usize,
    out: *mut u64,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers (the function's contract).
        let (l, out) = unsafe { (arg(layout)?, out_mut(out)?) };
        // SAFETY: NULL or `node_count` readable values at `nodes`.
        let nodes = unsafe { nodes_by_value(&l.layout, nodes, node_count) }?;
        *out = l.layout.compose(time_ms, sequence, &nodes)?.get();
        Ok(())
    })
}

/// As `snowmint_compose`, with node values by name: `names[i]` (NUL-terminated)
/// has value `values[i]`, for `count` entries in any order.
#[no_mangle]
pub unsafe extern "C" fn snowmint_compose_by_name(
    layout: *const snowmint_layout,
    time_ms: u64,
    sequence: u64,
    names: *const *const c_char,
    values: *const u64,
    count: usize,
    out: *mut u64,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers (the function's contract).
        let (l, out) = unsafe { (arg(layout)?, out_mut(out)?) };
        // SAFETY: NULL or `count` readable elements in each array.
        let nodes = unsafe { nodes_by_name(&l.layout, names, values, count) }?;
        *out = l.layout.compose(time_ms, sequence, &nodes)?.get();
        Ok(())
    })
}

/// The smallest and largest IDs whose time unit contains `time_ms`, for
/// range queries (`WHERE id BETWEEN min AND max`).
#[no_mangle]
pub unsafe extern "C" fn snowmint_id_bounds(
    layout: *const snowmint_layout,
    time_ms: u64,
    min: *mut u64,
    max: *mut u64,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (l, min, max) = unsafe { (arg(layout)?, out_mut(min)?, out_mut(max)?) };
        let (lo, hi) = l.layout.id_bounds(time_ms)?;
        (*min, *max) = (lo.get(), hi.get());
        Ok(())
    })
}

/// True when `id` fits the layout and decodes to a time between the epoch
/// and `now_ms` plus one day ("which layout fits this ID?"). False for NULL.
#[no_mangle]
pub unsafe extern "C" fn snowmint_is_plausible(
    layout: *const snowmint_layout,
    id: u64,
    now_ms: u64,
) -> bool {
    layout_value(layout, false, |l| l.is_plausible(id, now_ms))
}

/// A string form of an ID.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum snowmint_format {
    /// Base 10, 1 to 20 digits.
    Decimal = 0,
    /// Crockford base32, 13 characters, upper case (input case-insensitive).
    Base32 = 1,
    /// 0-9A-Za-z, 11 characters, sorts like the number.
    Base62 = 2,
}

/// The core format of a C format value; other values are `invalid_id`
/// (the core's "unknown format").
fn format_of(format: u32) -> R<Format> {
    // `Format::ALL` is in the order of `snowmint_format`'s values.
    match Format::ALL.get(format as usize) {
        Some(&f) => Ok(f),
        None => Err(Error::InvalidId(IdProblem::UnknownFormat).into()),
    }
}

/// The format called `name` ("decimal", "base32", "base62");
/// `SNOWMINT_STATUS_INVALID_ID` for any other name.
#[no_mangle]
pub unsafe extern "C" fn snowmint_format_from_name(
    name: *const c_char,
    out: *mut snowmint_format,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (name, out) = unsafe { (cstr(name)?, out_mut(out)?) };
        *out = match Format::from_name(name)? {
            Format::Decimal => snowmint_format::Decimal,
            Format::Base32 => snowmint_format::Base32,
            Format::Base62 => snowmint_format::Base62,
        };
        Ok(())
    })
}

/// Writes `id` in `format` (a `snowmint_format` value) and a NUL into `buf`
/// (`len` bytes; `SNOWMINT_ID_STR_SIZE` always suffices), and the length
/// without the NUL into `*written`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_format_id(
    id: u64,
    format: u32,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> snowmint_status {
    boundary(|| {
        let format = format_of(format)?;
        let mut tmp = [0u8; snowmint::MAX_STR_LEN];
        let s = Id::new(id).encode(format, &mut tmp);
        // SAFETY: NULL or valid pointers; `buf` has `len` writable bytes.
        unsafe { write_text(buf, len, written, s) }
    })
}

/// Reads an ID from `len` bytes (no NUL needed) in `format`. Anything that
/// is not exactly a valid string of that format is `SNOWMINT_STATUS_INVALID_ID`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_parse_id(
    text: *const c_char,
    len: usize,
    format: u32,
    out: *mut u64,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers; `text` has `len` readable bytes.
        let (text, out) = unsafe { (str_len(text, len)?, out_mut(out)?) };
        *out = Id::parse(text, format_of(format)?)?.get();
        Ok(())
    })
}

/// Writes Unix milliseconds as an ISO-8601 UTC time
/// (`2016-04-30T11:18:25.796Z`) and a NUL into `buf` (`len` bytes;
/// `SNOWMINT_ISO8601_SIZE` always suffices), the length into `*written`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_iso8601(
    ms: u64,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers; `buf` has `len` writable bytes.
        unsafe { write_text(buf, len, written, &Iso8601(ms).to_string()) }
    })
}
