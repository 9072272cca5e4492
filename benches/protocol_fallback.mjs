// What `protocol: "auto"` costs on a legacy server whose CORS preflight refuses the 2026-07-28 headers
// (Mcp-Method, Mcp-Name), measured where it matters: in headless Chromium, cross-origin, against the
// Python SDK peer (tests/peers/builder_peer.py without --modern, so its CORS list lacks them). Each round
// connects once with "legacy" and once with "auto" (alternating which goes first) and closes; reports the
// medians, the extra time of auto (auto − legacy) and the ratio, and the notices auto left.
// Usage (after scripts/build.sh and tests/peers/setup.sh): node benches/protocol_fallback.mjs [rounds]
import { spawn } from "node:child_process";
import { join } from "node:path";
import { FIXTURES, ROOT, launchBrowser, openPage, startServer } from "../tests/node/harness.mjs";

const rounds = Number(process.argv[2] ?? 30);
const TOKEN = "bench-token-7a1c";

async function startPeer(origin) {
  const port = 22000 + Math.floor(Math.random() * 2000);
  const child = spawn(join(ROOT, ".venv", "bin", "python"), [join(ROOT, "tests", "peers", "builder_peer.py"),
    "--port", String(port), "--token", TOKEN, "--allow-origin", origin,
    "--fixtures", join(FIXTURES, "megane-recorded")], { stdio: ["ignore", "ignore", "inherit"] });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return { child, url: `http://127.0.0.1:${port}/mcp` };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error("the test peer did not start");
}

const web = await startServer(ROOT);
const peer = await startPeer(web.url);
const browser = await launchBrowser();
try {
  // The browser logs each refused preflight as a console error: that is the event being measured.
  const page = await openPage(browser, `${web.url}/tests/node/pages/blank.html`, [], /CORS|Failed to fetch|ERR_FAILED/);
  const result = await page.evaluate(async ({ url, token, rounds }) => {
    const { default: init, connect } = await import("/pkg/megane_builder_client.js");
    await init();
    const once = async (protocol) => {
      const t0 = performance.now();
      const server = await connect(url, { token, protocol });
      const ms = performance.now() - t0;
      if (!server.ok) throw new Error(`${protocol}: ${server.error}`);
      const notices = server.notices;
      const version = server.protocolVersion;
      await server.close();
      return { ms, notices, version };
    };
    await once("legacy"); // warm-up: module, connection pool
    await once("auto");
    const legacy = [], auto = [];
    let notices = null, version = null;
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 ? ["auto", "legacy"] : ["legacy", "auto"];
      for (const p of order) {
        const r = await once(p);
        (p === "auto" ? auto : legacy).push(r.ms);
        if (p === "auto") { notices = r.notices; version = r.version; }
      }
    }
    return { legacy, auto, notices, version };
  }, { url: peer.url, token: TOKEN, rounds });
  const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
  const l = median(result.legacy), a = median(result.auto);
  console.log(`connect() to a legacy server whose CORS refuses Mcp-Method/Mcp-Name, headless Chromium, ${rounds} rounds:`);
  console.log(`  legacy: median ${l.toFixed(1)} ms`);
  console.log(`  auto:   median ${a.toFixed(1)} ms (ends at ${result.version})`);
  console.log(`  auto − legacy: ${(a - l).toFixed(1)} ms; auto / legacy: ${(a / l).toFixed(2)}`);
  console.log(`  notices left by auto: ${result.notices.length}: ${JSON.stringify(result.notices)}`);
} finally {
  await browser.close();
  peer.child.kill();
  web.stop();
}
