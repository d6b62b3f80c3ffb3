"""The `lease` option of Generator: a real file store in a temporary directory.

The protocol is the lease crate's (docs/LEASES.md); these tests
check what Python sees of it: the keyword, `lease`, `nodes`, `close()`, `with`,
garbage collection, and the codes and classes of its errors.
"""

import gc
import os
import threading

import pytest

import snowmint
from snowmint import Generator, PureGenerator

from conftest import raises_code

INFO_KEYS = {
    "store", "field", "slot", "claim", "hwm_ms", "reserved_until_ms", "expires_ms",
    "renewals", "confirmed_at_ms", "skew_ms", "timeouts", "lost", "last_error", "space",
}


@pytest.fixture
def url(tmp_path):
    """A lease URL of a fresh directory (the file store creates it)."""
    return f"file:{tmp_path / 'ids'}"


def test_leased_generator_gets_a_worker(url):
    g = Generator("twitter", datacenter=1, lease=url)
    try:
        worker = g.nodes["worker"]
        assert g.nodes == {"datacenter": 1, "worker": worker} and 0 <= worker < 32
        ids = [g.next_id(), *g.next_ids(1000), *g.next_ids(10), next(g)]
        assert ids == sorted(set(ids))
        for id_ in (ids[0], ids[-1]):
            assert snowmint.decode(id_).nodes == {"datacenter": 1, "worker": worker}
        info = g.lease
        assert set(info) == INFO_KEYS
        assert info["field"] == "worker" and info["slot"] == worker
        assert info["store"] == url
        assert isinstance(info["reserved_until_ms"], int) and isinstance(info["hwm_ms"], int)
        assert info["reserved_until_ms"] >= snowmint.decode(ids[-1]).timestamp_ms
        # The file store's claims never expire while the process lives.
        assert info["expires_ms"] is None and info["lost"] is None and info["last_error"] is None
        assert info["space"].startswith("v1-")
        g.lease["slot"] = 99  # a new dict each time
        assert g.lease["slot"] == worker
        assert repr(g) == (
            f"Generator(Layout.preset('twitter'), datacenter=1, worker={worker} leased from {url!r})"
        )
    finally:
        g.close()


def test_nodes_dict_and_with_block(url):
    with Generator("twitter", nodes={"datacenter": 2}, lease=url, sequence_start="zero") as g:
        assert g.nodes["datacenter"] == 2 and g.lease["field"] == "worker"
        g.next_id()
    with raises_code("lease_expired"):
        g.next_id()
    # An exception in the block propagates; the generator is closed all the same.
    with pytest.raises(KeyError):
        with Generator("twitter", datacenter=2, lease=url) as h:
            raise KeyError("boom")
    with pytest.raises(snowmint.LeaseExpiredError):
        h.next_id()


def test_without_a_lease():
    g = Generator("twitter", datacenter=1, worker=3)
    assert g.lease is None
    g.close()  # nothing to release: the generator keeps working
    with g:
        g.next_id()
    assert g.next_id() > 0
    assert repr(g) == "Generator(Layout.preset('twitter'), datacenter=1, worker=3)"


def test_32_workers_then_unavailable_then_a_freed_slot(url):
    gens = [Generator("twitter", datacenter=3, lease=url) for _ in range(32)]
    try:
        workers = [g.nodes["worker"] for g in gens]
        assert sorted(workers) == list(range(32))
        with raises_code("lease_unavailable") as info:
            Generator("twitter", datacenter=3, lease=url)
        assert isinstance(info.value, snowmint.LeaseUnavailableError)
        msg = str(info.value)
        assert "all 32 slots are held" in msg and url in msg and "[lease_unavailable]" in msg
        # Another datacenter is another slot space.
        with Generator("twitter", datacenter=4, lease=url) as other:
            assert other.nodes["datacenter"] == 4
        freed = gens.pop(7)
        freed.close()
        gens.append(Generator("twitter", datacenter=3, lease=url))
        assert gens[-1].nodes["worker"] == workers[7]
    finally:
        for g in gens:
            g.close()


def test_close_then_a_new_holder_issues_above(url):
    g = Generator("twitter", datacenter=5, lease=url)
    worker = g.nodes["worker"]
    issued = g.next_ids(5000)
    g.close()
    with raises_code("lease_expired") as info:
        g.next_id()
    assert "[lease_expired]" in str(info.value)
    with raises_code("lease_expired"):
        g.next_ids(100)
    g.close()  # a second close does nothing
    g.close()
    assert g.lease["slot"] == worker
    h = Generator("twitter", datacenter=5, lease=url)
    try:
        assert h.nodes["worker"] == worker  # the one free slot
        after = h.next_ids(5000)
        assert after[0] > issued[-1] and after == sorted(set(after))
        assert h.lease["claim"] > g.lease["claim"]
    finally:
        h.close()


