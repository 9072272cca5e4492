// round_trip.mjs: `offlineCall` timed inside a module Worker (the single-threaded build, as the
// offline Worker loads it), so the Worker's own wasm time is told apart from the messaging.
import init, { offlineCall } from "/pkg/megane_builder_client.js";

const ready = init();
self.onmessage = async (e) => {
  await ready;
  const t0 = performance.now();
  const bytes = offlineCall(e.data.name, e.data.args, () => {});
  const ms = performance.now() - t0;
  self.postMessage({ type: "result", id: e.data.id, ms, bytes }, [bytes.buffer]);
};
