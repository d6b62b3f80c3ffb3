"""Shared helpers: where the repository's vectors and README are.

cargo xtask test python sets SNOWMINT_ROOT (and SNOWMINT_VECTORS); run from a
checkout, the paths fall back to the repository around this file. The tests
import the installed `snowmint`, never the source tree.
"""

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("SNOWMINT_ROOT") or Path(__file__).resolve().parents[2])
VECTORS = Path(os.environ.get("SNOWMINT_VECTORS") or ROOT / "vectors")


def load_vectors(name):
    """One vector file, e.g. load_vectors("ids")."""
    with open(VECTORS / f"{name}.json", encoding="utf-8") as f:
        return json.load(f)


def raises_code(code):
    """pytest.raises for the SnowmintError subclass of `code`, checking `.code`.

    An argument of the wrong type raises the code's subclass that is also a
    TypeError (`InvalidIdTypeError` for `invalid_id`); that passes too.
    """
    import snowmint

    cls = next(
        getattr(snowmint, n)
        for n in snowmint.__all__
        if isinstance(getattr(snowmint, n), type)
        and issubclass(getattr(snowmint, n), snowmint.SnowmintError)
        and not issubclass(getattr(snowmint, n), TypeError)
        and getattr(snowmint, n).code == code
    )
    return _Raises(cls, code)


class _Raises:
    def __init__(self, cls, code):
        self.cls = cls
        self.code = code
        self._cm = pytest.raises(cls)

    def __enter__(self):
        self.info = self._cm.__enter__()
        return self.info

    def __exit__(self, *exc):
        suppress = self._cm.__exit__(*exc)
        assert self.info.value.code == self.code
        typed = getattr(sys.modules["snowmint"], self.cls.__name__[: -len("Error")] + "TypeError")
        assert type(self.info.value) in (self.cls, typed)
        return suppress
