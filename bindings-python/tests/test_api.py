"""The Python API beyond the vectors: types, datetimes, bad input per error kind, stubs, version."""

import ast
import inspect
import importlib.metadata
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import snowmint
from snowmint import Generator, Layout, PureGenerator

from conftest import ROOT, raises_code

TWITTER_ID = 1541815603606036480  # 2022-06-28T16:07:40.105Z, datacenter 11, worker 26


# ---- layouts -----------------------------------------------------------------


def test_layout_basics():
    t = Layout.preset("twitter")
    assert Layout.presets()[0] == "twitter" and len(Layout.presets()) == 10
    assert t == Layout.parse("twitter") == Layout.from_json('"twitter"') == Layout.from_json(t.to_json())
    assert t != Layout.preset("discord")
    assert hash(t) == hash(Layout.parse(t.to_json()))
    assert repr(t) == "Layout.preset('twitter')"
    custom = Layout.from_json('{"epoch_ms":0,"fields":[["timestamp",41],["shard",10],["sequence",12]]}')
    assert custom.preset_name is None
    assert repr(custom) == "Layout.from_json('" + custom.to_json() + "')"
    assert custom.node_names == ["shard"]
    f = t.fields[1]
    assert (f.name, f.bits, f.shift, f.kind) == ("datacenter", 5, 17, "node")
    assert f == Layout.preset("twitter").fields[1]
    assert repr(f) == "Field(name='datacenter', bits=5, shift=17, kind='node')"


def test_layout_end_datetimes():
    t = Layout.preset("twitter")
    assert t.time_end == datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=t.time_end_ms)
    assert t.time_end.tzinfo is not None
    assert t.i64_end_ms == t.time_end_ms and t.i64_end == t.time_end
    assert t.js_safe_end == datetime(2010, 11, 28, 22, 14, 18, 305000, tzinfo=timezone.utc)
    assert t.js_safe_end_ms == 1290982458305
    # mastodon's 48-bit millisecond time field ends after year 9999.
    assert Layout.preset("mastodon").time_end is None


# ---- decode / compose / bounds --------------------------------------------------


def test_parts():
    p = snowmint.decode(TWITTER_ID)
    assert p.timestamp_ms == 1656432460105
    assert p.time == datetime(2022, 6, 28, 16, 7, 40, 105000, tzinfo=timezone.utc)
    assert p.datacenter == 11 and p.worker == 26 and p.sequence == 0
    assert p.nodes == {"datacenter": 11, "worker": 26}
    assert p.tick == p.timestamp_ms - Layout.preset("twitter").epoch_ms
    assert p.layout == Layout.preset("twitter")
    id_, ts, seq, nodes = p
    assert (id_, ts, seq, nodes) == (TWITTER_ID, 1656432460105, 0, {"datacenter": 11, "worker": 26})
    assert len(p) == 4 and p[0] == TWITTER_ID and p[-1] == nodes
    with pytest.raises(IndexError):
        p[4]
    assert p._asdict() == {"id": TWITTER_ID, "timestamp_ms": ts, "sequence": 0, "nodes": nodes}
    assert p == snowmint.decode(str(TWITTER_ID), "twitter") and hash(p) == hash(snowmint.decode(TWITTER_ID))
    assert p != snowmint.decode(TWITTER_ID + 1)
    assert repr(p) == (
        "Parts(id=1541815603606036480, timestamp_ms=1656432460105, sequence=0, "
        "nodes={'datacenter': 11, 'worker': 26})"
    )
    with pytest.raises(AttributeError):
        _ = p.rack
    with pytest.raises(AttributeError):
        p.worker = 3  # frozen
    p.nodes["worker"] = 0  # a copy: the Parts stays as it was
    assert p.worker == 26


def test_compose_and_bounds_with_datetimes():
    t = Layout.preset("twitter")
    id_ = snowmint.compose("twitter", 1656432460105, datacenter=11, worker=26)
    assert id_ == TWITTER_ID == t.compose(1656432460105, 0, datacenter=11, worker=26)
    when = datetime(2022, 6, 28, 16, 7, 40, 105000, tzinfo=timezone.utc)
    assert snowmint.id_bounds("twitter", when) == t.id_bounds(1656432460105)
    other_tz = when.astimezone(timezone(timedelta(hours=-5)))
    assert t.id_bounds(other_tz) == t.id_bounds(when)
    lo, hi = t.id_bounds(when)
    assert lo <= TWITTER_ID <= hi
    with pytest.raises(TypeError):
        t.id_bounds(datetime(2022, 6, 28))  # naive: which time zone?
    with raises_code("time_before_epoch"):
        t.id_bounds(datetime(1969, 12, 31, tzinfo=timezone.utc))
    with raises_code("time_before_epoch"):
        t.id_bounds(datetime(2000, 1, 1, tzinfo=timezone.utc))


