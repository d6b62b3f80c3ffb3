//! Core errors (and the lease layer's, which carry one) as Python
//! exceptions, in one place ([`raise`]): per code of
//! `Error::ALL_CODES`, a subclass of `SnowmintError(ValueError)` and, for
//! `ErrorClass::Type`, a subclass of that and `TypeError`, made at init.

use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{IntoPyDict, PyTuple, PyType};
use snowmint::{Error, ErrorClass};
use snowmint_lease::LeaseError;

create_exception!(
    snowmint,
    SnowmintError,
    PyValueError,
    "The base of every snowmint error. `.code` is the core's stable error code (the same in every language)."
);

/// Per code index: the code's class and its `TypeError` subclass.
static CLASSES: PyOnceLock<Vec<[Py<PyType>; 2]>> = PyOnceLock::new();

/// The class of `code` on `bases`: `invalid_id` -> `InvalidIdError`, or
/// `InvalidIdTypeError` on two bases (the code's class and `TypeError`).
fn new_class<'py>(code: &str, bases: &[&Bound<'py, PyType>]) -> PyResult<Bound<'py, PyType>> {
    let (py, typed) = (bases[0].py(), bases.len() > 1);
    let words = code.split('_').map(|w| w[..1].to_uppercase() + &w[1..]);
    let name = words.collect::<String>() + ["Error", "TypeError"][usize::from(typed)];
    let what = ["a ValueError", "for an argument of the wrong type"][usize::from(typed)];
    let dict = [("__module__", "snowmint"), ("code", code)].into_py_dict(py)?;
    let class = py
        .get_type::<PyType>()
        .call1((name, PyTuple::new(py, bases)?, dict))?;
    class.setattr("__doc__", format!("The error of code `{code}` ({what})."))?;
    Ok(class.cast_into()?)
}

/// The classes, made on first use (the module's init).
pub fn classes(py: Python<'_>) -> PyResult<&[[Py<PyType>; 2]]> {
    let table: &Vec<_> = CLASSES.get_or_try_init(py, || {
        let base = py.get_type::<SnowmintError>();
        base.setattr("code", py.None())?;
        let type_error = py.get_type::<PyTypeError>();
        let class = |&code: &&str| {
            let value = new_class(code, &[&base])?;
            let typed = new_class(code, &[&value, &type_error])?;
            Ok([value.unbind(), typed.unbind()])
        };
        Error::ALL_CODES.iter().map(class).collect::<PyResult<_>>()
    })?;
    Ok(table)
}

/// The one place an error becomes a Python exception: the class of `e`'s
/// code (and error class), with `message`.
fn raise(e: &Error, message: String) -> PyErr {
    Python::attach(|py| match classes(py) {
        Ok(table) => {
            let typed = usize::from(e.class() == ErrorClass::Type);
            PyErr::from_type(table[e.code_index()][typed].bind(py).clone(), message)
        }
        Err(err) => err,
    })
}

/// A core or lease error or a Python exception, as the binding's functions
/// return it (`?` converts each).
pub struct Fail(PyErr);

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail(raise(&e, e.to_string()))
    }
}

/// A lease error: the class of its core error, the lease layer's message
/// (which names the store and the cause).
impl From<LeaseError> for Fail {
    fn from(e: LeaseError) -> Fail {
        Fail(raise(&e.kind, e.to_string()))
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
