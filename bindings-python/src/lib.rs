//! The Python binding of snowmint (pyo3): the extension module
//! `snowmint._snowmint`, re-exported by the Python package `snowmint`.
//!
//! Each argument becomes the core's loose `Value` (convert.rs), whose methods
//! (`to_id`, `to_layout`...) decide; a core error becomes its code's class
//! (errors.rs). Rules, codes and messages all live in the core.
// Its types are printed by the host language (repr, inspect, the C header's
// accessors), not by Rust's Debug: the workspace's missing_debug_implementations
// does not apply.
#![allow(missing_debug_implementations)]

mod convert;
mod errors;
mod generator;
mod layout;
mod mask;

use pyo3::prelude::*;

#[pymodule]
mod _snowmint {
    use pyo3::prelude::*;
    use pyo3::types::PyDict;
    use snowmint::{Error, Format, Id};

    use crate::convert::value;
    use crate::errors::{classes, Res};
    use crate::layout::layout_arg;

    #[pymodule_export]
    use crate::errors::SnowmintError;
    #[pymodule_export]
    use crate::generator::{Generator, PureGenerator};
    #[pymodule_export]
    use crate::layout::{Field, Layout, Parts};
    #[pymodule_export]
    use crate::mask::IdMask;

    /// Splits an ID (int or decimal str) into its parts under `layout` (a Layout,
    /// a preset name or a JSON descriptor; default "twitter").
    #[pyfunction]
    #[pyo3(signature = (id, layout = None), text_signature = "(id, layout='twitter')")]
    fn decode(id: &Bound<'_, PyAny>, layout: Option<&Bound<'_, PyAny>>) -> Res<Parts> {
        Layout::from(layout_arg(layout)?).decode(id)
    }

    /// Builds an ID from a time (Unix ms), a sequence value and node values.
    #[pyfunction]
    #[pyo3(
        signature = (layout, timestamp_ms, sequence = None, **nodes),
        text_signature = "(layout, timestamp_ms, sequence=0, **nodes)"
    )]
    fn compose(
        layout: &Bound<'_, PyAny>,
        timestamp_ms: &Bound<'_, PyAny>,
        sequence: Option<&Bound<'_, PyAny>>,
        nodes: Option<&Bound<'_, PyDict>>,
    ) -> Res<u64> {
        Layout::from(layout_arg(Some(layout))?).compose(timestamp_ms, sequence, nodes)
    }

    /// The smallest and largest IDs whose time unit contains `time` (Unix ms or an
    /// aware datetime), for range queries.
    #[pyfunction]
    fn id_bounds(layout: &Bound<'_, PyAny>, time: &Bound<'_, PyAny>) -> Res<(u64, u64)> {
        Layout::from(layout_arg(Some(layout))?).id_bounds(time)
    }

    fn encode(id: &Bound<'_, PyAny>, format: Format) -> Res<String> {
        Ok(value(id)?.to_id()?.to_string_in(format))
    }

    /// The ID in Crockford base32 (13 characters, upper case).
    #[pyfunction]
    fn to_base32(id: &Bound<'_, PyAny>) -> Res<String> {
        encode(id, Format::Base32)
    }

    /// Reads a Crockford base32 ID (13 characters).
    #[pyfunction]
    fn from_base32(s: &str) -> Res<u64> {
        Ok(Id::parse(s, Format::Base32)?.get())
    }

    /// The ID in base62 (11 characters, 0-9A-Za-z).
    #[pyfunction]
    fn to_base62(id: &Bound<'_, PyAny>) -> Res<String> {
        encode(id, Format::Base62)
    }

    /// Reads a base62 ID (11 characters).
    #[pyfunction]
    fn from_base62(s: &str) -> Res<u64> {
        Ok(Id::parse(s, Format::Base62)?.get())
    }

    /// The ID as a string in `format` ("decimal", "base32" or "base62").
    #[pyfunction]
    fn format_id(id: &Bound<'_, PyAny>, format: &Bound<'_, PyAny>) -> Res<String> {
        encode(id, value(format)?.to_format()?)
    }

    /// Reads an ID written in `format` ("decimal", "base32" or "base62").
    #[pyfunction]
    fn parse_id(s: &str, format: &Bound<'_, PyAny>) -> Res<u64> {
        Ok(Id::parse(s, value(format)?.to_format()?)?.get())
    }

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add("ERROR_CODES", Error::ALL_CODES.to_vec())?;
        for class in classes(m.py())?.iter().flatten() {
            m.add(class.bind(m.py()).name()?, class)?;
        }
        // The functions' module is the package, like the classes': a pickled
        // `Parts` names `snowmint.decode`.
        for f in m.dict().values() {
            if f.is_instance_of::<pyo3::types::PyCFunction>() {
                f.setattr("__module__", "snowmint")?;
            }
        }
        // For `from snowmint._snowmint import *` (the package's __init__.py).
        let mut all: Vec<String> = m.dict().keys().extract()?;
        all.retain(|n| !n.starts_with('_'));
        all.push("__version__".into());
        m.add("__all__", all)
    }
}