def test_string_forms():
    assert snowmint.to_base32(TWITTER_ID) == "1ASD13XH1F800"
    assert snowmint.from_base32("1asd13xh1f800") == TWITTER_ID
    assert snowmint.from_base62(snowmint.to_base62(TWITTER_ID)) == TWITTER_ID
    assert snowmint.format_id(TWITTER_ID, "decimal") == str(TWITTER_ID)
    assert snowmint.parse_id(str(TWITTER_ID), "decimal") == TWITTER_ID


# ---- generators -------------------------------------------------------------------


def test_generator():
    g = Generator("twitter", datacenter=1, worker=3)
    a = g.next_id()
    b = next(g)
    batch = g.next_ids(10_000)
    small = g.next_ids(5)
    assert g.next_ids(0) == []  # a count is 0 to 2^32
    assert a < b < batch[0] and batch == sorted(set(batch)) and batch[-1] < small[0]
    assert len(batch) == 10_000 and len(small) == 5
    assert snowmint.decode(a).nodes == {"datacenter": 1, "worker": 3}
    assert g.layout == Layout.preset("twitter") and g.nodes == {"datacenter": 1, "worker": 3}
    assert repr(g) == "Generator(Layout.preset('twitter'), datacenter=1, worker=3)"
    it = iter(g)
    assert it is g and next(it) > small[-1]
    # nodes as a dict, the default layout, and options.
    h = Generator(nodes={"datacenter": 2, "worker": 3}, sequence_start="zero", clock_backwards="fail")
    assert snowmint.decode(h.next_id()).datacenter == 2
    m = Generator("mastodon", sequence_exhausted="borrow:10", seed=7)
    assert m.next_id() < m.next_id()
    last = snowmint.compose("twitter", 3_000_000_000_000, datacenter=9, worker=9)
    # resume_after far in the future: the clock is "behind" it.
    r = Generator("twitter", datacenter=9, worker=9, clock_backwards="fail", resume_after=last)
    with raises_code("clock_moved_backwards"):
        r.next_id()


def test_pure_generator():
    g = PureGenerator("twitter", datacenter=1, worker=3, sequence_start="zero")
    kind, first = g.next(1763812800000)
    assert kind == "id" and g.next(1763812800000) == ("id", first + 1)
    assert repr(g) == "PureGenerator(Layout.preset('twitter'), datacenter=1, worker=3)"
    with raises_code("clock_moved_backwards"):
        _backwards()


def _backwards():
    g = PureGenerator("twitter", datacenter=1, worker=3, clock_backwards="fail")
    g.next(1763812800000)
    g.next(1763812799000)


# ---- bad input, per error kind -------------------------------------------------------


@pytest.mark.parametrize(
    "code, call",
    [
        ("invalid_layout", lambda: Layout.from_json("{")),
        ("invalid_layout", lambda: snowmint.decode(1, '{"epoch_ms":0}')),
        ("unknown_preset", lambda: Layout.preset("snowflake")),
        ("unknown_preset", lambda: Generator("nope", worker=1)),
        ("unknown_field", lambda: Generator("twitter", datacenter=1, worker=3, rack=1)),
        ("unknown_field", lambda: Generator("twitter", nodes={"datacenter": 1, "worker": 3}, worker=3)),
        ("missing_node", lambda: Generator("twitter", worker=3)),
        ("missing_node", lambda: snowmint.compose("twitter", 1763812800000)),
        ("node_out_of_range", lambda: Generator("twitter", datacenter=32, worker=3)),
        ("node_out_of_range", lambda: Generator("twitter", datacenter=-1, worker=3)),
        ("node_out_of_range", lambda: Generator("twitter", datacenter=2**64, worker=3)),
        ("node_out_of_range", lambda: snowmint.compose("twitter", 1763812800000, 4096, datacenter=1, worker=1)),
        ("node_out_of_range", lambda: snowmint.compose("twitter", 1763812800000, -1, datacenter=1, worker=1)),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3, clock_backwards="wait")),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3, sequence_exhausted="never")),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3, sequence_start="random:0")),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3, seed=-1)),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3, resume_after=2**63)),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3).next_ids(-1)),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3).next_ids(2**32 + 1)),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3, clockBackwards="wait")),
        ("time_before_epoch", lambda: snowmint.compose("twitter", 0, datacenter=1, worker=1)),
        ("time_before_epoch", lambda: snowmint.compose("mastodon", -1)),
        ("time_before_epoch", lambda: snowmint.id_bounds("twitter", -5)),
        ("time_before_epoch", lambda: PureGenerator("twitter", datacenter=1, worker=1).next(-1)),
        ("time_overflow", lambda: snowmint.compose("twitter", 2**64, datacenter=1, worker=1)),
        ("time_overflow", lambda: snowmint.id_bounds("twitter", 3487858230209)),
        ("clock_moved_backwards", _backwards),
        ("invalid_id", lambda: snowmint.decode(-1)),
        ("invalid_id", lambda: snowmint.decode(2**64)),
        ("invalid_id", lambda: snowmint.decode(-(2**200))),
        ("invalid_id", lambda: snowmint.decode(2**200)),
        ("invalid_id", lambda: snowmint.decode(True)),
        ("invalid_id", lambda: snowmint.decode(0.5)),
        ("invalid_id", lambda: snowmint.decode(2.0**60)),
        ("invalid_id", lambda: snowmint.decode(" 1")),
        ("invalid_id", lambda: snowmint.decode(2**63, "twitter")),
        ("invalid_id", lambda: snowmint.to_base32(-1)),
        ("invalid_id", lambda: snowmint.format_id(1, "hex")),
        ("invalid_id", lambda: snowmint.parse_id("1", "hex")),
        ("invalid_id", lambda: Generator("twitter", datacenter=1, worker=3, resume_after=-1)),
        ("invalid_id", lambda: Layout.preset("twitter").is_plausible(-1, 0)),
    ],
)
def test_bad_input(code, call):
    with raises_code(code) as info:
        call()
    assert isinstance(info.value, ValueError)
    assert f"[{code}]" in str(info.value)


