//! Core errors as Python exceptions, in one place ([`raise`]).
//!
//! `SnowmintError(ValueError)` is the base. For each code of
//! `Error::ALL_CODES` the module creates, at init, a subclass named after the
//! code (`invalid_id` -> `InvalidIdError`) and, for arguments of the wrong
//! type (`ErrorClass::Type`), a subclass of that and `TypeError`
//! (`InvalidIdTypeError`). Every class has the code in `.code`; the message
//! is the core's.

use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use snowmint::{Error, ErrorClass};

create_exception!(
    snowmint,
    SnowmintError,
    PyValueError,
    "The base of every snowmint error. `.code` is the core's stable error code (the same in every language)."
);

/// Per code index: the code's class and its `TypeError` subclass.
static CLASSES: PyOnceLock<Vec<[Py<PyType>; 2]>> = PyOnceLock::new();

/// `invalid_id` -> `InvalidIdError` (with `suffix` "Error").
fn class_name(code: &str, suffix: &str) -> String {
    let words = code.split('_').map(|w| w[..1].to_uppercase() + &w[1..]);
    words.collect::<String>() + suffix
}

fn new_class<'py>(
    py: Python<'py>,
    name: String,
    bases: Bound<'py, PyTuple>,
    code: &str,
    doc: String,
) -> PyResult<Bound<'py, PyType>> {
    let dict = PyDict::new(py);
    dict.set_item("__module__", "snowmint")?;
    dict.set_item("__doc__", doc)?;
    dict.set_item("code", code)?;
    let class = py.get_type::<PyType>().call1((name, bases, dict))?;
    Ok(class.cast_into::<PyType>()?)
}

/// The classes, made on first use (the module's init).
pub fn classes(py: Python<'_>) -> PyResult<&[[Py<PyType>; 2]]> {
    let table = CLASSES.get_or_try_init(py, || {
        let base = py.get_type::<SnowmintError>();
        base.setattr("code", py.None())?;
        let type_error = py.get_type::<PyTypeError>();
        Error::ALL_CODES
            .iter()
            .map(|&code| {
                let name = class_name(code, "Error");
                let doc = format!("The error of code `{code}` (a ValueError).");
                let value = new_class(py, name.clone(), PyTuple::new(py, [&base])?, code, doc)?;
                let doc = format!("`{name}` for an argument of the wrong type (also a TypeError).");
                let bases = PyTuple::new(py, [&value, &type_error])?;
                let typed = new_class(py, class_name(code, "TypeError"), bases, code, doc)?;
                Ok([value.unbind(), typed.unbind()])
            })
            .collect::<PyResult<Vec<_>>>()
    })?;
    Ok(table)
}

/// The one place a core error becomes a Python exception.
pub fn raise(e: Error) -> PyErr {
    Python::attach(|py| match classes(py) {
        Ok(table) => {
            let typed = usize::from(e.class() == ErrorClass::Type);
            PyErr::from_type(table[e.code_index()][typed].bind(py).clone(), e.to_string())
        }
        Err(err) => err,
    })
}

/// A core error or a Python exception, as the binding's functions return
/// it (`?` converts both).
pub struct Fail(PyErr);

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail(raise(e))
    }
}

impl From<PyErr> for Fail {
    fn from(e: PyErr) -> Fail {
        Fail(e)
    }
}

impl From<Fail> for PyErr {
    fn from(f: Fail) -> PyErr {
        f.0
    }
}

pub type Res<T> = Result<T, Fail>;
