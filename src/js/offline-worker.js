// Worker side of offlineTools(): loads the package once, then runs each call to completion and
// posts progress (at most every 100 ms) and the CallToolResult bytes.
import init, { offlineCall } from "./megane_builder_client.js";

self.onmessage = async (event) => {
  const message = event.data;
  if (message?.type === "init") {
    try {
      await init(message.wasmUrl ? { module_or_path: message.wasmUrl } : undefined);
      self.postMessage({ type: "ready" });
    } catch (error) {
      self.postMessage({ type: "init-error", error: String(error?.message ?? error) });
    }
  } else if (message?.type === "call") {
    let last = -Infinity;
    const bytes = offlineCall(message.name, message.args, (fraction, text) => {
      const now = performance.now();
      if (now - last >= 100 || fraction >= 1) {
        last = now;
        self.postMessage({ type: "progress", id: message.id, fraction, message: text });
      }
    });
    self.postMessage({ type: "result", id: message.id, bytes }, [bytes.buffer]);
  }
};
