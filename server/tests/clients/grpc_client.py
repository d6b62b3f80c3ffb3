"""The gRPC API from Python, with stubs generated here by grpcio-tools from
server/proto/snowmint/v1/snowmint.proto, against a running server.

Usage: TOKEN=... grpc_client.py HOST:PORT IDS_OUT (TOKEN: the server's bearer token)
Writes every ID it got, one per line, to IDS_OUT (the caller checks them
unique together with the HTTP clients' IDs). Every call has a 10 s deadline.
"""

import json
import os
import sys
import tempfile
import urllib.request

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_tools import protoc

SERVER = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO_DIR = os.path.join(SERVER, "proto")
TIMEOUT = 10


def generate_stubs(out):
    """snowmint_pb2 and snowmint_pb2_grpc, as `python -m grpc_tools.protoc` writes them."""
    args = ["protoc", f"-I{PROTO_DIR}", f"--python_out={out}", f"--grpc_python_out={out}",
            os.path.join(PROTO_DIR, "snowmint", "v1", "snowmint.proto")]
    if protoc.main(args) != 0:
        sys.exit("grpc_tools.protoc failed")
    # Regular packages, first on the path: the `snowmint` binding, if
    # installed, must not shadow them.
    for d in ("snowmint", os.path.join("snowmint", "v1")):
        open(os.path.join(out, d, "__init__.py"), "a").close()
    sys.path.insert(0, out)


def refused(call, code, error_code):
    """`call()` fails with `code`; `error_code` is the metadata and starts the message."""
    try:
        call()
    except grpc.RpcError as e:
        assert e.code() == code, (e.code(), e.details())
        meta = dict(e.trailing_metadata() or ())
        assert meta.get("snowmint-error-code") == error_code, meta
        assert e.details().startswith(error_code + ": "), e.details()
        return e
    raise AssertionError(f"not refused: expected {code}")


def http_json(base, path, token):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
        return json.load(r)


def main():
    addr, ids_out = sys.argv[1:3]
    token = os.environ["TOKEN"]
    with tempfile.TemporaryDirectory() as out:
        generate_stubs(out)
        from snowmint.v1 import snowmint_pb2 as pb, snowmint_pb2_grpc as pb_grpc

        auth = (("authorization", "Bearer " + token),)
        with grpc.insecure_channel(addr) as channel:
            ids_stub = pb_grpc.IdsStub(channel)

            refused(lambda: ids_stub.NextIds(pb.NextIdsRequest(count=1), timeout=TIMEOUT),
                    grpc.StatusCode.UNAUTHENTICATED, "unauthorized")
            refused(lambda: ids_stub.NextIds(pb.NextIdsRequest(count=1), timeout=TIMEOUT,
                                             metadata=(("authorization", "Bearer " + token + "x"),)),
                    grpc.StatusCode.UNAUTHENTICATED, "unauthorized")

            r = ids_stub.NextIds(pb.NextIdsRequest(count=100), timeout=TIMEOUT, metadata=auth)
            assert r.generator == "default", r.generator
            ids = list(r.ids)
            assert len(ids) == 100 and all(a < b for a, b in zip(ids, ids[1:])), ids
            one = ids_stub.NextIds(pb.NextIdsRequest(), timeout=TIMEOUT, metadata=auth)
            assert len(one.ids) == 1 and one.ids[0] > ids[-1], "count defaults to 1"
            ids += one.ids

            refused(lambda: ids_stub.NextIds(pb.NextIdsRequest(count=0), timeout=TIMEOUT, metadata=auth),
                    grpc.StatusCode.INVALID_ARGUMENT, "invalid_option")
            refused(lambda: ids_stub.NextIds(pb.NextIdsRequest(generator="nope"), timeout=TIMEOUT,
                                             metadata=auth),
                    grpc.StatusCode.NOT_FOUND, "unknown_generator")

            # Decode and ListGenerators give what the HTTP API gives.
            base = "http://" + addr
            d = ids_stub.Decode(pb.DecodeRequest(id=ids[0]), timeout=TIMEOUT, metadata=auth)
            http_d = http_json(base, f"/v1/decode/{ids[0]}", token)
            grpc_d = {"id": str(d.id), "timestamp_ms": d.timestamp_ms, "time": d.time,
                      "sequence": d.sequence, **{n.name: n.value for n in d.nodes}}
            assert grpc_d == http_d, (grpc_d, http_d)
            assert list(grpc_d) == list(http_d), "the same fields in the same order"
            refused(lambda: ids_stub.Decode(pb.DecodeRequest(id=1, layout="nope"), timeout=TIMEOUT,
                                            metadata=auth),
                    grpc.StatusCode.INVALID_ARGUMENT, "unknown_preset")

            gens = ids_stub.ListGenerators(pb.ListGeneratorsRequest(), timeout=TIMEOUT, metadata=auth)
            http_g = http_json(base, "/v1/generators", token)["generators"]
            assert [g.name for g in gens.generators] == [g["name"] for g in http_g]
            g, hg = gens.generators[0], http_g[0]
            assert g.preset == hg["preset"] == "leaf", (g.preset, hg["preset"])
            assert json.loads(g.layout_json) == hg["layout"]
            assert {n.name: n.value for n in g.nodes} == hg["nodes"]
            assert g.HasField("lease")
            lease = {e.name: getattr(e, e.WhichOneof("value")) if e.WhichOneof("value") else None
                     for e in g.lease.entries}
            assert list(lease) == list(hg["lease"]), (list(lease), list(hg["lease"]))
            assert lease["slot"] == hg["lease"]["slot"] == g.nodes[0].value
            assert lease["store"] == hg["lease"]["store"]

            # Health needs no token, like /readyz.
            health = health_pb2_grpc.HealthStub(channel)
            for service in ("", "snowmint.v1.Ids", "default"):
                h = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT)
                assert h.status == health_pb2.HealthCheckResponse.SERVING, (service, h)
            try:
                health.Check(health_pb2.HealthCheckRequest(service="nope"), timeout=TIMEOUT)
                raise AssertionError("an unknown service answered")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.NOT_FOUND, e.code()

            # Reflection (v1alpha, what grpcio-reflection speaks) needs the token.
            refl = reflection_pb2_grpc.ServerReflectionStub(channel)

            def list_services(metadata):
                req = reflection_pb2.ServerReflectionRequest(list_services="")
                answers = list(refl.ServerReflectionInfo(iter([req]), timeout=TIMEOUT, metadata=metadata))
                return {s.name for s in answers[0].list_services_response.service}

            services = list_services(auth)
            for s in ("snowmint.v1.Ids", "grpc.health.v1.Health"):
                assert s in services, services
            try:
                list_services(())
                raise AssertionError("reflection answered without a token")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.UNAUTHENTICATED, e.code()

    with open(ids_out, "w") as f:
        f.write("".join(f"{i}\n" for i in ids))
    print(f"gRPC (Python grpcio): {len(ids)} IDs, Decode and ListGenerators as over HTTP, "
          f"health, reflection ({len(services)} services), refusals")


if __name__ == "__main__":
    main()
