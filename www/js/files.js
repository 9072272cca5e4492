// Open and Save: structure files read and written by the package (readStructureFile,
// writeStructureFile: extended XYZ, PDB, mol / SD, GROMACS .gro, and the page's own JSON to open),
// never by page code. The Save menu is the package's saveChoices: a format that cannot hold the
// open structure (PDB beyond 99 999 atoms) is offered disabled with the reason, and what a format
// leaves out (a mol file's cell) is said when saving. File names come from the package's
// sanitiser (sanitizeName) and the format's extension.
import { readStructureFile, sanitizeName, saveChoices, writeStructureFile } from "../pkg/megane_builder_client.js";
import { $, el, say, sayFolded } from "./dom.js";

/** The one line above the view about files: an error (red, announced) or a note. */
function fileLine(text, kind) {
  const node = $("file-message");
  sayFolded(node, text, kind);
  if (kind === "error") node.setAttribute("role", "alert"); else node.removeAttribute("role");
  if (text) node.scrollIntoView({ block: "nearest" });
}

let lastKey = "";

/** Fills the Save menu for the open structure (kept as chosen while the same formats apply). */
export function refreshSave(doc, busy) {
  const s = doc.state;
  const n = s.elements.length;
  const select = $("save-format");
  const key = `${n}|${Boolean(s.cell)}|${s.bonds.length > 0}`;
  if (key !== lastKey) {
    lastKey = key;
    const chosen = select.value;
    const choices = saveChoices(n, Boolean(s.cell), s.bonds.length > 0);
    select.replaceChildren(...choices.map((c) => el("option", {
      value: c.format, text: c.refusal ? `${c.label}: too many atoms` : c.label,
      disabled: Boolean(c.refusal), title: c.refusal ?? c.loses ?? undefined,
    })));
    const usable = choices.filter((c) => !c.refusal).map((c) => c.format);
    select.value = usable.includes(chosen) ? chosen : usable[0] ?? "";
    const refused = choices.find((c) => c.refusal);
    if (refused) fileLine(refused.refusal, "note");
    else if ($("file-message").className === "note" && /holds at most/.test($("file-message").textContent)) fileLine("", "");
  }
  select.disabled = busy || n === 0;
  $("save").disabled = busy || n === 0;
}

/** Writes the open structure as `format` and hands the file to the browser's download. */
export function saveStructure(doc, format) {
  const structure = doc.fileStructure();
  if (!structure) { fileLine("There is nothing to save yet: run a tool or open a file.", "error"); return; }
  const out = writeStructureFile(structure, format, doc.state.name);
  if (!out.ok) { fileLine(out.error, "error"); return; }
  const name = `${sanitizeName(doc.state.name)}.${format}`;
  const url = URL.createObjectURL(new Blob([out.text], { type: "text/plain" }));
  const link = el("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  const choice = saveChoices(structure.elements.length, Boolean(structure.cell), structure.bonds.length > 0).find((c) => c.format === format);
  fileLine(`Saved ${name} (${structure.elements.length} atoms)${choice?.loses ? `: ${choice.loses}` : ""}.`, "note");
}

/** Reads a file the user chose and opens it as a new document (one undo step); a file the page
 *  does not read is one line in error style, and the open structure stays. */
export async function openStructureFile(doc, file) {
  let text;
  try { text = await file.text(); } catch (error) { fileLine(`${file.name}: the file could not be read (${error.message}).`, "error"); return; }
  const opened = readStructureFile(file.name, text);
  if (!opened.ok) { fileLine(opened.error, "error"); return; }
  const s = opened.structure;
  const name = file.name.replace(/\.[^.]*$/, "") || "structure";
  const bonds = s.bonds.length;
  const facts = `${s.elements.length} atoms, ${bonds} bond${bonds === 1 ? "" : "s"}${s.cell ? ", with a cell" : ", no cell"}`;
  const caption = { text: [`Opened ${file.name}: ${facts}.`, ...opened.notes].join("\n"), warn: false };
  say($("file-message"), "");
  doc.openStructure(s, name, caption);
}
