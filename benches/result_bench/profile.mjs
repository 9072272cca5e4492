// CPU profile of one path of the result benchmark, by wasm/JS function (self and inclusive
// time), via the Chrome DevTools Protocol. Run it through the script, which starts the server:
//   bash scripts/bench-results.sh profile [wasm|js|jsFull] [runs]
// Launches /usr/bin/chromium itself (headless) and ends it when done. Node 20 needs
// --experimental-websocket for the WebSocket client.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [origin, path = "wasm", runs = "3"] = process.argv.slice(2);
const profileDir = mkdtempSync(join(tmpdir(), "bench-profile-"));
const chrome = spawn("/usr/bin/chromium", [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--disable-dev-shm-usage", `--user-data-dir=${profileDir}`, "--js-flags=--expose-gc",
  "--remote-debugging-port=0", `${origin}/benches/result_bench/index.html?profile`,
], { stdio: "ignore" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  const portFile = join(profileDir, "DevToolsActivePort");
  while (!existsSync(portFile)) await sleep(100);
  const port = readFileSync(portFile, "utf8").split("\n")[0];
  let target;
  while (!target) {
    const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    target = list.find((t) => t.type === "page" && t.url.includes("profile"));
    if (!target) await sleep(200);
  }
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((r) => ws.addEventListener("open", r));
  let nextId = 1;
  const pending = new Map();
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(e.data);
    if (msg.id && pending.has(msg.id)) pending.get(msg.id)(msg);
  });
  const send = (method, params = {}) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, (msg) => (msg.error ? reject(new Error(JSON.stringify(msg.error))) : resolve(msg.result)));
    ws.send(JSON.stringify({ id, method, params }));
  });
  const evaluate = async (expression) =>
    (await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true })).result.value;

  while (!(await evaluate("window.benchReady === true"))) await sleep(500);
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 200 });
  await send("Profiler.start");
  const t0 = performance.now();
  await evaluate(`profileRuns(${JSON.stringify(path)}, ${Number(runs)})`);
  const wall = performance.now() - t0;
  const { profile } = await send("Profiler.stop");

  // Self time per function from the samples.
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const deltas = profile.timeDeltas;
  profile.samples.forEach((id, i) => {
    const f = nodes.get(id).callFrame;
    const file = f.url.split("/").pop();
    const key = `${f.functionName || "(anonymous)"}  [${file || f.url || "native"}]`;
    self.set(key, (self.get(key) ?? 0) + (deltas[i + 1] ?? deltas[i]) / 1000);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`${path}: ${runs} runs, ${wall.toFixed(0)} ms wall, ${total.toFixed(0)} ms sampled`);
  console.log("self:");
  for (const [name, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
    console.log(`${(ms / Number(runs)).toFixed(1).padStart(9)} ms/run  ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
  // Inclusive time (self + callees) per function: where the time of each stage goes.
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n) => `${n.callFrame.functionName || "(anonymous)"}  [${n.callFrame.url.split("/").pop() || "native"}]`;
  const inclusive = new Map();
  profile.samples.forEach((id, i) => {
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) seen.add(label(nodes.get(n)));
    for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + (deltas[i + 1] ?? deltas[i]) / 1000);
  });
  console.log("\ninclusive:");
  for (const [name, ms] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
    console.log(`${(ms / Number(runs)).toFixed(1).padStart(9)} ms/run  ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
  ws.close();
} finally {
  chrome.kill();
  await sleep(500);
  rmSync(profileDir, { recursive: true, force: true });
}
