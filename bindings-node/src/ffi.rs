//! Decoding for Deno through `Deno.dlopen` of this same library, beside
//! N-API: Deno calls a plain C function of a `dlopen`ed library through V8's
//! fast API (a bigint argument read as a `u64` in the engine's compiled
//! code), where an N-API call goes through Deno's emulation of N-API (a
//! callback-info object, `napi_get_cb_info`, `napi_get_value_bigint_uint64`,
//! each a call into Deno). bench/RESULTS.md ("JavaScript runtimes") has the
//! figures.
//!
//! The C entry takes plain numbers only: a slot (a registered layout, checked
//! here) and the ID. It writes what [`fast`](crate::fast)'s decoder writes,
//! with the same core call, into this thread's scratch array, which
//! `main.js` reads through a view of its memory. It returns 0, or 1 when the
//! core refused the ID or the slot is not registered: `main.js` then decodes
//! that ID through N-API, which throws the core's error. `main.js` passes
//! only a bigint in 0..2^64 (Deno would wrap any other).

use std::cell::UnsafeCell;
use std::sync::OnceLock;

use napi_derive::napi;

use crate::fast::SCRATCH_LEN;
use crate::Layout;

/// Layouts registered for the C entry, never removed: a process decoding
/// more distinct layouts than this decodes the others through N-API.
const SLOTS: usize = 64;

static LAYOUTS: [OnceLock<snowmint::Layout>; SLOTS] = [const { OnceLock::new() }; SLOTS];

thread_local! {
    /// Each thread's scratch array (a Deno worker is a thread of its own).
    static SCRATCH: UnsafeCell<[f64; SCRATCH_LEN]> = const { UnsafeCell::new([0.0; SCRATCH_LEN]) };
}

/// Internal, for `main.js`: the slot of `layout` for
/// `snowmint_node_decode`, or null when every slot holds another layout.
#[napi(js_name = "__ffiSlot", skip_typescript)]
pub fn ffi_slot(layout: &Layout) -> Option<u32> {
    LAYOUTS.iter().enumerate().find_map(|(i, slot)| {
        let held = slot.get_or_init(|| layout.inner);
        (*held == layout.inner).then_some(i as u32)
    })
}

/// Internal, for `main.js`: the path of this library (for `Deno.dlopen`),
/// or null where it cannot be told.
#[napi(js_name = "__libraryPath", skip_typescript)]
pub fn library_path() -> Option<String> {
    #[cfg(unix)]
    {
        // SAFETY: zero bits are a valid `Dl_info` (null pointers).
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        let addr = snowmint_node_decode as *const libc::c_void;
        // SAFETY: `addr` is a function of this library; `info` is writable.
        if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: dladdr returned a NUL-terminated path owned by the loader.
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
        name.to_str().ok().map(str::to_owned)
    }
    #[cfg(not(unix))]
    None
}

/// The C entry: decodes `id` under the layout in `slot` into this thread's
/// scratch array; 0 when done, 1 otherwise (see the module's comment).
#[no_mangle]
pub extern "C" fn snowmint_node_decode(slot: u32, id: u64) -> i32 {
    let Some(layout) = LAYOUTS.get(slot as usize).and_then(OnceLock::get) else {
        return 1;
    };
    SCRATCH.with(|s| {
        // SAFETY: only this function writes the array, on this thread, and
        // JavaScript reads it only between calls.
        let out = unsafe { &mut *s.get() };
        i32::from(layout.decompose_f64(id, out).is_err())
    })
}

/// The C entry's scratch array of this thread (for as long as the thread
/// lives), or null if it has fewer than `len` elements.
#[no_mangle]
pub extern "C" fn snowmint_node_scratch(len: usize) -> *mut f64 {
    if len > SCRATCH_LEN {
        return std::ptr::null_mut();
    }
    SCRATCH.with(|s| s.get().cast())
}
