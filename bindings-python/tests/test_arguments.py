"""vectors/arguments.json: how a loose argument becomes a value or an error
(code and class), decided once by the core's conversion layer
(docs/SEMANTICS.md, "Arguments"). Python agrees with every other language."""

import pytest

import snowmint
from conftest import load_vectors

CASES = load_vectors("arguments")["cases"]
T = 1700000000000
FLOATS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf"), "-0": -0.0}
# Python spells options as keyword arguments beside the node values, so a
# key that is not an option is a node field there (unknown_field), and an
# options argument that is not a mapping cannot be written at all.
OPTION_SPELLINGS = {
    "clock_backwards", "sequence_exhausted", "sequence_start", "seed", "resume_after",
    "clockBackwards", "sequenceExhausted", "sequenceStart", "resumeAfter",
}


def py(v):
    """The argument as a Python caller has it."""
    if "int" in v:
        return int(v["int"])
    if "float" in v:
        f = v["float"]
        return FLOATS[f] if isinstance(f, str) else float(f)
    if "str" in v:
        return v["str"]
    if "bool" in v:
        return v["bool"]
    if "absent" in v:
        return None
    if "map" in v:
        return {k: py(x) for k, x in v["map"]}
    return []  # "other": a list


def kwargs_call(fn, v):
    """Calls fn with `v` spread as keyword arguments (None: none)."""
    if v is None:
        return fn()
    if not isinstance(v, dict):
        pytest.skip("not expressible as keyword arguments")
    return fn(**v)


def options(v):
    if isinstance(v, dict) and not set(v) <= OPTION_SPELLINGS:
        pytest.skip("an unknown keyword is a node field in Python")
    g = kwargs_call(lambda **o: snowmint.PureGenerator("twitter", datacenter=1, worker=1, **o), v)
    kind, value = g.next(T)
    return str(value) if kind == "id" else {"retry_at": value}


CALLS = {
    "id": lambda v: snowmint.format_id(v, "decimal"),
    "time": lambda v: [str(x) for x in snowmint.id_bounds("twitter", v)],
    "sequence": lambda v: str(snowmint.compose("twitter", T, v, datacenter=1, worker=1)),
    "node": lambda v: str(snowmint.compose("twitter", T, 0, datacenter=1, worker=v)),
    "count": lambda v: len(snowmint.Generator("twitter", datacenter=1, worker=1).next_ids(v)),
    "layout": lambda v: [str(x) for x in snowmint.id_bounds(v, T)],
    "nodes": lambda v: str(kwargs_call(lambda **n: snowmint.compose("twitter", T, 0, **n), v)),
    "options": options,
    "format": lambda v: snowmint.format_id(1541815603606036480, v),
}


def test_every_kind_has_a_call():
    assert {c["arg"] for c in CASES} == set(CALLS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f'{c["arg"]}-{c["value"]}')
def test_argument(case):
    call = CALLS[case["arg"]]
    value = py(case["value"])
    if "error" not in case:
        assert call(value) == case["expect"]
        return
    with pytest.raises(snowmint.SnowmintError) as info:
        call(value)
    e = info.value
    assert e.code == case["error"], str(e)
    # Every snowmint exception is a ValueError; a wrong type's is a TypeError too.
    assert isinstance(e, TypeError) == (case["class"] == "type"), f"{type(e).__mro__}: {e}"
