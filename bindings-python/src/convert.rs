//! Python values to the core's loose [`Value`] (the core's conversion layer
//! decides what each argument accepts), and datetimes both ways.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use snowmint::Value;

use crate::layout::Layout;

/// A Python argument as a [`Value`]. `bool` is checked before `int`, whose
/// subclass it is.
pub fn value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    Ok(if obj.is_none() {
        Value::Absent
    } else if let Ok(b) = obj.cast::<PyBool>() {
        Value::Bool(b.is_true())
    } else if let Ok(i) = obj.cast::<PyInt>() {
        // `u64` first: under the stable ABI an `i128` takes several calls.
        if let Ok(v) = i.extract::<u64>() {
            Value::from(v)
        } else if let Ok(v) = i.extract::<i128>() {
            Value::from(v)
        } else {
            let negative = i.lt(0)?;
            Value::Int {
                negative,
                low: 0,
                lossless: false,
            }
        }
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        Value::Float(f.value())
    } else if let Ok(s) = obj.cast::<PyString>() {
        Value::Str(s.to_cow()?.into_owned())
    } else if let Ok(d) = obj.cast::<PyDict>() {
        let mut pairs = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            match k.cast::<PyString>() {
                Ok(k) => pairs.push((k.to_cow()?.into_owned(), value(&v)?)),
                Err(_) => return Ok(Value::Other("a dict with a key that is not a str")),
            }
        }
        Value::Map(pairs)
    } else if let Ok(l) = obj.cast::<Layout>() {
        Value::Layout(l.get().inner)
    } else {
        Value::Other(match &*obj.get_type().name()?.to_cow()? {
            "list" => "a list",
            "tuple" => "a tuple",
            "bytes" => "bytes",
            "datetime" => "a datetime",
            "Decimal" => "a Decimal",
            _ => "an object of another type",
        })
    })
}

/// An optional argument (a `**kwargs` dict, a default) as a [`Value`].
pub fn opt_value(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Value> {
    obj.map_or(Ok(Value::Absent), value)
}

/// A time argument: as [`value`], and an aware `datetime` as its Unix
/// milliseconds (floored).
pub fn time_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let [datetime, epoch, ms] = datetimes(obj.py())?;
    if !obj.is_instance(datetime.bind(obj.py()))? {
        value(obj)
    } else if obj.call_method0("utcoffset")?.is_none() {
        Ok(Value::Other("a naive datetime (pass an aware one)"))
    } else {
        value(&obj.sub(epoch)?.floor_div(ms)?)
    }
}

static DATETIMES: PyOnceLock<[Py<PyAny>; 3]> = PyOnceLock::new();

/// The class `datetime`, 1970-01-01T00:00:00Z and one millisecond.
fn datetimes(py: Python<'_>) -> PyResult<&[Py<PyAny>; 3]> {
    DATETIMES.get_or_try_init(py, || {
        let module = py.import("datetime")?;
        let datetime = module.getattr("datetime")?;
        let utc = module.getattr("timezone")?.getattr("utc")?;
        let epoch = datetime.call1((1970, 1, 1, 0, 0, 0, 0, utc))?;
        let ms = module.getattr("timedelta")?.call1((0, 0, 0, 1))?;
        Ok([datetime.unbind(), epoch.unbind(), ms.unbind()])
    })
}

/// Unix milliseconds as an aware UTC `datetime` (`OverflowError` past year
/// 9999, where Python's `datetime` ends).
pub fn ms_to_datetime(py: Python<'_>, ms: u64) -> PyResult<Py<PyAny>> {
    let [_, epoch, one_ms] = datetimes(py)?;
    Ok(epoch.bind(py).add(one_ms.bind(py).mul(ms)?)?.unbind())
}
