"""A Python client of the Thrift service, with the stubs `thrift --gen py
server/thrift/Snowflake.thrift` writes (Debian's thrift-compiler 0.17.0), run
by Debian's /usr/bin/python3 with python3-thrift 0.17.0 over
TFramedTransport + TBinaryProtocol. `cargo xtask test server` runs it with
the stubs' folder on PYTHONPATH and in the environment THRIFT and HTTP (the
server's HOST:PORT of each) and JAVA_IDS (the IDs ThriftClient.java got from
the same server, one a line).

Every method is called; a bad user agent and an unknown method are
application errors; the Thrift IDs (4 connections at once and one more), the
HTTP IDs and the Java client's are unique together and carry the generator's
node values; /metrics counts the IDs per agent.
"""

import json
import os
import threading
import time
import urllib.request

from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport import TSocket, TTransport
from Snowflake import Snowflake

host, port = os.environ["THRIFT"].rsplit(":", 1)
http = "http://" + os.environ["HTTP"]


def connect():
    sock = TSocket.TSocket(host, int(port))
    sock.setTimeout(10_000)
    transport = TTransport.TFramedTransport(sock)
    protocol = TBinaryProtocol.TBinaryProtocol(transport)
    transport.open()
    return transport, protocol, Snowflake.Client(protocol)


def get(path):
    with urllib.request.urlopen(http + path, timeout=10) as r:
        return r.read().decode()


transport, protocol, client = connect()
worker = client.get_worker_id()
datacenter = client.get_datacenter_id()
gen = json.loads(get("/v1/generators"))["generators"][0]
assert datacenter == 3, datacenter
assert worker != 0, "the holder server has slot 0"
assert worker == gen["nodes"]["worker"] == gen["lease"]["slot"], (worker, gen)
ts = client.get_timestamp()
assert abs(ts - time.time() * 1000) < 5_000, ts
print(f"get_worker_id {worker} (leased), get_datacenter_id {datacenter}, get_timestamp {ts}")

# A bad agent: an application error naming InvalidUserAgentError and the code;
# the connection stays usable.
for bad in ["1web", "", "web_1", "web 1", "-web", "wéb"]:
    try:
        client.get_id(bad)
        raise SystemExit(f"agent {bad!r} was accepted")
    except TApplicationException as e:
        assert "InvalidUserAgentError" in e.message and "invalid_user_agent" in e.message, e.message
        last = e.message
print("bad agents: TApplicationException:", last)

# An unknown method, sent with the same protocol objects by hand.
protocol.writeMessageBegin("get_ids", TMessageType.CALL, 41)
protocol.writeStructBegin("get_ids_args")
protocol.writeFieldStop()
protocol.writeStructEnd()
protocol.writeMessageEnd()
transport.flush()
name, kind, seqid = protocol.readMessageBegin()
assert (name, kind, seqid) == ("get_ids", TMessageType.EXCEPTION, 41), (name, kind, seqid)
x = TApplicationException()
x.read(protocol)
protocol.readMessageEnd()
assert x.type == TApplicationException.UNKNOWN_METHOD, (x.type, x.message)
print("unknown method: TApplicationException type", x.type, x.message)

# IDs from 4 connections at once and from HTTP, unique together.
ids, lock = [], threading.Lock()


def work(agent):
    t, _, c = connect()
    got = [c.get_id(agent) for _ in range(500)]
    t.close()
    with lock:
        ids.extend(got)


threads = [threading.Thread(target=work, args=(f"web-{i}",)) for i in range(4)]
for t in threads:
    t.start()
ids.extend(client.get_id("Cron") for _ in range(100))
http_ids = [int(i) for i in json.loads(get("/v1/ids?count=1000"))["ids"]]
http_ids.append(int(get("/api/snowflake/get/any")))
for t in threads:
    t.join(30)
assert len(ids) == 2100, len(ids)
with open(os.environ["JAVA_IDS"]) as f:
    java_ids = [int(line) for line in f if line.strip()]
assert len(java_ids) == 501, len(java_ids)
both = ids + http_ids + java_ids
assert len(set(both)) == len(both), "a duplicate ID"
for i in both:
    assert (i >> 17) & 31 == datacenter and (i >> 12) & 31 == worker, i
transport.close()

metrics = get("/metrics")
for agent, n in [("web-0", 500), ("web-3", 500), ("Cron", 100), ("java-client", 501)]:
    line = f'snowmint_thrift_ids_total{{agent="{agent}"}} {n}'
    assert line in metrics, line
print(f"{len(ids)} Thrift IDs + {len(java_ids)} from Java + {len(http_ids)} HTTP IDs, all unique, "
      f"datacenter {datacenter} and worker {worker} in each; /metrics counts per agent")