@pytest.mark.parametrize(
    "code, call",
    [
        ("invalid_id", lambda: snowmint.decode([1])),
        ("invalid_id", lambda: snowmint.decode(None)),
        ("invalid_id", lambda: snowmint.decode(True)),
        ("invalid_layout", lambda: snowmint.decode(1, layout=3)),
        ("time_overflow", lambda: snowmint.compose("twitter", "1763812800000", datacenter=1, worker=1)),
        ("time_overflow", lambda: Layout.preset("twitter").id_bounds(datetime(2022, 6, 28))),  # naive
        ("node_out_of_range", lambda: snowmint.compose("twitter", 1763812800000, datacenter="1", worker=1)),
        ("unknown_field", lambda: Generator("twitter", nodes={1: 1})),
        ("unknown_field", lambda: Generator("twitter", nodes=[("worker", 1)])),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3).next_ids("5")),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3, seed=True)),
        ("invalid_option", lambda: Generator("twitter", datacenter=1, worker=3, clock_backwards=1)),
        ("invalid_id", lambda: snowmint.format_id(1, None)),
    ],
)
def test_wrong_types_are_type_errors(code, call):
    # The code's subclass that is also a TypeError, with the core's message.
    with raises_code(code) as info:
        call()
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert f"[{code}]" in str(info.value)


@pytest.mark.parametrize("call", [lambda: Layout.preset(None), lambda: snowmint.from_base32(5)])
def test_wrong_types_of_text_arguments(call):
    # Text arguments are read by pyo3 itself: a plain TypeError.
    with pytest.raises(TypeError):
        call()


def test_messages_are_the_cores():
    with pytest.raises(snowmint.InvalidIdError) as info:
        snowmint.decode(-1)
    assert str(info.value) == "invalid id: value is negative [invalid_id]"
    with pytest.raises(snowmint.NodeOutOfRangeError) as info:
        snowmint.compose("twitter", 1763812800000, datacenter=-1, worker=1)
    assert str(info.value) == "node field 'datacenter' must not be negative [node_out_of_range]"


def test_floats_and_camel_case_options():
    # The core's conversion layer: a whole float is an integer, option keys
    # may be camelCase.
    assert snowmint.decode(float(2**40)).id == 2**40
    g = PureGenerator("twitter", datacenter=1.0, worker=3, sequenceStart="zero", clockBackwards="fail")
    assert g.nodes == {"datacenter": 1, "worker": 3}
    g.next(1763812800000)
    with raises_code("clock_moved_backwards"):
        g.next(1763812799000)


def test_error_classes():
    assert issubclass(snowmint.SnowmintError, ValueError)
    assert snowmint.SnowmintError.code is None
    assert snowmint.InvalidIdError.code == "invalid_id"
    assert snowmint.InvalidIdError.__module__ == "snowmint"
    assert issubclass(snowmint.InvalidIdTypeError, snowmint.InvalidIdError)
    assert issubclass(snowmint.InvalidIdTypeError, TypeError)
    assert snowmint.InvalidIdTypeError.code == "invalid_id"
    assert [c for c in snowmint.__all__ if c.endswith("TypeError")] == [
        "".join(w.title() for w in code.split("_")) + "TypeError" for code in snowmint.ERROR_CODES
    ]


