// Forms generated from a button's descriptors (button.form.fields, contract §4.1/§4.2). The values
// object is the one initialValues gave, edited in place in canonical units; the caller runs
// buildArguments after every change. Widgets take what they need from the host context.
import { el } from "./dom.js";
import { SYMBOLS, symbol, tablePosition } from "./elements.js";
import { unitPicture } from "./thumbnail.js";

// The unit a number field is shown in, kept across re-renders of the same form (by field path).
const chosenUnits = new Map();
// The paths of the fields the user has changed in the open form.
const touched = new Set();

/**
 * Renders `button`'s form into `container`.
 * host: {values, library, document (Structure|null), selection (number[]), parseMolblock,
 *        onChange() after every edit, rerender() when the form's shape changes,
 *        importMolFiles(files) to add molecules when the library is empty,
 *        openCellEditor() to set the open structure's cell}
 */
export function renderForm(container, button, host) {
  // A field the user touched stays marked so across re-renders of the same form.
  if (container.dataset.tool !== `${button.serverId}/${button.name}`) touched.clear();
  container.dataset.tool = `${button.serverId}/${button.name}`;
  container.replaceChildren();
  for (const field of button.form.fields) container.append(renderField(field, host.values, [], host));
}

/** Whether a field is still as the form made it: not touched by the user, and empty. Such a field
 *  (a table row just added) is not marked wrong: it is only not filled in yet. */
function untouchedBlank(wrap) {
  if (wrap.classList.contains("touched")) return false;
  const controls = wrap.querySelectorAll("input:not([type=file]), select");
  return controls.length > 0 && [...controls].every((c) => c.value === "");
}

/** Puts each problem's message under its field (the first one per field), except on untouched
 *  empty fields; returns those not placed. */
export function showProblems(container, problems) {
  for (const node of container.querySelectorAll(".field-error")) { node.textContent = ""; node.hidden = true; }
  for (const node of container.querySelectorAll(".field.invalid")) node.classList.remove("invalid");
  const unplaced = [];
  for (const p of problems) {
    const wrap = p.path ? container.querySelector(`.field[data-path="${CSS.escape(p.path)}"]`) : null;
    if (!wrap) { unplaced.push(p); continue; }
    if (untouchedBlank(wrap)) continue;
    wrap.classList.add("invalid");
    const slot = wrap.querySelector(":scope > .field-error");
    if (slot && !slot.textContent) { slot.textContent = p.message; slot.hidden = false; }
  }
  return unplaced;
}

/** Updates the text that depends on the document and the selection, without re-rendering. */
export function refreshLive(container, host) {
  for (const node of container.querySelectorAll("[data-live=document]")) node.textContent = documentText(host.document);
  for (const node of container.querySelectorAll("[data-live=selection]")) node.textContent = selectionText(host.selection);
}

function documentText(doc) {
  return doc ? `Works on the open structure (${doc.elements.length} atoms${doc.cell ? ", with a cell" : ", no cell"}).`
    : "No structure is open (0 atoms).";
}
function selectionText(selection) {
  return `${selection.length} atom${selection.length === 1 ? "" : "s"} selected — click atoms in the view (shift-click adds).`;
}

function renderField(field, holder, path, host) {
  const key = [...path, field.key].join("/");
  const id = `f-${key.replaceAll("/", "-")}`;
  const wrap = el("div", { class: `field control-${field.control}`, "data-path": key });
  const touch = (e) => { if (e.target.closest(".field") === wrap) { wrap.classList.add("touched"); touched.add(key); } };
  if (touched.has(key)) wrap.classList.add("touched");
  wrap.addEventListener("input", touch);
  wrap.addEventListener("change", touch);
  const marker = field.required ? " *" : field.optional ? " (optional)" : "";
  if (field.control !== "fieldset") wrap.append(el("label", { for: id, text: field.label + marker }));
  const set = (value) => { holder[field.key] = value; host.onChange(); };
  const value = holder[field.key];
  const control = CONTROLS[field.control] ?? CONTROLS.text;
  wrap.append(control({ field, id, value, set, holder, path, key, host }));
  if (field.help) wrap.append(el("p", { class: "help", text: field.help }));
  wrap.append(el("p", { class: "field-error", hidden: true }));
  return wrap;
}

