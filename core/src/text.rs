//! Small text helpers: messages and the JSON descriptor are written with
//! these, without `core::fmt`'s formatting machinery.

use core::fmt;

// The messages are written with `write_str` alone, never `write!`:
// `core::fmt`'s formatting machinery (argument tables, padding, integer
// formatting) would otherwise be compiled into every user of the messages, a
// few KB of the WebAssembly module (issue 6's size budget). Each message is
// a template whose `{}` holes [`fill`] replaces, so that a message costs its
// text and a few stores, not a call per piece.

/// Where messages are written: any `fmt::Write`, through a trait object
/// with this one method (a `dyn fmt::Write` would bring `write_fmt`, and
/// with it the machinery, into the vtable).
pub(crate) trait Sink {
    fn put_str(&mut self, s: &str) -> fmt::Result;
}

impl<W: fmt::Write + ?Sized> Sink for W {
    fn put_str(&mut self, s: &str) -> fmt::Result {
        self.write_str(s)
    }
}

/// What fills a hole of a message template.
#[derive(Clone, Copy)]
pub(crate) enum Hole<'a> {
    /// A number, in decimal.
    N(u64),
    /// A text (a field name).
    S(&'a str),
}

/// Writes `template`, each `{}` in it replaced by the next of `holes` (a
/// missing hole is left empty).
pub(crate) fn fill(w: &mut dyn Sink, template: &str, holes: &[Hole<'_>]) -> fmt::Result {
    let mut holes = holes.iter();
    let bytes = template.as_bytes();
    // A byte scan: `str::find` would bring in a substring searcher.
    let (mut start, mut i) = (0, 0);
    while i + 1 < bytes.len() {
        if bytes[i] != b'{' || bytes[i + 1] != b'}' {
            i += 1;
            continue;
        }
        // `get`, not indexing: see json.rs (the holes sit between ASCII bytes).
        w.put_str(template.get(start..i).unwrap_or(""))?;
        match holes.next() {
            Some(Hole::N(n)) => w.put_str(decimal(*n, &mut [0; 20]))?,
            Some(Hole::S(s)) => w.put_str(s)?,
            None => {}
        }
        i += 2;
        start = i;
    }
    w.put_str(template.get(start..).unwrap_or(""))
}

/// `v` in decimal, written at the end of `buf`.
pub(crate) fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &str {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let out = &buf[start..];
    debug_assert!(out.is_ascii());
    // SAFETY: only ASCII digits were written, and ASCII is UTF-8.
    unsafe { core::str::from_utf8_unchecked(out) }
}
