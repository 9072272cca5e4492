// Shared set-up of the browser tests: a static server for the repository root (scripts/serve.py:
// strict CSP, cross-origin isolation) and Debian's headless Chromium driven by playwright-core.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The recorded wire data and molecules the tests read (tests/fixtures, see its README). */
export const FIXTURES = join(ROOT, "tests", "fixtures");

export function molblock(name) {
  return readFileSync(join(FIXTURES, "molecules", `${name}.mol`), "utf8");
}

/** Starts scripts/serve.py on a free port; resolves to {url, stop}. */
export async function startServer(root = ROOT) {
  const port = 18000 + Math.floor(Math.random() * 2000);
  const child = spawn("python3", [join(ROOT, "scripts", "serve.py"), "--port", String(port), "--root", root], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => { if (String(chunk).includes("serving")) resolve(); });
    child.on("exit", (code) => reject(new Error(`serve.py exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

/** The console lines Chromium logs when `protocol: "auto"` (the default) probes a legacy server: whose
 *  CORS preflight refuses the 2026-07-28 headers (the refused preflight and the failed fetch), or that
 *  lets them through and refuses `server/discover` with HTTP 400. The client falls back to the
 *  initialize handshake and leaves one notice (benches/protocol_fallback.mjs). */
export const AUTO_PROBE_CONSOLE = /blocked by CORS policy: Response to preflight request doesn't pass access control check|Failed to load resource: net::ERR_FAILED|Failed to load resource: the server responded with a status of 400 \(Bad Request\)/;

/** Launches Debian's Chromium headless with the flags this machine needs (no background traffic),
 *  and `extraArgs` (e.g. a bench's `--js-flags=…`). */
export async function launchBrowser(extraArgs = []) {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", ...extraArgs],
  });
}

/** A page on the test server that reports console errors and page errors to `errors`; console
 *  errors matching `expected` (e.g. the browser's own line for an HTTP 401 a test provokes) are not. */
export async function openPage(browser, url, errors = [], expected = null) {
  const page = await browser.newPage();
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() !== "error" || m.location().url.endsWith("/favicon.ico")) return;
    if (expected && expected.test(m.text())) return;
    errors.push(`${m.text()} (${m.location().url})`);
  });
  await page.goto(url);
  return page;
}

/**
 * Starts the official-SDK Python test peer (tests/peers/builder_peer.py) on a random loopback port,
 * serving the recorded fixtures in `fixtures`, allowing `origin`, with bearer `token` (null: none); `args` are
 * further peer flags (e.g. `--step-seconds 0.15`). Resolves to `{child, url, log()}` once
 * `/health` answers.
 */
export async function startBuilderPeer(origin, token, fixtures, args = []) {
  const { spawn } = await import("node:child_process");
  const port = 20000 + Math.floor(Math.random() * 4000);
  const child = spawn(join(ROOT, ".venv", "bin", "python"), [join(ROOT, "tests", "peers", "builder_peer.py"),
    "--port", String(port), ...(token ? ["--token", token] : []), "--allow-origin", origin, "--fixtures", fixtures, ...args],
  { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr.on("data", (chunk) => { log += chunk; });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return { child, url: `http://127.0.0.1:${port}`, log: () => log };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`the test peer did not start: ${log}`);
}
