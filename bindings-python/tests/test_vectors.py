"""Every case of every file in vectors/, through the public API of the installed package."""

import time

import pytest

import snowmint
from snowmint import Layout, PureGenerator

from conftest import load_vectors, raises_code

LAYOUTS = load_vectors("layouts")
IDS = load_vectors("ids")
STRINGS = load_vectors("strings")
GENERATE = load_vectors("generate")
CODES = load_vectors("codes")


def names(cases):
    return [c.get("name", str(i)) for i, c in enumerate(cases)]


@pytest.mark.parametrize("case", LAYOUTS["cases"], ids=names(LAYOUTS["cases"]))
def test_layouts(case):
    if "error" in case and "now_ms" in case:
        # The layout reads, but a generator refuses an epoch later than the
        # clock; the system clock stands in for `now_ms` (both are before it).
        layout = Layout.parse(case["layout"])
        assert time.time() * 1000 < layout.epoch_ms
        assert case["now_ms"] < layout.epoch_ms
        with raises_code(case["error"]):
            snowmint.Generator(layout)
        with raises_code(case["error"]):
            snowmint.Generator(case["layout"])
        return
    if "error" in case:
        with raises_code(case["error"]):
            Layout.parse(case["layout"])
        return
    e = case["expect"]
    for layout in (Layout.parse(case["layout"]), Layout.from_json(e["json"]), Layout.parse(e["json"])):
        assert layout.to_json() == e["json"]
        assert layout.epoch_ms == e["epoch_ms"]
        assert layout.time_unit_ms == e["time_unit_ms"]
        assert layout.total_bits == e["total_bits"]
        assert layout.max_id == int(e["max_id"])
        assert layout.time_end_ms == e["time_end_ms"]
        assert layout.i64_end_ms == e["i64_end_ms"]
        assert layout.js_safe_end_ms == e["js_safe_end_ms"]
        fields = [{"name": f.name, "bits": f.bits, "shift": f.shift, "kind": f.kind} for f in layout.fields]
        assert fields == e["fields"]
        assert layout.node_names == [f["name"] for f in e["fields"] if f["kind"] == "node"]
        assert layout.preset_name == e["preset_name"]
        assert layout == Layout.parse(case["layout"])
    if e["preset_name"] is not None:
        assert Layout.preset(e["preset_name"]).to_json() == e["json"]


@pytest.mark.parametrize("case", IDS["decode"])
def test_decode(case):
    layout = Layout.parse(case["layout"])
    for id_ in (int(case["id"]), case["id"]):
        calls = (
            lambda id_=id_: snowmint.decode(id_, case["layout"]),
            lambda id_=id_: snowmint.decode(id_, layout),
            lambda id_=id_: layout.decode(id_),
        )
        for call in calls:
            if "error" in case:
                with raises_code(case["error"]):
                    call()
                continue
            e = case["expect"]
            p = call()
            assert p.id == int(case["id"])
            assert p.timestamp_ms == e["timestamp_ms"]
            assert p.sequence == e["sequence"]
            assert p.nodes == e["nodes"]
            for name, value in e["nodes"].items():
                assert getattr(p, name) == value
            assert snowmint.to_base32(id_) == e["base32"]
            assert snowmint.id_bounds(layout, p.timestamp_ms) == tuple(int(x) for x in e["bounds"])
            assert layout.id_bounds(p.timestamp_ms) == tuple(int(x) for x in e["bounds"])
    if case["layout"] == "twitter":
        # The default layout of decode() is twitter.
        if "error" in case:
            with raises_code(case["error"]):
                snowmint.decode(case["id"])
        else:
            assert snowmint.decode(case["id"]) == layout.decode(case["id"])


@pytest.mark.parametrize("case", IDS["compose"])
def test_compose(case):
    layout = Layout.parse(case["layout"])
    calls = (
        lambda: snowmint.compose(case["layout"], case["timestamp_ms"], case["sequence"], **case["nodes"]),
        lambda: snowmint.compose(layout, case["timestamp_ms"], sequence=case["sequence"], **case["nodes"]),
        lambda: layout.compose(case["timestamp_ms"], case["sequence"], **case["nodes"]),
    )
    for call in calls:
        if "error" in case:
            with raises_code(case["error"]):
                call()
        else:
            assert call() == int(case["expect"])


@pytest.mark.parametrize("case", IDS["bounds"])
def test_bounds(case):
    layout = Layout.parse(case["layout"])
    for call in (
        lambda: snowmint.id_bounds(case["layout"], case["timestamp_ms"]),
        lambda: layout.id_bounds(case["timestamp_ms"]),
    ):
        if "error" in case:
            with raises_code(case["error"]):
                call()
        else:
            assert call() == tuple(int(x) for x in case["expect"])


