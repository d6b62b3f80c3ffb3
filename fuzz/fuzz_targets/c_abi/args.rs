//! The fuzzer's arguments and the C values made from them: strings,
//! options, node values.

use std::ffi::c_char;
use std::ptr::null;

use arbitrary::Arbitrary;
use snowmint::Layout;

/// A string argument: NULL, arbitrary bytes (interior NULs cut it short, as
/// in C), or one of the texts the library knows.
#[derive(Arbitrary, Debug)]
pub(crate) enum StrIn {
    Null,
    Bytes(Vec<u8>),
    Known(u8, u16),
}

pub(crate) const WORDS: [&str; 22] = [
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
pub(crate) struct CText(Option<Vec<u8>>);

impl CText {
    pub(crate) fn new(s: &StrIn) -> CText {
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
    pub(crate) fn ptr(&self) -> *const c_char {
        self.0.as_ref().map_or(null(), |b| b.as_ptr().cast())
    }
    /// What the library reads: NULL, not UTF-8, or a text.
    pub(crate) fn text(&self) -> Option<Result<&str, ()>> {
        self.0
            .as_ref()
            .map(|b| std::str::from_utf8(&b[..b.len() - 1]).map_err(|_| ()))
    }
}

#[derive(Arbitrary, Debug)]
pub(crate) struct OptionsIn {
    pub(crate) clock: StrIn,
    pub(crate) exhausted: StrIn,
    pub(crate) start: StrIn,
    pub(crate) seed: u64,
    pub(crate) has_resume_after: bool,
    pub(crate) resume_after: u64,
}

#[derive(Arbitrary, Debug)]
pub(crate) enum NodesIn {
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

pub(crate) struct NodesArgs {
    pub(crate) _names: Vec<CText>,
    pub(crate) name_ptrs: Vec<*const c_char>,
    pub(crate) values: Vec<u64>,
    pub(crate) by_name: bool,
    pub(crate) null_names: bool,
    pub(crate) null_values: bool,
    pub(crate) count: usize,
}

impl NodesArgs {
    pub(crate) fn new(n: &NodesIn) -> NodesArgs {
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
    pub(crate) fn names(&self) -> *const *const c_char {
        if self.null_names {
            null()
        } else {
            self.name_ptrs.as_ptr()
        }
    }
    pub(crate) fn values(&self) -> *const u64 {
        if self.null_values {
            null()
        } else {
            self.values.as_ptr()
        }
    }
    /// What the core says about these node values for `l`, or the status
    /// the arguments give before the core is asked.
    pub(crate) fn expect(&self, l: &Layout) -> Result<snowmint::Nodes, &'static str> {
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
