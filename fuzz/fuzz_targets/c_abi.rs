//! The C ABI of bindings-c (`snowmint-c`), called as a C program would, with
//! random arguments: NULL pointers, NUL-terminated strings of arbitrary bytes
//! (bad UTF-8 included; never a string without its NUL, which the contract
//! makes undefined behaviour), output buffers really of the lengths passed,
//! random layouts, options, IDs and times.
//!
//! Properties: every status is one of the header's values and never `panic`;
//! a status agrees with what the core says for the same input (same code);
//! outputs are written only on success (every output is prefilled and
//! checked); text outputs are NUL-terminated, within the buffer and equal to
//! the core's text. Every handle created is freed.
//!
//! This file holds the operations and the loop that runs them; beside it,
//! `c_abi/` holds the arguments (`args`), the shared checks (`check`), the
//! layout readers (`inspect`) and generator creation (`generator`).
#![no_main]

use std::ffi::{c_char, c_int, CStr};
use std::ptr::{null, null_mut};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use snowmint::{Format, Id, Iso8601, Layout};
use snowmint_c::*;

#[path = "c_abi/args.rs"]
mod args;
#[path = "c_abi/check.rs"]
mod check;
#[path = "c_abi/generator.rs"]
mod generator;
#[path = "c_abi/inspect.rs"]
mod inspect;

use args::{CText, NodesArgs, NodesIn, OptionsIn, StrIn};
use check::{
    check_text, code, known, null_if, one_of, str_problem, text_call, want, FILL, SENTINEL_U64,
    SENTINEL_USIZE,
};
use generator::new_generator;
use inspect::inspect;

#[derive(Arbitrary, Debug)]
enum Op {
    Parse {
        text: Vec<u8>,
        cut: u16,
        null_text: bool,
        null_out: bool,
        json: bool,
    },
    Preset {
        name: StrIn,
        null_out: bool,
    },
    PresetByIndex(u8),
    FreeLayout(u8),
    Inspect {
        layout: u8,
        index: u16,
        name: StrIn,
        buf_len: u16,
        null_out: bool,
        now: u64,
        id: u64,
    },
    Compose {
        layout: u8,
        time: u64,
        seq: u64,
        nodes: NodesIn,
        null_out: bool,
    },
    Bounds {
        layout: u8,
        time: u64,
        null_min: bool,
        null_max: bool,
    },
    FormatFromName {
        name: StrIn,
        null_out: bool,
    },
    FormatId {
        id: u64,
        format: u32,
        buf_len: u8,
        null_buf: bool,
        null_written: bool,
    },
    ParseId {
        text: Vec<u8>,
        format: u32,
        null_text: bool,
        null_out: bool,
    },
    Iso {
        ms: u64,
        buf_len: u8,
        null_buf: bool,
        null_written: bool,
    },
    NewGenerator {
        layout: u8,
        nodes: NodesIn,
        options: Option<OptionsIn>,
        pure: bool,
        null_out: bool,
    },
    FreeGenerator(u8),
    FreePure(u8),
    TryNext {
        generator: u8,
        null_out: bool,
    },
    Next {
        generator: u8,
        n: u8,
        null_buf: bool,
    },
    Shares(u8, u8),
    PureNext {
        generator: u8,
        now: u64,
        null_out: bool,
    },
    Status(i32),
}

/// A sync generator and what the target knows about it.
struct Sync {
    handle: *const snowmint_generator,
    /// A blocking call cannot wait long once `try_next_id` has given an ID:
    /// time unit 1 ms, a wide sequence, a clock policy that waits at most 10
    /// units.
    quick: bool,
}

#[derive(Default)]
struct State {
    layouts: Vec<(*const snowmint_layout, Layout)>,
    generators: Vec<Sync>,
    pures: Vec<*mut snowmint_pure_generator>,
}

/// A handle from a list by index, or NULL when the index is past it.
fn pick<T: Copy>(v: &[T], i: u8, null: T) -> T {
    if v.is_empty() || i as usize >= 2 * v.len() {
        null
    } else {
        v[i as usize % v.len()]
    }
}

