// interpretCall on bytes in hand (issue 10, memory): the body goes to the one resumable Structure
// scan in pieces taken from the JavaScript bytes (one reused buffer), so wasm memory holds the
// columns and the small rest, never the body. On a fresh instance, interpretCall on a 150 002-atom
// liquid box (9 MB, JSON and SSE-framed) grows wasm memory by at most 1.5× the body, the issue's
// goal (copying the body whole first grew it 2.2× for JSON, 3.1× SSE-framed), and a second call
// on the same bytes does not grow it; the result is read as from the whole body.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { ROOT, SHARED } from "./harness.mjs";
import { syntheticLiquidBox } from "../../benches/result_bench/synthetic.js";

const WATERS = 50000;

for (const framing of ["JSON", "SSE"]) {
  test(`interpretCall on ${framing} bytes holds the columns in wasm memory, not the body`, async () => {
    // A fresh instance of the package (its own wasm memory) per framing.
    const pkg = await import(`${pathToFileURL(join(ROOT, "pkg", "megane_builder_client.js")).href}?${framing}`);
    const wasm = await pkg.default({ module_or_path: readFileSync(join(ROOT, "pkg", "megane_builder_client_bg.wasm")) });
    const tools = JSON.parse(readFileSync(join(SHARED, "fixtures/megane-recorded/tools-list.json"), "utf8"));
    const button = pkg.parseToolList(tools).buttons.find((b) => b.name === "liquid_box");
    const { text, atoms } = syntheticLiquidBox(12345, [], WATERS);
    const body = new TextEncoder().encode(
      framing === "SSE" ? `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\ndata: ${text}\n\n` : text,
    );
    const before = wasm.memory.buffer.byteLength;
    const first = pkg.interpretCall(button, body);
    assert.ok(first.ok, first.error);
    const growth = wasm.memory.buffer.byteLength - before;
    assert.ok(growth <= 1.5 * body.length, `wasm memory grew ${(growth / body.length).toFixed(2)}x the ${body.length}-byte body`);
    assert.equal(first.result.atomCount, atoms);
    // Read as from the whole body: the positions (as f32 in the plan) and the bonds.
    const whole = JSON.parse(text).result.structuredContent.structure;
    const planned = pkg.planApply(button, first.result, null, {});
    assert.ok(planned.ok, planned.error);
    const { positions, bonds } = planned.plan.snapshot;
    assert.deepEqual(Array.from(positions), whole.positions.map(Math.fround));
    assert.deepEqual(Array.from(bonds), whole.bonds.flat());
    first.result.free();
    const again = wasm.memory.buffer.byteLength;
    const second = pkg.interpretCall(button, body);
    assert.ok(second.ok, second.error);
    assert.equal(wasm.memory.buffer.byteLength, again, "a second call grew wasm memory");
  });
}
