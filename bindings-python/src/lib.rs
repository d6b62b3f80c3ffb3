//! The Python binding of snowmint (pyo3): the extension module
//! `snowmint._snowmint`, re-exported by the Python package `snowmint`.
//!
//! A thin layer: it converts Python values to the core's types and back, and
//! core errors to Python exceptions. Every rule about IDs, layouts and
//! generation lives in the core (`snowmint`); nothing here re-implements one.
//!
//! Conventions of the Python API:
//! - IDs are `int` out, and `int` or decimal `str` in. An `int` outside
//!   `0..2^64`, a `bool` or a `float` is refused with `InvalidIdError`, never
//!   wrapped or rounded.
//! - A core error becomes the `SnowmintError` subclass of its code, with the
//!   core's code in `.code` (the cross-language contract). All of them are made
//!   in one function, [`raise`].
//! - An argument of the wrong Python type is a `TypeError`; a value of the right
//!   type that is out of range is the `SnowmintError` the core gives for it.
//! - Times are Unix milliseconds (`int`); the `time`/`*_end` properties give
//!   aware UTC `datetime`s, and `id_bounds` also takes an aware `datetime`.

use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use pyo3::{intern, IntoPyObjectExt};
use snowmint::{Error, Format, Generator as SyncGenerator, Id, IdProblem, Next, OptionProblem};

// ---- errors -------------------------------------------------------------

create_exception!(
    snowmint,
    SnowmintError,
    PyValueError,
    "The base of every snowmint error. `.code` is the core's stable error code (the same in every language)."
);
create_exception!(
    snowmint,
    InvalidLayoutError,
    SnowmintError,
    "code `invalid_layout`: the layout or its JSON descriptor is not acceptable."
);
create_exception!(
    snowmint,
    UnknownPresetError,
    SnowmintError,
    "code `unknown_preset`: no preset has this name."
);
create_exception!(
    snowmint,
    UnknownFieldError,
    SnowmintError,
    "code `unknown_field`: a node value was given for a field the layout does not have."
);
create_exception!(
    snowmint,
    MissingNodeError,
    SnowmintError,
    "code `missing_node`: the layout has a node field but no value was given for it."
);
create_exception!(
    snowmint,
    NodeOutOfRangeError,
    SnowmintError,
    "code `node_out_of_range`: a value does not fit its field (a node value, a sequence)."
);
create_exception!(
    snowmint,
    InvalidOptionError,
    SnowmintError,
    "code `invalid_option`: a generator option (policy string, count, seed) is not acceptable."
);
create_exception!(
    snowmint,
    TimeBeforeEpochError,
    SnowmintError,
    "code `time_before_epoch`: a time is before the layout's epoch."
);
create_exception!(
    snowmint,
    TimeOverflowError,
    SnowmintError,
    "code `time_overflow`: a time is at or past the end of the layout's time field."
);
create_exception!(snowmint, ClockMovedBackwardsError, SnowmintError, "code `clock_moved_backwards`: the clock reads earlier than the last ID issued, by more than the policy tolerates.");
create_exception!(
    snowmint,
    InvalidIdError,
    SnowmintError,
    "code `invalid_id`: a string or number is not a valid ID (for this layout)."
);
create_exception!(snowmint, ProcessForkedError, SnowmintError, "code `process_forked`: the generator was created before fork() and is used in the child process.");

/// Why a call failed, before it becomes a Python exception.
enum Fail {
    /// A core error, with the core's message.
    Core(Error),
    /// A core error with a message written here: for values the binding
    /// refuses before they reach the core (a negative `int` has no `u64`), so
    /// that the message shows the value the caller passed.
    Value(Error, String),
    /// A Python exception (a `TypeError` for an argument of the wrong type,
    /// or one raised by Python code the binding called).
    Py(PyErr),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Core(e)
    }
}

impl From<PyErr> for Fail {
    fn from(e: PyErr) -> Fail {
        Fail::Py(e)
    }
}

impl From<Fail> for PyErr {
    fn from(f: Fail) -> PyErr {
        match f {
            Fail::Core(e) => raise(e, e.to_string()),
            Fail::Value(e, msg) => raise(e, msg),
            Fail::Py(e) => e,
        }
    }
}

type Res<T> = Result<T, Fail>;