const blank = (v) => v === "" || v === null || v === undefined;

function numberInput({ field, id, value, set, key }) {
  const conversions = field.unit?.conversions ?? [];
  let index = Math.min(chosenUnits.get(key) ?? 0, Math.max(0, conversions.length - 1));
  const conv = () => conversions[index] ?? { factor: 1, offset: 0 };
  const shown = (canonical) => (blank(canonical) || typeof canonical !== "number" ? (canonical ?? "") : roundShown(canonical * conv().factor + conv().offset));
  const input = el("input", {
    id, type: "number", step: field.integer ? "1" : "any", value: String(shown(value)),
    placeholder: typeof field.default === "number" ? `default ${shown(field.default)}` : undefined,
  });
  const toCanonical = () => (input.value === "" ? "" : (Number(input.value) - conv().offset) / conv().factor);
  input.addEventListener("input", () => set(toCanonical()));
  const span = el("span", { class: "number" }, input);
  if (conversions.length > 1) {
    // Conversion only changes what is shown; the value kept is canonical (§4.4).
    const select = el("select", { "aria-label": `${field.label} unit`, class: "unit" });
    conversions.forEach((c, i) => select.append(el("option", { value: String(i), text: c.label || c.unit })));
    select.value = String(index);
    select.addEventListener("change", () => {
      const canonical = toCanonical();
      index = Number(select.value);
      chosenUnits.set(key, index);
      if (canonical !== "") input.value = String(roundShown(canonical * conv().factor + conv().offset));
    });
    span.append(select);
  } else if (field.unit?.label) {
    span.append(el("span", { class: "unit", text: field.unit.label }));
  }
  return span;
}

function roundShown(x) {
  return Number.isFinite(x) ? Number(x.toPrecision(12)) : x;
}

function vectorInputs(length, value, set, label) {
  const values = Array.isArray(value) ? value.map((v) => v ?? "") : new Array(length).fill("");
  const row = el("span", { class: "vector" });
  const inputs = values.map((v, i) => {
    const input = el("input", { type: "number", step: "any", value: String(v), "aria-label": `${label} ${i + 1}` });
    input.addEventListener("input", () => {
      values[i] = input.value === "" ? "" : Number(input.value);
      // All blank means "not given" (the default applies), not three missing numbers.
      set(values.every(blank) ? null : values.slice());
    });
    row.append(input);
    return input;
  });
  return { row, inputs, values };
}