@pytest.mark.parametrize("case", IDS["fits"])
def test_fits(case):
    for id_ in (int(case["id"]), case["id"]):
        fits = [n for n in Layout.presets() if Layout.preset(n).is_plausible(id_, case["now_ms"])]
        assert fits == case["expect"]


@pytest.mark.parametrize("case", STRINGS["encode"])
def test_encode(case):
    id_ = int(case["id"])
    for fmt in ("decimal", "base32", "base62"):
        assert snowmint.format_id(id_, fmt) == case[fmt]
        assert snowmint.format_id(case["id"], fmt) == case[fmt]
        assert snowmint.parse_id(case[fmt], fmt) == id_
    assert snowmint.to_base32(id_) == case["base32"]
    assert snowmint.to_base62(id_) == case["base62"]
    assert snowmint.from_base32(case["base32"]) == id_
    assert snowmint.from_base62(case["base62"]) == id_


@pytest.mark.parametrize("case", STRINGS["parse"])
def test_parse(case):
    calls = [lambda: snowmint.parse_id(case["input"], case["format"])]
    if case["format"] == "base32":
        calls.append(lambda: snowmint.from_base32(case["input"]))
    if case["format"] == "base62":
        calls.append(lambda: snowmint.from_base62(case["input"]))
    if case["format"] == "decimal":
        calls.append(lambda: snowmint.decode(case["input"], "mastodon").id)
        calls.append(lambda: Layout.preset("mastodon").decode(case["input"]).id)
    for call in calls:
        if "error" in case:
            with raises_code(case["error"]):
                call()
        else:
            assert call() == int(case["expect"])


def test_js_numbers_as_floats():
    # js_numbers describes JavaScript `number` arguments; a Python float goes
    # through the core's conversion layer the same way.
    assert STRINGS["js_numbers"]
    for case in STRINGS["js_numbers"]:
        number = float(case["number"])
        if "error" in case:
            with raises_code(case["error"]):
                snowmint.format_id(number, "decimal")
        else:
            assert snowmint.format_id(number, "decimal") == case["expect"]


def options_kwargs(case):
    o = dict(case.get("options", {}))
    kw = {k: o[k] for k in ("clock_backwards", "sequence_exhausted", "sequence_start") if k in o}
    if "seed" in o:
        kw["seed"] = int(o["seed"])
    if "resume_after" in o:
        kw["resume_after"] = int(o["resume_after"])
    return kw


@pytest.mark.parametrize("case", GENERATE["cases"], ids=names(GENERATE["cases"]))
def test_generate(case):
    kw = options_kwargs(case)
    if "error" in case:
        with raises_code(case["error"]):
            PureGenerator(case["layout"], **kw, **case["nodes"])
        with raises_code(case["error"]):
            PureGenerator(Layout.parse(case["layout"]), nodes=case["nodes"], **kw)
        return
    for g in (
        PureGenerator(case["layout"], **kw, **case["nodes"]),
        PureGenerator(Layout.parse(case["layout"]), nodes=case["nodes"], **kw),
    ):
        assert g.layout == Layout.parse(case["layout"])
        assert g.nodes == case["nodes"]
        for i, step in enumerate(case["steps"]):
            if "reserve_until_ms" in step:
                g.reserve_until(step["reserve_until_ms"])
                continue
            if "error" in step:
                with raises_code(step["error"]):
                    g.next(step["now_ms"])
            elif "retry_at" in step:
                assert g.next(step["now_ms"]) == ("retry_at", step["retry_at"]), f"step {i}"
            else:
                assert g.next(step["now_ms"]) == ("id", int(step["id"])), f"step {i}"


def test_codes_map_to_subclasses():
    codes = CODES["codes"]
    assert codes == snowmint.ERROR_CODES
    classes = {
        getattr(snowmint, n).code: getattr(snowmint, n)
        for n in snowmint.__all__
        if isinstance(getattr(snowmint, n), type)
        and issubclass(getattr(snowmint, n), snowmint.SnowmintError)
        and not issubclass(getattr(snowmint, n), TypeError)
    }
    for code in codes:
        cls = classes[code]
        assert cls is not snowmint.SnowmintError
        assert issubclass(cls, snowmint.SnowmintError)
        assert issubclass(cls, ValueError)
        assert cls.__module__ == "snowmint"
        # Its subclass for arguments of the wrong type is also a TypeError.
        typed = getattr(snowmint, cls.__name__[: -len("Error")] + "TypeError")
        assert issubclass(typed, cls) and issubclass(typed, TypeError)
        assert typed.code == code and typed.__module__ == "snowmint"
    # Exactly one subclass per code, and the base class besides.
    assert set(classes) == set(codes) | {None}
