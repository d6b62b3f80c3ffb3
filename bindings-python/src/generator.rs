//! `Generator` (thread-safe, system clock) and `PureGenerator` (time passed in).

use pyo3::exceptions::{PyMemoryError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyType};
use snowmint::{Config, Next, Value};
use snowmint_lease::{AnyGenerator, InfoValue};

use crate::convert::{opt_value, value};
use crate::errors::Res;
use crate::layout::{layout_arg, node_dict, Layout};

/// The layout, node values and options of a generator's constructor, as the
/// core's values. The keyword arguments named by the core's option keys are
/// options, the others node values, added to the `nodes` dict's (whose keys
/// are always node fields, even one named like an option).
fn split(
    layout: Option<&Bound<'_, PyAny>>,
    nodes: Option<&Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> Res<(snowmint::Layout, Value, Value)> {
    let layout = layout_arg(layout)?;
    let pairs = match opt_value(kwargs.map(|d| d.as_any()))? {
        Value::Map(pairs) => pairs,
        _ => Vec::new(),
    };
    let (options, given): (Vec<_>, Vec<_>) = pairs
        .into_iter()
        .partition(|(k, _)| snowmint::option_key(k).is_some());
    let nodes = match opt_value(nodes)? {
        Value::Absent => Value::Map(given),
        Value::Map(dict) => Value::Map(dict.into_iter().chain(given).collect()),
        other => other,
    };
    Ok((layout, nodes, Value::Map(options)))
}

/// `Class(layout, field=value, ...)`; `leased` (the leased field and the
/// store's repr) marks the field a lease assigned.
fn config_repr(class: &str, cfg: &Config, leased: Option<(&str, &str)>) -> String {
    let layout = Layout::from(*cfg.layout()).__repr__();
    let nodes = cfg.layout().nodes().zip(cfg.nodes().values());
    let nodes: String = nodes
        .map(|(f, v)| match leased {
            Some((field, store)) if field == f.name() => {
                format!(", {}={v} leased from {store}", f.name())
            }
            _ => format!(", {}={v}", f.name()),
        })
        .collect();
    format!("{class}({layout}{nodes})")
}

/// From this many IDs on, `next_ids` releases the GIL while the core fills the
/// buffer (below, releasing and re-taking it costs more than filling).
const DETACH_MIN: usize = 64;

/// Why a `Generator` cannot be pickled or copied.
const NO_COPY: &str = "a snowmint.Generator cannot be pickled or copied: it owns the clock \
state (and maybe a lease) behind the IDs it issues, and two copies would issue duplicate IDs; \
create a new Generator in each process, with its own node values or a lease";

/// The thread-safe, lock-free generator on the system clock. Generators of
/// one process with the same layout and node values share one state; a
/// generator created before `fork()` raises `ProcessForkedError` in the child.
/// With `lease=URL`, a store assigns the one node field left out; `close()`
/// (or the end of a `with` block, or garbage collection) releases it. Pickling
/// or copying one raises `TypeError` (two copies would issue duplicate IDs).
#[pyclass(module = "snowmint", frozen)]
pub struct Generator {
    inner: AnyGenerator,
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
        signature = (layout = None, *, nodes = None, **kwargs),
        text_signature = "(layout='twitter', *, clock_backwards=None, sequence_exhausted=None, \
        sequence_start=None, seed=None, resume_after=None, lease=None, nodes=None, **node_values)"
    )]
    fn new(
        layout: Option<&Bound<'_, PyAny>>,
        nodes: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> Res<Generator> {
        let (layout, nodes, options) = split(layout, nodes, kwargs)?;
        let inner = AnyGenerator::from_values(layout, &nodes, &options)?;
        Ok(Generator { inner })
    }

    /// The next ID. Waits (with the GIL released) when a policy says to.
    fn next_id(&self, py: Python<'_>) -> Res<u64> {
        self.next(py)
    }

    /// `n` increasing IDs (1 to 2**32), made by one core call (the GIL is
    /// released while it fills a buffer, for `n` >= 64).
    fn next_ids<'py>(&self, py: Python<'py>, n: &Bound<'py, PyAny>) -> Res<Bound<'py, PyList>> {
        let n = value(n)?.to_count()?;
        let mut buf: Vec<u64> = Vec::new();
        buf.try_reserve_exact(n)
            .map_err(|_| PyMemoryError::new_err("no memory for the IDs"))?;
        if n < DETACH_MIN {
            for _ in 0..n {
                buf.push(self.next(py)?);
            }
        } else {
            buf.resize(n, 0);
            py.detach(|| self.inner.next_ids(&mut buf))?;
        }
        Ok(PyList::new(py, buf)?)
    }

    /// The layout.
    #[getter]
    fn layout(&self) -> Layout {
        (*self.inner.config().layout()).into()
    }

    /// The node values by field name (the leased one included).
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let cfg = self.inner.config();
        node_dict(py, cfg.layout(), cfg.nodes().values())
    }

    /// The lease's state as a new dict (`store`, `field`, `slot`,
    /// `reserved_until_ms`, `expires_ms`...), or None without a lease.
    #[getter]
    fn lease<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(info) = self.inner.lease() else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        for (key, _, v) in info.entries() {
            match v {
                InfoValue::Int(i) => dict.set_item(key, i)?,
                InfoValue::Text(t) => dict.set_item(key, t)?,
                InfoValue::None => dict.set_item(key, py.None())?,
            }
        }
        Ok(Some(dict))
    }

    /// Releases the lease (the GIL released meanwhile): later `next_id` calls
    /// raise `LeaseExpiredError`; a second `close()` does nothing. Without a
    /// lease, nothing happens.
    fn close(&self, py: Python<'_>) -> Res<()> {
        Ok(py.detach(|| self.inner.close())?)
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// Closes the generator (see `close`); an exception in the block
    /// propagates.
    #[pyo3(signature = (exc_type, exc_value, traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyType>>,
        exc_value: Option<&Bound<'_, PyAny>>,
        traceback: Option<&Bound<'_, PyAny>>,
    ) -> Res<()> {
        let _ = (exc_type, exc_value, traceback);
        self.close(py)
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> Res<u64> {
        self.next(py)
    }

    /// Refused: `TypeError` (two copies would issue duplicate IDs).
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(NO_COPY))
    }

    /// Refused: `TypeError` (two copies would issue duplicate IDs).
    fn __reduce_ex__(&self, protocol: &Bound<'_, PyAny>) -> PyResult<()> {
        let _ = protocol;
        Err(PyTypeError::new_err(NO_COPY))
    }

    /// Refused: `TypeError` (two copies would issue duplicate IDs).
    fn __copy__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(NO_COPY))
    }

    /// Refused: `TypeError` (two copies would issue duplicate IDs).
    fn __deepcopy__(&self, memo: &Bound<'_, PyAny>) -> PyResult<()> {
        let _ = memo;
        Err(PyTypeError::new_err(NO_COPY))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let cfg = self.inner.config();
        Ok(match self.inner.lease() {
            None => config_repr("Generator", cfg, None),
            Some(info) => {
                let store = PyString::new(py, &info.store).repr()?;
                config_repr("Generator", cfg, Some((&info.field, &store.to_cow()?)))
            }
        })
    }
}

