// Shared set-up of the browser tests: a static server for the repository root (scripts/serve.py:
// strict CSP, cross-origin isolation), Debian's headless Chromium driven by playwright-core, and
// Debian's Firefox ESR driven over WebDriver BiDi by puppeteer-core (playwright drives only its own
// patched Firefox builds, which it downloads from its own site; puppeteer-core speaks the W3C
// protocol stock Firefox serves).
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

/** Starts scripts/serve.py on a port the system picks (free, so runs side by side never collide);
 *  resolves to {url, stop}. */
export async function startServer(root = ROOT) {
  const child = spawn("python3", [join(ROOT, "scripts", "serve.py"), "--port", "0", "--root", root], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      const m = /serving .* on http:\/\/127\.0\.0\.1:(\d+)\//.exec(String(chunk));
      if (m) resolve(Number(m[1]));
    });
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

/** Debian's Firefox ESR (set-up installs it from apt). */
export const FIREFOX = "/usr/bin/firefox-esr";

/** The lines Firefox itself logs (as page errors, over BiDi) when `protocol: "auto"` probes a legacy
 *  server whose CORS preflight refuses the 2026-07-28 headers: the refused preflight and the failed
 *  request. The client falls back to the initialize handshake (AUTO_PROBE_CONSOLE is Chromium's). */
export const FIREFOX_AUTO_PROBE = /^Cross-Origin Request Blocked: The Same Origin Policy disallows reading the remote resource at http:\/\/127\.0\.0\.1:\d+\/mcp\. \(Reason: CORS (preflight response did not succeed\)\. Status code: 400|request did not succeed\)\. Status code: \(null\))\.$/;

/** Launches Debian's Firefox ESR headless, driven over WebDriver BiDi by puppeteer-core. With no GPU
 *  and no display, Firefox's WebGL (the demo page's 3D view) needs Mesa's software renderer through
 *  EGL without a surface, and its own block on software renderers lifted. */
export async function launchFirefox() {
  const { default: puppeteer } = await import("puppeteer-core");
  return puppeteer.launch({
    browser: "firefox", executablePath: FIREFOX, headless: true,
    extraPrefsFirefox: { "webgl.force-enabled": true },
    env: { ...process.env, MOZ_WEBGL_FORCE_EGL: "1", EGL_PLATFORM: "surfaceless" },
  });
}

/** A console message the tests refuse, as one line, or null: every error, and every warning a script
 *  logs (the page's, its Workers' and the Workers those start: both drivers report all three), unless
 *  `expected` matches its text (e.g. the browser's own line for an HTTP 401 a test provokes). Warnings
 *  count because the package must leave none of its own (e.g. wasm-bindgen's "using deprecated
 *  parameters for the initialization function", from pkg/threads/megane_builder_client.js); the
 *  browser's own notes, attributed to the page itself (Chromium's "GPU stall due to ReadPixels" when a
 *  test reads the 3D view back), are not the package's. `type` is the driver's name for it: "warning"
 *  (playwright) or "warn" (puppeteer). */
export function consoleProblem(type, text, url, expected = null) {
  if (!["error", "warning", "warn"].includes(type) || url?.endsWith("/favicon.ico")) return null;
  if (type !== "error" && !/\.m?js(\?.*)?$|^blob:/.test(url ?? "")) return null;
  if (expected && expected.test(text)) return null;
  return `${type}: ${text} (${url})`;
}

/** A page on the test server that reports page errors and console errors and warnings to `errors`
 *  (see consoleProblem; `expected` as there). */
export async function openPage(browser, url, errors = [], expected = null) {
  const page = await browser.newPage();
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    const problem = consoleProblem(m.type(), m.text(), m.location().url, expected);
    if (problem) errors.push(problem);
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
