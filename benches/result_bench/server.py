"""Static server for the result benchmark: serves the repository root (the recorded fixtures are
in tests/fixtures), .wasm as application/wasm, and takes the page's POST /results, written
to the file given by --out. Usage: python3 server.py --root REPO --port P --out FILE

For the streamed-call leg it is also a minimal MCP server (JSON responses, no session) on
POST /mcp: `initialize`, `tools/list` (the recorded tools) and `tools/call`, whose response is
the body the page stored with POST /body (a JSON-RPC response; its id is replaced by the
request's), sent in 64 KiB pieces at a paced rate (--chunk-ms between pieces, as a network would
deliver it) and ended by closing the connection; with `Content-Length` when the body was stored
with POST /body?length. A body stored SSE-framed (`event: message` / `data: …`) is sent as
`text/event-stream`. GET /last gives the wall-clock time (ms since
the epoch) at which the last piece was written, so the page can time last byte -> plan."""

import argparse
import functools
import http.server
import json
import mimetypes
import os
import re
import time

CHUNK = 64 * 1024


class Handler(http.server.SimpleHTTPRequestHandler):
    out = None

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    body = b""
    send_length = False
    last_write_ms = 0.0
    chunk_ms = 1.0
    tools = []

    def do_POST(self):
        if self.path.startswith("/body"):
            Handler.body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            Handler.send_length = self.path.endswith("?length")
            self.send_response(204)
            self.end_headers()
            return
        if self.path == "/mcp":
            self.mcp(json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0")))))
            return
        if self.path != "/results":
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(self.out + ".tmp", "wb") as f:
            f.write(body)
        os.replace(self.out + ".tmp", self.out)
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        if self.path == "/last":
            self.json_reply({"ms": Handler.last_write_ms})
        elif self.path == "/loadavg":
            data = " ".join(f"{x:.2f}" for x in os.getloadavg()).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.path == "/mcp":
            self.send_error(405)
        else:
            super().do_GET()

    def json_reply(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def mcp(self, request):
        method, rid = request.get("method"), request.get("id")
        if rid is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if method == "initialize":
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "result-bench", "version": "0"},
            }
            self.json_reply({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/list":
            self.json_reply({"jsonrpc": "2.0", "id": rid, "result": {"tools": Handler.tools}})
        elif method == "tools/call":
            # An SSE-framed body (the page's ?sse) is sent as text/event-stream, as the reference
            # server and the Python SDK answer tool calls; its data's id is replaced the same way.
            sse = Handler.body.startswith((b"event:", b"data:"))
            new_id = b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b","
            body = re.sub(rb'^((?:event: message\n)?data: ?)?\{"jsonrpc":"2.0","id":[^,]*,', lambda m: (m.group(1) or b"") + new_id, Handler.body, count=1)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream" if sse else "application/json")
            if Handler.send_length:
                self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.flush()
            for start in range(0, len(body), CHUNK):
                self.wfile.write(body[start : start + CHUNK])
                self.wfile.flush()
                if start + CHUNK < len(body):
                    time.sleep(Handler.chunk_ms / 1000)
            Handler.last_write_ms = time.time() * 1000
            self.close_connection = True
        else:
            self.json_reply({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "unknown method"}})

    def log_message(self, fmt, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--chunk-ms", type=float, default=1.0, help="pause between 64 KiB pieces")
    args = parser.parse_args()
    Handler.chunk_ms = args.chunk_ms
    tools_list = os.path.join(args.root, "tests", "fixtures", "megane-recorded", "tools-list.json")
    with open(tools_list) as f:
        Handler.tools = json.load(f)["tools"]
    mimetypes.add_type("application/wasm", ".wasm")
    mimetypes.add_type("text/javascript", ".js")
    Handler.out = os.path.abspath(args.out)
    handler = functools.partial(Handler, directory=args.root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
