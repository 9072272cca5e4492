// The tool servers the page uses at once: the in-page offline tools and any number of Streamable
// HTTP servers. Each tool is addressed as (server id, tool name). The URL is remembered in
// localStorage, the token never (nor sign-in tokens: those stay in the connection); the first connection to a URL is confirmed by the user (§9).
// A server whose origin refused the newer (2026-07-28) protocol is remembered for the page's
// lifetime, and connected with the earlier protocol from then on: no refused probe each time.
import { checkServerUrl, connect, parseToolList } from "../pkg/megane_builder_client.js";
import { offlineTools } from "../pkg/offline.js";
import { signInOptions } from "./signin.js";

const URL_KEY = "megane-demo.server-url";
const TRUST_KEY = "megane-demo.trusted-urls";
/** The protocol version a server speaks when it took the newer protocol. */
const NEWER = "2026-07-28";
/** Origins that refused the newer protocol in this page's lifetime (not stored). */
const legacyOrigins = new Set();

/** The URL last connected to, or "" (no default: nothing runs at a made-up address). */
export function rememberedUrl() {
  return localStorage.getItem(URL_KEY) || "";
}

function trusted() {
  try { return new Set(JSON.parse(localStorage.getItem(TRUST_KEY) || "[]")); } catch { return new Set(); }
}

/** §9: adding a server is installing software and it receives your structures: ask once per URL. */
function confirmFirstConnection(url) {
  const known = trusted();
  if (known.has(url)) return true;
  const yes = window.confirm(`Connect to the tool server at ${url}?\n\nThe tools you run there receive the structures and molecules you send them. Connect only to servers you trust.`);
  if (yes) {
    known.add(url);
    localStorage.setItem(TRUST_KEY, JSON.stringify([...known]));
  }
  return yes;
}

export class Servers {
  constructor(onChange) {
    this.entries = new Map(); // id → {id, kind, url, server}
    this.onChange = onChange;
  }

  addOffline() {
    const server = offlineTools({ serverId: "offline" });
    this.entries.set("offline", { id: "offline", kind: "offline", url: null, server, toolbox: server.toolbox });
    this.onChange();
  }

  /** A tools/list saved to a file, shown as buttons and forms without a server (for server
   *  authors checking their forms). Run explains that there is nothing to call. */
  addPreview(fileName, listJson) {
    const id = `file:${fileName}`;
    const toolbox = parseToolList(listJson, id);
    if (!toolbox.ok) return toolbox;
    const server = {
      serverName: `${fileName} (preview)`, serverVersion: null, notices: [],
      async call() { return { ok: false, error: "Preview only: this tool list came from a file, so there is no server to run it. Connect to its server instead." }; },
      async close() {},
    };
    this.entries.set(id, { id, kind: "preview", url: null, server, toolbox });
    this.onChange();
    return { ok: true, id };
  }

  get(id) { return this.entries.get(id); }

  /** Resolves to {ok: true} or {ok: false, error} with one line to show. */
  async connectRemote(url, token) {
    // §9: a URL that carries a secret (?token=, user:pass@) is refused before it is confirmed,
    // remembered or shown anywhere.
    const checked = checkServerUrl(url);
    if (!checked.ok) return { ok: false, error: checked.error };
    if (!confirmFirstConnection(url)) return { ok: false, error: "Not connected: you declined the connection." };
    const id = url; // the server id of the user's configuration: here, its URL
    const origin = new URL(url).origin;
    const protocol = legacyOrigins.has(origin) ? "legacy" : "auto";
    // Without a token, a server that asks for sign-in gets it (a "Sign in" button, signin.js).
    const server = await connect(url, {
      ...(token ? { token } : { auth: signInOptions(url) }), serverId: id, protocol,
      onToolsChanged: (toolbox) => { const e = this.entries.get(id); if (e) { e.toolbox = toolbox; this.onChange(); } },
    });
    // A failed reconnect leaves a working connection to the same URL in place.
    if (!server.ok) return { ok: false, error: server.error };
    const previous = this.entries.get(id);
    if (previous) previous.server.close();
    localStorage.setItem(URL_KEY, url);
    const older = protocol === "auto" && server.protocolVersion !== NEWER;
    if (older) legacyOrigins.add(origin);
    this.entries.set(id, { id, kind: "remote", url, server, toolbox: server.toolbox, olderProtocol: older || protocol === "legacy", protocol });
    this.onChange();
    return { ok: true };
  }

  async disconnect(id) {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.onChange();
    await entry.server.close();
  }
}
