// Outcomes made in one call, the JavaScript half of the package's wasm bindings (imported by
// src/wasm/snapshot.rs; wasm-bindgen copies this module into pkg/snippets).

// interpretCall's `{ok: true, summary, warnings, result}` in one call (four Reflect.set calls
// from wasm were ~15 % of a tiny result's interpretCall).
export function okOutcome(summary, warnings, result) {
  return { ok: true, summary, warnings, result };
}
