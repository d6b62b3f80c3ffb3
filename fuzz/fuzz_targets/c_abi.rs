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
#![no_main]

use std::ffi::{c_char, c_int, CStr};
use std::ptr::{null, null_mut};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use snowmint::{Format, Id, Iso8601, Layout, Options};
use snowmint_c::*;

const FILL: u8 = 0xA5;
const SENTINEL_U64: u64 = 0xDEAD_BEEF_DEAD_BEEF;
const SENTINEL_USIZE: usize = 0x5EED_5EED;

/// Whether `n` is one of the header's status values (the C binding's own
/// table, so a status added there is known here too).
fn known(n: c_int) -> bool {
    all_statuses().iter().any(|&s| s as c_int == n)
}

fn code(s: snowmint_status) -> &'static str {
    let n = s as c_int;
    assert!(known(n), "unknown status {n}");
    assert_ne!(
        s,
        snowmint_status::Panic,
        "a panic was caught at the C boundary"
    );
    let p = snowmint_status_code(n);
    assert!(!p.is_null());
    assert!(!snowmint_status_str(n).is_null());
    // SAFETY: a static NUL-terminated string from the library.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap()
}

/// The status the core's result maps to, as a code.
fn want<T>(r: &Result<T, snowmint::Error>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

/// When a call has several bad arguments, which one it reports first is
/// not part of the contract: the status must be one of theirs. Returns
/// whether any argument was bad.
fn one_of(c: &str, problems: &[Option<&'static str>]) -> bool {
    let p: Vec<&str> = problems.iter().flatten().copied().collect();
    if !p.is_empty() {
        assert!(p.contains(&c), "status {c}, expected one of {p:?}");
    }
    !p.is_empty()
}

/// The status a string argument gives before its text is used.
fn str_problem(t: Option<Result<&str, ()>>) -> Option<&'static str> {
    match t {
        None => Some("null_argument"),
        Some(Err(())) => Some("invalid_utf8"),
        Some(Ok(_)) => None,
    }
}

fn null_if(b: bool) -> Option<&'static str> {
    b.then_some("null_argument")
}

/// A string argument: NULL, arbitrary bytes (interior NULs cut it short, as
/// in C), or one of the texts the library knows.
#[derive(Arbitrary, Debug)]
enum StrIn {
    Null,
    Bytes(Vec<u8>),
    Known(u8, u16),
}

const WORDS: [&str; 22] = [
    "fail",
    "wait",
    "borrow",
    "zero",
    "random",
    "cycle",
    "twitter",
    "discord",
    "mastodon",
    "sonyflake",
    "baidu",
    "tsid",
    "decimal",
    "base32",
    "base62",
    "datacenter",
    "worker",
    "machine",
    "shard",
    "node",
    "sequence",
    "timestamp",
];

/// Owns the bytes of a C string (with its NUL) for as long as it is used.
struct CText(Option<Vec<u8>>);

impl CText {
    fn new(s: &StrIn) -> CText {
        let bytes = match s {
            StrIn::Null => return CText(None),
            StrIn::Bytes(b) => b.clone(),
            StrIn::Known(i, n) => {
                let w = WORDS[*i as usize % WORDS.len()];
                if i & 0x80 != 0 {
                    format!("{w}:{n}")
                } else {
                    w.to_owned()
                }
                .into_bytes()
            }
        };
        let mut b: Vec<u8> = bytes.into_iter().take_while(|&c| c != 0).collect();
        b.push(0);
        CText(Some(b))
    }
    fn ptr(&self) -> *const c_char {
        self.0.as_ref().map_or(null(), |b| b.as_ptr().cast())
    }
    /// What the library reads: NULL, not UTF-8, or a text.
    fn text(&self) -> Option<Result<&str, ()>> {
        self.0
            .as_ref()
            .map(|b| std::str::from_utf8(&b[..b.len() - 1]).map_err(|_| ()))
    }
}

#[derive(Arbitrary, Debug)]
struct OptionsIn {
    clock: StrIn,
    exhausted: StrIn,
    start: StrIn,
    seed: u64,
    has_resume_after: bool,
    resume_after: u64,
}

