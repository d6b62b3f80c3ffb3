//! The Node package's decoding fast path: the core's [`Layout::decompose_f64`]
//! compiled to WebAssembly (`decoder.wasm`, built by `build-decoder.sh`), which
//! `index.js` calls for `decode(bigint)`.
//!
//! Why: an N-API call costs about 25 ns on Node 20 here however little it
//! does, a call from JavaScript into WebAssembly about 7 ns, and a decode is
//! a few shifts. So `decode` runs the same core code, compiled for the
//! engine instead of the machine; bench/RESULTS.md (Node section) has the
//! figures. The native addon still does everything else, and every decode
//! that is not the plain case (a string or number ID, an ID the layout
//! cannot hold, a layout this module did not take): `index.js` then calls
//! the native decoder, which gives the result or throws the binding's error.
//! Where WebAssembly is missing (`node --jitless`), every decode is native.
//!
//! The interface is numbers only (no wasm-bindgen): `index.js` writes a
//! layout's canonical JSON into [`json_buffer`], [`layout`] parses it with the
//! core and returns a handle, and [`decode`] writes
//! `[timestampMs, sequence, ...nodes]` into [`out`] and returns 0, or 1 when
//! the core refuses the ID. One module instance per JavaScript realm (each
//! worker thread loads its own), used by one thread.
#![cfg_attr(target_arch = "wasm32", no_std)]

use core::mem::MaybeUninit;
use core::ptr::addr_of_mut;

use snowmint::{Layout, MAX_NODES};

/// How many distinct layouts one instance holds. `index.js` asks once per
/// distinct layout (its cache has room for 256) and equal layouts share a
/// slot; past this, [`layout`] says no and those layouts decode natively.
pub const MAX_LAYOUTS: usize = 256;

/// The room for one layout's JSON (a canonical layout is well under 1 KB).
pub const JSON_CAPACITY: usize = 4096;

struct State {
    /// What [`decode`] writes.
    out: [f64; 2 + MAX_NODES],
    /// What `index.js` writes before calling [`layout`].
    json: [u8; JSON_CAPACITY],
    /// The layouts taken so far: the first `used` slots are initialised.
    /// (Not `Option<Layout>`: its `None` is not all zero bytes, so the
    /// whole table would be written into the module's data.)
    layouts: [MaybeUninit<Layout>; MAX_LAYOUTS],
    used: usize,
}

static mut STATE: State = State {
    out: [0.0; 2 + MAX_NODES],
    json: [0; JSON_CAPACITY],
    layouts: [const { MaybeUninit::uninit() }; MAX_LAYOUTS],
    used: 0,
};

/// The module's state. A WebAssembly instance without shared memory is
/// entered by one thread, and each exported function below takes this once
/// and is done with it when it returns, so no two references to it are ever
/// alive at once. (On the host, the one unit test is the only user.)
fn state() -> &'static mut State {
    // SAFETY: as above, this is the only live reference.
    unsafe { &mut *addr_of_mut!(STATE) }
}

/// The layouts taken so far: the first `used` of `layouts`.
fn taken(layouts: &[MaybeUninit<Layout>], used: usize) -> &[Layout] {
    // SAFETY: the first `used` slots were written by `layout` (and never
    // after); `MaybeUninit<Layout>` has `Layout`'s layout.
    unsafe { core::slice::from_raw_parts(layouts.as_ptr().cast::<Layout>(), used) }
}

/// Where [`decode`] writes: `2 + MAX_NODES` `f64` values.
#[no_mangle]
pub extern "C" fn out() -> *const f64 {
    state().out.as_ptr()
}

/// Where `index.js` writes a layout's JSON (UTF-8) before calling [`layout`].
#[no_mangle]
pub extern "C" fn json_buffer() -> *mut u8 {
    state().json.as_mut_ptr()
}

/// The size of [`json_buffer`].
#[no_mangle]
pub extern "C" fn json_capacity() -> u32 {
    JSON_CAPACITY as u32
}

/// Parses the first `len` bytes of [`json_buffer`] as a layout descriptor (the
/// core's `Layout::from_json`) and returns its handle (equal layouts, one
/// handle), or -1 when the text is not a valid layout or the table is full.
#[no_mangle]
pub extern "C" fn layout(len: u32) -> i32 {
    let st = state();
    let Some(bytes) = st.json.get(..len as usize) else {
        return -1;
    };
    let Ok(text) = core::str::from_utf8(bytes) else {
        return -1;
    };
    let Ok(parsed) = Layout::from_json(text) else {
        return -1;
    };
    if let Some(h) = taken(&st.layouts, st.used)
        .iter()
        .position(|l| *l == parsed)
    {
        return h as i32;
    }
    if st.used == MAX_LAYOUTS {
        return -1;
    }
    st.layouts[st.used].write(parsed);
    st.used += 1;
    (st.used - 1) as i32
}

/// Decodes `id` (the JavaScript bigint, passed as `i64`: its 64 bits) under
/// layout `h` into [`out`]: returns 0, or 1 when the core refuses it (bits
/// above the layout's width) or `h` is not a handle.
#[no_mangle]
pub extern "C" fn decode(h: u32, id: u64) -> u32 {
    let State {
        out, layouts, used, ..
    } = state();
    let Some(l) = taken(layouts, *used).get(h as usize) else {
        return 1;
    };
    match l.decompose_f64(id, out) {
        Ok(_) => 0,
        Err(_) => 1,
    }
}

#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // Nothing here can panic (the output has room for every layout); if it
    // did, the call traps and JavaScript sees a RuntimeError.
    core::arch::wasm32::unreachable()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(json: &str) -> i32 {
        state().json[..json.len()].copy_from_slice(json.as_bytes());
        layout(json.len() as u32)
    }

    // One test: the statics are shared by the whole test binary.
    #[test]
    fn layouts_and_decoding() {
        const DISCORD: &str = r#"{"epoch_ms": 1420070400000, "fields": [["timestamp", 42], ["worker", 5], ["process", 5], ["sequence", 12]]}"#;
        let h = load(DISCORD);
        assert!(h >= 0);
        // The same layout spelt otherwise: the same handle.
        assert_eq!(load(&DISCORD.replace(' ', "")), h);
        assert_eq!(decode(h as u32, 175928847299117063), 0);
        assert_eq!(state().out[..4], [1462015105796.0, 7.0, 1.0, 0.0]);
        let twitter = load(
            r#"{"epoch_ms": 1288834974657, "fields": [["timestamp", 41], ["datacenter", 5], ["worker", 5], ["sequence", 12]]}"#,
        );
        assert!(twitter >= 0 && twitter != h);
        assert_eq!(decode(twitter as u32, 1 << 63), 1); // 64 bits: too wide for 63
        assert_eq!(decode(99, 1), 1); // no such handle
        assert_eq!(load("{not json"), -1);
        assert_eq!(layout(JSON_CAPACITY as u32 + 1), -1);
    }
}