const CONTROLS = {
  number: numberInput,
  select({ field, id, value, set }) {
    const select = el("select", { id });
    if (!field.required) select.append(el("option", { value: "", text: "(not set)" }));
    for (const option of field.options) select.append(el("option", { value: String(option), text: String(option) }));
    select.value = blank(value) ? "" : String(value);
    select.addEventListener("change", () => {
      const chosen = field.options.find((o) => String(o) === select.value);
      set(chosen === undefined ? null : chosen);
    });
    return select;
  },
  text({ field, id, value, set }) {
    const input = el("input", { id, type: "text", value: value == null ? "" : String(value) });
    if (field.maxLength) input.maxLength = field.maxLength;
    input.addEventListener("input", () => set(input.value));
    return input;
  },
  checkbox({ id, value, set }) {
    const box = el("input", { id, type: "checkbox" });
    box.checked = Boolean(value);
    box.addEventListener("change", () => set(box.checked));
    return box;
  },
  constant({ field }) {
    return el("code", { text: JSON.stringify(field.value) });
  },
  vector({ field, value, set }) {
    return vectorInputs(field.length, value, set, field.label).row;
  },
  table({ field, holder, key, host }) {
    const rows = Array.isArray(holder[field.key]) ? holder[field.key] : [];
    holder[field.key] = rows;
    const table = el("table", { class: "rows" });
    const head = el("tr");
    for (const column of field.columns) head.append(el("th", { text: column.label + (column.required ? " *" : "") }));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    rows.forEach((row, i) => {
      const tr = el("tr");
      for (const column of field.columns) {
        const cell = renderField(column, row, [...key.split("/"), String(i)], host);
        cell.querySelector(":scope > label")?.classList.add("visually-hidden");
        tr.append(el("td", {}, cell));
      }
      tr.append(el("td", {}, el("button", {
        type: "button", class: "remove-row", text: "Remove", disabled: rows.length <= field.minRows,
        onclick: () => { rows.splice(i, 1); host.rerender(); },
      })));
      body.append(tr);
    });
    table.append(body);
    const add = el("button", {
      type: "button", class: "add-row", text: "Add row", disabled: field.maxRows != null && rows.length >= field.maxRows,
      onclick: () => { rows.push({}); host.rerender(); },
    });
    const limits = `${field.minRows}–${field.maxRows ?? "∞"} rows`;
    return el("div", { class: "table-wrap" }, table, add, el("span", { class: "hint", text: ` ${limits}` }));
  },
  fieldset({ field, holder, key, host }) {
    const inner = holder[field.key] && typeof holder[field.key] === "object" ? holder[field.key] : {};
    holder[field.key] = inner;
    const set = el("fieldset", {}, el("legend", { text: field.label }));
    for (const f of field.fields) set.append(renderField(f, inner, key.split("/"), host));
    return set;
  },
  molecule({ id, value, set, host }) {
    if (host.library.length === 0) {
      // Nothing to choose from: say how to add a molecule, right here (buildArguments keeps Run off).
      const input = el("input", { id, type: "file", accept: ".mol,.sdf,chemical/x-mdl-molfile", multiple: true });
      input.addEventListener("change", () => host.importMolFiles([...input.files]));
      return el("div", { class: "library-empty" },
        el("p", { class: "hint", text: "The molecule library is empty. Import a .mol file (V2000 with explicit hydrogens and 3D coordinates) to choose it here:" }),
        el("label", { class: "file" }, el("span", { text: "Import .mol files… " }), input));
    }
    const select = el("select", { id, class: "molecule" }, el("option", { value: "", text: "— choose a molecule —" }));
    for (const m of host.library) select.append(el("option", { value: m.name, text: m.name }));
    select.value = typeof value === "string" ? value : "";
    // Atom pickers list the chosen molecule's atoms: redraw the form when it changes.
    select.addEventListener("change", () => { set(select.value); host.rerender(); });
    return select;
  },
  atom({ field, id, value, set, holder, host }) {
    const name = holder[field.of];
    const entry = host.library.find((m) => m.name === name);
    const parsed = entry?.molblock ? host.parseMolblock(entry.molblock) : null;
    if (!parsed?.ok) {
      // §4.2: a plain number field until a molecule is chosen.
      const input = el("input", { id, type: "number", step: "1", min: "0", value: blank(value) ? "" : String(value) });
      input.addEventListener("input", () => set(input.value === "" ? "" : Number(input.value)));
      return input;
    }
    const select = el("select", { id, class: "atom" }, el("option", { value: "", text: "— choose an atom —" }));
    parsed.molecule.elements.forEach((z, i) => select.append(el("option", { value: String(i), text: `${i}: ${symbol(z)}` })));
    select.value = blank(value) ? "" : String(value);
    // The unit's picture with atom numbers: click the atom (or pick it from the list).
    const picture = unitPicture(parsed.molecule, blank(value) ? null : Number(value), (i) => {
      select.value = String(i);
      select.closest(".field")?.dispatchEvent(new Event("change", { bubbles: false }));
      set(i);
    }, field.label);
    select.addEventListener("change", () => {
      set(select.value === "" ? "" : Number(select.value));
      picture.redraw(select.value === "" ? null : Number(select.value));
    });
    return el("div", { class: "atom-choice" }, select, picture);
  },
  element({ id, value, set }) {
    const input = el("input", { id, type: "number", step: "1", min: "1", max: "118", value: blank(value) ? "" : String(value) });
    const shown = el("span", { class: "element-symbol", text: Number.isInteger(value) ? symbol(value) : "" });
    const grid = el("div", { class: "periodic", hidden: true });
    const choose = (z) => { input.value = String(z); shown.textContent = symbol(z); mark(z); set(z); };
    const mark = (z) => grid.querySelectorAll("button").forEach((b) => b.classList.toggle("chosen", Number(b.dataset.z) === z));
    SYMBOLS.forEach((sym, i) => {
      const z = i + 1;
      const [row, col] = tablePosition(z);
      const b = el("button", { type: "button", text: sym, title: `${sym} (${z})`, "data-z": String(z), onclick: () => choose(z) });
      b.style.gridRow = String(row);
      b.style.gridColumn = String(col);
      grid.append(b);
    });
    mark(value);
    input.addEventListener("input", () => {
      const z = input.value === "" ? "" : Number(input.value);
      shown.textContent = Number.isInteger(z) && z >= 1 && z <= 118 ? symbol(z) : "";
      mark(z);
      set(z);
    });
    const toggle = el("button", { type: "button", text: "Periodic table", onclick: () => { grid.hidden = !grid.hidden; } });
    return el("div", {}, input, shown, toggle, grid);
  },
  cell({ field, value, set, host }) {
    // A full 3×3 (rows are the lattice vectors a, b, c) plus the orthorhombic a, b, c shortcut,
    // prefilled from the open document's cell (initialValues does that) or the current value.
    const { row, inputs, values } = vectorInputs(9, value, set, field.label);
    row.classList.add("cell3x3");
    const diag = [0, 4, 8].map((k) => (blank(values[k]) ? "" : values[k]));
    const abc = diag.map((v, i) => el("input", { type: "number", step: "any", value: String(v), "aria-label": `${"abc"[i]} (Å)` }));
    const apply = el("button", {
      type: "button", text: "Set orthorhombic",
      onclick: () => {
        const d = abc.map((x) => Number(x.value));
        const cell = [d[0], 0, 0, 0, d[1], 0, 0, 0, d[2]];
        cell.forEach((v, i) => { inputs[i].value = String(v); values[i] = v; });
        set(cell.slice());
      },
    });
    const fromDoc = host.document?.cell ? " (prefilled from the open structure)" : "";
    return el("div", {}, row, el("div", { class: "shortcut" }, el("span", { text: `a, b, c in Å${fromDoc}: ` }), ...abc, apply));
  },
  selection({ host }) {
    return el("p", { class: "live", "data-live": "selection", text: selectionText(host.selection) });
  },
  seed({ id, value, set }) {
    const input = el("input", { id, type: "number", step: "1", min: "0", value: blank(value) ? "" : String(value) });
    input.addEventListener("input", () => set(input.value === "" ? "" : Number(input.value)));
    const again = el("button", {
      type: "button", text: "New seed", class: "new-seed",
      onclick: () => {
        const seed = crypto.getRandomValues(new Uint32Array(1))[0] >>> 1;
        input.value = String(seed);
        set(seed);
      },
    });
    return el("span", {}, input, again);
  },
  document({ host }) {
    // Tools that fill the cell need one (buildArguments says so): the way to set it is right here.
    const setCell = el("button", { type: "button", class: "set-cell", text: "Set cell…", onclick: () => host.openCellEditor() });
    return el("div", {}, el("p", { class: "live", "data-live": "document", text: documentText(host.document) }), setCell);
  },
};
