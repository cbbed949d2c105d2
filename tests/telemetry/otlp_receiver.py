"""A real OTLP receiver for tests/telemetry.rs, built on the `opentelemetry-proto` package:
over HTTP it decodes each ExportMetricsServiceRequest (POST /v1/metrics) and
ExportLogsServiceRequest (POST /v1/logs), protobuf or JSON; with --grpc it serves the
OTLP MetricsService and LogsService over gRPC instead (`grpcio`, with the package's
generated `*_service_pb2_grpc` servicers). It appends what arrived to a file as JSON
lines, one per metric data point ("metric"), event ("event") and request ("request":
path, content type, header names, the Authorization header or metadata). It answers each
request with the protocol's empty success response. Usage: otlp_receiver.py OUT_FILE
[--grpc]; prints the port it listens on (127.0.0.1) as its first line."""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

LOCK = threading.Lock()
OUT = sys.argv[1]


def value_of(any_value):
    """An AnyValue as plain JSON."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value"):
        return json_format.MessageToDict(any_value)
    return getattr(any_value, kind)


def attributes(pairs):
    return {kv.key: value_of(kv.value) for kv in pairs}


def metric_lines(request):
    for resource_metrics in request.resource_metrics:
        resource = attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                data = metric.WhichOneof("data")
                points = getattr(metric, data).data_points if data in ("sum", "gauge") else []
                for point in points:
                    number = point.WhichOneof("value")
                    yield {
                        "kind": "metric",
                        "name": metric.name,
                        "unit": metric.unit,
                        "resource": resource,
                        "attributes": attributes(point.attributes),
                        "value": getattr(point, number),
                    }


def event_lines(request):
    for resource_logs in request.resource_logs:
        resource = attributes(resource_logs.resource.attributes)
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                yield {
                    "kind": "event",
                    "name": record.event_name,
                    "resource": resource,
                    "body": value_of(record.body),
                    "attributes": attributes(record.attributes),
                }


SIGNALS = {
    "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse, metric_lines),
    "/v1/logs": (ExportLogsServiceRequest, ExportLogsServiceResponse, event_lines),
}


def write_down(record, lines):
    with LOCK, open(OUT, "a", encoding="utf-8") as out:
        for line in [record, *lines]:
            out.write(json.dumps(line) + "\n")


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        signal = SIGNALS.get(self.path)
        if signal is None:
            self.send_error(404)
            return
        request_type, response_type, lines = signal
        request = request_type()
        content_type = self.headers.get("Content-Type", "")
        if "json" in content_type:
            json_format.Parse(body, request)
        else:
            request.ParseFromString(body)
        record = {
            "kind": "request",
            "path": self.path,
            "content_type": content_type,
            "header_names": sorted(k.lower() for k in self.headers.keys()),
            "authorization": self.headers.get("Authorization"),
        }
        write_down(record, lines(request))
        reply = response_type().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def serve_grpc():
    from concurrent import futures

    import grpc
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc

    def exported(path, request, context, lines, response_type):
        metadata = dict(context.invocation_metadata())
        record = {
            "kind": "request",
            "path": path,
            # grpcio keeps the content type to itself: a servicer runs only for a request
            # its transport took as gRPC.
            "content_type": "application/grpc",
            "header_names": sorted(metadata.keys()),
            "authorization": metadata.get("authorization"),
            "user_agent": metadata.get("user-agent"),
        }
        write_down(record, lines(request))
        return response_type()

    class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
        def Export(self, request, context):
            path = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
            return exported(path, request, context, metric_lines, ExportMetricsServiceResponse)

    class Logs(logs_service_pb2_grpc.LogsServiceServicer):
        def Export(self, request, context):
            path = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
            return exported(path, request, context, event_lines, ExportLogsServiceResponse)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    server.wait_for_termination()


def main():
    if "--grpc" in sys.argv[2:]:
        serve_grpc()
        return
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
