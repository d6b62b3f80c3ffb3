"""IdMask (public IDs): every case of vectors/mask.json, keys and tweaks as bytes
or hex, errors, and a repr that never shows the key."""

import pytest

import snowmint
from snowmint import IdMask, Layout

from conftest import load_vectors, raises_code

MASK = load_vectors("mask")
KEY16 = bytes(range(16))


def names(cases):
    return [c["name"] for c in cases]


@pytest.mark.parametrize("case", MASK["cases"], ids=names(MASK["cases"]))
@pytest.mark.parametrize("form", ["hex", "bytes"])
def test_vectors(case, form):
    if form == "hex":
        m = IdMask(case["layout"], case["key"], case["tweak"])
    else:
        m = IdMask(Layout.parse(case["layout"]), bytes.fromhex(case["key"]), bytes.fromhex(case["tweak"]))
    for p in case["pairs"]:
        id_, public = int(p["id"]), int(p["public"])
        assert m.mask(id_) == public
        assert m.unmask(public) == id_
        assert m.mask(p["id"]) == public  # a decimal str
        assert snowmint.to_base32(public) == p["base32"]
        assert snowmint.to_base62(public) == p["base62"]
        assert m.unmask(snowmint.from_base62(p["base62"])) == id_


@pytest.mark.parametrize("case", MASK["errors"], ids=names(MASK["errors"]))
def test_vector_errors(case):
    if case["op"] == "new":
        with raises_code(case["error"]):
            IdMask(case["layout"], case["key"], case["tweak"])
        return
    m = IdMask(case["layout"], case["key"], case["tweak"])
    with raises_code(case["error"]):
        getattr(m, case["op"])(int(case["value"]))


def test_default_tweak_is_empty():
    a = IdMask("twitter", KEY16)
    b = IdMask("twitter", KEY16, b"")
    c = IdMask("twitter", KEY16, "")
    assert a.mask(42) == b.mask(42) == c.mask(42)
    assert a.tweak == b""
    assert IdMask("twitter", KEY16, b"orders").mask(42) != a.mask(42)


def test_bytearray_and_upper_case_hex():
    a = IdMask("twitter", bytearray(KEY16), bytearray(b"t"))
    b = IdMask("twitter", KEY16.hex().upper(), "74")
    assert a.mask(7) == b.mask(7)
    assert b.tweak == b"t"
    assert a.layout == Layout.preset("twitter")


def test_bad_hex_and_wrong_types():
    secret = "00112233445566778899aabbccddeeZZ"
    with raises_code("invalid_option") as info:
        IdMask("twitter", secret)
    assert "00112233" not in str(info.value)
    for bad in ["0", "0x000102030405060708090a0b0c0d0e0f", " " + KEY16.hex()]:
        with raises_code("invalid_option"):
            IdMask("twitter", bad)
    with raises_code("invalid_option"):
        IdMask("twitter", KEY16, "xyz")
    for bad in [12345, None, [1, 2], 1.5]:
        with pytest.raises(snowmint.InvalidOptionTypeError):
            IdMask("twitter", bad)
    with pytest.raises(snowmint.InvalidOptionTypeError):
        IdMask("twitter", KEY16, 7)
    m = IdMask("twitter", KEY16)
    with raises_code("invalid_id"):
        m.mask(-1)
    with raises_code("invalid_id"):
        m.unmask("abc")
    with raises_code("unknown_preset"):
        IdMask("nope", KEY16)


def test_repr_never_shows_the_key():
    key = bytes.fromhex("0b30557a9fc4e90e33587da2c7ec11365b80a5caef14395e83a8cdf2173c6186")
    m = IdMask("twitter", key, b"orders")
    r = repr(m)
    assert r == "IdMask(Layout.preset('twitter'), key=<AES-256 key, hidden>, tweak='6f7264657273')"
    assert key.hex() not in r and "0b30557a" not in r and str(list(key)) not in r
    assert "hidden" in str(m)


def test_round_trip_and_no_order():
    m = IdMask("twitter", KEY16, b"orders")
    layout = Layout.preset("twitter")
    publics = [m.mask(i) for i in range(1000, 3000)]
    assert all(0 <= p <= layout.max_id for p in publics)
    assert len(set(publics)) == len(publics)
    assert [m.unmask(p) for p in publics] == list(range(1000, 3000))
    down = sum(a > b for a, b in zip(publics, publics[1:]))
    assert 800 < down < 1200  # about half of consecutive pairs decrease
