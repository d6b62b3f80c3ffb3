//! Layouts: the handle, its constructors and accessors, and the presets.

use core::ffi::c_char;

use snowmint::{FieldKind, FieldName, Layout};

use crate::ffi::{
    arg, boundary, boundary_value, c_string_at, c_strings, cstr, free_handle, out_mut, str_len,
    write_text, R,
};
use crate::{snowmint_status, SNOWMINT_MAX_FIELDS};

/// A layout: which bits of an ID hold the time, the sequence and the node
/// fields. Immutable and safe to share between threads. Free it with
/// `snowmint_layout_free`; generators copy it, so it may be freed while
/// generators made from it live on.
#[allow(non_camel_case_types)]
pub struct snowmint_layout {
    pub(crate) layout: Layout,
    /// The field names with a NUL each, so C gets `const char *` into the handle.
    names: [[u8; NAME_SIZE]; SNOWMINT_MAX_FIELDS],
}

/// A field name and its NUL.
const NAME_SIZE: usize = FieldName::MAX_LEN + 1;

impl snowmint_layout {
    fn new(layout: Layout) -> Self {
        let mut names = [[0u8; NAME_SIZE]; SNOWMINT_MAX_FIELDS];
        for (dst, f) in names.iter_mut().zip(layout.fields()) {
            dst[..f.name().len()].copy_from_slice(f.name().as_bytes());
        }
        snowmint_layout { layout, names }
    }
    fn name_ptr(&self, field_index: usize) -> *const c_char {
        self.names[field_index].as_ptr().cast()
    }
    /// The position among all fields of the `i`-th node field.
    fn node_field_index(&self, i: usize) -> R<usize> {
        let node = self
            .layout
            .node(i)
            .ok_or(snowmint_status::IndexOutOfRange)?;
        let fields = self.layout.fields().iter();
        Ok(fields.take_while(|f| f.name() != node.name()).count())
    }
}

fn new_layout(
    out_ptr: *mut *const snowmint_layout,
    read: impl FnOnce() -> R<Layout>,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or a valid pointer.
        let out = unsafe { out_mut(out_ptr) }?;
        let layout = read()?;
        *out = Box::into_raw(Box::new(snowmint_layout::new(layout)));
        Ok(())
    })
}

/// Reads a layout the way every snowmint binding does (the core's
/// `Layout::parse`): `len` bytes that are a JSON descriptor when they start
/// (after whitespace) with `{` or `"`, else a preset name. No NUL needed.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_parse(
    text: *const c_char,
    len: usize,
    out: *mut *const snowmint_layout,
) -> snowmint_status {
    // SAFETY: the caller promises `len` readable bytes at `text`.
    new_layout(out, || Ok(Layout::parse(unsafe { str_len(text, len) }?)?))
}

/// A preset layout by its NUL-terminated name ("twitter", ...;
/// `snowmint_preset_name` lists them).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_preset(
    name: *const c_char,
    out: *mut *const snowmint_layout,
) -> snowmint_status {
    // SAFETY: the caller passes NULL or a NUL-terminated string.
    new_layout(out, || Ok(Layout::preset(unsafe { cstr(name) }?)?))
}

/// A layout from `len` bytes of JSON (the core's `Layout::from_json`, strict:
/// a descriptor object such as
/// `{"epoch_ms":1288834974657,"fields":[["timestamp",41],["worker",10],["sequence",12]]}`
/// or a preset's name as a JSON string). Use `snowmint_layout_parse` to also
/// accept bare preset names.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_from_json(
    json: *const c_char,
    len: usize,
    out: *mut *const snowmint_layout,
) -> snowmint_status {
    new_layout(out, || {
        // SAFETY: the caller promises `len` readable bytes at `json`.
        Ok(Layout::from_json(unsafe { str_len(json, len) }?)?)
    })
}

/// Frees a layout. NULL does nothing.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_free(layout: *const snowmint_layout) {
    // SAFETY: a pointer from a layout constructor, freed once.
    boundary_value((), || unsafe { free_handle(layout) })
}

/// `f` of a layout handle; `default` for NULL (and on a panic).
pub(crate) fn layout_value<T: Copy>(
    layout: *const snowmint_layout,
    default: T,
    f: impl FnOnce(&Layout) -> T,
) -> T {
    boundary_value(default, || {
        // SAFETY: NULL or a valid layout.
        unsafe { layout.as_ref() }.map_or(default, |l| f(&l.layout))
    })
}

/// The epoch, Unix milliseconds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_epoch_ms(layout: *const snowmint_layout) -> u64 {
    layout_value(layout, 0, Layout::epoch_ms)
}

/// Milliseconds per time unit (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_time_unit_ms(layout: *const snowmint_layout) -> u64 {
    layout_value(layout, 0, Layout::time_unit_ms)
}

/// The sum of the field widths, at most 64 (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_total_bits(layout: *const snowmint_layout) -> u32 {
    layout_value(layout, 0, Layout::total_bits)
}

/// The largest ID of the layout (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_max_id(layout: *const snowmint_layout) -> u64 {
    layout_value(layout, 0, |l| l.max_id().get())
}

/// The first Unix ms the time field cannot hold: generating fails from then
/// on (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_time_end_ms(layout: *const snowmint_layout) -> u64 {
    layout_value(layout, 0, Layout::time_end_ms)
}

/// The first Unix ms from which IDs may not fit a signed 64-bit integer
/// (`int64_t`, SQL `BIGINT`) (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_i64_end_ms(layout: *const snowmint_layout) -> u64 {
    layout_value(layout, 0, Layout::i64_end_ms)
}

