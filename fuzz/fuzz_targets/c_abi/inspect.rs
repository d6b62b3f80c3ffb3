//! The calls that read a layout: its fields, bounds, names and checks.

use std::ffi::{c_char, CStr};
use std::ptr::{null, null_mut};

use snowmint::Layout;
use snowmint_c::*;

use crate::args::{CText, StrIn};
use crate::check::{
    check_text, code, null_if, one_of, str_problem, text_call, want, FILL, SENTINEL_U64,
    SENTINEL_USIZE,
};

#[allow(clippy::too_many_arguments)]
pub(crate) fn inspect(
    lp: *const snowmint_layout,
    l: &Layout,
    index: usize,
    name: &StrIn,
    buf_len: usize,
    null_out: bool,
    now: u64,
    id: u64,
) {
    // SAFETY (whole function): `lp` is NULL or a live layout; every other
    // pointer is NULL or valid, and buffers have the lengths passed.
    unsafe {
        let live = !lp.is_null();
        let or0 = |v: u64| if live { v } else { 0 };
        assert_eq!(snowmint_layout_epoch_ms(lp), or0(l.epoch_ms()));
        assert_eq!(snowmint_layout_time_unit_ms(lp), or0(l.time_unit_ms()));
        assert_eq!(
            u64::from(snowmint_layout_total_bits(lp)),
            or0(u64::from(l.total_bits()))
        );
        assert_eq!(snowmint_layout_max_id(lp), or0(l.max_id().get()));
        assert_eq!(snowmint_layout_time_end_ms(lp), or0(l.time_end_ms()));
        assert_eq!(snowmint_layout_i64_end_ms(lp), or0(l.i64_end_ms()));
        assert_eq!(snowmint_layout_js_safe_end_ms(lp), or0(l.js_safe_end_ms()));
        assert_eq!(
            snowmint_layout_field_count(lp) as u64,
            or0(l.fields().len() as u64)
        );
        assert_eq!(
            snowmint_layout_node_count(lp) as u64,
            or0(l.node_count() as u64)
        );
        assert_eq!(snowmint_layout_equal(lp, lp), live);
        assert!(!snowmint_layout_equal(lp, null()));
        assert_eq!(
            snowmint_is_plausible(lp, id, now),
            live && l.is_plausible(id, now)
        );
        let pn = snowmint_layout_preset_name(lp);
        match (live, l.preset_name()) {
            (true, Some(n)) => assert_eq!(CStr::from_ptr(pn).to_str().unwrap(), n),
            _ => assert!(pn.is_null()),
        }

        // A field by index.
        let mut f = snowmint_field {
            name: null(),
            bits: 99,
            shift: 99,
            kind: snowmint_field_kind::Node,
        };
        let fp: *mut snowmint_field = if null_out { null_mut() } else { &mut f };
        let c = code(snowmint_layout_field(lp, index, fp));
        if !live || null_out {
            assert_eq!(c, "null_argument");
        } else if let Some(want) = l.fields().get(index) {
            assert_eq!(c, "ok");
            assert_eq!(CStr::from_ptr(f.name).to_str().unwrap(), want.name());
            assert_eq!((f.bits, f.shift), (want.bits(), want.shift()));
        } else {
            assert_eq!(c, "index_out_of_range");
        }
        if c != "ok" {
            assert!(f.name.is_null() && f.bits == 99 && f.shift == 99);
        }

        // A node field's name by index.
        let sentinel = 8usize as *const c_char;
        let mut np = sentinel;
        let npp: *mut *const c_char = if null_out { null_mut() } else { &mut np };
        let c = code(snowmint_layout_node_name(lp, index, npp));
        if !live || null_out {
            assert_eq!(c, "null_argument");
        } else if let Some(want) = l.nodes().nth(index) {
            assert_eq!(c, "ok");
            assert_eq!(CStr::from_ptr(np).to_str().unwrap(), want.name());
        } else {
            assert_eq!(c, "index_out_of_range");
        }
        if c != "ok" {
            assert_eq!(np, sentinel);
        }

        // A node field's index by name.
        let t = CText::new(name);
        let mut ni = SENTINEL_USIZE;
        let nip: *mut usize = if null_out { null_mut() } else { &mut ni };
        let c = code(snowmint_layout_node_index(lp, t.ptr(), nip));
        if !one_of(c, &[null_if(!live || null_out), str_problem(t.text())]) {
            match l.node_index(t.text().unwrap().unwrap()) {
                Some(i) => assert_eq!((c, ni), ("ok", i)),
                None => assert_eq!(c, "unknown_field"),
            }
        }
        if c != "ok" {
            assert_eq!(ni, SENTINEL_USIZE);
        }

        // The JSON descriptor into a buffer of `buf_len` bytes.
        if live {
            let json = l.to_json();
            text_call(buf_len % 600, false, null_out, &json, |b, n, w| {
                snowmint_layout_to_json(lp, b, n, w)
            });
        } else {
            let mut b = [FILL; 4];
            let mut w = SENTINEL_USIZE;
            let c = code(snowmint_layout_to_json(
                lp,
                b.as_mut_ptr().cast(),
                4,
                &mut w,
            ));
            assert_eq!(c, "null_argument");
            check_text(snowmint_status::NullArgument, &b, w, "");
        }

        // Decoding, and the epoch check.
        let mut parts = snowmint_parts {
            id: SENTINEL_U64,
            ..Default::default()
        };
        let pp: *mut snowmint_parts = if null_out { null_mut() } else { &mut parts };
        let c = code(snowmint_decode(lp, id, pp));
        if !live || null_out {
            assert_eq!(c, "null_argument");
        } else {
            let r = l.decompose(id);
            assert_eq!(c, want(&r));
            if let Ok(p) = r {
                assert_eq!(parts.id, id);
                assert_eq!(
                    (parts.tick, parts.timestamp_ms, parts.sequence),
                    (p.tick(), p.timestamp_ms(), p.sequence())
                );
                assert_eq!(&parts.nodes[..parts.node_count], p.nodes());
            }
        }
        if c != "ok" {
            assert_eq!(parts.id, SENTINEL_U64);
        }
        let c = code(snowmint_layout_check_epoch(lp, now));
        if live {
            assert_eq!(c, want(&l.check_epoch(now)));
        } else {
            assert_eq!(c, "null_argument");
        }
    }
}
