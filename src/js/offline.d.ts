import type { InterpretOutcome, Toolbox } from "./megane_builder_client.js";

/** Options of a tool call. */
export interface CallOptions {
  /** Progress: fraction in [0, 1] (null when unknown) and a message (null when none). */
  onProgress?: (fraction: number | null, message: string | null) => void;
  /** Abort to cancel: the outcome is {ok: false, cancelled: true} and no result is applied. */
  signal?: AbortSignal;
  /** Overrides the contract's timeout, max(60 s, 5 × expectedSeconds) capped at 30 minutes. */
  timeoutMs?: number;
}

/** The outcome of a call: the contract core's interpretation, plus why it stopped early. */
export type CallOutcome = InterpretOutcome | { ok: false; error: string; cancelled?: boolean; timedOut?: boolean };

/** A tool server as Builder uses it (remote or offline). */
export interface ToolServer {
  serverName: string;
  serverVersion: string | null;
  protocolVersion: string | null;
  url: string | null;
  instructions: string | null;
  toolbox: Toolbox;
  notices: string[];
  call(name: string, args: Record<string, unknown>, options?: CallOptions): Promise<CallOutcome>;
  refreshTools(): Promise<Toolbox>;
  close(): Promise<void>;
}

/** The offline tools liquid_box and solvate, computed in a Worker in this page. */
export function offlineTools(options?: { serverId?: string; wasmUrl?: string | URL; workerUrl?: string | URL }): ToolServer;
