"""pickle and copy: Layout and Parts round-trip (every pickle protocol, copy,
deepcopy, another interpreter); a Generator refuses with a TypeError saying why."""

import copy
import pickle
import subprocess
import sys

import pytest

import snowmint
from snowmint import Generator, Layout, Parts, PureGenerator

CUSTOM = (
    '{"epoch_ms":1600000000000,"time_unit_ms":10,'
    '"fields":[["timestamp",39],["region",4],["sequence",12],["host",8]]}'
)
PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


def layouts():
    return [Layout.preset(name) for name in Layout.presets()] + [Layout.from_json(CUSTOM)]


def parts():
    twitter = Layout.preset("twitter").compose(1700000000123, 17, datacenter=3, worker=9)
    custom = Layout.from_json(CUSTOM)
    return [
        snowmint.decode(twitter),
        snowmint.decode(Layout("sonyflake").max_id, "sonyflake"),
        custom.decode(custom.compose(1700000000120, 5, region=2, host=200)),
    ]


def same_parts(a, b):
    assert type(b) is Parts and b == a and hash(b) == hash(a)
    assert tuple(b) == tuple(a) and b.layout == a.layout and b.time == a.time
    for name in a.layout.node_names:
        assert getattr(b, name) == getattr(a, name)


def test_layout_constructor_takes_what_layout_arguments_take():
    for layout in layouts():
        assert Layout(layout.to_json()) == layout and Layout(layout) == layout
    assert Layout("discord") == Layout.preset("discord")
    with pytest.raises(snowmint.UnknownPresetError):
        Layout("no-such-preset")
    with pytest.raises(snowmint.InvalidLayoutTypeError):
        Layout(3)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_layout_pickles(protocol):
    for layout in layouts():
        back = pickle.loads(pickle.dumps(layout, protocol))
        assert type(back) is Layout and back == layout and hash(back) == hash(layout)
        assert back.to_json() == layout.to_json() and back.preset_name == layout.preset_name
    # A preset pickles as its name, and the pickle names the package, not its
    # extension module.
    data = pickle.dumps(Layout.preset("twitter"), protocol)
    assert b"twitter" in data and b"snowmint" in data and b"_snowmint" not in data


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_parts_pickle(protocol):
    for p in parts():
        data = pickle.dumps(p, protocol)
        assert b"decode" in data and b"_snowmint" not in data
        same_parts(p, pickle.loads(data))
    # In a container, with the layout shared.
    p = parts()[2]
    back = pickle.loads(pickle.dumps({"parts": [p, p], "layout": p.layout}, protocol))
    same_parts(p, back["parts"][0])
    same_parts(p, back["parts"][1])
    assert back["layout"] == p.layout


def test_copy_and_deepcopy():
    for layout in layouts():
        for c in (copy.copy(layout), copy.deepcopy(layout)):
            assert type(c) is Layout and c == layout
    for p in parts():
        same_parts(p, copy.copy(p))
        same_parts(p, copy.deepcopy(p))
    p = parts()[0]
    assert copy.deepcopy([p, p.layout]) == [p, p.layout]


def test_unpickled_in_another_interpreter(tmp_path):
    # The pickle names public, importable callables: a fresh interpreter that
    # imports nothing first reads it.
    data = tmp_path / "data.pickle"
    data.write_bytes(pickle.dumps([parts(), layouts()]))
    code = (
        "import pickle, sys\n"
        "parts, layouts = pickle.loads(open(sys.argv[1], 'rb').read())\n"
        "print(repr(parts)); print(repr(layouts))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(data)], cwd=tmp_path, capture_output=True, text=True,
        check=True,
    ).stdout
    assert out == f"{parts()!r}\n{layouts()!r}\n"


def test_generator_refuses_pickle_and_copy(tmp_path):
    gens = [Generator("twitter", datacenter=1, worker=2)]
    gens.append(Generator("twitter", datacenter=1, lease=f"file:{tmp_path / 'ids'}"))
    try:
        for g in gens:
            calls = [lambda g=g: copy.copy(g), lambda g=g: copy.deepcopy(g), lambda g=g: copy.deepcopy([g])]
            calls += [lambda g=g, p=p: pickle.dumps(g, p) for p in PROTOCOLS]
            for call in calls:
                with pytest.raises(TypeError) as info:
                    call()
                message = str(info.value)
                assert "cannot be pickled or copied" in message
                assert "duplicate IDs" in message and "new Generator in each process" in message
            # Still usable, and no second generator was made.
            assert snowmint.decode(g.next_id()).worker == g.nodes["worker"]
    finally:
        for g in gens:
            g.close()


def test_pure_generator_does_not_pickle():
    # Its state (the last tick and sequence) is not in its constructor's
    # arguments: pickling refuses rather than rebuild a generator that would
    # repeat IDs.
    g = PureGenerator("twitter", datacenter=1, worker=2)
    g.next(1700000000000)
    with pytest.raises(TypeError):
        pickle.dumps(g)
    with pytest.raises(TypeError):
        copy.copy(g)
