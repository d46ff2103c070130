"""Asks a running graph-ascend-server for Health and ListRuns over its Unix socket.

Usage: python scripts/server-health.py SOCKET VIS_NAME, with graph_ascend_plugin
(the wheel's, for its gRPC stubs) importable. Exits nonzero unless the server
answers within 60 s with version 0.1.0 and lists run/VIS_NAME as its only file.
Used by scripts/test-wheel.sh and scripts/test-aarch64.sh.
"""

import sys

import grpc
from graph_ascend_plugin._proto import graph_service_pb2 as pb
from graph_ascend_plugin._proto import graph_service_pb2_grpc as rpc

socket, vis = sys.argv[1], sys.argv[2]
channel = grpc.insecure_channel(f"unix:{socket}")
grpc.channel_ready_future(channel).result(timeout=60)
stub = rpc.GraphServiceStub(channel)
health = stub.Health(pb.HealthRequest(), timeout=30)
runs = stub.ListRuns(pb.ListRunsRequest(), timeout=30)
assert health.version == "0.1.0", health
assert [f.path for f in runs.files] == [f"run/{vis}"], runs
print(f"server-health: Health {health.version}, ListRuns {runs.files[0].path}")
