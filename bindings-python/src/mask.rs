//! `IdMask`: public IDs, the core's keyed permutation of a layout's IDs.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};

use crate::convert::value;
use crate::errors::Res;
use crate::layout::{layout_arg, Layout};

/// A key or tweak: `bytes`, `bytearray`, or a hex `str` (the core reads the
/// hex and refuses any other type).
fn key_bytes(obj: &Bound<'_, PyAny>, arg: &str) -> Res<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        Ok(b.as_bytes().to_vec())
    } else if let Ok(b) = obj.cast::<PyByteArray>() {
        Ok(b.to_vec())
    } else {
        Ok(snowmint::IdMask::bytes_from_value(value(obj)?, arg)?)
    }
}

/// A keyed, reversible mask over a layout's IDs: `mask(id)` is the public ID
/// (same layout, same width), `unmask(public)` the ID back. NIST SP 800-38G
/// FF1 with AES-128 (16-byte key) or AES-256 (32-byte key); `key` and
/// `tweak` as bytes or hex str. The repr never shows the key.
#[pyclass(module = "snowmint", frozen)]
pub struct IdMask {
    inner: snowmint::IdMask,
    key_len: usize,
    tweak: Vec<u8>,
}

#[pymethods]
impl IdMask {
    #[new]
    #[pyo3(signature = (layout, key, tweak = None), text_signature = "(layout, key, tweak=b'')")]
    fn new(
        layout: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        tweak: Option<&Bound<'_, PyAny>>,
    ) -> Res<IdMask> {
        let layout = layout_arg(Some(layout))?;
        let key = key_bytes(key, "key")?;
        let tweak = match tweak {
            Some(t) => key_bytes(t, "tweak")?,
            None => Vec::new(),
        };
        Ok(IdMask {
            inner: snowmint::IdMask::new(layout, &key, &tweak)?,
            key_len: key.len(),
            tweak,
        })
    }

    /// The public ID of `id` (int or decimal str) under this key and tweak.
    fn mask(&self, id: &Bound<'_, PyAny>) -> Res<u64> {
        Ok(self.inner.mask(value(id)?.to_id()?)?.get())
    }

    /// The ID whose public ID is `public` (int or decimal str).
    fn unmask(&self, public: &Bound<'_, PyAny>) -> Res<u64> {
        Ok(self.inner.unmask(value(public)?.to_id()?)?.get())
    }

    /// The layout whose IDs this mask permutes.
    #[getter]
    fn layout(&self) -> Layout {
        Layout::from(*self.inner.layout())
    }

    /// The tweak's bytes (a tweak is not a secret).
    #[getter]
    fn tweak<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.tweak)
    }

    fn __repr__(&self) -> String {
        let layout = Layout::from(*self.inner.layout()).__repr__();
        let tweak: String = self.tweak.iter().map(|b| format!("{b:02x}")).collect();
        let aes = self.key_len * 8;
        format!("IdMask({layout}, key=<AES-{aes} key, hidden>, tweak='{tweak}')")
    }
}
