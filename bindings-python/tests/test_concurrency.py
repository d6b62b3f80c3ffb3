"""Threads and fork(): what the core's lock-free state and fork detection promise, seen from Python."""

import os
import struct
import sys
import threading

import pytest

import snowmint
from snowmint import Generator


def test_threads_share_one_generator_without_duplicates():
    g = Generator("twitter", datacenter=4, worker=4)
    per_thread = 250_000
    results = [None] * 4

    def work(i):
        out = []
        # Mix single calls and batches: both claim from the same state.
        for _ in range(per_thread // 2):
            out.append(g.next_id())
        out.extend(g.next_ids(per_thread // 2))
        results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [x for r in results for x in r]
    assert len(ids) == 4 * per_thread
    assert len(set(ids)) == len(ids)
    for r in results:
        assert r == sorted(r)  # each thread sees increasing IDs


def test_two_generators_with_the_same_nodes_share_state():
    a = Generator("twitter", datacenter=5, worker=5)
    b = Generator("twitter", datacenter=5, worker=5)
    ids = []
    for _ in range(1000):
        ids.append(a.next_id())
        ids.append(b.next_id())
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_parent_and_child_generate_concurrently():
    parent_gen = Generator("twitter", datacenter=7, worker=1)
    before = parent_gen.next_ids(1000)
    r, w = os.pipe()
    n = 200_000
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 1
        try:
            os.close(r)
            report = []
            try:
                parent_gen.next_id()
                report.append("inherited generator worked")
            except snowmint.ProcessForkedError as e:
                if e.code != "process_forked":
                    report.append("wrong code")
            try:
                parent_gen.next_ids(10)
                report.append("inherited next_ids worked")
            except snowmint.ProcessForkedError:
                pass
            child_gen = Generator("twitter", datacenter=7, worker=2)
            ids = child_gen.next_ids(n // 2) + [child_gen.next_id() for _ in range(n // 2)]
            msg = ";".join(report).encode()
            os.write(w, struct.pack("<I", len(msg)) + msg)
            data = struct.pack(f"<{len(ids)}Q", *ids)
            view = memoryview(data)
            while view:
                written = os.write(w, view)
                view = view[written:]
            status = 0
        finally:
            os.close(w)
            os._exit(status)
    os.close(w)
    # The parent keeps generating while the child runs.
    parent_ids = [parent_gen.next_id() for _ in range(n // 2)] + parent_gen.next_ids(n // 2)
    data = _read_all(r)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    (msg_len,) = struct.unpack_from("<I", data)
    assert data[4 : 4 + msg_len] == b"", data[4 : 4 + msg_len].decode()
    body = data[4 + msg_len :]
    child_ids = list(struct.unpack(f"<{len(body) // 8}Q", body))
    assert len(child_ids) == n
    every = before + parent_ids + child_ids
    assert len(set(every)) == len(every), "duplicate IDs across fork()"
    assert {snowmint.decode(i).worker for i in child_ids} == {2}
    # The parent's generator still works after the fork.
    assert parent_gen.next_id() > parent_ids[-1]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_with_the_same_nodes_also_refuses():
    # A new generator in the child with the parent's node values would repeat
    # the parent's IDs; that is the user's choice (the README says to pick a
    # node value per process), but the inherited one must refuse.
    g = Generator("twitter", datacenter=8, worker=8)
    g.next_id()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            g.next_id()
        except snowmint.ProcessForkedError:
            code = 0
        except BaseException:
            code = 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    g.next_id()
    sys.stdout.flush()


def test_waiting_releases_the_gil():
    # sonyflake issues at most 256 IDs per 10 ms unit, so this batch waits for
    # about 30 units (300 ms). The GIL is released while the core fills it, so
    # another Python thread keeps running meanwhile.
    g = Generator("sonyflake", machine=77, sequence_start="zero")
    done = threading.Event()
    result = []

    def batch():
        result.extend(g.next_ids(256 * 30))
        done.set()

    t = threading.Thread(target=batch)
    t.start()
    spins = 0
    while not done.is_set():
        spins += 1
    t.join()
    assert len(result) == 256 * 30 and result == sorted(set(result))
    assert spins > 1000, f"the main thread ran only {spins} loop iterations during the batch"
