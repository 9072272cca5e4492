/* The reviewed TypeScript contract of megane-builder-client's JavaScript API (contract §3–§8).
 * Server text (labels, tooltips, descriptions, warnings, errors) is untrusted: render it as text. */

export type Category = "bulk" | "molecule" | "polymer" | "surface" | "solvation" | "other";
export type ApplyMode = "new_document" | "insert";
export type DocumentUse = "none" | "optional" | "required";

/** §3 marker, parsed. */
export interface Marker {
  contract: number;
  category: Category;
  apply: ApplyMode;
  document: DocumentUse;
  stochastic: boolean;
  /** Typical run time in seconds, when stated. */
  expectedSeconds?: number;
}

/** §4.4 conversion: shown = canonical × factor + offset. */
export interface Conversion { unit: string; label: string; factor: number; offset: number }
/** §4.4 unit of a number field. */
export interface UnitInfo { unit: string; label: string; quantity: string | null; conversions: Conversion[] }

export interface NumberBounds {
  integer: boolean;
  minimum: number | null;
  maximum: number | null;
  exclusiveMinimum: number | null;
  exclusiveMaximum: number | null;
  multipleOf: number | null;
  unit: UnitInfo | null;
}

/** §4.1/§4.2: the control of a field, by `control`. */
export type Control =
  | ({ control: "number" } & NumberBounds)
  | { control: "select"; options: (string | number)[] }
  | { control: "text"; minLength: number | null; maxLength: number | null; pattern: string | null }
  | { control: "checkbox" }
  | { control: "constant"; value: unknown }
  | ({ control: "vector"; length: number } & NumberBounds)
  | { control: "table"; columns: Field[]; minRows: number; maxRows: number | null }
  | { control: "fieldset"; fields: Field[] }
  | { control: "molecule" }
  | { control: "atom"; of: string }
  | { control: "element" }
  | { control: "cell" }
  | { control: "selection" }
  | { control: "seed" }
  | { control: "document" };

/** §4.1: one property of a form. */
export type Field = {
  key: string;
  label: string;
  help: string | null;
  required: boolean;
  optional: boolean;
  nullable: boolean;
  default: unknown;
  example: unknown;
} & Control;

export interface Form {
  fields: Field[];
  documentProperty: string | null;
  hasSeed: boolean;
  notices: string[];
}

/**
 * §3: a Builder button. Disabled when `disabledReason` is set (then `form` is null).
 * From `parseToolList`, `inputSchema` and `outputSchema` are the objects the host passed in (not
 * copies), and `form`, `disabledReason` and `notices` are made together from the `inputSchema` on
 * the first read of any of them (then ordinary data properties; the toolbox's `notices` likewise):
 * the schema is read and compiled only when a button is looked at. They are made with the `label`
 * and `marker` the button had when the toolbox was made (a later change to the `marker` object
 * does not reach them), and with the `inputSchema` object as it is at that first read.
 * `tooltip` and `description` are ordinary data properties made by `parseToolList` from the
 * host's `description`.
 */
export interface ToolButton {
  serverId: string | null;
  name: string;
  label: string;
  tooltip: string;
  description: string;
  category: Category;
  marker: Marker;
  /** A data: URI of an allowed image type, else null (use the category icon). */
  icon: string | null;
  form: Form | null;
  disabledReason: string | null;
  inputSchema: unknown;
  /** The tool's outputSchema as sent (§5), null when it declares none. */
  outputSchema: unknown | null;
  notices: string[];
}

export interface HiddenTool { name: string; label: string; reason: string }
export interface PlainTool {
  name: string; label: string; tooltip: string; description: string; inputSchema: unknown;
  /** The tool's outputSchema as sent, null when it declares none; `call` validates a result's structuredContent against it. */
  outputSchema: unknown | null;
}
export interface CategoryGroup { category: Category; label: string; tools: string[] }

/** §3: one server's tools. */
export interface Toolbox {
  ok: true;
  serverId: string | null;
  buttons: ToolButton[];
  categories: CategoryGroup[];
  unsupportedContract: HiddenTool[];
  unknownApply: HiddenTool[];
  malformed: HiddenTool[];
  plainTools: PlainTool[];
  notices: string[];
}

/** `true`, as a type: lets `if (!x.ok)` tell a ToolServer from a Failure. */
export type Success = true;
export interface Failure { ok: false; error: string }

/** §5.1 Structure payload (the document argument and a result's structure). */
export interface Structure {
  elements: number[];
  positions: number[];
  cell: number[] | null;
  bonds: [number, number][];
  bondOrders?: number[] | null;
  molecules?: number[] | null;
  residueNames?: string[] | null;
  residueIds?: number[] | null;
  atomNames?: string[] | null;
  chainIds?: string[] | null;
  formalCharges?: number[] | null;
  scalars?: Record<string, number[]> | null;
}

/** §4.2: a library molecule for the molecule widget. */
export interface LibraryMolecule { name: string; molblock?: string; smiles?: string }

