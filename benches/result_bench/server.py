"""Static server for the result benchmark: serves the repository root, /shared/ from ../shared
(the recorded fixtures), .wasm as application/wasm, and takes the page's POST /results, written
to the file given by --out. Usage: python3 server.py --root REPO --port P --out FILE"""

import argparse
import functools
import http.server
import mimetypes
import os


class Handler(http.server.SimpleHTTPRequestHandler):
    out = None
    shared = None

    def translate_path(self, path):
        if path.startswith("/shared/"):
            rel = path[len("/shared/"):].split("?", 1)[0]
            return os.path.join(self.shared, os.path.normpath("/" + rel).lstrip("/"))
        return super().translate_path(path)

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_POST(self):
        if self.path != "/results":
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(self.out + ".tmp", "wb") as f:
            f.write(body)
        os.replace(self.out + ".tmp", self.out)
        self.send_response(204)
        self.end_headers()

    def log_message(self, fmt, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    mimetypes.add_type("application/wasm", ".wasm")
    mimetypes.add_type("text/javascript", ".js")
    Handler.out = os.path.abspath(args.out)
    Handler.shared = os.path.abspath(os.path.join(args.root, "..", "shared"))
    handler = functools.partial(Handler, directory=args.root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
