// Drop-in proof for Megane Builder: Builder's tool-seam interfaces, declared here as Builder declares
// them (src/builder/tools/{contract,client,payload,store}.ts, src/types.ts; independently of
// pkg/megane.d.ts), and the members Builder's modules re-export after README's edits
// (builder-edits.ts, README's block) assigned to them, and the package's own types checked to be
// the same as Builder's both ways. Compiled with `tsc --strict --noEmit`: if an export's type
// drifts from Builder's seam, the build fails.
import {
  callTimeoutMs,
  connectToolServer,
  insertOps,
  interpretCall,
  readLaunchParams,
  residueLabels,
  sanitizeName,
  structureToSnapshot,
} from "./builder-edits.js";
import { configure, displayUrl, load, newFragmentId, parseTools } from "../../pkg/megane.js";
import type * as Package from "../../pkg/megane.js";

// ---- Builder's declarations (src/builder/tools/{contract,client,payload,store}.ts, src/types.ts) ----

type ToolCategory = "bulk" | "molecule" | "polymer" | "surface" | "solvation" | "other";
type Widget = "molecule" | "atom" | "element" | "cell" | "selection" | "seed" | "document";

interface FieldBase {
  key: string;
  label: string;
  help: string | null;
  required: boolean;
  default: unknown;
  example: unknown;
}

type FieldSpec =
  | (FieldBase & {
      kind: "number";
      integer: boolean;
      min: number | null;
      max: number | null;
      exclusiveMin: boolean;
      exclusiveMax: boolean;
      unit: string | null;
    })
  | (FieldBase & { kind: "enum"; options: string[] })
  | (FieldBase & { kind: "string"; maxLength: number | null })
  | (FieldBase & { kind: "boolean" })
  | (FieldBase & { kind: "vector"; length: number; integer: boolean; unit: string | null })
  | (FieldBase & { kind: "table"; columns: FieldSpec[]; minItems: number; maxItems: number | null })
  | (FieldBase & { kind: "group"; fields: FieldSpec[] })
  | (FieldBase & { kind: "widget"; widget: Widget; of: string | null; unit: string | null });

interface BuilderToolInfo {
  name: string;
  label: string;
  tooltip: string;
  description: string;
  category: ToolCategory;
  apply: "new_document" | "insert";
  document: "none" | "optional" | "required";
  stochastic: boolean;
  expectedSeconds: number | null;
  inputSchema: Record<string, unknown>;
  fields: FieldSpec[] | null;
  formError: string | null;
}

interface ToolListing {
  tools: BuilderToolInfo[];
  unsupported: string[];
}

interface StructurePayload {
  elements: number[];
  positions: number[];
  cell: number[] | null;
  bonds: [number, number][];
  bondOrders?: number[];
  molecules?: number[];
  residueNames?: string[];
  residueIds?: number[];
  atomNames?: string[];
  chainIds?: string[];
  formalCharges?: number[];
  scalars?: Record<string, number[]>;
}

interface BuilderResult {
  contract: number;
  name: string;
  structure: StructurePayload;
  warnings: string[];
  provenance: Record<string, unknown>;
}

type CallOutcome = { ok: true; result: BuilderResult; summary: string | null } | { ok: false; error: string };

interface CallOptions {
  onProgress?: (fraction: number | null, message: string | null) => void;
  signal?: AbortSignal;
  timeoutMs: number;
}

interface ToolConnection {
  serverName: string;
  serverVersion: string | null;
  listing: ToolListing;
  call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallOutcome>;
  close(): Promise<void>;
}

interface RawCallResult {
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: unknown;
}

interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  annotations?: { title?: string };
}

interface Snapshot {
  nAtoms: number;
  nBonds: number;
  nFileBonds: number;
  positions: Float32Array;
  elements: Uint8Array;
  bonds: Uint32Array;
  bondOrders: Uint8Array | null;
  box: Float32Array | null;
  boxOrigin: null;
  atomChainIds: Uint8Array | null;
  atomBFactors: null;
}

