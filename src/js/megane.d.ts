/* megane-builder-client/megane: Megane Builder's tool seam, field for field (names and nullability
 * as Builder declares them). Server text (labels, tooltips, descriptions, help, errors, summaries,
 * warnings) is untrusted: render it as text. A type the core API declares too is the core's, by
 * Builder's name; where Builder's shape differs it is derived from the core's (one declaration
 * per type). */
import type * as Core from "./megane_builder_client.js";
import type { LoadOptions } from "./loader.js";

import type { ApplyMode, DocumentUse, EditOp } from "./megane_builder_client.js";

export type { ApplyMode, DocumentUse, EditOp };
export type ToolCategory = Core.Category;
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

/** The §5.1 Structure's per-atom channels (every member but the four always there). */
type Channels = Exclude<keyof Core.Structure, "elements" | "positions" | "cell" | "bonds">;

/** §5.1 Structure as plain arrays (bonds as [i, j] pairs): the core's `Structure`, its channels
 *  absent rather than null. */
export type StructurePayload = Pick<Core.Structure, "elements" | "positions" | "cell" | "bonds"> & {
  [K in Channels]?: NonNullable<Core.Structure[K]>;
};

/** A result as plain data: the core's `BuilderResult.toJSON()`, with Builder's structure and
 *  provenance types. */
export type BuilderResult = Omit<ReturnType<Core.BuilderResult["toJSON"]>, "structure" | "provenance"> & {
  structure: StructurePayload;
  provenance: Record<string, unknown>;
};

/** `error`, as Builder words it: a tool error's own message, whole (its first text block, trimmed,
 *  without controls or direction overrides, at most 20 lines and 2 000 characters; `The tool
 *  reported an error.` when it has none); `The tool returned an invalid result: <problem>`;
 *  `The server failed: <first line>` for JSON-RPC and transport failures; `Cancelled.`. */
export type CallOutcome =
  | { ok: true; result: BuilderResult; summary: string | null }
  | Core.Failure;

/** The core's `CallOptions` with the timeout required, as Builder always gives it. */
export type CallOptions = Core.CallOptions & Required<Pick<Core.CallOptions, "timeoutMs">>;

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

/** Megane's Snapshot of a new document: the members of the core's `Snapshot` Megane declares. */
export type Snapshot = Pick<
  Core.Snapshot,
  "nAtoms" | "nBonds" | "nFileBonds" | "positions" | "elements" | "bonds" | "bondOrders" | "box" | "boxOrigin" | "atomChainIds" | "atomBFactors"
>;

/** Where the `megane` entry's .wasm comes from (Vite: `?url`); default: next to the module. */
export type MeganeOptions = Pick<LoadOptions, "wasmUrl">;

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
