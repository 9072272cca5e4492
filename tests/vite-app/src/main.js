// Uses the package as Builder would: the lazy loader with the .wasm URLs from Vite's ?url, the
// contract API, and the offline tools in their Worker. Writes what happened into #status.
import { loadBuilderClient } from "megane-builder-client/loader.js";
import wasmUrl from "megane-builder-client/megane_builder_client_bg.wasm?url";
import threadsWasmUrl from "megane-builder-client/threads/megane_builder_client_bg.wasm?url";

const WATER = `water
     RDKit          3D

  3  2  0  0  0  0  0  0  0  0999 V2000
    0.0000    0.0000    0.0000 O   0  0  0  0  0  0  0  0  0  0  0  0
    0.9572    0.0000    0.0000 H   0  0  0  0  0  0  0  0  0  0  0  0
   -0.2400    0.9266    0.0000 H   0  0  0  0  0  0  0  0  0  0  0  0
  1  2  1  0
  1  3  1  0
M  END
`;

async function main() {
  const status = document.getElementById("status");
  try {
    const client = await loadBuilderClient({ wasmUrl, threadsWasmUrl });
    const tools = client.offlineTools();
    const button = tools.toolbox.buttons.find((b) => b.name === "liquid_box");
    const context = { library: [{ name: "water", molblock: WATER }], randomSeed: 3 };
    const built = client.api.buildArguments(button, client.api.initialValues(button, context), context);
    if (!built.ok) throw new Error(built.errors[0].message);
    // 100 water (300 atoms): above the 200 atoms a call packs on the page's own thread, so the
    // (threaded) Worker runs it.
    built.arguments.components[0].count = 100;
    const outcome = await tools.call("liquid_box", built.arguments);
    if (!outcome.ok) throw new Error(outcome.error);
    const planned = client.api.planApply(button, outcome.result, null, {});
    status.textContent = `ok ${planned.plan.snapshot.nAtoms} atoms, threads ${tools.threads}`;
    await tools.close();
  } catch (error) {
    status.textContent = `error ${error?.message ?? error}`;
  }
}

main();