fn run(ops: &[Op], st: &mut State) {
    for op in ops.iter().take(48) {
        match op {
            Op::Parse {
                text,
                cut,
                null_text,
                null_out,
                json,
            } => {
                let len = (*cut as usize).min(text.len());
                let tp: *const c_char = if *null_text {
                    null()
                } else {
                    text.as_ptr().cast()
                };
                let sentinel = std::ptr::dangling::<snowmint_layout>();
                let mut out = sentinel;
                let op: *mut *const snowmint_layout = if *null_out { null_mut() } else { &mut out };
                // SAFETY: `text` has `len` readable bytes; `out` is NULL or valid.
                let s = unsafe {
                    if *json {
                        snowmint_layout_from_json(tp, len, op)
                    } else {
                        snowmint_layout_parse(tp, len, op)
                    }
                };
                let c = code(s);
                let t = (!*null_text).then(|| std::str::from_utf8(&text[..len]).map_err(|_| ()));
                let expect = if one_of(c, &[null_if(*null_out), str_problem(t)]) {
                    Err(c)
                } else {
                    let t = t.unwrap().unwrap();
                    let r = if *json {
                        Layout::from_json(t)
                    } else {
                        Layout::parse(t)
                    };
                    r.map_err(|e| e.code())
                };
                match expect {
                    Ok(l) => {
                        assert_eq!(c, "ok");
                        assert!(!out.is_null() && out != sentinel);
                        st.layouts.push((out, l));
                    }
                    Err(w) => {
                        assert_eq!(c, w);
                        assert_eq!(out, sentinel, "out set on failure");
                    }
                }
            }
            Op::Preset { name, null_out } => {
                let t = CText::new(name);
                let sentinel = std::ptr::dangling::<snowmint_layout>();
                let mut out = sentinel;
                let op: *mut *const snowmint_layout = if *null_out { null_mut() } else { &mut out };
                // SAFETY: NULL or a NUL-terminated string; `out` NULL or valid.
                let c = code(unsafe { snowmint_layout_preset(t.ptr(), op) });
                if !one_of(c, &[null_if(*null_out), str_problem(t.text())]) {
                    assert_eq!(c, want(&Layout::preset(t.text().unwrap().unwrap())));
                }
                if c == "ok" {
                    let l = Layout::preset(t.text().unwrap().unwrap()).unwrap();
                    st.layouts.push((out, l));
                } else {
                    assert_eq!(out, sentinel);
                }
            }
            Op::PresetByIndex(i) => {
                let n = snowmint_preset_count();
                assert_eq!(n, Layout::PRESETS.len());
                let p = snowmint_preset_name(*i as usize);
                if (*i as usize) < n {
                    // SAFETY: a static NUL-terminated string.
                    let name = unsafe { CStr::from_ptr(p) }.to_str().unwrap();
                    assert_eq!(name, Layout::PRESETS[*i as usize]);
                    let mut out = null();
                    // SAFETY: valid pointers.
                    assert_eq!(code(unsafe { snowmint_layout_preset(p, &mut out) }), "ok");
                    // SAFETY: a live layout.
                    let back = unsafe { snowmint_layout_preset_name(out) };
                    assert_eq!(back, p, "preset_name is not the static name");
                    st.layouts.push((out, Layout::preset(name).unwrap()));
                } else {
                    assert!(p.is_null());
                }
            }
            Op::FreeLayout(i) => {
                if !st.layouts.is_empty() {
                    let (p, _) = st.layouts.remove(*i as usize % st.layouts.len());
                    // SAFETY: a live layout, freed once.
                    unsafe { snowmint_layout_free(p) };
                }
            }
            Op::Inspect {
                layout,
                index,
                name,
                buf_len,
                null_out,
                now,
                id,
            } => {
                let (lp, l) = pick(
                    &st.layouts,
                    *layout,
                    (null(), Layout::preset("twitter").unwrap()),
                );
                inspect(
                    lp,
                    &l,
                    *index as usize,
                    name,
                    *buf_len as usize,
                    *null_out,
                    *now,
                    *id,
                );
            }
            Op::Compose {
                layout,
                time,
                seq,
                nodes,
                null_out,
            } => {
                let (lp, l) = pick(
                    &st.layouts,
                    *layout,
                    (null(), Layout::preset("twitter").unwrap()),
                );
                let a = NodesArgs::new(nodes);
                let mut out = SENTINEL_U64;
                let op: *mut u64 = if *null_out { null_mut() } else { &mut out };
                // SAFETY: arrays of `count` elements (or NULL); valid pointers.
                let s = unsafe {
                    if a.by_name {
                        snowmint_compose_by_name(
                            lp,
                            *time,
                            *seq,
                            a.names(),
                            a.values(),
                            a.count,
                            op,
                        )
                    } else {
                        snowmint_compose(lp, *time, *seq, a.values(), a.count, op)
                    }
                };
                let c = code(s);
                if lp.is_null() || *null_out {
                    assert_eq!(c, "null_argument");
                } else {
                    match a.expect(&l) {
                        Err(w) => assert_eq!(c, w),
                        Ok(n) => {
                            let r = l.compose(*time, *seq, &n);
                            assert_eq!(c, want(&r));
                            if let Ok(id) = r {
                                assert_eq!(out, id);
                            }
                        }
                    }
                }
                if c != "ok" {
                    assert_eq!(out, SENTINEL_U64);
                }
            }
            Op::Bounds {
                layout,
                time,
                null_min,
                null_max,
            } => {
                let (lp, l) = pick(
                    &st.layouts,
                    *layout,
                    (null(), Layout::preset("twitter").unwrap()),
                );
                let (mut lo, mut hi) = (SENTINEL_U64, SENTINEL_U64);
                let lop: *mut u64 = if *null_min { null_mut() } else { &mut lo };
                let hip: *mut u64 = if *null_max { null_mut() } else { &mut hi };
                // SAFETY: NULL or valid pointers.
                let c = code(unsafe { snowmint_id_bounds(lp, *time, lop, hip) });
                if lp.is_null() || *null_min || *null_max {
                    assert_eq!(c, "null_argument");
                } else {
                    let r = l.id_bounds(*time);
                    assert_eq!(c, want(&r));
                    if let Ok(b) = r {
                        assert_eq!((lo, hi), (b.0.get(), b.1.get()));
                    }
                }
                if c != "ok" {
                    assert_eq!((lo, hi), (SENTINEL_U64, SENTINEL_U64));
                }
            }
            Op::FormatFromName { name, null_out } => {
                let t = CText::new(name);
                let mut out = snowmint_format::Base62;
                let op: *mut snowmint_format = if *null_out { null_mut() } else { &mut out };
                // SAFETY: NULL or a NUL-terminated string; `out` NULL or valid.
                let c = code(unsafe { snowmint_format_from_name(t.ptr(), op) });
                if !one_of(c, &[null_if(*null_out), str_problem(t.text())]) {
                    assert_eq!(c, want(&Format::from_name(t.text().unwrap().unwrap())));
                }
                if c == "ok" {
                    let f = Format::from_name(t.text().unwrap().unwrap()).unwrap();
                    assert_eq!(
                        out as usize,
                        Format::ALL.iter().position(|x| *x == f).unwrap()
                    );
                } else {
                    assert_eq!(out, snowmint_format::Base62);
                }
            }
            Op::FormatId {
                id,
                format,
                buf_len,
                null_buf,
                null_written,
            } => {
                let f = Format::ALL.get(*format as usize % 4).copied();
                let fmt = if *format >= 4 { *format } else { *format % 4 };
                let mut tmp = [0u8; snowmint::MAX_STR_LEN];
                let expect = f.map_or(String::new(), |f| {
                    Id::new(*id).encode(f, &mut tmp).to_owned()
                });
                let mut buf = vec![FILL; *buf_len as usize];
                let mut written = SENTINEL_USIZE;
                let bp = if *null_buf {
                    null_mut()
                } else {
                    buf.as_mut_ptr().cast()
                };
                let wp: *mut usize = if *null_written {
                    null_mut()
                } else {
                    &mut written
                };
                // SAFETY: `buf` has `buf_len` writable bytes; NULL or valid pointers.
                let s = unsafe { snowmint_format_id(*id, fmt, bp, buf.len(), wp) };
                let c = code(s);
                let bad_format = (fmt as usize >= Format::ALL.len()).then_some("invalid_id");
                if one_of(c, &[bad_format, null_if(*null_buf || *null_written)]) {
                } else if expect.len() + 1 > buf.len() {
                    assert_eq!(c, "buffer_too_small");
                } else {
                    assert_eq!(c, "ok");
                }
                check_text(s, &buf, written, &expect);
            }
            Op::ParseId {
                text,
                format,
                null_text,
                null_out,
            } => {
                let fmt = if *format >= 4 { *format } else { *format % 4 };
                let tp: *const c_char = if *null_text {
                    null()
                } else {
                    text.as_ptr().cast()
                };
                let mut out = SENTINEL_U64;
                let op: *mut u64 = if *null_out { null_mut() } else { &mut out };
                // SAFETY: `text` has `text.len()` readable bytes; `out` NULL or valid.
                let c = code(unsafe { snowmint_parse_id(tp, text.len(), fmt, op) });
                let t = (!*null_text).then(|| std::str::from_utf8(text).map_err(|_| ()));
                let bad_format = (fmt as usize >= Format::ALL.len()).then_some("invalid_id");
                if !one_of(c, &[null_if(*null_out), str_problem(t), bad_format]) {
                    let r = Id::parse(t.unwrap().unwrap(), Format::ALL[fmt as usize]);
                    assert_eq!(c, want(&r));
                    if let Ok(id) = r {
                        assert_eq!(out, id.get());
                    }
                }
                if c != "ok" {
                    assert_eq!(out, SENTINEL_U64);
                }
            }
            Op::Iso {
                ms,
                buf_len,
                null_buf,
                null_written,
            } => {
                let expect = Iso8601(*ms).to_string();
                text_call(
                    *buf_len as usize,
                    *null_buf,
                    *null_written,
                    &expect,
                    |b, n, w| {
                        // SAFETY: `b` has `n` writable bytes or is NULL; `w` NULL or valid.
                        unsafe { snowmint_iso8601(*ms, b, n, w) }
                    },
                );
            }
            Op::NewGenerator {
                layout,
                nodes,
                options,
                pure,
                null_out,
            } => {
                let (lp, l) = pick(
                    &st.layouts,
                    *layout,
                    (null(), Layout::preset("twitter").unwrap()),
                );
                new_generator(st, lp, &l, nodes, options.as_ref(), *pure, *null_out);
            }
            Op::FreeGenerator(i) => {
                if !st.generators.is_empty() {
                    let g = st.generators.remove(*i as usize % st.generators.len());
                    // SAFETY: a live generator, freed once.
                    unsafe { snowmint_generator_free(g.handle) };
                }
            }
            Op::FreePure(i) => {
                if !st.pures.is_empty() {
                    let g = st.pures.remove(*i as usize % st.pures.len());
                    // SAFETY: a live generator, freed once.
                    unsafe { snowmint_pure_generator_free(g) };
                }
            }
            Op::TryNext {
                generator,
                null_out,
            } => {
                let i =
                    if st.generators.is_empty() || *generator as usize >= 2 * st.generators.len() {
                        None
                    } else {
                        Some(*generator as usize % st.generators.len())
                    };
                let gp = i.map_or(null(), |i| st.generators[i].handle);
                let mut out = snowmint_next {
                    kind: snowmint_next_kind::RetryAt,
                    value: SENTINEL_U64,
                };
                let op: *mut snowmint_next = if *null_out { null_mut() } else { &mut out };
                // SAFETY: NULL or valid pointers.
                let c = code(unsafe { snowmint_generator_try_next_id(gp, op) });
                if gp.is_null() || *null_out {
                    assert_eq!(c, "null_argument");
                }
                if c == "ok" {
                    if out.kind == snowmint_next_kind::RetryAt {
                        assert_ne!(out.value, SENTINEL_U64);
                    }
                } else {
                    assert_eq!(
                        (out.kind, out.value),
                        (snowmint_next_kind::RetryAt, SENTINEL_U64)
                    );
                }
            }
            Op::Next {
                generator,
                n,
                null_buf,
            } => {
                let i =
                    if st.generators.is_empty() || *generator as usize >= 2 * st.generators.len() {
                        None
                    } else {
                        Some(*generator as usize % st.generators.len())
                    };
                let gp = i.map_or(null(), |i| st.generators[i].handle);
                // Blocking calls only right after `try_next_id` gave an ID:
                // they then wait a few ms at most.
                let blocking_ok = i.is_some_and(|i| {
                    let mut next = snowmint_next {
                        kind: snowmint_next_kind::RetryAt,
                        value: 0,
                    };
                    // SAFETY: a live generator, a valid output.
                    let c = code(unsafe { snowmint_generator_try_next_id(gp, &mut next) });
                    st.generators[i].quick && c == "ok" && next.kind == snowmint_next_kind::Id
                });
                // Batch sizes that are refused before any ID is made.
                let mut one = SENTINEL_U64;
                let big = [0u64, (1 << 32) + 1, u64::MAX, 1 << 32];
                let count = big[*n as usize % big.len()];
                if count != 1 << 32 || *null_buf {
                    // SAFETY: a NULL buffer (never read for these counts) or none needed.
                    let c = code(unsafe {
                        snowmint_generator_next_ids(gp, null_mut(), count as usize)
                    });
                    let expect = if gp.is_null() {
                        "null_argument"
                    } else if count == 0 {
                        "ok"
                    } else if count > 1 << 32 {
                        "invalid_option"
                    } else {
                        "null_argument"
                    };
                    assert_eq!(c, expect, "next_ids(NULL, {count})");
                }
                if blocking_ok {
                    let mut buf = vec![SENTINEL_U64; 1 + *n as usize % 4];
                    // SAFETY: a live generator; `buf` has `buf.len()` elements.
                    let c = code(unsafe {
                        snowmint_generator_next_ids(gp, buf.as_mut_ptr(), buf.len())
                    });
                    if c == "ok" {
                        assert!(
                            buf.windows(2).all(|w| w[0] < w[1]),
                            "{buf:?} not increasing"
                        );
                    }
                    // SAFETY: valid pointers.
                    let c = code(unsafe { snowmint_generator_next_id(gp, &mut one) });
                    if c == "ok" && buf[buf.len() - 1] != SENTINEL_U64 {
                        assert!(one > buf[buf.len() - 1]);
                    }
                } else {
                    // SAFETY: NULL output.
                    assert_eq!(
                        code(unsafe { snowmint_generator_next_id(gp, null_mut()) }),
                        "null_argument"
                    );
                }
            }
            Op::Shares(a, b) => {
                let ga = pick(
                    &st.generators.iter().map(|g| g.handle).collect::<Vec<_>>(),
                    *a,
                    null(),
                );
                let gb = pick(
                    &st.generators.iter().map(|g| g.handle).collect::<Vec<_>>(),
                    *b,
                    null(),
                );
                // SAFETY: NULL or live generators.
                let shares = unsafe { snowmint_generator_shares_state(ga, gb) };
                if ga.is_null() || gb.is_null() {
                    assert!(!shares);
                } else if ga == gb {
                    assert!(shares);
                }
            }
            Op::PureNext {
                generator,
                now,
                null_out,
            } => {
                let gp = pick(&st.pures, *generator, null_mut());
                let mut out = snowmint_next {
                    kind: snowmint_next_kind::RetryAt,
                    value: SENTINEL_U64,
                };
                let op: *mut snowmint_next = if *null_out { null_mut() } else { &mut out };
                // SAFETY: NULL or valid pointers; the generator is not shared.
                let c = code(unsafe { snowmint_pure_generator_next(gp, *now, op) });
                if gp.is_null() || *null_out {
                    assert_eq!(c, "null_argument");
                }
                if c != "ok" {
                    assert_eq!(
                        (out.kind, out.value),
                        (snowmint_next_kind::RetryAt, SENTINEL_U64)
                    );
                }
            }
            Op::Status(n) => {
                let n = *n as c_int;
                let (c, s) = (snowmint_status_code(n), snowmint_status_str(n));
                assert!(!c.is_null() && !s.is_null());
                // SAFETY: static NUL-terminated strings.
                let c = unsafe { CStr::from_ptr(c) }.to_str().unwrap();
                if known(n) {
                    assert_ne!(c, "unknown_status");
                    if (1..=snowmint::Error::ALL_CODES.len() as c_int).contains(&n) {
                        assert_eq!(c, snowmint::Error::ALL_CODES[n as usize - 1]);
                    }
                }
            }
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    ops: Vec<Op>,
}

fuzz_target!(|input: Input| {
    let mut st = State::default();
    run(&input.ops, &mut st);
    // Free everything the run created (NULL too: a no-op).
    // SAFETY: live handles, each freed once.
    unsafe {
        for (p, _) in st.layouts.drain(..) {
            snowmint_layout_free(p);
        }
        for g in st.generators.drain(..) {
            snowmint_generator_free(g.handle);
        }
        for g in st.pures.drain(..) {
            snowmint_pure_generator_free(g);
        }
        snowmint_layout_free(null());
        snowmint_generator_free(null());
        snowmint_pure_generator_free(null_mut());
    }
    assert!(!snowmint_version().is_null());
});