/// The one place a core error becomes a Python exception.
fn raise(e: Error, msg: String) -> PyErr {
    let err = match e {
        Error::InvalidLayout(_) => InvalidLayoutError::new_err(msg),
        Error::UnknownPreset => UnknownPresetError::new_err(msg),
        Error::UnknownField { .. } => UnknownFieldError::new_err(msg),
        Error::MissingNode { .. } => MissingNodeError::new_err(msg),
        Error::NodeOutOfRange { .. } => NodeOutOfRangeError::new_err(msg),
        Error::InvalidOption(_) => InvalidOptionError::new_err(msg),
        Error::TimeBeforeEpoch { .. } => TimeBeforeEpochError::new_err(msg),
        Error::TimeOverflow { .. } => TimeOverflowError::new_err(msg),
        Error::ClockMovedBackwards { .. } => ClockMovedBackwardsError::new_err(msg),
        Error::InvalidId(_) => InvalidIdError::new_err(msg),
        Error::ProcessForked => ProcessForkedError::new_err(msg),
        // The core's `Error` is `#[non_exhaustive]`, so Rust demands this arm.
        // A variant added to the core later still raises a `SnowmintError`
        // with the right `.code` (set below); the test suite checks that every
        // code in `vectors/codes.json` has its own subclass, so a new code
        // fails the tests until it gets one here.
        _ => SnowmintError::new_err(msg),
    };
    Python::attach(|py| {
        // Also on the instance, so that `.code` is right even for the
        // fallback arm above. Setting an attribute on a fresh exception
        // cannot fail in practice; if it did, the class attribute remains.
        let _ = err.value(py).setattr(intern!(py, "code"), e.code());
    });
    err
}

/// A core error with the message naming `shown`, the value the caller passed
/// (for a node value or sequence that has no `u64`, replaced by `u64::MAX`,
/// which no field holds).
fn with_shown_value(e: Error, shown: &str) -> Fail {
    match e {
        Error::NodeOutOfRange { field, max, .. } => Fail::Value(
            e,
            format!(
                "value {shown} does not fit field '{field}' (0..={max}) [{}]",
                e.code()
            ),
        ),
        _ => Fail::Core(e),
    }
}

fn type_error(what: &str, expected: &str, got: &Bound<'_, PyAny>) -> Fail {
    let name = got
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    Fail::Py(PyTypeError::new_err(format!(
        "{what} must be {expected}, not {name}"
    )))
}

// ---- arguments ------------------------------------------------------------

/// An `int` (not a `bool`) as a `u64`, or `Err(true)` when negative and
/// `Err(false)` when 2^64 or more.
fn uint(obj: &Bound<'_, PyAny>, what: &str) -> Res<Result<u64, bool>> {
    let int = match obj.cast::<PyInt>() {
        Ok(i) if !obj.is_instance_of::<PyBool>() => i,
        _ => return Err(type_error(what, "an int", obj)),
    };
    if let Ok(v) = int.extract::<u64>() {
        return Ok(Ok(v));
    }
    Ok(Err(int.lt(0)?))
}

/// An ID argument: an `int` in `0..2^64` or a decimal `str`.
fn id_arg(obj: &Bound<'_, PyAny>) -> Res<u64> {
    if let Ok(int) = obj.cast::<PyInt>() {
        if obj.is_instance_of::<PyBool>() {
            return Err(Fail::Value(
                Error::InvalidId(IdProblem::NotExact),
                "invalid id: a bool is not an ID [invalid_id]".into(),
            ));
        }
        if let Ok(v) = int.extract::<u64>() {
            return Ok(v);
        }
        // Negative, or 2^64 and more: the core names the problem.
        let wide = int
            .extract::<i128>()
            .unwrap_or(if int.lt(0)? { i128::MIN } else { i128::MAX });
        return Ok(Id::from_i128(wide)?.get());
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Id::parse(&s.to_cow()?, Format::Decimal)?.get());
    }
    if obj.is_instance_of::<PyFloat>() {
        return Err(Fail::Value(
            Error::InvalidId(IdProblem::NotExact),
            "invalid id: a float is not an ID (it may already be rounded); pass an int or a decimal str [invalid_id]".into(),
        ));
    }
    Err(type_error("an ID", "an int or a decimal str", obj))
}

/// A layout argument: a `Layout`, a preset name or a JSON descriptor.
fn layout_arg(obj: &Bound<'_, PyAny>) -> Res<snowmint::Layout> {
    if let Ok(l) = obj.cast::<Layout>() {
        return Ok(l.get().inner);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(snowmint::Layout::parse(&s.to_cow()?)?);
    }
    Err(type_error(
        "layout",
        "a Layout, a preset name or a JSON descriptor",
        obj,
    ))
}

