// The README's "Call outcomes" example, compiled by `tsc --strict` in the tests (tsconfig.json
// lists this file) and compared with the README's block by readme.test.mjs: if the types in
// pkg/*.d.ts change, this stops compiling.
import type { CallOutcome, InterpretOutcome } from "../../pkg/megane_builder_client.js";

/** The one line a form shows for a call's outcome. */
export function describeCall(outcome: CallOutcome): string {
  if (!outcome.ok) {
    // {ok: false, error, cancelled?, timedOut?}: error is always one line.
    if (outcome.cancelled) return "Cancelled.";
    if (outcome.timedOut) return `Stopped: ${outcome.error}`;
    return outcome.error;
  }
  if ("result" in outcome) {
    // {ok: true, result, summary, warnings}: a Builder tool, result checked against §5.1.
    const atoms: number = outcome.result.atomCount;
    return [`${outcome.summary} (${atoms} atoms)`, ...outcome.warnings].join(" ");
  }
  // {ok: true, summary, raw}: a tool without the Builder marker, its raw CallToolResult.
  const raw: unknown = outcome.raw;
  return raw === null ? outcome.summary : `${outcome.summary} (plain tool)`;
}

/** interpretCall's outcome has no `raw` case: the button always has a marker. */
export function atomsOf(outcome: InterpretOutcome): number | string {
  return outcome.ok ? outcome.result.atomCount : outcome.error;
}
