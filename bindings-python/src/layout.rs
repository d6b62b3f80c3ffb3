//! `Layout`, its `Field`s, and `Parts` (a decoded ID).

use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::convert::{ms_to_datetime, opt_value, time_value, value};
use crate::errors::Res;

/// A layout argument: a `Layout`, a preset name or a JSON descriptor (the
/// preset "twitter" when absent).
pub fn layout_arg(obj: Option<&Bound<'_, PyAny>>) -> Res<snowmint::Layout> {
    match obj {
        None => Ok(snowmint::Layout::preset("twitter")?),
        Some(o) => Ok(value(o)?.to_layout()?),
    }
}

/// Node values by field name, in the layout's order.
pub fn node_dict<'py>(
    py: Python<'py>,
    layout: &snowmint::Layout,
    values: &[u64],
) -> PyResult<Bound<'py, PyDict>> {
    layout
        .nodes()
        .map(|f| f.name())
        .zip(values)
        .into_py_dict(py)
}

/// One field of a layout: `name`, width `bits`, `shift` of its lowest bit, and
/// `kind` ("timestamp", "sequence" or "node").
#[pyclass(module = "snowmint", frozen, eq, hash, get_all)]
#[derive(PartialEq, Eq, Hash, Clone)]
pub struct Field {
    /// The field's name.
    name: String,
    /// Width in bits.
    bits: u32,
    /// Position of the field's lowest bit in the ID.
    shift: u32,
    /// "timestamp", "sequence" or "node".
    kind: &'static str,
}

#[pymethods]
impl Field {
    fn __repr__(&self) -> String {
        let (name, bits, shift, kind) = (&self.name, self.bits, self.shift, self.kind);
        format!("Field(name='{name}', bits={bits}, shift={shift}, kind='{kind}')")
    }
}

/// A layout: the epoch, the time unit, and the fields from the most
/// significant bit down. `Layout(layout)` takes what every `layout` argument
/// takes (a preset name, a JSON descriptor or a Layout); so do
/// `Layout.preset`, `Layout.from_json` and `Layout.parse`. Pickles and copies
/// as `Layout(preset name or descriptor)`.
#[pyclass(module = "snowmint", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub struct Layout {
    pub inner: snowmint::Layout,
}

impl From<snowmint::Layout> for Layout {
    fn from(inner: snowmint::Layout) -> Layout {
        Layout { inner }
    }
}

#[pymethods]
impl Layout {
    #[new]
    fn new(layout: &Bound<'_, PyAny>) -> Res<Layout> {
        Ok(layout_arg(Some(layout))?.into())
    }