def test_close_while_threads_issue(url):
    g = Generator("twitter", datacenter=9, lease=url)
    results = [None] * 4
    started = threading.Barrier(5)

    def work(i):
        out = []
        started.wait()
        try:
            while True:
                out.append(g.next_id())
                out.extend(g.next_ids(100))
        except snowmint.LeaseExpiredError:
            results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    started.wait()
    g.close()
    for t in threads:
        t.join()
    ids = [x for r in results for x in r]
    assert len(set(ids)) == len(ids) and all(r == sorted(r) for r in results)
    with Generator("twitter", datacenter=9, lease=url) as h:
        assert h.next_id() > max(ids, default=0)


def test_bad_lease_options(tmp_path, url):
    with raises_code("invalid_option") as info:
        PureGenerator("twitter", datacenter=1, worker=1, lease=url)
    assert "only of a system-clock Generator" in str(info.value)
    with raises_code("invalid_option") as info:
        Generator("twitter", datacenter=1, lease="ftp://x")
    assert "unknown scheme 'ftp'" in str(info.value)
    with raises_code("invalid_option") as info:
        Generator("twitter", datacenter=1, lease=f"file:{tmp_path}?ttl_ms=abc")
    assert "ttl_ms" in str(info.value) and "abc" in str(info.value)
    with raises_code("invalid_option") as info:
        Generator("twitter", datacenter=1, worker=2, lease=url)  # no field left to lease
    with raises_code("invalid_option") as info:
        Generator("twitter", lease=url)  # two fields left
    with raises_code("invalid_option") as info:
        Generator("twitter", datacenter=1, lease=5)
    assert isinstance(info.value, snowmint.InvalidOptionTypeError)
    assert isinstance(info.value, TypeError)
    # Node values are checked as ever.
    with raises_code("node_out_of_range"):
        Generator("twitter", datacenter=32, lease=url)
    with raises_code("unknown_field"):
        Generator("twitter", datacenter=1, rack=1, lease=url)


def test_network_stores_are_built_in():
    """The wheel carries every network store: a URL of each is tried, and a
    port where nothing listens is lease_unavailable naming the store, at once
    (the stores against real servers: cargo xtask test interop)."""
    for url in ("postgres://postgres@127.0.0.1:1/test", "mysql://root@127.0.0.1:1/test",
                "redis://127.0.0.1:1", "etcd://127.0.0.1:1", "zookeeper://127.0.0.1:1"):
        with raises_code("lease_unavailable") as info:
            Generator("twitter", datacenter=1, lease=url + "?timeout_ms=2000")
        assert url.split("/")[2].split("@")[-1] in str(info.value), str(info.value)
        assert "not built" not in str(info.value)


def test_garbage_collection_releases_the_slot(url):
    gens = [Generator("twitter", datacenter=6, lease=url) for _ in range(32)]
    try:
        with raises_code("lease_unavailable"):
            Generator("twitter", datacenter=6, lease=url)
        worker = gens[3].nodes["worker"]
        del gens[3]
        gc.collect()
        g = Generator("twitter", datacenter=6, lease=url)
        gens.append(g)
        assert g.nodes["worker"] == worker
    finally:
        for g in gens:
            g.close()


def test_plain_generator_first_blocks_a_lease_on_its_node_values(url):
    # The store is empty: a lease on datacenter 29 claims worker 0 first.
    plain = Generator("twitter", datacenter=29, worker=0)
    plain.next_id()
    with raises_code("lease_unavailable") as info:
        Generator("twitter", datacenter=29, lease=url)
    msg = str(info.value)
    assert "datacenter=29, worker=0" in msg and "without a lease" in msg, msg
    assert plain.next_id() > 0
    # The other order is refused too.
    with Generator("twitter", datacenter=30, lease=url) as g:
        with raises_code("lease_unavailable"):
            Generator("twitter", datacenter=30, worker=g.nodes["worker"])
    # Once the plain generator is gone, the lease takes worker 0.
    del plain
    gc.collect()
    with Generator("twitter", datacenter=29, lease=url) as g:
        assert g.nodes["worker"] == 0


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_child_creates_its_own_leased_generator(url):
    g = Generator("twitter", datacenter=8, lease=url)
    parent_worker = g.nodes["worker"]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 1
        try:
            os.close(r)
            report = []
            try:
                g.next_id()
                report.append("inherited generator worked")
            except snowmint.ProcessForkedError:
                pass
            with Generator("twitter", datacenter=8, lease=url) as own:
                if own.nodes["worker"] == parent_worker:
                    report.append("child got the parent's worker")
                own.next_id()
            os.write(w, ";".join(report).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(w)
    report = _read_all(r).decode()
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert report == ""
    # The parent's lease is untouched by the child.
    assert g.next_id() > 0 and g.lease["lost"] is None
    g.close()
