import type { CallOptions, CallOutcome, Toolbox } from "./megane_builder_client.js";

/** The offline tools as a tool server, like a `ToolServer` from `connect`. */
export interface OfflineToolServer {
  readonly ok: true;
  readonly serverName: string;
  readonly serverVersion: null;
  readonly protocolVersion: null;
  readonly url: null;
  readonly instructions: string;
  readonly toolbox: Toolbox;
  readonly notices: string[];
  call(name: string, args: Record<string, unknown>, options?: CallOptions | null): Promise<CallOutcome>;
  refreshTools(): Promise<Toolbox>;
  close(): Promise<void>;
}

/** The offline tools liquid_box and solvate, computed in a Worker in this page. */
export function offlineTools(options?: { serverId?: string; wasmUrl?: string | URL; workerUrl?: string | URL }): OfflineToolServer;