/// The core's pure generator: the caller passes the time. For tests and
/// simulations; `next(now_ms)` gives `("id", id)` or `("retry_at", ms)`.
#[pyclass(module = "snowmint")]
pub struct PureGenerator {
    inner: snowmint::PureGenerator,
}

#[pymethods]
impl PureGenerator {
    #[new]
    #[pyo3(
        signature = (layout, *, nodes = None, **kwargs),
        text_signature = "(layout, *, clock_backwards=None, sequence_exhausted=None, \
        sequence_start=None, seed=0, resume_after=None, nodes=None, **node_values)"
    )]
    fn new(
        layout: &Bound<'_, PyAny>,
        nodes: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> Res<PureGenerator> {
        let (layout, nodes, options) = split(Some(layout), nodes, kwargs)?;
        let (nodes, options) = (nodes.to_nodes(&layout)?, options.to_options()?);
        let inner = snowmint::PureGenerator::new(layout, nodes, options)?;
        Ok(PureGenerator { inner })
    }

    /// The next ID at clock reading `now_ms` (Unix ms): `("id", id)`, or
    /// `("retry_at", ms)` when no ID can be issued before `ms`.
    fn next(&mut self, now_ms: &Bound<'_, PyAny>) -> Res<(&'static str, u64)> {
        Ok(match self.inner.next(value(now_ms)?.to_time_ms()?)? {
            Next::Id(id) => ("id", id.get()),
            Next::RetryAt(at) => ("retry_at", at),
        })
    }

    /// Bounds the generator by a lease's confirmed reservation: IDs only in
    /// time units up to the one holding `until_ms` (Unix ms), then
    /// `LeaseExpiredError`; `None` removes the bound.
    #[pyo3(signature = (until_ms))]
    fn reserve_until(&mut self, until_ms: Option<&Bound<'_, PyAny>>) -> Res<()> {
        let until = opt_value(until_ms)?.to_opt_time_ms()?;
        self.inner.reserve_until(until);
        Ok(())
    }

    /// The layout.
    #[getter]
    fn layout(&self) -> Layout {
        (*self.inner.config().layout()).into()
    }

    /// The node values by field name.
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let cfg = self.inner.config();
        node_dict(py, cfg.layout(), cfg.nodes().values())
    }

    fn __repr__(&self) -> String {
        config_repr("PureGenerator", self.inner.config(), None)
    }
}
