#!/usr/bin/env python3
"""Test peer for the MCP client: a Builder tool server on the official MCP Python SDK (mcp 2.3.0).

It serves Streamable HTTP on loopback with the SDK's own transport (both protocol eras, DNS-rebinding
protection), Starlette's CORSMiddleware (exposing Mcp-Session-Id) and a bearer token. Its tools are the
Builder-marked tools recorded from the reference server (`tools-list.json` under --fixtures); a call with
the recorded arguments returns the recorded result (`call-<tool>.json`) after reporting progress in
--steps steps of --step-seconds each, so a call can be cancelled mid-way. Other arguments give a tool error
(`isError: true`). tools/list is paged (--page-size, default 1).

--pydantic-tool also lists a Builder tool, `calculate_ph`, whose arguments are checked as FastMCP checks a
function's arguments (a pydantic model named `calculate_phArguments`): a bad argument gives the tool error
FastMCP gives, `Error executing tool calculate_ph: ` and pydantic's whole multi-line validation error (as a
third-party server behind `mcp-proxy` answers).

Cancellations the server saw are logged to stderr and listed by `GET /peer/cancellations` (JSON, no token,
CORS like the rest), so a test can check that a cancel reached the server.

    python builder_peer.py --port 18790 --token T --allow-origin http://127.0.0.1:8000 \
        --fixtures tests/fixtures/megane-recorded [--stateless] [--modern] [--json-response]

--oauth-issuer ISSUER protects /mcp with the MCP authorization flow instead of --token, through the SDK's own
auth support (`AuthSettings`, protected resource metadata naming ISSUER, `WWW-Authenticate` with
`resource_metadata`, required scope --oauth-scope): a bearer token must be a JWT access token (RFC 9068) of
ISSUER, signed by a key of its JWKS (found through its OpenID discovery document), for this server's
`/mcp` URL (its RFC 8707 resource indicator as `aud`), not expired.

--modern also lets a browser send the 2026-07-28 headers (Mcp-Method, Mcp-Name) through CORS; without it
the preflight refuses them, as the reference server's does. The SDK answers both eras either way.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import anyio
import mcp.types as types
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse, PlainTextResponse, Response

CANCELLATIONS: list[dict] = []
CALLS: list[dict] = []


def log(*parts: object) -> None:
    print("[builder_peer]", *parts, file=sys.stderr, flush=True)


def load_fixtures(folder: pathlib.Path) -> tuple[list[dict], dict[str, dict]]:
    tools = json.loads((folder / "tools-list.json").read_text())["tools"]
    calls = {}
    for tool in tools:
        path = folder / f"call-{tool['name']}.json"
        if path.exists():
            calls[tool["name"]] = json.loads(path.read_text())
    return tools, calls


class AnnouncingServer(Server):
    """Declares `tools.listChanged` (legacy era) so that its list_changed notifications mean something."""

    def get_capabilities(self, notification_options=None, experimental_capabilities=None, extensions=None, **kw):
        return super().get_capabilities(
            NotificationOptions(tools_changed=True), experimental_capabilities, extensions, **kw
        )


def extra_tools(tools: list[dict]) -> list[dict]:
    """--extra-tools: a copy of the first tool without the Builder marker (a plain MCP tool) and
    one marked for contract 2 (a contract this client does not support)."""
    plain = json.loads(json.dumps(tools[0]))
    plain["name"] = "plain_echo"
    plain.pop("_meta", None)
    future = json.loads(json.dumps(tools[0]))
    future["name"] = "future_box"
    future["_meta"]["io.github.megane-labs/builder"]["contract"] = 2
    return [plain, future]


COUNT_OUTPUT = {
    "type": "object",
    "properties": {"atoms": {"type": "integer", "minimum": 0}, "label": {"type": "string"}},
    "required": ["atoms"],
}


def output_schema_tools() -> list[dict]:
    """--output-schema-tools: plain MCP tools that declare an outputSchema. `plain_count` returns
    `{"atoms": <atoms>}` as structuredContent as asked, even when that breaks its own schema
    (a negative count, or `atoms` sent as text); with `omit: true` it returns text only, with
    `fail: true` a tool error. Its `label` is echoed as sent. `plain_bad_schema` declares an outputSchema that is not valid JSON
    Schema."""
    count_input = {
        "type": "object",
        "properties": {"atoms": {}, "omit": {"type": "boolean"}, "fail": {"type": "boolean"}, "label": {}},
    }
    return [
        {"name": "plain_count", "description": "Counts atoms.", "inputSchema": count_input, "outputSchema": COUNT_OUTPUT},
        {
            "name": "plain_bad_schema",
            "description": "Declares a broken outputSchema.",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"x": {"type": "nonsense"}}},
        },
    ]


PH_TOOL = {
    "name": "calculate_ph",
    "title": "pH of a solution",
    "description": "Computes the pH of a solution. Arguments are checked by pydantic.",
    "inputSchema": {
        "type": "object",
        "properties": {"ph": {"type": "number", "title": "pH"}, "seed": {"type": "integer", "x-megane-widget": "seed"}},
        "required": ["ph"],
    },
    "_meta": {"io.github.megane-labs/builder": {"contract": 1, "category": "molecule", "apply": "new_document"}},
}


def pydantic_call(arguments: dict) -> types.CallToolResult:
    """`calculate_ph` as FastMCP runs a function tool: arguments checked by a pydantic model; a
    ValidationError becomes the tool error `Error executing tool <name>: <error>`."""
    import pydantic

    model = pydantic.create_model("calculate_phArguments", ph=(float, ...), seed=(int, 0))
    try:
        model.model_validate(arguments)
    except pydantic.ValidationError as error:
        text = f"Error executing tool calculate_ph: {error}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
    text = "calculate_ph only checks its arguments in this test peer."
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def plain_call(name: str, arguments: dict) -> types.CallToolResult:
    if arguments.get("fail"):
        text = f"Error executing tool {name}: no atoms to count"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
    text = [types.TextContent(type="text", text=f"{name} ran.")]
    if arguments.get("omit"):
        return types.CallToolResult(content=text)
    structured = {"atoms": arguments.get("atoms", 0)}
    if "label" in arguments:
        structured["label"] = arguments["label"]
    return types.CallToolResult(content=text, structured_content=structured)


def build_server(args: argparse.Namespace) -> Server:
    tools, calls = load_fixtures(pathlib.Path(args.fixtures))
    if args.extra_tools:
        tools = tools + extra_tools(tools)
    if args.output_schema_tools:
        tools = tools + output_schema_tools()
    if args.pydantic_tool:
        tools = tools + [json.loads(json.dumps(PH_TOOL))]
    for tool in tools:
        if tool["name"] in args.without_output_schema:
            tool.pop("outputSchema", None)
    tool_models = [types.Tool.model_validate(t) for t in tools]

    async def list_tools(ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        try:
            start = int(cursor) if cursor else 0
        except ValueError:
            start = -1
        if start < 0 or start > len(tool_models):
            raise ValueError(f"invalid cursor {cursor!r}")
        end = start + args.page_size
        page = tool_models[start:end]
        next_cursor = str(end) if end < len(tool_models) else None
        return types.ListToolsResult(tools=page, next_cursor=next_cursor)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        arguments = params.arguments or {}
        record = {"tool": name, "requestId": ctx.request_id, "time": time.time(), "arguments": arguments}
        CALLS.append(record)
        if args.output_schema_tools and name.startswith("plain_") and name != "plain_echo":
            return plain_call(name, arguments)
        if args.pydantic_tool and name == PH_TOOL["name"]:
            return pydantic_call(arguments)
        recorded = calls.get(name)
        # `quoteInName: true`: the recorded result with a `"` in the first residue name, which the
        # JSON text escapes (a Structure the client's scanner declines, issue 10).
        quote = arguments.pop("quoteInName", False) is True
        if recorded is None:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"Unknown tool: {name}")], is_error=True
            )
        if arguments != recorded["arguments"]:
            text = (
                f"Error executing tool {name}: this test peer only reproduces the recorded call "
                f"(arguments {json.dumps(recorded['arguments'], sort_keys=True)})."
            )
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        try:
            for step in range(args.steps):
                await ctx.session.report_progress(step, args.steps, f"step {step + 1} of {args.steps}")
                await anyio.sleep(args.step_seconds)
            await ctx.session.report_progress(args.steps, args.steps, "done")
        except anyio.get_cancelled_exc_class():
            CANCELLATIONS.append({"tool": name, "requestId": ctx.request_id, "time": time.time()})
            log(f"cancelled: {name} (request {ctx.request_id})")
            raise
        if args.announce_tools_changed:
            # No related request: the SDK sends it on the session's GET stream.
            await ctx.session.send_tool_list_changed()
        result = recorded["result"]
        if quote:
            result = json.loads(json.dumps(result))
            names = result["structuredContent"]["structure"]["residueNames"]
            names[0] = 'W"' + names[0]
        return types.CallToolResult.model_validate(result)

    server_class = AnnouncingServer if args.announce_tools_changed else Server
    return server_class(
        "builder-test-peer",
        version="0.1.0",
        instructions="Test peer replaying recorded megane-builder-tools results.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class Gate:
    """Token check on the MCP path, plus the peer's own read-only endpoints."""

    def __init__(self, app, token: str | None, path: str):
        self.app = app
        self.token = token
        self.path = path

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path == "/health":
            await PlainTextResponse("ok")(scope, receive, send)
            return
        if path.startswith("/redirect/"):
            # A fault for the transport tests: 307 to the same peer under another host name.
            host = dict(scope["headers"]).get(b"host", b"127.0.0.1").decode("latin-1")
            location = f"http://localhost:{host.rsplit(':', 1)[-1]}{path[len('/redirect'):]}"
            await Response(status_code=307, headers={"location": location})(scope, receive, send)
            return
        if path == "/peer/cancellations":
            await JSONResponse({"cancellations": CANCELLATIONS, "calls": CALLS})(scope, receive, send)
            return
        if self.token is not None and path.startswith(self.path) and scope["method"] != "OPTIONS":
            headers = dict((k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"])
            if headers.get("authorization") != f"Bearer {self.token}":
                await PlainTextResponse("missing or invalid bearer token", status_code=401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class JwtAccessTokenVerifier:
    """The SDK's `TokenVerifier` protocol for RFC 9068 JWT access tokens of `issuer` meant for `resource`,
    checked with PyJWT (signature against the issuer's JWKS, `iss`, `aud`, `exp`)."""

    def __init__(self, issuer: str, resource: str):
        self.issuer = issuer
        self.resource = resource
        self.jwks = None

    def _jwks(self):
        if self.jwks is None:
            import urllib.request

            import jwt

            with urllib.request.urlopen(f"{self.issuer}/.well-known/openid-configuration", timeout=10) as answer:
                self.jwks = jwt.PyJWKClient(json.loads(answer.read())["jwks_uri"])
        return self.jwks

    def _verify(self, token: str) -> AccessToken | None:
        import jwt

        try:
            key = self._jwks().get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=["RS256", "PS256", "ES256"],
                audience=self.resource,
                issuer=self.issuer,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as error:
            log(f"refused a token: {error}")
            return None
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id", "")),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=int(claims["exp"]),
            resource=self.resource,
            subject=claims.get("sub"),
            claims=claims,
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        return await anyio.to_thread.run_sync(self._verify, token)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18790)
    parser.add_argument("--token", default=None, help="bearer token (omit for none)")
    parser.add_argument("--allow-origin", action="append", default=[], help="allowed page origin (repeatable)")
    parser.add_argument("--fixtures", required=True, help="folder with tools-list.json and call-<tool>.json")
    parser.add_argument("--stateless", action="store_true", help="no sessions (stateless_http)")
    parser.add_argument("--modern", action="store_true", help="let CORS pass the 2026-07-28 headers")
    parser.add_argument(
        "--json-response", action="store_true", help="answer with application/json instead of SSE streams"
    )
    parser.add_argument(
        "--no-expose-session-id",
        action="store_true",
        help="fault: leave Mcp-Session-Id out of Access-Control-Expose-Headers",
    )
    parser.add_argument(
        "--announce-tools-changed",
        action="store_true",
        help="declare tools.listChanged and send notifications/tools/list_changed after each call",
    )
    parser.add_argument(
        "--extra-tools",
        action="store_true",
        help="also list a tool without the Builder marker and one marked for contract 2",
    )
    parser.add_argument(
        "--output-schema-tools",
        action="store_true",
        help="also list plain tools that declare an outputSchema (plain_count, plain_bad_schema)",
    )
    parser.add_argument(
        "--pydantic-tool",
        action="store_true",
        help="also list calculate_ph, a Builder tool whose bad arguments give pydantic's multi-line error",
    )
    parser.add_argument(
        "--without-output-schema",
        action="append",
        default=[],
        metavar="TOOL",
        help="fault: list this recorded tool without its outputSchema (repeatable)",
    )
    parser.add_argument("--oauth-issuer", default=None, help="require sign-in with this authorization server")
    parser.add_argument("--oauth-scope", default="mcp:tools", help="the scope --oauth-issuer's tokens need")
    parser.add_argument("--page-size", type=int, default=1)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--step-seconds", type=float, default=0.4)
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("this test peer listens on loopback only")
    if args.oauth_issuer and args.token:
        parser.error("--oauth-issuer and --token exclude each other")

    server = build_server(args)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", *args.allow_origin],
    )
    auth = {}
    if args.oauth_issuer:
        resource = f"http://{args.host}:{args.port}/mcp"
        auth = dict(
            auth=AuthSettings(
                issuer_url=args.oauth_issuer,
                resource_server_url=resource,
                required_scopes=[args.oauth_scope],
                validate_token_resource=True,
            ),
            token_verifier=JwtAccessTokenVerifier(args.oauth_issuer, resource),
        )
    app = server.streamable_http_app(
        stateless_http=args.stateless,
        json_response=args.json_response,
        transport_security=security,
        host=args.host,
        **auth,
    )
    allow_headers = ["content-type", "authorization", "mcp-session-id", "mcp-protocol-version", "last-event-id"]
    if args.modern:
        allow_headers += ["mcp-method", "mcp-name"]
    app = CORSMiddleware(
        Gate(app, args.token, "/mcp"),
        allow_origins=args.allow_origin,
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=allow_headers,
        expose_headers=([] if args.no_expose_session_id else ["Mcp-Session-Id"])
        + (["WWW-Authenticate"] if args.oauth_issuer else []),
    )
    log(f"listening on http://{args.host}:{args.port}/mcp (stateless={args.stateless}, modern={args.modern})")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