/** Builder's edit ops (the two a tool result uses, among others). */
type EditOp =
  | { op: "set_cell"; box: number[]; scaleAtoms: boolean }
  | { op: "add_fragment"; id: string; elements: number[]; positions: number[]; bonds: [number, number][]; bondOrders?: number[]; translate?: [number, number, number] }
  | { op: "delete_atoms"; atoms: string[] };

// ---- Our exports, assigned to Builder's signatures ----

const connector: (url: string, token: string) => Promise<ToolConnection> = connectToolServer;
const parse: (tools: McpTool[]) => ToolListing = parseTools;
const interpret: (result: RawCallResult) => CallOutcome = interpretCall;
const toSnapshot: (structure: StructurePayload) => Snapshot = structureToSnapshot;
const labelsOf: (structure: StructurePayload) => string[] | null = residueLabels;
const sanitize: (name: string) => string = sanitizeName;
const opsOf: (structure: StructurePayload, fragmentId: string, documentCell: ArrayLike<number> | null) => EditOp[] = insertOps;
const fragmentId: (name: string, existingIds: readonly string[]) => string = newFragmentId;
const timeout: (expectedSeconds: number | null) => number = callTimeoutMs;
const launchOf: (hash: string) => { url: string; token: string } | null = readLaunchParams;
const shownUrl: (url: string) => string = displayUrl;
const loaded: () => Promise<void> = load;

/** `true` only when A and B are assignable both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameTypes: [
  Same<Package.ToolConnection, ToolConnection>,
  Same<Package.ToolListing, ToolListing>,
  Same<Package.BuilderToolInfo, BuilderToolInfo>,
  Same<Package.FieldSpec, FieldSpec>,
  Same<Package.StructurePayload, StructurePayload>,
  Same<Package.BuilderResult, BuilderResult>,
  Same<Package.CallOutcome, CallOutcome>,
  Same<Package.CallOptions, CallOptions>,
  Same<Package.RawCallResult, RawCallResult>,
  Same<Package.Snapshot, Snapshot>,
] = [true, true, true, true, true, true, true, true, true, true];

/** Builder's store's connect, after README's edit: its own prefix, the URL's display form. */
export async function builderConnect(url: string, token: string): Promise<ToolConnection | string> {
  await loaded();
  try {
    return await connector(url, token);
  } catch (err) {
    return `Could not connect to ${shownUrl(url)}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Builder's store, in short: launch link → connect → run → apply. */
export async function builderStore(hash: string, document: Snapshot, wasmUrl: string): Promise<string> {
  configure({ wasmUrl });
  const launch = launchOf(hash);
  if (!launch) return "no launch link";
  const c: ToolConnection = await connector(launch.url, launch.token);
  const l: ToolListing = c.listing;
  const tool: BuilderToolInfo | undefined = l.tools.find((t) => t.fields !== null);
  if (!tool) return l.unsupported.join(", ");
  const controller = new AbortController();
  const outcome: CallOutcome = await c.call(tool.name, {}, {
    signal: controller.signal,
    timeoutMs: timeout(tool.expectedSeconds),
    onProgress: (fraction: number | null, message: string | null) => void [fraction, message],
  });
  await c.close();
  if (!outcome.ok) return outcome.error;
  const result: BuilderResult = outcome.result;
  if (tool.apply === "new_document") {
    const snapshot: Snapshot = toSnapshot(result.structure);
    const labels: string[] | null = labelsOf(result.structure);
    return `${sanitize(result.name)}: ${snapshot.nAtoms} atoms, ${labels?.length ?? 0} labels`;
  }
  const ops: EditOp[] = opsOf(result.structure, fragmentId(result.name, []), document.box);
  void sameTypes;
  const again: CallOutcome = interpret({ isError: true });
  const listed: ToolListing = parse([]);
  return `${ops.length} ops; ${again.ok ? "" : again.error}; ${listed.tools.length} ${outcome.summary ?? ""}`;
}
