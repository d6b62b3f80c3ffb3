//! The layout's JSON descriptor, read and written in this one place: a
//! small, allocation-free reader and the canonical writer.
//!
//! The descriptor has one fixed shape, so a full JSON library (and the
//! allocator it needs) would buy nothing here; this reader accepts exactly that
//! shape with standard JSON whitespace and rejects everything else with the
//! byte offset of the first problem.

use core::fmt;

use crate::error::{Error, LayoutProblem, Result};
use crate::layout::{Layout, LayoutBuilder};
use crate::text::{fill, Hole};

impl Layout {
    /// Reads a layout from its JSON descriptor:
    /// `{"epoch_ms":1288834974657,"time_unit_ms":1,"fields":[["timestamp",41],["datacenter",5],["worker",5],["sequence",12]]}`.
    ///
    /// Keys may come in any order; `time_unit_ms` defaults to 1; no other keys
    /// are allowed. Or a preset's name as a JSON string: `"twitter"`.
    ///
    /// ```
    /// use snowmint::Layout;
    /// let l = Layout::from_json(r#"{"epoch_ms": 0, "fields": [["timestamp", 48], ["sequence", 16]]}"#).unwrap();
    /// assert_eq!(l, Layout::preset("mastodon").unwrap());
    /// ```
    pub fn from_json(json: &str) -> Result<Layout> {
        parse_layout(json)
    }

    /// Writes the canonical JSON descriptor (no spaces, keys in the order
    /// `epoch_ms`, `time_unit_ms`, `fields`).
    pub fn write_json<W: fmt::Write>(&self, w: &mut W) -> fmt::Result {
        // `fill` (write_str alone), not `write!`: see error.rs.
        let (epoch, unit) = (Hole::N(self.epoch_ms()), Hole::N(self.time_unit_ms()));
        fill(
            w,
            r#"{"epoch_ms":{},"time_unit_ms":{},"fields":["#,
            &[epoch, unit],
        )?;
        for (i, f) in self.fields().iter().enumerate() {
            let (name, bits) = (Hole::S(f.name()), Hole::N(u64::from(f.bits())));
            let template = if i > 0 {
                r#",["{}",{}]"#
            } else {
                r#"["{}",{}]"#
            };
            fill(w, template, &[name, bits])?;
        }
        w.write_str("]}")
    }

    /// The canonical JSON descriptor.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn to_json(&self) -> std::string::String {
        let mut s = std::string::String::new();
        // Writing into a String cannot fail.
        let _ = self.write_json(&mut s);
        s
    }
}

struct Reader<'a> {
    /// The descriptor, and its bytes.
    src: &'a str,
    s: &'a [u8],
    pos: usize,
}

fn fail<T>(pos: usize) -> Result<T> {
    Err(Error::InvalidLayout(LayoutProblem::Json {
        offset: pos.min(u32::MAX as usize) as u32,
    }))
}

impl<'a> Reader<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            fail(self.pos)
        }
    }

    /// A string without escapes (names and keys never need them).
    fn string(&mut self) -> Result<&'a str> {
        self.expect(b'"')?;
        let start = self.pos;
        loop {
            match self.s.get(self.pos) {
                Some(b'"') => break,
                Some(b'\\') | None => return fail(self.pos),
                Some(c) if *c < 0x20 => return fail(self.pos),
                Some(_) => self.pos += 1,
            }
        }
        // Both ends are at ASCII bytes (after one '"', at the next), so at
        // character boundaries of the descriptor. (`get`, not indexing: the
        // index's panic path would bring `str`'s Debug printing, about 4 KB
        // of the WebAssembly module.)
        let out = self.src.get(start..self.pos).unwrap_or("");
        self.pos += 1;
        Ok(out)
    }

    /// A non-negative integer without sign, fraction or exponent.
    fn uint(&mut self) -> Result<u64> {
        self.ws();
        let start = self.pos;
        let mut v: u64 = 0;
        while let Some(c @ b'0'..=b'9') = self.s.get(self.pos) {
            v = match v
                .checked_mul(10)
                .and_then(|v| v.checked_add((c - b'0') as u64))
            {
                Some(v) => v,
                None => return fail(start),
            };
            self.pos += 1;
        }
        let digits = self.pos - start;
        if digits == 0 || (digits > 1 && self.s[start] == b'0') {
            return fail(start);
        }
        if let Some(b'.' | b'e' | b'E') = self.s.get(self.pos) {
            return fail(self.pos);
        }
        Ok(v)
    }
}

pub(crate) fn parse_layout(json: &str) -> Result<Layout> {
    let mut r = Reader {
        src: json,
        s: json.as_bytes(),
        pos: 0,
    };
    if r.peek() == Some(b'"') {
        let name = r.string()?;
        end(&mut r)?;
        return Layout::preset(name);
    }
    let mut b = LayoutBuilder::new(0, 1);
    let (mut epoch, mut unit, mut fields) = (false, false, false);
    r.expect(b'{')?;
    if r.peek() == Some(b'}') {
        return fail(r.pos);
    }
    loop {
        let key_at = r.pos;
        let key = r.string()?;
        r.expect(b':')?;
        match key {
            "epoch_ms" if !epoch => {
                epoch = true;
                b.set_epoch(r.uint()?);
            }
            "time_unit_ms" if !unit => {
                unit = true;
                b.set_unit(r.uint()?);
            }
            "fields" if !fields => {
                fields = true;
                r.expect(b'[')?;
                if r.peek() != Some(b']') {
                    loop {
                        r.expect(b'[')?;
                        let name = r.string()?;
                        r.expect(b',')?;
                        let bits_at = r.pos;
                        let bits = r.uint()?;
                        if bits > 64 {
                            return fail(bits_at);
                        }
                        b.push(name, bits as u32)?;
                        r.expect(b']')?;
                        if r.peek() == Some(b',') {
                            r.pos += 1;
                        } else {
                            break;
                        }
                    }
                }
                r.expect(b']')?;
            }
            _ => return fail(key_at),
        }
        if r.peek() == Some(b',') {
            r.pos += 1;
        } else {
            break;
        }
    }
    r.expect(b'}')?;
    end(&mut r)?;
    if !epoch || !fields {
        return fail(json.len());
    }
    b.finish()
}

fn end(r: &mut Reader<'_>) -> Result<()> {
    match r.peek() {
        None => Ok(()),
        Some(_) => fail(r.pos),
    }
}
