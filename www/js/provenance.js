// §7: the applied results. Each entry keeps the record (document replaced by its atom count and
// hash) for export, and the full arguments in memory so "Rebuild" can call the same tool again
// and compare the structure by SHA-256.

/** SHA-256 (hex) of the atoms a plan adds or opens: element bytes then float64 positions, so the
 *  same structure always gives the same digest however it was planned. */
export async function planDigest(plan) {
  let elements;
  let positions;
  if (plan.mode === "new_document") {
    elements = Uint8Array.from(plan.snapshot.elements);
    positions = Float64Array.from(plan.snapshot.positions);
  } else {
    const adds = plan.ops.filter((op) => op.op === "add_fragment");
    elements = Uint8Array.from(adds.flatMap((op) => Array.from(op.elements)));
    positions = Float64Array.from(adds.flatMap((op) => Array.from(op.positions)));
  }
  const bytes = new Uint8Array(elements.byteLength + positions.byteLength);
  bytes.set(elements, 0);
  bytes.set(new Uint8Array(positions.buffer), elements.byteLength);
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

export class ProvenanceLog {
  constructor() {
    this.entries = []; // {record, serverId, button, args, document, digest}
    this.url = null;
  }

  add(entry) { this.entries.push(entry); }

  /** A Blob URL with every record as JSON (the previous one is revoked). */
  exportUrl() {
    if (this.url) URL.revokeObjectURL(this.url);
    const json = JSON.stringify(this.entries.map((e) => ({ ...e.record, sha256: e.digest })), null, 2);
    this.url = URL.createObjectURL(new Blob([json], { type: "application/json" }));
    return this.url;
  }
}
