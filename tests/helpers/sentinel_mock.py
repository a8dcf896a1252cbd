#!/usr/bin/env python3
"""sentinel_mock.py - a stand-in for api.sentinel.sparecores.net (tests/unit/test_sentinel.c,
the upload CLI tests).

usage: sentinel_mock.py LOGFILE [TOKEN]

Listens on 127.0.0.1 on a port the kernel picks and prints that port as stdout's first line;
use http://127.0.0.1:PORT as SENTINEL_API_URL. Stops on SIGTERM/SIGINT.

Every request is appended to LOGFILE as one JSON line, before it is answered:
  {"method": "POST", "path": "/runs", "headers": {lowercased name: value}, "body": "<text>"}

Endpoints (the contract resource-tracker-rs validated against the live API):
  POST /runs
      Authorization must be "Bearer TOKEN" (else 401), Content-Type application/json, the body
      a JSON object without "pid" or "run_id", "command" a string and "tags" a list of strings
      when present (else 422). Answers 200:
        {"run_id": "run-N", "upload_uri_prefix": "s3://test-bucket/sentinel/<org>",
         "upload_credentials": {"access_key", "secret_key", "session_token", "expiration"}}
      Each run made is also appended to LOGFILE + ".runs" as one line: "run-N KEY" (KEY: the
      request's Idempotency-Key header, "-" without one). With "idempotency": true in the
      control file, a repeat of a key answers the run that key made first (an API that honours
      the header); otherwise every POST makes a new run (the contract as validated).
  POST /runs/{id}/refresh-credentials
      Authorization as above; the body must be empty (else 422). Answers 200
      {"upload_credentials": {...}} with a new session token and expiration. Unknown id: 404.
  POST /runs/{id}/finish
      Authorization as above, Content-Type application/json, no Content-Encoding; the body's keys
      exactly {exit_code, run_status, finished_at, data_source, data_uris} with data_source "s3"
      and data_uris a non-empty list of s3:// strings, or {exit_code, run_status, finished_at,
      data_source, data_csv} with data_source "inline" and data_csv a string; exit_code an int,
      run_status "finished" or "failed", finished_at "YYYY-MM-DDTHH:MM:SSZ"; run_id is not a key
      (only in the path). Violations: 422 with a FastAPI-like {"detail": [{type, loc, msg}]}.
      Unknown id: 404. Else 200 {"run": {...}, "processing": {...}}.
  Anything else: 404 (405 for another method).

Environment (read at start):
  TOKEN            argv[2], else MOCK_SENTINEL_TOKEN, else "test-token"
  MOCK_S3_KEY      access_key (default "AKIAMOCKACCESSKEY")
  MOCK_S3_SECRET   secret_key (default "mock-secret-key")
  MOCK_S3_TOKEN    session_token; unset: "session-<run>-<issue>", a new one at each refresh
  MOCK_CRED_TTL    seconds from now to the credentials' expiration (default 3600)
  MOCK_ORG         the last part of upload_uri_prefix (default "org-test")
  MOCK_CONTROL     the control file (default LOGFILE + ".ctl")

The control file is read at every request (missing or empty: no faults). A JSON object:
  {"ttl": 60,                          # overrides MOCK_CRED_TTL
   "expiration": "2030-01-01T00:00:00+00:00",  # sent verbatim instead of now+ttl; null: omitted
   "expiration_key": "expires_at",     # the key name (default "expiration")
   "run_id": 42,                        # any JSON value instead of "run-N"
   "org": "x",                          # overrides MOCK_ORG for the runs made from now on
   "idempotency": true,                 # honour Idempotency-Key (see POST /runs)
   "faults": {"start" | "refresh" | "finish" | "any": FAULT}}
  FAULT = {"count": N,       # how many requests it applies to (default 1; -1: all of them)
           "sleep": S,       # sleep S seconds first (then the other parts, or a normal answer)
           "close": true,    # close the connection without answering (nothing done)
           "lose": true,     # do the work (make the run), then close without answering:
                             # the answer is lost on the way back
           "status": 500,    # answer this status ...
           "body": ...}      # ... with this body (a string verbatim, else JSON); default a
                             # FastAPI-like {"detail": ...}
  A fault with a count is consumed by rewriting the control file. Write the control file
  atomically (write a temporary file, rename it) when the mock may be serving a request.
"""
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FINISHED_AT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
S3_KEYS = {"exit_code", "run_status", "finished_at", "data_source", "data_uris"}
INLINE_KEYS = {"exit_code", "run_status", "finished_at", "data_source", "data_csv"}


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class State:
    def __init__(self, log_path, token):
        self.lock = threading.Lock()
        self.log_path = log_path
        self.token = token
        self.ctl_path = os.environ.get("MOCK_CONTROL") or log_path + ".ctl"
        self.key = os.environ.get("MOCK_S3_KEY", "AKIAMOCKACCESSKEY")
        self.secret = os.environ.get("MOCK_S3_SECRET", "mock-secret-key")
        self.session = os.environ.get("MOCK_S3_TOKEN")
        self.ttl = float(os.environ.get("MOCK_CRED_TTL", "3600"))
        self.org = os.environ.get("MOCK_ORG", "org-test")
        self.runs = {}  # run id (text) -> {"issued": n, "finished": bool}
        self.next_run = 1
        self.by_key = {}  # Idempotency-Key -> run id (text), with "idempotency": true

    def control(self):
        try:
            with open(self.ctl_path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            return {}
        if not text.strip():
            return {}
        return json.loads(text)

    def take_fault(self, endpoint):
        """The fault for this request, consuming one count of it (under self.lock)."""
        ctl = self.control()
        faults = ctl.get("faults") or {}
        for name in (endpoint, "any"):
            fault = faults.get(name)
            if not fault:
                continue
            count = fault.get("count", 1)
            if count == 0:
                continue
            if count > 0:
                fault = dict(fault)
                left = dict(faults[name], count=count - 1)
                if left["count"] == 0:
                    del faults[name]
                else:
                    faults[name] = left
                ctl["faults"] = faults
                tmp = self.ctl_path + ".tmp"
                with open(tmp, "w", encoding="utf-8") as f:
                    json.dump(ctl, f)
                os.replace(tmp, self.ctl_path)
            return fault, ctl
        return None, ctl

    def creds(self, ctl, run_id):
        run = self.runs[run_id]
        run["issued"] += 1
        c = {
            "access_key": self.key,
            "secret_key": self.secret,
            "session_token": self.session or "session-%s-%d" % (run_id, run["issued"]),
        }
        key = ctl.get("expiration_key", "expiration")
        if "expiration" in ctl:
            if ctl["expiration"] is not None:
                c[key] = ctl["expiration"]
        else:
            c[key] = iso(time.time() + float(ctl.get("ttl", self.ttl)))
        return c


def detail(kind, loc, msg):
    return {"detail": [{"type": kind, "loc": ["body"] + loc, "msg": msg}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # keep the test's output clean
        pass

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def answer(self, status, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): not an error here

    def do_GET(self):
        self.handle_any("GET")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_POST(self):
        self.handle_any("POST")

    def handle_any(self, method):
        st = self.server.state
        raw = self.read_body()
        entry = {
            "method": method,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": raw.decode("utf-8", "replace"),
        }
        path = self.path.split("?", 1)[0]
        m = re.fullmatch(r"/runs/([^/]+)/(refresh-credentials|finish)", path)
        if path == "/runs":
            endpoint = "start"
        elif m:
            endpoint = "refresh" if m.group(2) == "refresh-credentials" else "finish"
        else:
            endpoint = None
        with st.lock:
            with open(st.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
            fault, ctl = st.take_fault(endpoint) if endpoint else (None, st.control())
        if fault:
            if fault.get("sleep"):
                time.sleep(float(fault["sleep"]))
            if fault.get("close"):
                self.close_connection = True
                return
            if "status" in fault:
                body = fault.get("body", {"detail": "injected fault"})
                if isinstance(body, str):
                    body = body.encode("utf-8")
                self.answer(int(fault["status"]), body)
                return
            if fault.get("lose"):  # the work done below, its answer written nowhere
                self.wfile = open(os.devnull, "wb")
                self.close_connection = True
        if endpoint is None:
            known = path == "/runs" or re.fullmatch(r"/runs/[^/]+/[a-z-]+", path)
            self.answer(405 if known else 404, {"detail": "Not Found"})
            return
        if method != "POST":
            self.answer(405, {"detail": "Method Not Allowed"})
            return
        if self.headers.get("Authorization") != "Bearer " + st.token:
            self.answer(401, {"detail": "Invalid or missing API token"})
            return
        if endpoint == "start":
            self.ep_start(st, ctl, raw)
        else:
            run_id = m.group(1)
            with st.lock:
                known = run_id in st.runs
            if not known:
                self.answer(404, {"detail": "Run not found"})
            elif endpoint == "refresh":
                self.ep_refresh(st, ctl, run_id, raw)
            else:
                self.ep_finish(st, run_id, raw)

    def json_body(self, raw):
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype != "application/json":
            self.answer(422, detail("model_attributes_type", [], "Input should be a valid dictionary"))
            return None
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self.answer(422, detail("json_invalid", [0], "JSON decode error"))
            return None
        if not isinstance(body, dict):
            self.answer(422, detail("model_attributes_type", [], "Input should be a valid dictionary"))
            return None
        return body

    def ep_start(self, st, ctl, raw):
        body = self.json_body(raw)
        if body is None:
            return
        for k in ("pid", "run_id"):
            if k in body:
                self.answer(422, detail("extra_forbidden", [k], "Extra inputs are not permitted"))
                return
        if "command" in body and not isinstance(body["command"], (str, type(None))):
            self.answer(422, detail("string_type", ["command"], "Input should be a valid string"))
            return
        if "tags" in body and not (
            isinstance(body["tags"], list) and all(isinstance(t, str) for t in body["tags"])
        ):
            self.answer(422, detail("list_type", ["tags"], "Input should be a valid list"))
            return
        key = self.headers.get("Idempotency-Key")
        with st.lock:
            if ctl.get("idempotency") and key and key in st.by_key:
                run_id = st.by_key[key]
            else:
                run_id = "run-%d" % st.next_run
                st.next_run += 1
                st.runs[run_id] = {"issued": 0, "finished": False}
                if key:
                    st.by_key.setdefault(key, run_id)
                with open(st.log_path + ".runs", "a", encoding="utf-8") as f:
                    f.write("%s %s\n" % (run_id, key or "-"))
            creds = st.creds(ctl, run_id)
        answer_id = ctl.get("run_id", run_id)
        if answer_id != run_id:  # the test's own id must be finishable too
            with st.lock:
                st.runs[str(answer_id)] = st.runs[run_id]
        self.answer(
            200,
            {
                "run_id": answer_id,
                "upload_uri_prefix": "s3://test-bucket/sentinel/" + ctl.get("org", st.org),
                "upload_credentials": creds,
            },
        )

    def ep_refresh(self, st, ctl, run_id, raw):
        if raw:
            self.answer(422, detail("extra_forbidden", [], "this endpoint takes no body"))
            return
        with st.lock:
            creds = st.creds(ctl, run_id)
        self.answer(200, {"upload_credentials": creds})

    def ep_finish(self, st, run_id, raw):
        if self.headers.get("Content-Encoding"):
            self.answer(422, detail("json_invalid", [0], "JSON decode error"))
            return
        body = self.json_body(raw)
        if body is None:
            return
        errors = []
        source = body.get("data_source")
        want = INLINE_KEYS if source == "inline" else S3_KEYS
        for k in sorted(set(body) - want):
            errors.append({"type": "extra_forbidden", "loc": ["body", k],
                           "msg": "Extra inputs are not permitted"})
        for k in sorted(want - set(body)):
            errors.append({"type": "missing", "loc": ["body", k], "msg": "Field required"})
        ec = body.get("exit_code")
        if "exit_code" in body and (not isinstance(ec, int) or isinstance(ec, bool)):
            errors.append({"type": "int_type", "loc": ["body", "exit_code"],
                           "msg": "Input should be a valid integer"})
        if "run_status" in body and body["run_status"] not in ("finished", "failed"):
            errors.append({"type": "enum", "loc": ["body", "run_status"],
                           "msg": "Input should be 'finished' or 'failed'"})
        fa = body.get("finished_at")
        if "finished_at" in body and not (isinstance(fa, str) and FINISHED_AT.match(fa)):
            errors.append({"type": "datetime_from_date_parsing", "loc": ["body", "finished_at"],
                           "msg": "Input should be a valid datetime"})
        if source not in ("s3", "inline"):
            errors.append({"type": "literal_error", "loc": ["body", "data_source"],
                           "msg": "Input should be 's3' or 'inline'"})
        elif source == "s3" and "data_uris" in body:
            uris = body["data_uris"]
            if not (isinstance(uris, list) and uris and
                    all(isinstance(u, str) and u.startswith("s3://") for u in uris)):
                errors.append({"type": "list_type", "loc": ["body", "data_uris"],
                               "msg": "Input should be a non-empty list of s3:// URIs"})
        elif source == "inline" and "data_csv" in body and not isinstance(body["data_csv"], str):
            errors.append({"type": "string_type", "loc": ["body", "data_csv"],
                           "msg": "Input should be a valid string"})
        if errors:
            self.answer(422, {"detail": errors})
            return
        with st.lock:
            st.runs[run_id]["finished"] = True
        now = iso(time.time())
        files = len(body["data_uris"]) if source == "s3" else 0
        rows = max(0, body["data_csv"].count("\n") - 1) if source == "inline" else None
        self.answer(
            200,
            {
                "run": {"run_id": run_id, "finished_at": body["finished_at"],
                        "heartbeat_at": now, "run_status": body["run_status"],
                        "exit_code": body["exit_code"], "tag_count": 0, "tags": []},
                "processing": {"status": "completed", "rows": rows, "files": files,
                               "duration_ms": 1, "error": None},
            },
        )


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: sentinel_mock.py LOGFILE [TOKEN]")
    token = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("MOCK_SENTINEL_TOKEN", "test-token")
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State(sys.argv[1], token)
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