# ---- packaging ----------------------------------------------------------------------


def workspace_version():
    text = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    section = text.split("[workspace.package]", 1)[1]
    return re.search(r'^version\s*=\s*"([^"]+)"', section, re.M).group(1)


def test_version_is_the_workspace_version():
    assert snowmint.__version__ == workspace_version()
    assert importlib.metadata.version("snowmint") == workspace_version()


def test_runs_from_the_installed_package():
    # cargo xtask test python runs pytest against the installed wheel, not the source tree.
    assert "site-packages" in Path(snowmint.__file__).parts


def _stub_names():
    stub = Path(snowmint.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text(encoding="utf-8"))
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                names[t.id] = node
    return names


def test_stubs_match_the_runtime():
    assert (Path(snowmint.__file__).parent / "py.typed").exists()
    stub = _stub_names()
    public = {n for n in stub if not n.startswith("_") or n in ("__version__", "__all__")}
    # Every public name in the stub exists at runtime, and every exported name has a stub.
    for name in public:
        assert hasattr(snowmint, name), name
    assert set(snowmint.__all__) <= public
    # Class members in the stub exist on the runtime classes.
    for name, node in stub.items():
        if isinstance(node, ast.ClassDef):
            cls = getattr(snowmint, name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name not in ("__init__", "__getattr__"):
                    assert hasattr(cls, item.name), f"{name}.{item.name}"


def test_everything_public_has_a_docstring():
    for name in snowmint.__all__:
        obj = getattr(snowmint, name)
        if callable(obj):
            assert obj.__doc__, name
        if isinstance(obj, type):
            for attr, value in vars(obj).items():
                if not attr.startswith("_") and callable(getattr(value, "__get__", None)):
                    assert getattr(value, "__doc__", None), f"{name}.{attr}"


def _stub_params(fn):
    """(name, kind, default source) of a stub function's parameters, without self."""
    a = fn.args
    out = []
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(pos, defaults):
        out.append((arg.arg, "positional", None if d is None else ast.literal_eval(d)))
    if a.vararg:
        out.append((a.vararg.arg, "var_positional", None))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "keyword_only", None if d is None else ast.literal_eval(d)))
    if a.kwarg:
        out.append((a.kwarg.arg, "var_keyword", None))
    return [p for p in out if p[0] not in ("self", "cls")]


def _runtime_params(obj):
    kinds = {
        inspect.Parameter.POSITIONAL_ONLY: "positional",
        inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
        inspect.Parameter.VAR_POSITIONAL: "var_positional",
        inspect.Parameter.KEYWORD_ONLY: "keyword_only",
        inspect.Parameter.VAR_KEYWORD: "var_keyword",
    }
    out = []
    for p in inspect.signature(obj).parameters.values():
        default = None if p.default is inspect.Parameter.empty else p.default
        out.append((p.name, kinds[p.kind], default))
    return [p for p in out if p[0] != "self"]


def test_stub_signatures_match_the_runtime():
    checked = 0
    for name, node in _stub_names().items():
        if isinstance(node, ast.FunctionDef):
            assert _stub_params(node) == _runtime_params(getattr(snowmint, name)), name
            checked += 1
        elif isinstance(node, ast.ClassDef):
            cls = getattr(snowmint, name)
            for item in node.body:
                if not isinstance(item, ast.FunctionDef):
                    continue
                constructor = item.name in ("__init__", "__new__")
                if item.name.startswith("__") and not constructor:
                    continue
                if any(isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list):
                    continue
                runtime = cls if constructor else getattr(cls, item.name)
                assert _stub_params(item) == _runtime_params(runtime), f"{name}.{item.name}"
                checked += 1
    assert checked >= 20


def test_node_fields_do_not_shadow_parts_attributes():
    own = [n for n in dir(snowmint.Parts) if not n.startswith("_")]
    assert set(own) == {"id", "timestamp_ms", "time", "tick", "sequence", "nodes", "layout"}
    for name in sorted(set(own) - {"sequence"}):  # `sequence` is never a node field
        layout = Layout.from_json(
            '{"epoch_ms":0,"fields":[["timestamp",41],["%s",5],["other",5],["sequence",12]]}' % name
        )
        # A node named `timestamp_ms` cannot be a keyword of compose(): use a nodes dict.
        _, id_ = PureGenerator(layout, nodes={name: 7, "other": 9}).next(1763812800000)
        p = layout.decode(id_)
        assert p.nodes == {name: 7, "other": 9}
        assert p.other == 9
        assert getattr(p, name) == snowmint.Parts.__dict__[name].__get__(p, snowmint.Parts)
        assert getattr(p, name) != 7
    with pytest.raises(AttributeError):
        _ = snowmint.decode(TWITTER_ID).__nonexistent__
