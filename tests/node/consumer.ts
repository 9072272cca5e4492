// A strict TypeScript consumer of every export, as Builder would write it. Compiled with
// `tsc --strict --noEmit` in the tests: a wrong or loose type in pkg/*.d.ts fails the build.
import init, {
  BuilderResult,
  connect,
  offlineCall,
  offlineToolsList,
  ToolServer,
  buildArguments,
  callTimeoutMs,
  checkServerUrl,
  initialValues,
  interpretCall,
  moleculeToMolblock,
  parseLaunchFragment,
  parseMolblock,
  parseToolList,
  planApply,
  progressStyle,
  provenanceRecord,
  validateArguments,
} from "../../pkg/megane_builder_client.js";
import { offlineTools } from "../../pkg/offline.js";
import { loadBuilderClient } from "../../pkg/loader.js";
import type { BuilderClient } from "../../pkg/loader.js";
import type { OfflineToolServer } from "../../pkg/offline.js";
import type {
  ApplyPlan,
  CallOutcome,
  ToolConnectionLike,
  EditOp,
  Field,
  FormContext,
  ProvenanceRecord,
  Snapshot,
  Structure,
  ToolButton,
  Toolbox,
} from "../../pkg/megane_builder_client.js";

export async function runTool(listResult: unknown, body: Uint8Array, document: Structure | null): Promise<string> {
  await init();
  const toolbox = parseToolList(listResult, "megane-builder-tools");
  if (!toolbox.ok) return toolbox.error;
  const box: Toolbox = toolbox;
  const button: ToolButton | undefined = box.buttons.find((b) => b.disabledReason === null);
  if (!button || !button.form) return "no usable tool";
  const labels: string[] = button.form.fields.map(describeField);
  const context: FormContext = { document, documentVersion: 1, library: [{ name: "water", molblock: "" }], selection: [] };
  const values = initialValues(button, context);
  const built = buildArguments(button, values, context);
  if (!built.ok) return built.errors.map((p) => `${p.path}: ${p.message}`).join("\n");
  const problems = validateArguments(button, built.arguments);
  if (problems.length > 0) return problems[0].message;
  const timeout: number = callTimeoutMs(button.marker.expectedSeconds);
  const style: "bar" | "spinner" = progressStyle(button.marker.expectedSeconds);
  const outcome = interpretCall(button, body, { maxResultBytes: 64 << 20 });
  if (!outcome.ok) return outcome.error;
  const result: BuilderResult = outcome.result;
  const warnings: string[] = [...outcome.warnings, ...result.warnings];
  const planned = planApply(button, result, document, { existingFragmentIds: ["water"] });
  if (!planned.ok) return planned.error;
  const plan: ApplyPlan = planned.plan;
  let atoms = 0;
  if (plan.mode === "new_document") {
    const snapshot: Snapshot = plan.snapshot;
    const positions: Float32Array = snapshot.positions;
    const cell: Float32Array | null = snapshot.box;
    atoms = snapshot.nAtoms + positions.length * 0 + (cell ? 0 : 0);
  } else {
    const ops: EditOp[] = plan.ops;
    for (const op of ops) {
      if (op.op === "add_fragment") atoms += op.elements.length;
      else if (op.op === "set_cell") atoms += op.scaleAtoms ? 1 : 0;
    }
    const select: Uint32Array = plan.select;
    atoms += select.length * 0;
  }
  const record: ProvenanceRecord = provenanceRecord(
    { id: "megane-builder-tools", name: "megane-builder-tools", version: "0.1.0", url: "http://127.0.0.1:8765/mcp" },
    button,
    built.arguments,
    result,
    atoms,
  );
  const launch = parseLaunchFragment(location.hash);
  const launchUrl: string | null = launch === null ? null : launch.ok ? launch.url : launch.error;
  const checked = checkServerUrl("http://127.0.0.1:8765/mcp");
  const checkedUrl: string = checked.ok ? checked.url : checked.error;
  const parsed = parseMolblock("water\n  RDKit          3D\n\n  0  0  0  0  0  0  0  0  0  0999 V2000\nM  END\n");
  const written = parsed.ok ? moleculeToMolblock(parsed.molecule) : parsed;
  const molblock: string = written.ok ? written.molblock : written.error;
  const json = result.toJSON();
  const name: string = json.name + result.name + String(result.atomCount) + String(result.contract);
  return [labels.join(","), timeout, style, warnings.length, record.argumentsSha256, launchUrl, checkedUrl, molblock.length, name].join(" ");
}

