// A stand-in for offline-worker.js with a slow tool whose progress the test controls: the only
// way to make a call outlive its timeout while it still reports progress, deterministically.
// `call` args: {steps, every} → `steps` progress messages `every` ms apart, then a valid
// CallToolResult (one water, as the Worker sends it); {silentMs} → silence for that long, then the same result;
// {unreadable: true} → a result message without bytes.
const RESULT = {
  content: [{ type: "text", text: "One water." }],
  structuredContent: {
    contract: 1,
    name: "water",
    structure: { elements: [8, 1, 1], positions: [0, 0, 0, 0.96, 0, 0, -0.24, 0.93, 0], cell: null, bonds: [[0, 1], [0, 2]] },
  },
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Loaded as `slow-worker.js?init=fail`: the package "does not load" (init-error), as a Worker whose
// .wasm cannot be fetched; `?initMs=N`: it is ready only after N ms (a slow start).
const query = new URL(self.location.href).searchParams;
const failInit = query.get("init") === "fail";
const initMs = Number(query.get("initMs") ?? 0);

self.onmessage = async (event) => {
  const message = event.data;
  if (message?.type === "init" && failInit) self.postMessage({ type: "init-error", error: "no .wasm here (test)" });
  else if (message?.type === "init") {
    await sleep(initMs);
    self.postMessage({ type: "ready", threads: 1, notices: [] });
  }
  else if (message?.type === "call") {
    const { steps = 0, every = 100, silentMs = 0 } = message.args ?? {};
    for (let i = 1; i <= steps; i++) {
      await sleep(every);
      self.postMessage({ type: "progress", id: message.id, fraction: i / steps, message: `step ${i}` });
    }
    await sleep(silentMs);
    // {unreadable: true}: a result whose bytes the page cannot read (a fault, not a tool error).
    if (message.args?.unreadable) {
      self.postMessage({ type: "result", id: message.id, bytes: null });
      return;
    }
    // In the Worker's transfer (src/offline/transfer.rs) as JSON: the magic, the JSON's length, 0
    // (no typed result), the JSON.
    const json = new TextEncoder().encode(JSON.stringify(RESULT));
    const bytes = new Uint8Array(16 + json.length);
    bytes.set(new TextEncoder().encode("\0MBC-OT1"));
    new DataView(bytes.buffer).setUint32(8, json.length, true);
    bytes.set(json, 16);
    self.postMessage({ type: "result", id: message.id, bytes }, [bytes.buffer]);
  }
};