#[derive(Arbitrary, Debug)]
enum NodesIn {
    Values {
        values: Vec<u64>,
        null: bool,
    },
    Names {
        names: Vec<StrIn>,
        values: Vec<u64>,
        null_names: bool,
        null_values: bool,
    },
}

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

fn check_text(status: snowmint_status, buf: &[u8], written: usize, expect: &str) {
    if status == snowmint_status::Ok {
        assert_eq!(written, expect.len());
        assert!(written < buf.len());
        assert_eq!(&buf[..written], expect.as_bytes());
        assert_eq!(buf[written], 0);
        assert!(
            buf[written + 1..].iter().all(|&b| b == FILL),
            "wrote past the NUL"
        );
    } else {
        assert_eq!(written, SENTINEL_USIZE, "`written` set on failure");
        assert!(buf.iter().all(|&b| b == FILL), "buffer written on failure");
    }
}

/// Calls a text writer with a buffer of `len` bytes (or NULL) and checks it.
fn text_call(
    len: usize,
    null_buf: bool,
    null_written: bool,
    expect: &str,
    f: impl FnOnce(*mut c_char, usize, *mut usize) -> snowmint_status,
) {
    let mut buf = vec![FILL; len];
    let mut written = SENTINEL_USIZE;
    let bp = if null_buf {
        null_mut()
    } else {
        buf.as_mut_ptr().cast()
    };
    let wp = if null_written {
        null_mut()
    } else {
        &mut written as *mut usize
    };
    let s = f(bp, len, wp);
    let c = code(s);
    if null_buf || null_written {
        assert_eq!(c, "null_argument");
    } else if expect.len() + 1 > len {
        assert_eq!(c, "buffer_too_small");
    } else {
        assert_eq!(c, "ok");
    }
    check_text(s, &buf, written, expect);
}

struct NodesArgs {
    _names: Vec<CText>,
    name_ptrs: Vec<*const c_char>,
    values: Vec<u64>,
    by_name: bool,
    null_names: bool,
    null_values: bool,
    count: usize,
}

impl NodesArgs {
    fn new(n: &NodesIn) -> NodesArgs {
        match n {
            NodesIn::Values { values, null } => NodesArgs {
                _names: vec![],
                name_ptrs: vec![],
                values: values.iter().take(8).copied().collect(),
                by_name: false,
                null_names: false,
                null_values: *null,
                count: values.len().min(8),
            },
            NodesIn::Names {
                names,
                values,
                null_names,
                null_values,
            } => {
                let texts: Vec<CText> = names.iter().take(8).map(CText::new).collect();
                let ptrs = texts.iter().map(CText::ptr).collect();
                let count = texts.len().min(values.len());
                NodesArgs {
                    _names: texts,
                    name_ptrs: ptrs,
                    values: values.iter().take(count).copied().collect(),
                    by_name: true,
                    null_names: *null_names,
                    null_values: *null_values,
                    count,
                }
            }
        }
    }
    fn names(&self) -> *const *const c_char {
        if self.null_names {
            null()
        } else {
            self.name_ptrs.as_ptr()
        }
    }
    fn values(&self) -> *const u64 {
        if self.null_values {
            null()
        } else {
            self.values.as_ptr()
        }
    }
    /// What the core says about these node values for `l`, or the status
    /// the arguments give before the core is asked.
    fn expect(&self, l: &Layout) -> Result<snowmint::Nodes, &'static str> {
        if self.count > 0 && ((self.by_name && self.null_names) || self.null_values) {
            return Err("null_argument");
        }
        if !self.by_name {
            return l
                .nodes_from_values(&self.values[..self.count])
                .map_err(|e| e.code());
        }
        let mut pairs = vec![];
        for t in &self._names[..self.count] {
            match t.text() {
                None => return Err("null_argument"),
                Some(Err(())) => return Err("invalid_utf8"),
                Some(Ok(s)) => pairs.push(s),
            }
        }
        l.nodes_from_pairs(pairs.into_iter().zip(self.values.iter().copied()))
            .map_err(|e| e.code())
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

#[allow(clippy::too_many_arguments)]
fn inspect(
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

fn new_generator(
    st: &mut State,
    lp: *const snowmint_layout,
    l: &Layout,
    nodes: &NodesIn,
    options: Option<&OptionsIn>,
    pure: bool,
    null_out: bool,
) {
    let a = NodesArgs::new(nodes);
    let texts = options.map(|o| {
        [
            CText::new(&o.clock),
            CText::new(&o.exhausted),
            CText::new(&o.start),
        ]
    });
    let opts = options.map(|o| {
        let t = texts.as_ref().unwrap();
        snowmint_options {
            clock_backwards: t[0].ptr(),
            sequence_exhausted: t[1].ptr(),
            sequence_start: t[2].ptr(),
            seed: o.seed,
            has_resume_after: o.has_resume_after,
            resume_after: o.resume_after,
            // Leases are tested against real stores, not fuzzed here.
            lease: null(),
        }
    });
    let optp: *const snowmint_options = opts.as_ref().map_or(null(), |o| o as *const _);

    // What the core says about the options (NULL strings are the defaults).
    let expect_opts: Result<Options, &'static str> = match &texts {
        None => Ok(Options::default()),
        Some(t) => {
            fn read(c: &CText) -> Result<Option<&str>, &'static str> {
                match c.text() {
                    None => Ok(None),
                    Some(Err(())) => Err("invalid_utf8"),
                    Some(Ok(s)) => Ok(Some(s)),
                }
            }
            (|| {
                let (c, e, s) = (read(&t[0])?, read(&t[1])?, read(&t[2])?);
                let mut o = Options::from_policies(c, e, s).map_err(|e| e.code())?;
                let given = options.unwrap();
                o.seed = given.seed;
                o.resume_after = given
                    .has_resume_after
                    .then_some(snowmint::Id::new(given.resume_after));
                Ok(o)
            })()
        }
    };

