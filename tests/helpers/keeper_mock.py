#!/usr/bin/env python3
"""keeper_mock.py - a stand-in for keeper.sparecores.net for tests/unit/test_keeper.c.

usage: keeper_mock.py LOGFILE [MODE]

Listens on 127.0.0.1 on a port the kernel picks and prints that port as stdout's first line.
Every request is appended to LOGFILE as one JSON line: {"path": path+query, "headers": {...}}
(header names lowercased). The answer is chosen by the first path segment (http://HOST:PORT/empty
as base URL gives /empty/servers?...), else by MODE (default "ok"):

  ok          200, a JSON array of two servers, cheapest first
  empty       200, []
  object      200, a JSON object (not a list)
  fail        500 with a JSON error body
  notjson     200, an HTML page
  slow        sleeps 10 s before answering
  redirect    302 to /ok/servers
  huge        200, 5 MiB with a Content-Length
  hugestream  200, 5 MiB without a Content-Length (ends when the connection closes)
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SERVERS = [
    {
        "vendor_id": "hcloud",
        "server_id": "cax11",
        "name": "cax11",
        "api_reference": "cax11",
        "display_name": "CAX11 \u2014 Ampere",
        "vcpus": 2,
        "memory_amount": 4096,
        "gpu_count": 0,
        "min_price_ondemand": 0.0059,
        "tags": ["arm64", "shared"],
        "vendor": {"vendor_id": "hcloud", "name": "Hetzner Cloud"},
    },
    {
        "vendor_id": "aws",
        "server_id": "t4g.medium",
        "name": "t4g.medium",
        "api_reference": "t4g.medium",
        "display_name": "t4g.medium",
        "vcpus": 2,
        "memory_amount": 4096,
        "gpu_count": 0,
        "min_price_ondemand": 0.0336,
        "tags": [],
        "vendor": {"vendor_id": "aws", "name": "Amazon Web Services"},
    },
]

MODES = {"ok", "empty", "object", "fail", "notjson", "slow", "redirect", "huge", "hugestream"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):  # keep the test's output clean
        pass

    def record(self):
        entry = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
        with self.server.log_lock, open(self.server.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def answer(self, status, body, ctype="application/json", length=True, extra=()):
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in extra:
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on purpose (the size cap): not an error here

    def do_GET(self):
        self.record()
        first = self.path.lstrip("/").split("/", 1)[0].split("?", 1)[0]
        mode = first if first in MODES else self.server.mode
        if mode == "ok":
            self.answer(200, json.dumps(SERVERS))
        elif mode == "empty":
            self.answer(200, "[]")
        elif mode == "object":
            self.answer(200, '{"detail": "Not Found"}')
        elif mode == "fail":
            self.answer(500, '{"detail": "Internal Server Error"}')
        elif mode == "notjson":
            self.answer(200, "<html><body>maintenance</body></html>", ctype="text/html")
        elif mode == "slow":
            time.sleep(10)
            self.answer(200, json.dumps(SERVERS))
        elif mode == "redirect":
            self.answer(302, "", extra=[("Location", "/ok/servers")])
        elif mode == "huge":
            self.answer(200, b" " * (5 << 20))
        elif mode == "hugestream":
            self.answer(200, b" " * (5 << 20), length=False)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: keeper_mock.py LOGFILE [MODE]")
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.log_path = sys.argv[1]
    srv.log_lock = threading.Lock()
    srv.mode = sys.argv[2] if len(sys.argv) > 2 else "ok"
    if srv.mode not in MODES:
        sys.exit("keeper_mock.py: unknown mode " + srv.mode)
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
