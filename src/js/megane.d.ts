/* megane-builder-client/megane: Megane Builder's tool seam, field for field (names and nullability
 * as Builder declares them). Server text (labels, tooltips, descriptions, help, errors, summaries,
 * warnings) is untrusted: render it as text. */

export type ToolCategory = "bulk" | "molecule" | "polymer" | "surface" | "solvation" | "other";
export type ApplyMode = "new_document" | "insert";
export type DocumentUse = "none" | "optional" | "required";
export type Widget = "molecule" | "atom" | "element" | "cell" | "selection" | "seed" | "document";

export interface FieldBase {
  key: string;
  label: string;
  /** The property's own description; null for a property that is only a `$ref`. */
  help: string | null;
  required: boolean;
  /** The schema's default (undefined when none). */
  default: unknown;
  /** The first of the schema's examples (undefined when none). */
  example: unknown;
}

export type FieldSpec =
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

export interface BuilderToolInfo {
  name: string;
  label: string;
  tooltip: string;
  description: string;
  category: ToolCategory;
  apply: ApplyMode;
  document: DocumentUse;
  stochastic: boolean;
  expectedSeconds: number | null;
  inputSchema: Record<string, unknown>;
  /** The form, or null when Builder cannot build one (`formError` says why, without the "Builder cannot build a form: " prefix). */
  fields: FieldSpec[] | null;
  formError: string | null;
}

export interface ToolListing {
  tools: BuilderToolInfo[];
  /** Names of tools marked for a contract (or apply mode) this client does not support. */
  unsupported: string[];
}

/** §5.1 Structure as plain arrays (bonds as [i, j] pairs). */
export interface StructurePayload {
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

export interface BuilderResult {
  contract: number;
  name: string;
  structure: StructurePayload;
  warnings: string[];
  provenance: Record<string, unknown>;
}

/** `error`, as Builder words it: a tool error's own message, whole (its first text block, trimmed,
 *  without controls or direction overrides, at most 20 lines and 2 000 characters; `The tool
 *  reported an error.` when it has none); `The tool returned an invalid result: <problem>`;
 *  `The server failed: <first line>` for JSON-RPC and transport failures; `Cancelled.`. */
export type CallOutcome =
  | { ok: true; result: BuilderResult; summary: string | null }
  | { ok: false; error: string };

export interface CallOptions {
  /** fraction in [0, 1], or null when the server gives no total; message or null. */
  onProgress?: (fraction: number | null, message: string | null) => void;
  /** Abort to cancel: `{ok: false, error: "Cancelled."}`, and a late result is dropped. */
  signal?: AbortSignal;
  timeoutMs: number;
}

export interface ToolConnection {
  /** serverInfo.name, else the URL's host with its port. */
  serverName: string;
  serverVersion: string | null;
  listing: ToolListing;
  call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallOutcome>;
  close(): Promise<void>;
}

/** What `tools/call` resolves to (the part read here). */
export interface RawCallResult {
  isError?: boolean;
  content?: { type: string; text?: string }[];
  structuredContent?: unknown;
}

/** Megane's Snapshot of a new document. */
export interface Snapshot {
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

/** Builder's edit ops for an insert (§5.2). */
export type EditOp =
  | { op: "set_cell"; box: number[]; scaleAtoms: false }
  | { op: "add_fragment"; id: string; elements: number[]; positions: number[]; bonds: [number, number][]; bondOrders?: number[] };

export interface MeganeOptions {
  /** URL of megane_builder_client_bg.wasm (Vite: `?url`); default: next to the module. */
  wasmUrl?: string | URL;
}

/** Where the .wasm comes from; call once, before the first connection. */
export function configure(options: MeganeOptions): void;
/** Loads the wasm now (connectToolServer does it on first use); a failed load is retried next time.
 *  In Node, `initSync({ module: bytes })` of the package's main entry first, then `load()`. */
export function load(): Promise<void>;

/** Connects (MCP Streamable HTTP, bearer token). Rejects with the reason alone, one line, never
 *  the URL's query or user info; Builder adds its own `Could not connect to ${displayUrl(url)}: `. */
export function connectToolServer(url: string, token: string): Promise<ToolConnection>;
/** A server URL as a message shows it: no query, fragment or user info, one line. Before the wasm
 *  is loaded (a failed load): "the tool server". */
export function displayUrl(url: string): string;

/* Pure helpers: synchronous, they need the wasm loaded (after connectToolServer or load()). */
export function parseTools(tools: unknown[]): ToolListing;
export function interpretCall(raw: RawCallResult): CallOutcome;
export function structureToSnapshot(structure: StructurePayload): Snapshot;
export function residueLabels(structure: StructurePayload): string[] | null;
export function sanitizeName(name: string): string;
export function insertOps(structure: StructurePayload, fragmentId: string, documentCell: ArrayLike<number> | null): EditOp[];
/** Unique among `existingIds`, the fragment ids already in the document (required). Builder keeps
 *  its own ids (one page-wide serial) and does not use this. */
export function newFragmentId(name: string, existingIds: readonly string[]): string;
export function callTimeoutMs(expectedSeconds: number | null): number;
/** `URLSearchParams` over the fragment: `{url, token}` for a non-empty `tools` (token "" when
 *  absent), else null; works before the wasm is loaded. The URL is checked at connect. */
export function readLaunchParams(hash: string): { url: string; token: string } | null;
