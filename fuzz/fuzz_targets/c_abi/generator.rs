//! Creating a generator (sync or pure), with the same arguments checked
//! against the core.

use std::ptr::{null, null_mut};

use snowmint::{Layout, Options};
use snowmint_c::*;

use crate::args::{CText, NodesArgs, NodesIn, OptionsIn};
use crate::check::{code, want};
use crate::{State, Sync};

pub(crate) fn new_generator(
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
