#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ from tests/fixtures (small files only) plus a few hand-written
hostile inputs. Run once from the repository root; then `cargo fuzz cmin <target>` keeps it small."""
import glob, hashlib, json, os, sys

root = os.path.dirname(os.path.abspath(__file__))
fixtures = os.path.join(root, "..", "tests", "fixtures")
MAX = 16 * 1024


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX:
        return
    d = os.path.join(root, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


for path in sorted(glob.glob(os.path.join(fixtures, "reference-server", "*", "*.json"))):
    ex = json.load(open(path))
    r = ex.get("response") or {}
    ctype = r.get("contentType") or ""
    body = r.get("rawBody")
    if body is None and r.get("body") is not None:
        body = json.dumps(r["body"])
    if body is None:
        continue
    status = int(r.get("status") or 200)
    head = bytes([status & 0xFF, status >> 8])
    put("jsonrpc", head + (ctype + "\n" + body).encode())
    if "event-stream" in ctype:
        put("sse", b"\x05" + body.encode())
        # The last message event's data is the JSON-RPC response.
        for line in reversed(body.splitlines()):
            if line.startswith("data:"):
                put("result", line[5:].strip())
                break
    elif body.lstrip().startswith("{"):
        put("result", body)

for name in ("call-polymer_chain.json",):
    call = json.load(open(os.path.join(fixtures, "megane-recorded", name)))
    put("result", json.dumps(call["result"]))
put("result", '{"structuredContent":{"contract":1,"name":"w","structure":{"elements":[8,1,1],'
    '"positions":[0,0,0.1173,0,0.7572,-0.4692,0,-0.7572,-0.4692],"bonds":[[0,1],[0,2]]}},'
    '"content":[{"type":"text","text":"one\\nwater"}]}')
put("result", '{"isError":true,"content":[{"type":"text","text":"Traceback\\n  File x\\r\\n\\u202e"}]}')
put("result", '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad\\nargs"}}')

tools = json.load(open(os.path.join(fixtures, "megane-recorded", "tools-list.json")))
tool_list = tools.get("result", tools)
for tool in tool_list.get("tools", []):
    put("discovery", json.dumps({"tools": [tool]}))
put("discovery", json.dumps(tool_list))

for path in sorted(glob.glob(os.path.join(fixtures, "molecules", "*.mol"))):
    put("molblock", open(path, "rb").read())

for s in [
    "#tools=http%3A%2F%2F127.0.0.1%3A8765%2Fmcp&token=abc",
    "#tools=https://example.org/mcp&x=1&token=t%20k",
    "tools=http://localhost:1/&tools=https://a/",
    "#tools=%+1&token=%zz",
    "#view=3&tools=javascript:alert(1)",
    "#tools=https://u:p@host/mcp?token=1",
]:
    put("launch", s)

for s in [
    "http://127.0.0.1:8765/mcp",
    "https://example.org/mcp",
    "http://[::1]:80/mcp",
    "https://user:pass@example.org/mcp",
    "https://example.org/mcp?token=abc",
    "http://example.org/mcp",
    "ftp://x",
    "HTTPS://EXAMPLE.ORG:443/a#b 127.0.0.1",
    "//evil.example/x host:1",
    "http://localhost./mcp",
]:
    put("server_url", s)