/** What the host knows when it fills a form. */
export interface FormContext {
  /** §4.3: the open document. It is taken (copied and checked against §5.1) once per object, or
   *  once per `documentVersion` when given, not on every keystroke; `buildArguments` puts this
   *  same object in the arguments. Do not change a document object in place: pass a new object
   *  or a new `documentVersion` when the document changes. */
  document?: Structure | null;
  /** Optional: a value that changes whenever the open document changes (an edit counter that is
   *  never reused). With it, a new object with the same version is not taken again. */
  documentVersion?: string | number;
  documentEditable?: boolean;
  selection?: number[];
  library?: LibraryMolecule[];
  /** A fresh seed from the host's random source; one is drawn when absent. */
  randomSeed?: number;
}

export type FormValues = Record<string, unknown>;
export interface Problem { path: string; message: string }
export type BuildOutcome = { ok: true; arguments: Record<string, unknown> } | { ok: false; errors: Problem[] };

/** `refused: true`: the tool refused the arguments (`isError`) or the server answered -32602. */
export type InterpretOutcome =
  | { ok: true; result: BuilderResult; summary: string; warnings: string[] }
  | { ok: false; error: string; refused?: boolean };

export interface InterpretOptions { maxResultBytes?: number }

/** §5.2 new_document: Megane's Snapshot shape plus the kept channels. */
export interface Snapshot {
  nAtoms: number;
  nBonds: number;
  /** Equal to nBonds: every bond of a result is asserted by the tool. */
  nFileBonds: number;
  positions: Float32Array;
  elements: Uint8Array;
  bonds: Uint32Array;
  bondOrders: Uint8Array | null;
  box: Float32Array | null;
  boxOrigin: null;
  atomChainIds: Uint8Array | null;
  atomBFactors: null;
  labels: string[] | null;
  fileName: string;
  molecules: Uint32Array | null;
  formalCharges: Int32Array | null;
  atomNames: string[] | null;
  residueNames: string[] | null;
  residueIds: number[] | null;
  scalars: Record<string, Float64Array> | null;
}

/** §5.2: ops exactly as Builder replays them. */
export type EditOp =
  | { op: "set_cell"; box: number[]; scaleAtoms: false }
  | { op: "add_fragment"; id: string; elements: number[]; positions: number[]; bonds: [number, number][]; bondOrders?: number[] };

export type ApplyPlan =
  | { mode: "new_document"; snapshot: Snapshot }
  | { mode: "insert"; ops: EditOp[]; select: Uint32Array };

export type PlanOutcome = { ok: true; plan: ApplyPlan } | Failure;
export interface PlanOptions {
  existingFragmentIds?: string[];
  /** The insert's fragment id (default: fresh from the result's name, unique among existingFragmentIds). */
  fragmentId?: string;
}

/** §7 */
export interface ServerIdentity { id: string; name: string; version: string; url?: string }
export interface ProvenanceRecord {
  server: ServerIdentity;
  tool: string;
  contract: number;
  arguments: Record<string, unknown>;
  argumentsSha256: string;
  provenance: Record<string, string | number>;
  atoms: number;
}

/** §9: checkServerUrl */
export type UrlCheck = { ok: true; url: string } | Failure;

/** §8 */
export type LaunchOutcome = { ok: true; url: string; token: string | null; remainingFragment: string } | Failure | null;

/** A molecule as moleculeToMolblock takes and parseMolblock gives it. */
export interface MoleculeData {
  name: string;
  elements: number[];
  positions: [number, number, number][];
  bonds?: [number, number][];
  bondOrders?: number[];
  formalCharges?: number[];
  dimension?: "3D" | "2D";
}
export type MolblockOutcome = { ok: true; molblock: string } | Failure;
export type MoleculeOutcome = { ok: true; molecule: MoleculeData } | Failure;

/** The structure file formats `writeStructureFile` writes. */
export type SaveFormat = "xyz" | "pdb" | "mol" | "gro";
/** A file `readStructureFile` read: its atoms as a §5.1 Structure (with the residue and atom names
 *  PDB and .gro carry), the format it was read as, its title line, and what the page should say
 *  beside it (bonds found from distances, further molecules passed over). */
export type OpenedFileOutcome =
  | { ok: true; structure: Structure; format: SaveFormat | "json"; title: string; notes: string[] }
  | Failure;
export type SavedFileOutcome = { ok: true; text: string } | Failure;
/** One entry of the Save menu: `refusal` (one line) when this structure cannot be saved so,
 *  `loses` (one line) what the format leaves out of it. */
export interface SaveChoice { format: SaveFormat; label: string; refusal: string | null; loses: string | null }