fn opt_layout_arg(obj: Option<&Bound<'_, PyAny>>) -> Res<snowmint::Layout> {
    match obj {
        Some(o) if !o.is_none() => layout_arg(o),
        _ => Ok(snowmint::Layout::preset("twitter")?),
    }
}

/// A time argument: Unix milliseconds (`int`) or an aware `datetime`.
fn time_arg(obj: &Bound<'_, PyAny>, layout: &snowmint::Layout, dt_ok: bool) -> Res<u64> {
    let py = obj.py();
    let ms;
    let obj = if dt_ok && obj.is_instance(datetime_type(py)?)? {
        ms = datetime_to_ms(obj)?;
        &ms
    } else {
        obj
    };
    let what = if dt_ok {
        "a time (Unix ms int or aware datetime)"
    } else {
        "a time (Unix ms)"
    };
    match uint(obj, what)? {
        Ok(v) => Ok(v),
        Err(true) => Err(Fail::Value(
            Error::TimeBeforeEpoch {
                time_ms: 0,
                epoch_ms: layout.epoch_ms(),
            },
            format!(
                "time {obj} ms is before the layout's epoch {} ms [time_before_epoch]",
                layout.epoch_ms()
            ),
        )),
        // 2^64 ms and later is past the end of every layout (at most 2^53 ms).
        Err(false) => Err(Fail::Value(
            Error::TimeOverflow {
                time_ms: u64::MAX,
                end_ms: layout.time_end_ms(),
            },
            format!(
                "time {obj} ms is past the end of the layout's time field ({} ms) [time_overflow]",
                layout.time_end_ms()
            ),
        )),
    }
}

/// Node values from a `nodes` dict and keyword arguments, checked by the core.
fn nodes_arg(
    layout: &snowmint::Layout,
    dicts: &[Option<&Bound<'_, PyDict>>],
) -> Res<snowmint::Nodes> {
    let mut names: Vec<String> = Vec::new();
    let mut values: Vec<u64> = Vec::new();
    // Values with no `u64` (negative, 2^64 and more) go to the core as
    // `u64::MAX`, which no field holds (fields are at most 53 bits), so the
    // core still decides (unknown field, missing node, out of range) and the
    // message is then rewritten to show the value given.
    let mut shown: Vec<(String, String)> = Vec::new();
    for d in dicts.iter().flatten() {
        for (k, v) in d.iter() {
            let name = match k.cast::<PyString>() {
                Ok(s) => s.to_cow()?.into_owned(),
                Err(_) => return Err(type_error("a node field name", "a str", &k)),
            };
            let value = match uint(&v, "a node value")? {
                Ok(v) => v,
                Err(_) => {
                    shown.push((name.clone(), v.to_string()));
                    u64::MAX
                }
            };
            names.push(name);
            values.push(value);
        }
    }
    let pairs = names.iter().map(String::as_str).zip(values.iter().copied());
    layout.nodes_from_pairs(pairs).map_err(|e| match e {
        Error::NodeOutOfRange { field, .. } => {
            match shown.iter().find(|(n, _)| n == field.as_str()) {
                Some((_, s)) => with_shown_value(e, s),
                None => Fail::Core(e),
            }
        }
        _ => Fail::Core(e),
    })
}

/// The core's options from the Python keyword arguments.
fn options_arg(
    clock_backwards: Option<&str>,
    sequence_exhausted: Option<&str>,
    sequence_start: Option<&str>,
    seed: Option<&Bound<'_, PyAny>>,
    resume_after: Option<&Bound<'_, PyAny>>,
) -> Res<snowmint::Options> {
    let mut o =
        snowmint::Options::from_policies(clock_backwards, sequence_exhausted, sequence_start)?;
    if let Some(s) = seed.filter(|s| !s.is_none()) {
        o.seed = uint(s, "seed")?.map_err(|_| {
            Fail::Value(
                Error::InvalidOption(OptionProblem::Count),
                format!("invalid option: seed {s} is not in 0..2^64 [invalid_option]"),
            )
        })?;
    }
    if let Some(r) = resume_after.filter(|r| !r.is_none()) {
        o.resume_after = Some(id_arg(r)?);
    }
    Ok(o)
}

// ---- datetimes ------------------------------------------------------------

static DATETIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static TIMEDELTA: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNIX_EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ONE_MS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn datetime_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DATETIME.import(py, "datetime", "datetime")
}

/// 1970-01-01T00:00:00Z as an aware `datetime`.
fn unix_epoch(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    UNIX_EPOCH
        .get_or_try_init(py, || {
            let utc = py.import("datetime")?.getattr("timezone")?.getattr("utc")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("tzinfo", utc)?;
            Ok::<_, PyErr>(
                datetime_type(py)?
                    .call((1970, 1, 1), Some(&kwargs))?
                    .unbind(),
            )
        })
        .map(|d| d.bind(py))
}