    /// `Layout(preset name or JSON descriptor)`: what pickle and copy rebuild.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let inner = &slf.get().inner;
        let arg = match inner.preset_name() {
            Some(name) => name.to_owned(),
            None => inner.to_json(),
        };
        (slf.get_type(), (arg,)).into_pyobject(slf.py())
    }

    /// A preset by name (see `Layout.presets()`).
    #[staticmethod]
    fn preset(name: &str) -> Res<Layout> {
        Ok(snowmint::Layout::preset(name)?.into())
    }

    /// A layout from its JSON descriptor (or a preset's name as a JSON string).
    #[staticmethod]
    fn from_json(json: &str) -> Res<Layout> {
        Ok(snowmint::Layout::from_json(json)?.into())
    }

    /// A JSON descriptor (starting with `{` or `"`) or else a preset name.
    #[staticmethod]
    fn parse(s: &str) -> Res<Layout> {
        Ok(snowmint::Layout::parse(s)?.into())
    }

    /// The names of the presets, in a fixed order.
    #[staticmethod]
    fn presets() -> Vec<&'static str> {
        snowmint::Layout::PRESETS.to_vec()
    }

    /// The canonical JSON descriptor.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// The epoch, Unix milliseconds.
    #[getter]
    fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }

    /// The time unit in milliseconds.
    #[getter]
    fn time_unit_ms(&self) -> u64 {
        self.inner.time_unit_ms()
    }

    /// The width of the IDs in bits.
    #[getter]
    fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }

    /// The largest ID of the layout.
    #[getter]
    fn max_id(&self) -> u64 {
        self.inner.max_id().get()
    }

    /// The fields, most significant first.
    #[getter]
    fn fields(&self) -> Vec<Field> {
        let field = |f: &snowmint::Field| Field {
            name: f.name().to_owned(),
            bits: f.bits(),
            shift: f.shift(),
            kind: f.kind().as_str(),
        };
        self.inner.fields().iter().map(field).collect()
    }

    /// The names of the node fields, in order.
    #[getter]
    fn node_names(&self) -> Vec<&str> {
        self.inner.nodes().map(|f| f.name()).collect()
    }

    /// The first Unix ms the time field cannot hold.
    #[getter]
    fn time_end_ms(&self) -> u64 {
        self.inner.time_end_ms()
    }

    /// `time_end_ms` as an aware UTC datetime (None past year 9999).
    #[getter]
    fn time_end(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        ms_to_datetime(py, self.inner.time_end_ms()).ok()
    }

    /// The first Unix ms from which IDs may not fit a signed 64-bit integer.
    #[getter]
    fn i64_end_ms(&self) -> u64 {
        self.inner.i64_end_ms()
    }

    /// `i64_end_ms` as an aware UTC datetime (None past year 9999).
    #[getter]
    fn i64_end(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        ms_to_datetime(py, self.inner.i64_end_ms()).ok()
    }

    /// The first Unix ms from which IDs may exceed 2^53 (JavaScript's exact range).
    #[getter]
    fn js_safe_end_ms(&self) -> u64 {
        self.inner.js_safe_end_ms()
    }

    /// `js_safe_end_ms` as an aware UTC datetime (None past year 9999).
    #[getter]
    fn js_safe_end(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        ms_to_datetime(py, self.inner.js_safe_end_ms()).ok()
    }

    /// The name of the preset equal to this layout, or None.
    #[getter]
    fn preset_name(&self) -> Option<&'static str> {
        self.inner.preset_name()
    }

    /// Splits an ID (int or decimal str) into its parts.
    pub fn decode(&self, id: &Bound<'_, PyAny>) -> Res<Parts> {
        let parts = self.inner.decompose(value(id)?.to_id()?.get())?;
        let layout = self.inner;
        Ok(Parts { parts, layout })
    }

    /// Builds an ID from a time (Unix ms), a sequence value and node values.
    #[pyo3(signature = (timestamp_ms, sequence = None, **nodes), text_signature = "(self, /, timestamp_ms, sequence=0, **nodes)")]
    pub fn compose(
        &self,
        timestamp_ms: &Bound<'_, PyAny>,
        sequence: Option<&Bound<'_, PyAny>>,
        nodes: Option<&Bound<'_, PyDict>>,
    ) -> Res<u64> {
        let time = value(timestamp_ms)?.to_time_ms()?;
        let sequence = opt_value(sequence)?.to_sequence()?;
        let nodes = opt_value(nodes.map(|d| d.as_any()))?.to_nodes(&self.inner)?;
        Ok(self.inner.compose(time, sequence, &nodes)?.get())
    }

    /// The smallest and largest IDs whose time unit contains `time` (Unix ms
    /// or an aware datetime).
    pub fn id_bounds(&self, time: &Bound<'_, PyAny>) -> Res<(u64, u64)> {
        let (lo, hi) = self.inner.id_bounds(time_value(time)?.to_time_ms()?)?;
        Ok((lo.get(), hi.get()))
    }

    /// True when the ID fits the layout and decodes to a time between the
    /// epoch and `now_ms` plus one day.
    fn is_plausible(&self, id: &Bound<'_, PyAny>, now_ms: &Bound<'_, PyAny>) -> Res<bool> {
        let id = value(id)?.to_id()?.get();
        Ok(self.inner.is_plausible(id, value(now_ms)?.to_time_ms()?))
    }

    pub fn __repr__(&self) -> String {
        match self.inner.preset_name() {
            Some(name) => format!("Layout.preset('{name}')"),
            None => format!("Layout.from_json('{}')", self.inner.to_json()),
        }
    }
}

