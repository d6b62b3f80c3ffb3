//! Plain C entries of this same library, beside N-API, for the two runtimes
//! where an N-API call costs most (bench/RESULTS.md, "JavaScript runtimes",
//! has the figures):
//!
//! - **Deno, decoding** (`Deno.dlopen`): Deno calls a C function through V8's
//!   fast API (a bigint argument read as a `u64` in the engine's compiled
//!   code), where an N-API call goes through Deno's emulation of N-API (a
//!   callback-info object, `napi_get_cb_info`,
//!   `napi_get_value_bigint_uint64`, each a call into Deno). The entry takes
//!   plain numbers only: a slot (a registered layout, checked here) and the
//!   ID. It writes what [`fast`](crate::fast)'s decoder writes, with the same
//!   core call, into this thread's scratch array, which `main.js` reads
//!   through a view of its memory. It returns 0, or 1 when the core refused
//!   the ID or the slot is not registered: `main.js` then decodes that ID
//!   through N-API, which throws the core's error. `main.js` passes only a
//!   bigint in 0..2^64 (Deno would wrap any other).
//! - **Bun and Deno, `Generator.nextId()`** (`bun:ffi`'s `dlopen`,
//!   `Deno.dlopen`): an N-API call costs about 70 ns on Bun and Deno, twice
//!   Node's; an FFI call a few. The entry takes the generator's address and
//!   makes the N-API `nextId`'s core call; on any refusal `main.js` calls
//!   that N-API `nextId`, which throws the core's error. Bun calls the entry
//!   that returns the ID. Deno's fast calls cover 64-bit arguments but not
//!   64-bit results (a `u64` result takes Deno's slow path, slower than its
//!   N-API call): there the entry writes the ID into this thread's ID slot,
//!   which `main.js` reads through a view of its memory, and returns 0 (1
//!   for a refusal).

use std::cell::UnsafeCell;
use std::panic::AssertUnwindSafe;
use std::sync::OnceLock;

use napi_derive::napi;
use snowmint_lease::AnyGenerator;

use crate::fast::SCRATCH_LEN;
use crate::Layout;

/// Layouts registered for the C entry, never removed: a process decoding
/// more distinct layouts than this decodes the others through N-API.
const SLOTS: usize = 64;

static LAYOUTS: [OnceLock<snowmint::Layout>; SLOTS] = [const { OnceLock::new() }; SLOTS];

thread_local! {
    /// Each thread's scratch array (a Deno worker is a thread of its own).
    static SCRATCH: UnsafeCell<[f64; SCRATCH_LEN]> = const { UnsafeCell::new([0.0; SCRATCH_LEN]) };
    /// Each thread's ID slot, for `snowmint_node_next_id_slot`.
    static ID_SLOT: UnsafeCell<u64> = const { UnsafeCell::new(0) };
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

// ---- nextId on Bun and Deno ------------------------------------------------------------

/// Internal, for `main.js` on Bun and Deno: the address of `g`'s core generator, for
/// `snowmint_node_next_id`. The generator's own N-API `nextId` holds it (an
/// `Arc`, freed when that function is garbage), and the function `main.js`
/// makes from this address keeps that `nextId` alive, so the address stays
/// valid for as long as it can be called.
#[napi(js_name = "__ffiGenerator", skip_typescript)]
pub fn ffi_generator(g: &crate::Generator) -> f64 {
    // Addresses fit in 53 bits on every platform the addon is built for
    // (x86-64 and arm64 use at most 57); `main.js` passes it back as a `ptr`
    // (Bun) or a bigint `u64` (Deno).
    g.address() as f64
}

/// What `snowmint_node_next_id` (Bun's entry) returns instead of an ID:
/// "issue it through N-API". No layout's ID has all 64 bits set but one of 64 bits whose
/// every field is full; for that one, the N-API call issues the next.
pub const NEXT_ID_REFUSED: u64 = u64::MAX;

/// The generator's next ID, or None when the core refused (or panicked):
/// the one core call of both C entries below.
///
/// # Safety
/// `g` is an address from [`ffi_generator`] whose N-API `nextId` is alive.
unsafe fn next_id(g: *const AnyGenerator) -> Option<u64> {
    if g.is_null() {
        return None;
    }
    // SAFETY: as the caller promised: a live generator, shared (`Sync`).
    let g = unsafe { &*g };
    std::panic::catch_unwind(AssertUnwindSafe(|| g.next_id()))
        .ok()
        .and_then(Result::ok)
        .map(|id| id.get())
}

/// The C entry of Bun's `nextId`: the generator's next ID, or
/// [`NEXT_ID_REFUSED`] when the core refused (or panicked), and `main.js`
/// then calls the N-API `nextId`, which throws the core's error (or issues,
/// if the refusal has passed: either is what one call of `nextId` may do).
///
/// # Safety
/// As for [`next_id`].
#[no_mangle]
pub unsafe extern "C" fn snowmint_node_next_id(g: *const AnyGenerator) -> u64 {
    // SAFETY: as the caller promised.
    unsafe { next_id(g) }.unwrap_or(NEXT_ID_REFUSED)
}

/// The C entry of Deno's `nextId`: writes the generator's next ID into this
/// thread's ID slot ([`snowmint_node_id_slot`]) and returns 0, or returns 1
/// when the core refused (or panicked). No sentinel: every ID, 2^64-1 too,
/// comes back through the slot.
///
/// # Safety
/// As for [`next_id`].
#[no_mangle]
pub unsafe extern "C" fn snowmint_node_next_id_slot(g: *const AnyGenerator) -> i32 {
    // SAFETY: as the caller promised.
    let Some(id) = (unsafe { next_id(g) }) else {
        return 1;
    };
    ID_SLOT.with(|slot| {
        // SAFETY: only this function writes the slot, on this thread, and
        // JavaScript reads it only between calls.
        unsafe { *slot.get() = id };
    });
    0
}

/// This thread's ID slot (for as long as the thread lives).
#[no_mangle]
pub extern "C" fn snowmint_node_id_slot() -> *mut u64 {
    ID_SLOT.with(UnsafeCell::get)
}