/// The first Unix ms from which IDs may not be JavaScript safe integers
/// (below 2^53) (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_js_safe_end_ms(layout: *const snowmint_layout) -> u64 {
    layout_value(layout, 0, Layout::js_safe_end_ms)
}

/// How many fields, timestamp and sequence included (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_field_count(layout: *const snowmint_layout) -> usize {
    layout_value(layout, 0, |l| l.fields().len())
}

/// How many node fields (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_node_count(layout: *const snowmint_layout) -> usize {
    layout_value(layout, 0, Layout::node_count)
}

/// The preset name equal to this layout ("twitter", ...), or NULL when it is
/// no preset (or `layout` is NULL). The string is static.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_preset_name(
    layout: *const snowmint_layout,
) -> *const c_char {
    layout_value(layout, core::ptr::null(), |l| {
        let name = l.preset_name();
        let i = Layout::PRESETS.iter().position(|p| Some(*p) == name);
        i.map_or(core::ptr::null(), |i| c_string_at(&PRESET_NAMES, i))
    })
}

/// True when both layouts are the same (same epoch, unit and fields). False
/// when either is NULL.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_equal(
    a: *const snowmint_layout,
    b: *const snowmint_layout,
) -> bool {
    boundary_value(false, || {
        // SAFETY: NULL or valid layouts.
        match unsafe { (a.as_ref(), b.as_ref()) } {
            (Some(a), Some(b)) => a.layout == b.layout,
            _ => false,
        }
    })
}

/// What a field holds.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum snowmint_field_kind {
    /// The time since the epoch, in time units (always the first field).
    Timestamp = 0,
    /// The per-time-unit sequence.
    Sequence = 1,
    /// A node field (datacenter, worker, shard, ...).
    Node = 2,
}

/// One field of a layout, as `snowmint_layout_field` describes it.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct snowmint_field {
    /// The name, NUL-terminated; valid as long as the layout handle.
    pub name: *const c_char,
    /// The width in bits.
    pub bits: u32,
    /// The position of the lowest bit.
    pub shift: u32,
    /// What the field holds.
    pub kind: snowmint_field_kind,
}

/// Describes the `index`-th field (0 is the timestamp, the most significant).
/// `SNOWMINT_STATUS_INDEX_OUT_OF_RANGE` when `index >= field_count`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_field(
    layout: *const snowmint_layout,
    index: usize,
    out: *mut snowmint_field,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (l, out) = unsafe { (arg(layout)?, out_mut(out)?) };
        let f = l
            .layout
            .fields()
            .get(index)
            .ok_or(snowmint_status::IndexOutOfRange)?;
        *out = snowmint_field {
            name: l.name_ptr(index),
            bits: f.bits(),
            shift: f.shift(),
            kind: match f.kind() {
                FieldKind::Timestamp => snowmint_field_kind::Timestamp,
                FieldKind::Sequence => snowmint_field_kind::Sequence,
                FieldKind::Node => snowmint_field_kind::Node,
            },
        };
        Ok(())
    })
}

/// The name of the `index`-th node field (node values are passed and
/// returned in this order). The string lives as long as the layout handle.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_node_name(
    layout: *const snowmint_layout,
    index: usize,
    out: *mut *const c_char,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (l, out) = unsafe { (arg(layout)?, out_mut(out)?) };
        *out = l.name_ptr(l.node_field_index(index)?);
        Ok(())
    })
}

/// The index of the node field called `name`; `SNOWMINT_STATUS_UNKNOWN_FIELD`
/// when there is none (`timestamp` and `sequence` are not node fields).
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_node_index(
    layout: *const snowmint_layout,
    name: *const c_char,
    out: *mut usize,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (l, name, out) = unsafe { (arg(layout)?, cstr(name)?, out_mut(out)?) };
        *out = l
            .layout
            .node_index(name)
            .ok_or(snowmint_status::UnknownField)?;
        Ok(())
    })
}

/// Writes the canonical JSON descriptor and a NUL into `buf` (`len` bytes;
/// `SNOWMINT_LAYOUT_JSON_SIZE` always suffices) and its length without the
/// NUL into `*written`. `SNOWMINT_STATUS_BUFFER_TOO_SMALL` writes nothing.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_to_json(
    layout: *const snowmint_layout,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or a valid layout.
        let l = unsafe { arg(layout) }?;
        // SAFETY: NULL or valid pointers; `buf` has `len` writable bytes.
        unsafe { write_text(buf, len, written, &l.layout.to_json()) }
    })
}

/// `SNOWMINT_STATUS_INVALID_LAYOUT` when the layout's epoch is later than
/// `now_ms` (generators refuse such a layout), else OK.
#[no_mangle]
pub unsafe extern "C" fn snowmint_layout_check_epoch(
    layout: *const snowmint_layout,
    now_ms: u64,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or a valid layout.
        let l = unsafe { arg(layout) }?;
        Ok(l.layout.check_epoch(now_ms)?)
    })
}

/// The preset names as C strings, in the core's order (`Layout::PRESETS`).
static PRESET_NAMES: [[u8; 32]; Layout::PRESETS.len()] = c_strings(Layout::PRESETS);

/// How many presets there are.
#[no_mangle]
pub extern "C" fn snowmint_preset_count() -> usize {
    boundary_value(0, || PRESET_NAMES.len())
}

/// The `index`-th preset name (static), or NULL when `index` is too large.
#[no_mangle]
pub extern "C" fn snowmint_preset_name(index: usize) -> *const c_char {
    boundary_value(core::ptr::null(), || c_string_at(&PRESET_NAMES, index))
}
