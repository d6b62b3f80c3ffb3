"""A TCP proxy in front of a store (docs/HARNESS.md, store-delay): there is
no netem on the harness's machine, so delays and reordering are made here.

Run in a store host's namespace, it listens on its own port and forwards
every connection to the store's real port. A control file holds "0" or
"MIN-MAX" (milliseconds); the harness replaces it atomically and the proxy
re-reads it every 50 ms. With a delay, every chunk read, in either
direction, is held for a random delay in the range before it is written.
Order within one connection is kept (it is TCP: a chunk also waits for the
one before it), so the chunks of different connections overtake each other:
requests and answers of different clients, and of one client's connections,
arrive in another order than they were sent.

With --to-file, the store's address is read from that file ("ADDR:PORT"),
re-read every 50 ms too: new connections go to the address it says (the
etcd restore moves clients to the restored cluster at once).

Everything is bounded: the connection to the store (3 s), a write the peer
does not take (30 s), the chunks held per direction (64, then reading
pauses), the connections (1000); when one side closes or fails, both are
closed once what was read from it is written.
"""

import argparse
import asyncio
import random
import sys

CONNECT_TIMEOUT_S = 3
WRITE_TIMEOUT_S = 30
CHUNK = 65536
HELD = 64  # chunks held per direction before reading from that side pauses
MAX_CONNECTIONS = 1000
POLL_S = 0.05


def log(text):
    print(f"proxy: {text}", file=sys.stderr, flush=True)


class Control:
    """The delay in force, from the control file."""

    def __init__(self, path):
        self.path = path
        self.text = None
        self.range = None  # (min, max) seconds, or None: no delay
        self.held = 0  # chunks held since the delay was last set

    def read(self):
        try:
            with open(self.path) as f:
                text = f.read().strip()
        except OSError:
            return
        if text == self.text:
            return
        try:
            if text == "0":
                new = None
            else:
                lo, hi = (int(x) for x in text.split("-"))
                if not 0 <= lo <= hi:
                    raise ValueError(text)
                new = (lo / 1000, hi / 1000)
        except ValueError:
            log(f"control file says {text!r}: not 0 or MIN-MAX; delay left as it was")
            self.text = text
            return
        if self.text is None:
            log(f"delay {text} ms")
        else:
            log(f"delay {text} ms (was {self.text}: {self.held} chunks held under it)")
        self.text, self.range, self.held = text, new, 0

    def delay(self):
        if self.range is None:
            return 0.0
        self.held += 1
        return random.uniform(*self.range)


async def pump(reader, writer, control):
    """Copies reader to writer, each chunk (and the end) held for the delay
    in force when it was read, in the order read; returns at the end."""
    loop = asyncio.get_running_loop()
    q = asyncio.Queue(HELD)

    async def read():
        while True:
            try:
                data = await reader.read(CHUNK)
            except OSError:
                data = b""  # reset: an end like any other
            await q.put((loop.time() + control.delay(), data))
            if not data:
                return

    reading = asyncio.ensure_future(read())
    try:
        while True:
            due, data = await q.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                return
            writer.write(data)
            await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT_S)
    finally:
        reading.cancel()
        await asyncio.gather(reading, return_exceptions=True)


class Proxy:
    def __init__(self, to_host, to_port, control, to_file=None):
        self.to_host, self.to_port, self.control = to_host, to_port, control
        self.to_file = to_file
        self.open = 0
        self.total = 0

    def retarget(self):
        """The store's address from --to-file, if it names a new one."""
        try:
            with open(self.to_file) as f:
                host, port = f.read().strip().rsplit(":", 1)
            to = (host, int(port))
        except (OSError, ValueError):
            return
        if to != (self.to_host, self.to_port):
            log(f"new connections to {host}:{port} (were to {self.to_host}:{self.to_port})")
            self.to_host, self.to_port = to

    async def handle(self, creader, cwriter):
        if self.open >= MAX_CONNECTIONS:
            cwriter.close()
            return
        self.open += 1
        self.total += 1
        uwriter = None
        try:
            ureader, uwriter = await asyncio.wait_for(
                asyncio.open_connection(self.to_host, self.to_port), CONNECT_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError):
            # The store is down: the client sees its connection closed.
            self.open -= 1
            cwriter.close()
            return
        ways = [asyncio.ensure_future(pump(creader, uwriter, self.control)),
                asyncio.ensure_future(pump(ureader, cwriter, self.control))]
        try:
            await asyncio.wait(ways, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in ways:
                t.cancel()
            await asyncio.gather(*ways, return_exceptions=True)
            for w in (cwriter, uwriter):
                w.close()
            self.open -= 1


async def serve(a):
    control = Control(a.control)
    control.read()
    host, port = a.listen.rsplit(":", 1)
    to_host, to_port = a.to.rsplit(":", 1)
    proxy = Proxy(to_host, int(to_port), control, a.to_file)
    server = await asyncio.start_server(proxy.handle, host, int(port), reuse_address=True)
    log(f"{a.listen} -> {a.to}, control {a.control}")
    async with server:
        n = 0
        while True:
            await asyncio.sleep(POLL_S)
            control.read()
            if proxy.to_file:
                proxy.retarget()
            n += 1
            if n % 200 == 0:  # every 10 s
                log(f"{proxy.open} connections open, {proxy.total} so far")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True, metavar="ADDR:PORT")
    ap.add_argument("--to", required=True, metavar="ADDR:PORT", help="the store")
    ap.add_argument("--control", required=True, help='the file saying "0" or "MIN-MAX" (ms)')
    ap.add_argument("--to-file", help="a file naming the store's ADDR:PORT (else --to's)")
    asyncio.run(serve(ap.parse_args()))


if __name__ == "__main__":
    main()