fn one_ms(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    ONE_MS
        .get_or_try_init(py, || {
            let td = TIMEDELTA.import(py, "datetime", "timedelta")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("milliseconds", 1)?;
            Ok::<_, PyErr>(td.call((), Some(&kwargs))?.unbind())
        })
        .map(|d| d.bind(py))
}

/// Unix milliseconds as an aware UTC `datetime` (`OverflowError` past year
/// 9999, where Python's `datetime` ends).
fn ms_to_datetime(py: Python<'_>, ms: u64) -> PyResult<Py<PyAny>> {
    Ok(unix_epoch(py)?.add(one_ms(py)?.mul(ms)?)?.unbind())
}

/// The end-of-range properties: `None` past year 9999.
fn end_datetime(py: Python<'_>, ms: u64) -> PyResult<Option<Py<PyAny>>> {
    match ms_to_datetime(py, ms) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(py) => Ok(None),
        Err(e) => Err(e),
    }
}

/// An aware `datetime` as Unix milliseconds (an `int`, floored).
fn datetime_to_ms<'py>(dt: &Bound<'py, PyAny>) -> Res<Bound<'py, PyAny>> {
    let py = dt.py();
    if dt.call_method0(intern!(py, "utcoffset"))?.is_none() {
        return Err(Fail::Py(PyTypeError::new_err(
            "a naive datetime has no time zone: pass an aware one (e.g. tzinfo=timezone.utc)",
        )));
    }
    Ok(dt.sub(unix_epoch(py)?)?.floor_div(one_ms(py)?)?)
}

// ---- Layout -----------------------------------------------------------------

/// One field of a layout: `name`, width `bits`, `shift` of its lowest bit, and
/// `kind` ("timestamp", "sequence" or "node").
#[pyclass(module = "snowmint", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash, Clone)]
struct Field {
    /// The field's name.
    #[pyo3(get)]
    name: String,
    /// Width in bits.
    #[pyo3(get)]
    bits: u32,
    /// Position of the field's lowest bit in the ID.
    #[pyo3(get)]
    shift: u32,
    /// "timestamp", "sequence" or "node".
    #[pyo3(get)]
    kind: &'static str,
}

#[pymethods]
impl Field {
    fn __repr__(&self) -> String {
        format!(
            "Field(name='{}', bits={}, shift={}, kind='{}')",
            self.name, self.bits, self.shift, self.kind
        )
    }
}

/// A layout: the epoch, the time unit, and the fields from the most
/// significant bit down. Build one with `Layout.preset`, `Layout.from_json` or
/// `Layout.parse`.
#[pyclass(module = "snowmint", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
struct Layout {
    inner: snowmint::Layout,
}

#[pymethods]
impl Layout {
    /// A preset by name (see `Layout.presets()`).
    #[staticmethod]
    fn preset(name: &str) -> PyResult<Layout> {
        Ok(Layout {
            inner: snowmint::Layout::preset(name).map_err(Fail::from)?,
        })
    }

    /// A layout from its JSON descriptor (or a preset's name as a JSON string).
    #[staticmethod]
    fn from_json(json: &str) -> PyResult<Layout> {
        Ok(Layout {
            inner: snowmint::Layout::from_json(json).map_err(Fail::from)?,
        })
    }

    /// A JSON descriptor (starting with `{` or `"`) or else a preset name.
    #[staticmethod]
    fn parse(s: &str) -> PyResult<Layout> {
        Ok(Layout {
            inner: snowmint::Layout::parse(s).map_err(Fail::from)?,
        })
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
        self.inner.max_id()
    }

    /// The fields, most significant first.
    #[getter]
    fn fields(&self) -> Vec<Field> {
        self.inner
            .fields()
            .iter()
            .map(|f| Field {
                name: f.name().to_owned(),
                bits: f.bits(),
                shift: f.shift(),
                kind: f.kind().as_str(),
            })
            .collect()
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
    fn time_end(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        end_datetime(py, self.inner.time_end_ms())
    }

    /// The first Unix ms from which IDs may not fit a signed 64-bit integer.
    #[getter]
    fn i64_end_ms(&self) -> u64 {
        self.inner.i64_end_ms()
    }

    /// `i64_end_ms` as an aware UTC datetime (None past year 9999).
    #[getter]
    fn i64_end(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        end_datetime(py, self.inner.i64_end_ms())
    }

    /// The first Unix ms from which IDs may exceed 2^53 (JavaScript's exact range).
    #[getter]
    fn js_safe_end_ms(&self) -> u64 {
        self.inner.js_safe_end_ms()
    }

    /// `js_safe_end_ms` as an aware UTC datetime (None past year 9999).
    #[getter]
    fn js_safe_end(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        end_datetime(py, self.inner.js_safe_end_ms())
    }

    /// The name of the preset equal to this layout, or None.
    #[getter]
    fn preset_name(&self) -> Option<&'static str> {
        self.inner.preset_name()
    }

