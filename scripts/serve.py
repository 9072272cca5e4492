"""Static file server for www/ on 127.0.0.1 with the headers the page needs.

It sends a strict Content-Security-Policy (no 'unsafe-eval', only 'wasm-unsafe-eval'), the
cross-origin isolation headers the threaded build needs, application/wasm for .wasm, and no
caching, so a rebuilt package is always picked up.
"""

import argparse
import functools
import http.server
import mimetypes

CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self' http://127.0.0.1:* http://localhost:* https:; "
    "worker-src 'self' blob:; object-src 'none'; base-uri 'none'"
)


class Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, fmt, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--root", default="www")
    args = parser.parse_args()
    mimetypes.add_type("application/wasm", ".wasm")
    mimetypes.add_type("text/javascript", ".js")
    handler = functools.partial(Handler, directory=args.root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    # --port 0: the system picks a free port (the tests do, so parallel runs never collide); the
    # line gives the real one.
    print(f"serving {args.root} on http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