/// An ID split into its parts. Frozen; iterates and indexes like the tuple
/// `(id, timestamp_ms, sequence, nodes)`; node fields are also attributes
/// (`parts.worker`). Pickles and copies as `decode(id, layout)`.
#[pyclass(module = "snowmint", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub struct Parts {
    parts: snowmint::Parts,
    layout: snowmint::Layout,
}

impl Parts {
    fn tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (p, layout) = (&self.parts, &self.layout);
        let nodes = node_dict(py, layout, p.nodes())?;
        (p.id().get(), p.timestamp_ms(), p.sequence(), nodes).into_pyobject(py)
    }
}

/// The public attributes of `Parts`, which node fields of the same name do not
/// shadow (tests/test_api.py checks this list against the class).
const PARTS_ATTRS: &str = "id timestamp_ms time tick sequence nodes layout";

#[pymethods]
impl Parts {
    /// The ID.
    #[getter]
    fn id(&self) -> u64 {
        self.parts.id().get()
    }

    /// The start of the ID's time unit, Unix milliseconds.
    #[getter]
    fn timestamp_ms(&self) -> u64 {
        self.parts.timestamp_ms()
    }

    /// `timestamp_ms` as an aware UTC datetime (OverflowError past year 9999).
    #[getter]
    fn time(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        ms_to_datetime(py, self.parts.timestamp_ms())
    }

    /// The time field's raw value (time units since the epoch).
    #[getter]
    fn tick(&self) -> u64 {
        self.parts.tick()
    }

    /// The sequence value.
    #[getter]
    fn sequence(&self) -> u64 {
        self.parts.sequence()
    }

    /// The node values by field name (a new dict each time).
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        node_dict(py, &self.layout, self.parts.nodes())
    }

    /// The layout the ID was decoded with.
    #[getter]
    fn layout(&self) -> Layout {
        self.layout.into()
    }

    /// `decode(id, layout)`: what pickle and copy rebuild.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let decode = py.import("snowmint")?.getattr("decode")?;
        (decode, (self.parts.id().get(), self.layout())).into_pyobject(py)
    }

    /// The parts as a dict (like `NamedTuple._asdict`).
    fn _asdict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let keys = ["id", "timestamp_ms", "sequence", "nodes"];
        keys.into_iter().zip(self.tuple(py)?).into_py_dict(py)
    }

    /// Node fields as attributes (`parts.worker`), after Parts' own. Not
    /// `__getattr__`, which CPython calls only after its generic lookup has
    /// raised and caught an `AttributeError` (8 times slower).
    fn __getattribute__<'py>(
        slf: &Bound<'py, Self>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        if let Ok(s) = name.to_cow() {
            // Field names start with a letter: no dunder is a node field.
            if !s.starts_with('_') && !PARTS_ATTRS.split(' ').any(|a| a == s) {
                if let Some(i) = this.layout.node_index(&s) {
                    return this.parts.nodes()[i].into_bound_py_any(py);
                }
            }
        }
        // SAFETY: both pointers are live objects borrowed for this call;
        // PyObject_GenericGetAttr returns a new reference, or NULL with an
        // exception set (an AttributeError for an unknown name).
        unsafe {
            Bound::from_owned_ptr_or_err(
                py,
                pyo3::ffi::PyObject_GenericGetAttr(slf.as_ptr(), name.as_ptr()),
            )
        }
    }

    fn __len__(&self) -> usize {
        4
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: isize) -> PyResult<Bound<'py, PyAny>> {
        self.tuple(py)?.as_any().get_item(index)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.tuple(py)?.try_iter()?.into_any())
    }

    fn __repr__(&self) -> String {
        let (p, nodes) = (&self.parts, self.layout.nodes().zip(self.parts.nodes()));
        let nodes: Vec<_> = nodes.map(|(f, v)| format!("'{}': {v}", f.name())).collect();
        let (id, ms, seq, nodes) = (p.id(), p.timestamp_ms(), p.sequence(), nodes.join(", "));
        format!("Parts(id={id}, timestamp_ms={ms}, sequence={seq}, nodes={{{nodes}}})")
    }
}