    /// Splits an ID (int or decimal str) into its parts.
    fn decode(&self, id: &Bound<'_, PyAny>) -> PyResult<Parts> {
        Ok(decode_with(self.inner, id)?)
    }

    /// Builds an ID from a time (Unix ms), a sequence value and node values.
    #[pyo3(signature = (timestamp_ms, sequence = None, **nodes), text_signature = "(self, /, timestamp_ms, sequence=0, **nodes)")]
    fn compose(
        &self,
        timestamp_ms: &Bound<'_, PyAny>,
        sequence: Option<&Bound<'_, PyAny>>,
        nodes: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u64> {
        Ok(compose_with(self.inner, timestamp_ms, sequence, nodes)?)
    }

    /// The smallest and largest IDs whose time unit contains `time` (Unix ms
    /// or an aware datetime).
    fn id_bounds(&self, time: &Bound<'_, PyAny>) -> PyResult<(u64, u64)> {
        Ok(bounds_with(self.inner, time)?)
    }

    /// True when the ID fits the layout and decodes to a time between the
    /// epoch and `now_ms` plus one day.
    fn is_plausible(&self, id: &Bound<'_, PyAny>, now_ms: &Bound<'_, PyAny>) -> PyResult<bool> {
        let id = id_arg(id)?;
        let now = time_arg(now_ms, &self.inner, false)?;
        Ok(self.inner.is_plausible(id, now))
    }

    fn __repr__(&self) -> String {
        match self.inner.preset_name() {
            Some(name) => format!("Layout.preset('{name}')"),
            None => format!("Layout.from_json('{}')", self.inner.to_json()),
        }
    }
}

fn decode_with(layout: snowmint::Layout, id: &Bound<'_, PyAny>) -> Res<Parts> {
    let parts = layout.decompose(id_arg(id)?)?;
    Ok(Parts { parts, layout })
}

fn compose_with(
    layout: snowmint::Layout,
    timestamp_ms: &Bound<'_, PyAny>,
    sequence: Option<&Bound<'_, PyAny>>,
    nodes: Option<&Bound<'_, PyDict>>,
) -> Res<u64> {
    let time = time_arg(timestamp_ms, &layout, false)?;
    let (seq, shown) = match sequence {
        None => (0, None),
        Some(s) => match uint(s, "sequence")? {
            Ok(v) => (v, None),
            // No field holds u64::MAX: the core refuses it in its own order.
            Err(_) => (u64::MAX, Some(s.to_string())),
        },
    };
    let nodes = nodes_arg(&layout, &[nodes])?;
    layout
        .compose(time, seq, &nodes)
        .map_err(|e| match (&shown, e) {
            (Some(s), Error::NodeOutOfRange { field, .. })
                if field.as_str() == layout.sequence().name() =>
            {
                with_shown_value(e, s)
            }
            _ => Fail::Core(e),
        })
}

fn bounds_with(layout: snowmint::Layout, time: &Bound<'_, PyAny>) -> Res<(u64, u64)> {
    let t = time_arg(time, &layout, true)?;
    Ok(layout.id_bounds(t)?)
}

// ---- Parts ------------------------------------------------------------------

/// An ID split into its parts. Frozen; iterates and indexes like the tuple
/// `(id, timestamp_ms, sequence, nodes)`; node fields are also attributes
/// (`parts.worker`).
#[pyclass(module = "snowmint", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
struct Parts {
    parts: snowmint::Parts,
    layout: snowmint::Layout,
}

impl Parts {
    fn node_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (f, v) in self.layout.nodes().zip(self.parts.nodes()) {
            d.set_item(f.name(), *v)?;
        }
        Ok(d)
    }

    fn tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            [
                self.parts.id().get().into_bound_py_any(py)?,
                self.parts.timestamp_ms().into_bound_py_any(py)?,
                self.parts.sequence().into_bound_py_any(py)?,
                self.node_dict(py)?.into_any(),
            ],
        )
    }
}