function describeField(field: Field): string {
  switch (field.control) {
    case "number":
      return `${field.label} [${field.unit?.label ?? ""}] ≥ ${field.minimum ?? "-∞"}`;
    case "table":
      return `${field.label}: ${field.columns.map(describeField).join("/")} (${field.minRows}..${field.maxRows ?? "∞"})`;
    case "atom":
      return `${field.label} of ${field.of}`;
    case "select":
      return `${field.label} ∈ ${field.options.join("|")}`;
    case "vector":
      return `${field.label} × ${field.length}`;
    default:
      return field.label;
  }
}

export async function useServers(url: string, token: string): Promise<string[]> {
  await init();
  const lines: string[] = [];
  const remote = await connect(url, { token, protocol: "auto", serverId: "lab", onToolsChanged: (t: Toolbox) => lines.push(t.buttons.length.toString()) });
  if (!remote.ok) return [remote.error];
  // Signing in (issue 13): the host's popup hook and its own token storage.
  const kept = new Map<string, string>();
  const signedIn = await connect(url, {
    auth: {
      redirect: async (authorizationUrl: string): Promise<string> => authorizationUrl,
      redirectUri: "https://page.example/callback.html",
      clientMetadataUrl: "https://page.example/client.json",
      tokens: { get: (key: string) => kept.get(key), set: (key: string, value: string) => void kept.set(key, value) },
    },
  });
  if (!signedIn.ok) lines.push(signedIn.error);
  else await signedIn.close();
  const server: ToolServer = remote;
  lines.push(server.serverName, server.serverVersion ?? "", server.protocolVersion, server.url, server.instructions ?? "", ...server.notices);
  const offline: OfflineToolServer = offlineTools({ serverId: "offline" });
  const warming: Promise<boolean> = offline.prepare();
  lines.push(String(await warming));
  const both: ToolConnectionLike[] = [server, offline];
  const controller = new AbortController();
  for (const s of both) {
    const outcome: CallOutcome = await s.call("liquid_box", {}, {
      onProgress: (fraction: number | null, message: string | null) => lines.push(`${fraction ?? "?"} ${message ?? ""}`),
      signal: controller.signal,
      timeoutMs: 1000,
    });
    if (!outcome.ok) lines.push(outcome.cancelled ? "cancelled" : outcome.timedOut ? "timed out" : outcome.error);
    else if ("result" in outcome) lines.push(outcome.result.name);
    else lines.push(outcome.summary);
  }
  const refreshed = await server.refreshTools();
  lines.push(refreshed.ok ? String(refreshed.buttons.length) : refreshed.error);
  const list: { tools: unknown[] } = offlineToolsList();
  const bytes: Uint8Array = offlineCall("liquid_box", { seed: 1 }, (fraction: number, message: string) => lines.push(`${fraction} ${message}`));
  lines.push(String(list.tools.length), String(bytes.length));
  await server.close();
  await offline.close();
  return lines;
}

export async function lazily(wasmUrl: string, threadsWasmUrl: string): Promise<number> {
  const client: BuilderClient = await loadBuilderClient({ wasmUrl, threadsWasmUrl, threads: "auto", threadCount: 2 });
  const toolbox = client.api.parseToolList(client.api.offlineToolsList(), "offline");
  const tools = client.offlineTools({ serverId: "offline" });
  const threads: number | null = tools.threads;
  await tools.close();
  return (toolbox.ok ? toolbox.buttons.length : 0) + (client.threaded ? 1 : 0) + (threads ?? 0);
}