    // SAFETY: arrays of `count` elements (or NULL), NUL-terminated strings
    // (or NULL), valid (or NULL) pointers.
    unsafe {
        if pure {
            let sentinel = std::ptr::dangling_mut::<snowmint_pure_generator>();
            let mut out = sentinel;
            let op: *mut *mut snowmint_pure_generator =
                if null_out { null_mut() } else { &mut out };
            let s = if a.by_name {
                snowmint_pure_generator_new_by_name(lp, a.names(), a.values(), a.count, optp, op)
            } else {
                snowmint_pure_generator_new(lp, a.values(), a.count, optp, op)
            };
            let c = code(s);
            if null_out || lp.is_null() {
                assert_eq!(c, "null_argument");
            } else if let (Ok(o), Ok(n)) = (&expect_opts, a.expect(l)) {
                assert_eq!(c, want(&snowmint::PureGenerator::new(*l, n, *o)));
            } else if c != "ok" {
                // Options are read before node values.
                let w = expect_opts.err().or_else(|| a.expect(l).err()).unwrap();
                assert_eq!(c, w);
            }
            if c == "ok" {
                assert!(!out.is_null() && out != sentinel);
                st.pures.push(out);
            } else {
                assert_eq!(out, sentinel);
            }
        } else {
            let sentinel = std::ptr::dangling::<snowmint_generator>();
            let mut out = sentinel;
            let op: *mut *const snowmint_generator = if null_out { null_mut() } else { &mut out };
            let s = if a.by_name {
                snowmint_generator_new_by_name(lp, a.names(), a.values(), a.count, optp, op)
            } else {
                snowmint_generator_new(lp, a.values(), a.count, optp, op)
            };
            let c = code(s);
            if null_out || lp.is_null() {
                assert_eq!(c, "null_argument");
            } else if let Err(w) = &expect_opts {
                assert_eq!(c, *w);
            } else if let Err(w) = a.expect(l) {
                assert_eq!(c, w);
            }
            if c == "ok" {
                assert!(!out.is_null() && out != sentinel);
                let o = expect_opts.unwrap();
                let quick = l.time_unit_ms() == 1
                    && l.sequence().bits() >= 12
                    && match o.clock_backwards {
                        snowmint::ClockBackwards::Wait { max_units } => max_units <= 10,
                        _ => true,
                    };
                st.generators.push(Sync { handle: out, quick });
            } else {
                assert_eq!(out, sentinel);
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