/// The public attributes of `Parts`, which node fields of the same name do not
/// shadow (tests/test_api.py checks this list against the class).
const PARTS_ATTRS: [&str; 7] = [
    "id",
    "timestamp_ms",
    "time",
    "tick",
    "sequence",
    "nodes",
    "layout",
];

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
        self.node_dict(py)
    }

    /// The layout the ID was decoded with.
    #[getter]
    fn layout(&self) -> Layout {
        Layout { inner: self.layout }
    }

    /// The parts as a dict (like `NamedTuple._asdict`).
    fn _asdict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("id", self.parts.id().get())?;
        d.set_item("timestamp_ms", self.parts.timestamp_ms())?;
        d.set_item("sequence", self.parts.sequence())?;
        d.set_item("nodes", self.node_dict(py)?)?;
        Ok(d)
    }

    /// Node fields as attributes (`parts.worker`). Parts' own attributes
    /// come first, so a node field named like one (`id`, `time`...) is only
    /// in `.nodes`. This is `__getattribute__` rather than `__getattr__`
    /// because CPython calls `__getattr__` only after its generic lookup has
    /// raised and caught an `AttributeError`, which made `parts.worker` about
    /// eight times slower than `parts.id`.
    fn __getattribute__<'py>(
        slf: &Bound<'py, Self>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        if let Ok(s) = name.to_cow() {
            // Field names start with a letter: no dunder is a node field.
            if !s.starts_with('_') && !PARTS_ATTRS.contains(&&*s) {
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
        let i = if index < 0 { index + 4 } else { index };
        if !(0..4).contains(&i) {
            return Err(PyIndexError::new_err("Parts index out of range"));
        }
        self.tuple(py)?.get_item(i as usize)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.tuple(py)?.try_iter()?.into_any())
    }

    fn __repr__(&self) -> String {
        let nodes: Vec<String> = self
            .layout
            .nodes()
            .zip(self.parts.nodes())
            .map(|(f, v)| format!("'{}': {v}", f.name()))
            .collect();
        format!(
            "Parts(id={}, timestamp_ms={}, sequence={}, nodes={{{}}})",
            self.parts.id().get(),
            self.parts.timestamp_ms(),
            self.parts.sequence(),
            nodes.join(", ")
        )
    }
}

// ---- generators -------------------------------------------------------------

/// From this many IDs on, `next_ids` releases the GIL while the core fills the
/// buffer (below, releasing and re-taking it costs more than filling).
const DETACH_MIN: usize = 64;

/// The thread-safe, lock-free generator on the system clock. Generators of
/// one process with the same layout and node values share one state; a
/// generator created before `fork()` raises `ProcessForkedError` in the child.
#[pyclass(module = "snowmint", frozen)]
struct Generator {
    inner: SyncGenerator,
}

impl Generator {
    #[inline]
    fn next(&self, py: Python<'_>) -> Res<u64> {
        // The fast path keeps the GIL; only a wait releases it.
        match self.inner.try_next_id()? {
            Next::Id(id) => Ok(id.get()),
            Next::RetryAt(_) => Ok(py.detach(|| self.inner.next_id())?.get()),
        }
    }
}

#[pymethods]
impl Generator {
    #[new]
    #[pyo3(
        text_signature = "(layout='twitter', *, clock_backwards=None, sequence_exhausted=None, \
        sequence_start=None, seed=None, resume_after=None, nodes=None, **node_values)"
    )]
    #[pyo3(signature = (
        layout = None,
        *,
        clock_backwards = None,
        sequence_exhausted = None,
        sequence_start = None,
        seed = None,
        resume_after = None,
        nodes = None,
        **node_values
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        layout: Option<&Bound<'_, PyAny>>,
        clock_backwards: Option<&str>,
        sequence_exhausted: Option<&str>,
        sequence_start: Option<&str>,
        seed: Option<&Bound<'_, PyAny>>,
        resume_after: Option<&Bound<'_, PyAny>>,
        nodes: Option<&Bound<'_, PyDict>>,
        node_values: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Generator> {
        let layout = opt_layout_arg(layout)?;
        let nodes = nodes_arg(&layout, &[nodes, node_values])?;
        let options = options_arg(
            clock_backwards,
            sequence_exhausted,
            sequence_start,
            seed,
            resume_after,
        )?;
        let inner = SyncGenerator::new(layout, nodes, options).map_err(Fail::from)?;
        Ok(Generator { inner })
    }

    /// The next ID. Waits (with the GIL released) when a policy says to.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.next(py)?)
    }

    /// `n` increasing IDs, made by one core call (the GIL is released while
    /// it fills a buffer, for `n` >= 64).
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let count = uint(n, "n")?.map_err(|_| {
            Fail::Value(
                Error::InvalidOption(OptionProblem::Count),
                format!("invalid option: count {n} is not in 0..=2^32 [invalid_option]"),
            )
        });
        let n = SyncGenerator::<snowmint::SystemClock>::check_batch(count?).map_err(Fail::from)?;
        let mut buf: Vec<u64> = Vec::new();
        buf.try_reserve_exact(n)
            .map_err(|_| PyMemoryError::new_err("no memory for the IDs"))?;
        if n < DETACH_MIN {
            for _ in 0..n {
                buf.push(self.next(py)?);
            }
        } else {
            buf.resize(n, 0);
            py.detach(|| self.inner.next_ids(&mut buf))
                .map_err(Fail::from)?;
        }
        PyList::new(py, buf)
    }

    /// The layout.
    #[getter]
    fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner.config().layout(),
        }
    }

    /// The node values by field name.
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        config_nodes(py, self.inner.config())
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.next(py)?)
    }

    fn __repr__(&self) -> String {
        config_repr("Generator", self.inner.config())
    }
}

