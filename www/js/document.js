// The in-page document: a structure with a linear undo history. Plans from planApply are applied
// exactly: a new_document snapshot replaces the structure, an insert plan's set_cell and
// add_fragment ops are pushed as ONE step and its new atoms selected (contract §5.2). Unlike
// Builder, opening a new document is an undo step here too, so a demo run can be undone.
// Each state carries its caption (what made it: a tool's summary, an opened file), so the caption
// follows Undo and Redo, and an id, so the applied-results list can tell which runs are undone.
// Residue and atom names (from a tool's new structure or an opened PDB/.gro) are kept for saving;
// an insert's fragments carry none, so an insert drops them and a saved file numbers molecules.

const EMPTY = Object.freeze({
  id: 0, name: "untitled", caption: null, elements: new Uint8Array(0), positions: new Float64Array(0), cell: null,
  bonds: [], bondOrders: null, labels: null, fragmentIds: [], selection: [], edits: 0,
});

let nextId = 1;

/** The residue and atom names of a structure or snapshot that has them, else null. */
function labelsOf(s) {
  if (!s.residueNames && !s.atomNames) return null;
  return {
    residueNames: s.residueNames ? Array.from(s.residueNames) : null,
    residueIds: s.residueIds ? Array.from(s.residueIds) : null,
    atomNames: s.atomNames ? Array.from(s.atomNames) : null,
  };
}

export class DocumentModel {
  constructor() {
    this.state = EMPTY;
    this.undoStack = [];
    this.redoStack = [];
    this.listeners = [];
  }

  onChange(listener) { this.listeners.push(listener); }
  emit(reason) { for (const l of this.listeners) l(this.state, reason); }

  get atomCount() { return this.state.elements.length; }
  /** Edits since the document was opened or built: what "Discard unsaved edits?" protects. */
  get edited() { return this.state.edits > 0; }
  get canUndo() { return this.undoStack.length > 0; }
  get canRedo() { return this.redoStack.length > 0; }

  push(next, reason) {
    this.undoStack.push(this.state);
    this.redoStack = [];
    this.state = Object.freeze({ ...next, id: nextId++ });
    this.emit(reason);
  }

  /** Whether the state `id` is the open one or one Undo can go back to (not undone). */
  inHistory(id) {
    return this.state.id === id || this.undoStack.some((s) => s.id === id);
  }

  undo() {
    if (!this.canUndo) return;
    this.redoStack.push(this.state);
    this.state = this.undoStack.pop();
    this.emit("undo");
  }

  redo() {
    if (!this.canRedo) return;
    this.undoStack.push(this.state);
    this.state = this.redoStack.pop();
    this.emit("redo");
  }

  /** Selection is view state, not an edit: it does not enter the history. */
  setSelection(indices) {
    this.state = Object.freeze({ ...this.state, selection: [...indices].sort((a, b) => a - b) });
    this.emit("selection");
  }

  /** Opens a §5.1 Structure (a file the user chose) as a new document. Positions stay float64 so
   *  the document argument sent to a tool is exactly what the file said. */
  openStructure(structure, name, caption = null) {
    const n = structure.elements.length;
    this.push({
      name, caption, elements: Uint8Array.from(structure.elements), positions: Float64Array.from(structure.positions),
      cell: structure.cell ? Array.from(structure.cell) : null,
      bonds: (structure.bonds ?? []).map(([i, j]) => [i, j]),
      bondOrders: structure.bondOrders ? Array.from(structure.bondOrders) : null,
      labels: labelsOf(structure), fragmentIds: [], selection: [], edits: 0,
    }, `opened ${name} (${n} atoms)`);
  }

  /** Sets (or replaces) the cell, row-major 3×3 in Å, as one undo step; atoms do not move. */
  setCell(cell, caption = null) {
    this.push({ ...this.state, cell: Array.from(cell), caption, edits: this.state.edits + 1 }, "set_cell");
  }

  /** Applies a plan from planApply, captioned `caption`. Returns the number of atoms it added or
   *  opened. */
  applyPlan(plan, caption = null) {
    if (plan.mode === "new_document") {
      const s = plan.snapshot;
      const bonds = [];
      for (let k = 0; k < s.nBonds; k++) bonds.push([s.bonds[2 * k], s.bonds[2 * k + 1]]);
      this.push({
        name: s.fileName, elements: Uint8Array.from(s.elements), positions: Float64Array.from(s.positions),
        cell: s.box ? Array.from(s.box) : null, bonds,
        bondOrders: s.bondOrders && s.bondOrders.some((o) => o !== 1) ? Array.from(s.bondOrders) : null,
        labels: labelsOf(s), caption, fragmentIds: [], selection: [], edits: 0,
      }, "new_document");
      return s.nAtoms;
    }
    // insert: every op on one copy of the state, then one push = one undo step.
    const cur = this.state;
    let cell = cur.cell;
    let elements = Array.from(cur.elements);
    let positions = Array.from(cur.positions);
    const bonds = cur.bonds.slice();
    let bondOrders = cur.bondOrders ? cur.bondOrders.slice() : null;
    const fragmentIds = cur.fragmentIds.slice();
    let added = 0;
    for (const op of plan.ops) {
      if (op.op === "set_cell") cell = Array.from(op.box);
      else if (op.op === "add_fragment") {
        const offset = elements.length;
        elements = elements.concat(Array.from(op.elements));
        positions = positions.concat(Array.from(op.positions));
        const orders = op.bondOrders ?? null;
        if (orders && !bondOrders) bondOrders = bonds.map(() => 1);
        op.bonds.forEach(([i, j], k) => {
          bonds.push([i + offset, j + offset]);
          if (bondOrders) bondOrders.push(orders ? orders[k] : 1);
        });
        fragmentIds.push(op.id);
        added += op.elements.length;
      }
    }
    this.push({
      name: cur.name, caption, elements: Uint8Array.from(elements), positions: Float64Array.from(positions), cell,
      bonds, bondOrders, labels: null, fragmentIds, selection: Array.from(plan.select), edits: cur.edits + 1,
    }, "insert");
    return added;
  }

  /** The open document as a §5.1 Structure payload (contract §4.3), or null when it is empty.
   *  bondOrders only when some bond is not single, as §4.3 says. */
  structure() {
    const s = this.state;
    if (s.elements.length === 0) return null;
    // The same object while the atoms are unchanged (a selection change keeps them): the package
    // takes a document once per object, so a form's keystrokes never copy it again (issue 15).
    const memo = this.structureMemo;
    if (memo && memo.elements === s.elements && memo.positions === s.positions && memo.cell === s.cell
      && memo.bonds === s.bonds && memo.bondOrders === s.bondOrders) return memo.out;
    const out = { elements: Array.from(s.elements), positions: Array.from(s.positions), cell: s.cell ? s.cell.slice() : null, bonds: s.bonds.map((b) => b.slice()) };
    if (s.bondOrders && s.bondOrders.some((o) => o !== 1)) out.bondOrders = s.bondOrders.slice();
    Object.freeze(out);
    this.structureMemo = { elements: s.elements, positions: s.positions, cell: s.cell, bonds: s.bonds, bondOrders: s.bondOrders, out };
    return out;
  }

  /** The open document as a file keeps it: the §5.1 Structure with its residue and atom names. */
  fileStructure() {
    const base = this.structure();
    if (!base) return null;
    const labels = this.state.labels;
    if (!labels) return base;
    const out = { ...base };
    for (const [key, value] of Object.entries(labels)) if (value) out[key] = value;
    return out;
  }
}