/** Options of `connect`. The token is sent as `Authorization: Bearer` and never stored. */
export interface ConnectOptions {
  token?: string;
  /** "auto" (default: probe 2026-07-28, fall back to the initialize handshake with one notice), "legacy"
   *  (the initialize handshake only) or "modern" (2026-07-28 only). */
  protocol?: "legacy" | "modern" | "auto";
  clientInfo?: { name?: string; version?: string };
  /** Cap on one response body in bytes, counted while streaming (default: enough for 500 000 atoms). */
  maxResultBytes?: number;
  /** The server id from the user's configuration (default: the URL). */
  serverId?: string;
  /** Called with the new toolbox when the server says its tools changed. */
  onToolsChanged?: (toolbox: Toolbox) => void;
  /** Answers a server's request for user input (elicitation, form mode; also the 2026-07-28
   *  `input_required` results). Only when given is the `elicitation` capability declared; without it,
   *  every elicitation is declined at once. Fields the answer leaves out get the schema's defaults. */
  onElicitation?: (request: ElicitationRequest) => ElicitationAnswer | Promise<ElicitationAnswer>;
  /** Sign in when the server asks for it (HTTP 401, or 403 insufficient_scope): the MCP authorization
   *  flow (OAuth 2.1 + PKCE). Without it, a 401 fails with "needs a token". */
  auth?: AuthOptions;
}

/** How this page signs in to servers that use the MCP authorization flow. The package keeps tokens in
 *  memory only, unless `tokens` is given; it never puts a token in a URL, a log or an error. */
export interface AuthOptions {
  /** Opens `authorizationUrl` (a popup, or the page itself) and resolves to the URL the authorization
   *  server sent the browser back to (the callback page's `location.href`). Reject when the user gives up. */
  redirect: (authorizationUrl: string) => string | Promise<string>;
  /** The callback page's URL (default: `clientMetadata.redirect_uris[0]`). */
  redirectUri?: string;
  /** A pre-registered client ID (with `clientSecret` when it has one), for `clientIssuer` (default: any). */
  clientId?: string;
  clientSecret?: string;
  clientIssuer?: string;
  /** A workload identity JWT (RFC 7523 assertion), for servers without user sign-in (Node workloads). */
  assertion?: string;
  /** The pre-registered client's ECDSA P-256 private key (WebCrypto, usage "sign"; may be non-extractable):
   *  token requests are authenticated with a signed client assertion (`private_key_jwt`) where the server
   *  lists it. The key stays in WebCrypto; the package only asks it to sign. */
  clientKey?: CryptoKey;
  /** Enterprise-managed authorization (SEP-990): the user's ID token from the enterprise identity provider,
   *  exchanged at its token endpoint (RFC 8693) for an identity assertion grant the server's authorization
   *  server takes (jwt-bearer). Used where that server offers no user sign-in. */
  enterprise?: { tokenEndpoint: string; idToken: string; clientId?: string; clientSecret?: string };
  /** The HTTPS URL of this page's client ID metadata document, used where the server supports them. */
  clientMetadataUrl?: string;
  /** Client metadata (RFC 7591) for dynamic registration; the package fills in what is missing. */
  clientMetadata?: Record<string, unknown>;
  /** Token storage, keyed by the server URL; values are opaque JSON text. Default: memory only. */
  tokens?: TokenStorage;
}

/** Storage the host trusts with tokens (e.g. sessionStorage behind its own policy). */
export interface TokenStorage {
  get(key: string): string | null | undefined | Promise<string | null | undefined>;
  set(key: string, value: string): void | Promise<void>;
}

/** A server's request for user input (untrusted text): show `message` and a form for `requestedSchema`
 *  (a flat object schema of string, number, integer, boolean and enum properties) filled with `content`. */
export interface ElicitationRequest {
  mode: "form";
  message: string;
  requestedSchema: Record<string, unknown>;
  /** The form's initial values: each property's `default`. */
  content: Record<string, unknown>;
}

/** The user's answer; a hook that throws, rejects or answers anything else declines. */
export type ElicitationAnswer =
  | { action: "accept"; content?: Record<string, unknown> }
  | { action: "decline" }
  | { action: "cancel" };

/** Options of a tool call. */
export interface CallOptions {
  /** Progress: fraction in [0, 1] (null when the server gives no total) and its message (or null). */
  onProgress?: (fraction: number | null, message: string | null) => void;
  /** Abort to cancel: the server is told, the request stops, a late result is discarded. */
  signal?: AbortSignal;
  /** Overrides the contract's timeout, max(60 s, 5 × expectedSeconds), at most 30 minutes. */
  timeoutMs?: number;
}

/** A call's outcome: the contract core's interpretation, or why it failed or stopped. A tool without
 *  the Builder marker gives `{ok: true, summary, raw}` (the raw CallToolResult). */
export type CallOutcome =
  | { ok: true; result: BuilderResult; summary: string; warnings: string[] }
  | { ok: true; summary: string; raw: unknown }
  | { ok: false; error: string; cancelled?: boolean; timedOut?: boolean; refused?: boolean };

/** What remote (`connect`) and offline (`offlineTools`) tool servers have in common. */
export interface ToolConnectionLike {
  readonly serverName: string;
  readonly serverVersion: string | null | undefined;
  readonly toolbox: Toolbox;
  call(name: string, args: Record<string, unknown>, options?: CallOptions | null): Promise<CallOutcome>;
  close(): Promise<void>;
}