fn config_nodes<'py>(py: Python<'py>, cfg: &snowmint::Config) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (f, v) in cfg.layout().nodes().zip(cfg.nodes().values()) {
        d.set_item(f.name(), *v)?;
    }
    Ok(d)
}

fn config_repr(class: &str, cfg: &snowmint::Config) -> String {
    let layout = Layout {
        inner: *cfg.layout(),
    };
    let nodes: Vec<String> = cfg
        .layout()
        .nodes()
        .zip(cfg.nodes().values())
        .map(|(f, v)| format!(", {}={v}", f.name()))
        .collect();
    format!("{class}({}{})", layout.__repr__(), nodes.concat())
}

/// The core's pure generator: the caller passes the time. For tests and
/// simulations; `next(now_ms)` gives `("id", id)` or `("retry_at", ms)`.
#[pyclass(module = "snowmint")]
struct PureGenerator {
    inner: snowmint::PureGenerator,
}

#[pymethods]
impl PureGenerator {
    #[new]
    #[pyo3(
        text_signature = "(layout, *, clock_backwards=None, sequence_exhausted=None, \
        sequence_start=None, seed=0, resume_after=None, nodes=None, **node_values)"
    )]
    #[pyo3(signature = (
        layout,
        *,
        clock_backwards = None,
        sequence_exhausted = None,
        sequence_start = None,
        seed = None,
        resume_after = None,
        nodes = None,
        **node_values
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        layout: &Bound<'_, PyAny>,
        clock_backwards: Option<&str>,
        sequence_exhausted: Option<&str>,
        sequence_start: Option<&str>,
        seed: Option<&Bound<'_, PyAny>>,
        resume_after: Option<&Bound<'_, PyAny>>,
        nodes: Option<&Bound<'_, PyDict>>,
        node_values: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PureGenerator> {
        let layout = layout_arg(layout)?;
        let nodes = nodes_arg(&layout, &[nodes, node_values])?;
        let options = options_arg(
            clock_backwards,
            sequence_exhausted,
            sequence_start,
            seed,
            resume_after,
        )?;
        let inner = snowmint::PureGenerator::new(layout, nodes, options).map_err(Fail::from)?;
        Ok(PureGenerator { inner })
    }

    /// The next ID at clock reading `now_ms` (Unix ms): `("id", id)`, or
    /// `("retry_at", ms)` when no ID can be issued before `ms`.
    fn next<'py>(
        &mut self,
        py: Python<'py>,
        now_ms: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyString>, u64)> {
        let layout = *self.inner.config().layout();
        let now = time_arg(now_ms, &layout, false)?;
        Ok(match self.inner.next(now).map_err(Fail::from)? {
            Next::Id(id) => (intern!(py, "id").clone(), id.get()),
            Next::RetryAt(at) => (intern!(py, "retry_at").clone(), at),
        })
    }

    /// The layout.
    #[getter]
    fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner.config().layout(),
        }
    }

    /// The node values by field name.
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        config_nodes(py, self.inner.config())
    }

    fn __repr__(&self) -> String {
        config_repr("PureGenerator", self.inner.config())
    }
}

// ---- module functions ---------------------------------------------------------

/// Splits an ID (int or decimal str) into its parts under `layout` (a Layout,
/// a preset name or a JSON descriptor; default "twitter").
#[pyfunction]
#[pyo3(signature = (id, layout = None), text_signature = "(id, layout='twitter')")]
fn decode(id: &Bound<'_, PyAny>, layout: Option<&Bound<'_, PyAny>>) -> PyResult<Parts> {
    Ok(decode_with(opt_layout_arg(layout)?, id)?)
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
) -> PyResult<u64> {
    Ok(compose_with(
        layout_arg(layout)?,
        timestamp_ms,
        sequence,
        nodes,
    )?)
}

/// The smallest and largest IDs whose time unit contains `time` (Unix ms or an
/// aware datetime), for range queries.
#[pyfunction]
fn id_bounds(layout: &Bound<'_, PyAny>, time: &Bound<'_, PyAny>) -> PyResult<(u64, u64)> {
    Ok(bounds_with(layout_arg(layout)?, time)?)
}

fn encode(id: &Bound<'_, PyAny>, format: Format) -> PyResult<String> {
    let mut buf = [0u8; snowmint::MAX_STR_LEN];
    Ok(Id::new(id_arg(id)?).encode(format, &mut buf).to_owned())
}

fn parse(s: &str, format: Format) -> PyResult<u64> {
    Ok(Id::parse(s, format).map_err(Fail::from)?.get())
}

/// The ID in Crockford base32 (13 characters, upper case).
#[pyfunction]
fn to_base32(id: &Bound<'_, PyAny>) -> PyResult<String> {
    encode(id, Format::Base32)
}

/// Reads a Crockford base32 ID (13 characters).
#[pyfunction]
fn from_base32(s: &str) -> PyResult<u64> {
    parse(s, Format::Base32)
}

/// The ID in base62 (11 characters, 0-9A-Za-z).
#[pyfunction]
fn to_base62(id: &Bound<'_, PyAny>) -> PyResult<String> {
    encode(id, Format::Base62)
}

/// Reads a base62 ID (11 characters).
#[pyfunction]
fn from_base62(s: &str) -> PyResult<u64> {
    parse(s, Format::Base62)
}

/// The ID as a string in `format` ("decimal", "base32" or "base62").
#[pyfunction]
fn format_id(id: &Bound<'_, PyAny>, format: &str) -> PyResult<String> {
    encode(id, Format::from_name(format).map_err(Fail::from)?)
}

/// Reads an ID written in `format` ("decimal", "base32" or "base62").
#[pyfunction]
fn parse_id(s: &str, format: &str) -> PyResult<u64> {
    parse(s, Format::from_name(format).map_err(Fail::from)?)
}

#[pymodule]
fn _snowmint(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ERROR_CODES", Error::ALL_CODES.to_vec())?;
    m.add_class::<Layout>()?;
    m.add_class::<Field>()?;
    m.add_class::<Parts>()?;
    m.add_class::<Generator>()?;
    m.add_class::<PureGenerator>()?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(compose, m)?)?;
    m.add_function(wrap_pyfunction!(id_bounds, m)?)?;
    m.add_function(wrap_pyfunction!(to_base32, m)?)?;
    m.add_function(wrap_pyfunction!(from_base32, m)?)?;
    m.add_function(wrap_pyfunction!(to_base62, m)?)?;
    m.add_function(wrap_pyfunction!(from_base62, m)?)?;
    m.add_function(wrap_pyfunction!(format_id, m)?)?;
    m.add_function(wrap_pyfunction!(parse_id, m)?)?;
    let base = py.get_type::<SnowmintError>();
    base.setattr("code", py.None())?;
    m.add("SnowmintError", base)?;
    // Each subclass also carries its code as a class attribute.
    let classes = [
        (py.get_type::<InvalidLayoutError>(), "invalid_layout"),
        (py.get_type::<UnknownPresetError>(), "unknown_preset"),
        (py.get_type::<UnknownFieldError>(), "unknown_field"),
        (py.get_type::<MissingNodeError>(), "missing_node"),
        (py.get_type::<NodeOutOfRangeError>(), "node_out_of_range"),
        (py.get_type::<InvalidOptionError>(), "invalid_option"),
        (py.get_type::<TimeBeforeEpochError>(), "time_before_epoch"),
        (py.get_type::<TimeOverflowError>(), "time_overflow"),
        (
            py.get_type::<ClockMovedBackwardsError>(),
            "clock_moved_backwards",
        ),
        (py.get_type::<InvalidIdError>(), "invalid_id"),
        (py.get_type::<ProcessForkedError>(), "process_forked"),
    ];
    for (class, code) in classes {
        class.setattr("code", code)?;
        m.add(class.name()?, class)?;
    }
    Ok(())
}
