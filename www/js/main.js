// The demo page: wires the package (megane_builder_client + the offline tools) to a Tools menu,
// generated forms, the in-page document with its 3D view, and the provenance list.
import init, {
  buildArguments, initialValues, parseLaunchFragment, parseMolblock, planApply, progressStyle, provenanceRecord,
} from "../pkg/megane_builder_client.js";
import { $, details, el, say, sayFolded } from "./dom.js";
import { openStructureFile, refreshSave, saveStructure } from "./files.js";
import { DocumentModel } from "./document.js";
import { refreshLive, renderForm, showProblems } from "./forms.js";
import { ProvenanceLog, planDigest } from "./provenance.js";
import { Servers, rememberedUrl } from "./servers.js";
import { checkServer } from "./check.js";
import { categoryIcon } from "./icons.js";

// The sample library, committed in www/samples/molecules/ (see www/samples/README.md): the file,
// the name a chemist reads (and the tools get), its SMILES (so a tool's example monomer given as
// a SMILES finds it). ethylene.mol is ethane C2H6, the polyethylene repeat unit.
const LIBRARY = [
  ["water", "water", "O"], ["methanol", "methanol", "CO"], ["ethanol", "ethanol", "CCO"], ["acetonitrile", "acetonitrile", "CC#N"],
  ["benzene", "benzene", "c1ccccc1"], ["caffeine", "caffeine", "Cn1cnc2c1c(=O)n(C)c(=O)n2C"],
  ["alanine_dipeptide", "alanine dipeptide", "CC(=O)N[C@@H](C)C(=O)NC"], ["ethylene", "ethane (polyethylene repeat unit)", "CC"],
].map(([file, name, smiles]) => ({ file, name, smiles }));

const doc = new DocumentModel();
const provenance = new ProvenanceLog();
const library = []; // {name, molblock}
let view = null;
let servers = null;
let current = null; // {serverId, button, values}
let running = null; // {controller}

// §8: the token leaves the address bar before anything else can fail (the package's load, say);
// the link itself is handled once the package is ready.
const launchHash = location.hash.includes("tools=") ? location.hash : "";
if (launchHash) history.replaceState(null, "", location.pathname + location.search);

function formContext() {
  return { document: doc.structure(), documentEditable: true, selection: doc.state.selection, library };
}

// ---- library -------------------------------------------------------------------------------

async function loadLibrary() {
  await Promise.all(LIBRARY.map(async ({ file, name, smiles }) => {
    try {
      const response = await fetch(`samples/molecules/${file}.mol`);
      if (response.ok) library.push({ name, smiles, molblock: await response.text() });
    } catch { /* a missing sample is skipped: the library is what exists */ }
  }));
  const order = (m) => LIBRARY.findIndex((l) => l.name === m.name);
  library.sort((a, b) => order(a) - order(b));
  renderLibrary();
}

function renderLibrary() {
  $("library-list").replaceChildren(...library.map((m) => {
    const parsed = parseMolblock(m.molblock);
    const atoms = parsed.ok ? `${parsed.molecule.elements.length} atoms, ${parsed.molecule.dimension}` : "unreadable";
    return el("li", { "data-molecule": m.name },
      el("span", { text: `${m.name} (${atoms})${m.imported ? " — imported" : ""} ` }),
      el("button", { type: "button", class: "remove-molecule", text: "Remove", title: `Remove ${m.name} from the library`, onclick: () => removeMolecule(m.name) }));
  }));
  $("library-empty").hidden = library.length > 0;
}

/** Takes a molecule out of the library; an open form shows what is left (or how to add one). */
function removeMolecule(name) {
  const at = library.findIndex((m) => m.name === name);
  if (at < 0) return;
  library.splice(at, 1);
  renderLibrary();
  if (current) rerenderForm();
}

/** Imported mol files join the library under their file name; parseMolblock checks them first.
 *  A file named like a library entry replaces it (the user's file wins). */
async function importMolFiles(files) {
  const lines = [];
  for (const file of files) {
    const text = await file.text();
    const parsed = parseMolblock(text);
    const name = file.name.replace(/\.(mol|sdf)$/i, "");
    if (!parsed.ok) { lines.push(`${file.name}: ${parsed.error}`); continue; }
    const at = library.findIndex((m) => m.name === name);
    const entry = { name, molblock: text, imported: true };
    if (at >= 0) library[at] = entry; else library.push(entry);
    lines.push(`${name}: ${parsed.molecule.elements.length} atoms (${parsed.molecule.dimension})${at >= 0 ? ", replaces the library's" : ""}`);
  }
  say($("library-msg"), lines.join("\n"), "");
  renderLibrary();
  if (current) rerenderForm();
}

// ---- tools menu ----------------------------------------------------------------------------

/** What a server said on connecting, in words a chemist reads; the protocol's own words folded. */
function serverNotices(entry) {
  const s = entry.server;
  const own = new Set(entry.toolbox.notices);
  const connection = (s.notices ?? []).filter((n) => !own.has(n));
  const out = [];
  if (entry.olderProtocol && connection.length) {
    out.push(el("p", { class: "server-notice" },
      el("span", { text: "Connected with the earlier version of the tool protocol, which this server speaks; this page uses it for this server from now on. " }),
      details(connection.join(" "))));
  } else {
    for (const notice of connection) { const p = el("p", { class: "server-notice" }); sayFolded(p, notice, "server-notice"); out.push(p); }
  }
  for (const notice of entry.toolbox.notices) out.push(el("p", { class: "server-notice", text: notice }));
  return out;
}

function renderTools() {
  const box = $("tools");
  box.replaceChildren();
  for (const entry of servers.entries.values()) {
    const s = entry.server;
    const head = el("div", { class: "server-head" }, el("h3", { text: entry.kind === "offline" ? "In this page (no server)" : s.serverName }));
    head.append(el("button", { type: "button", class: "check", text: "Check", title: "Run each tool with an example and check that this page can use what it gives", "data-server": entry.id, onclick: () => runCheck(entry.id) }));
    if (entry.kind !== "offline") {
      head.append(el("button", { type: "button", class: "disconnect", text: "Disconnect", "data-server": entry.id, onclick: () => disconnect(entry.id) }));
    }
    const section = el("div", { class: "server", "data-server": entry.id }, head);
    if (entry.url) section.append(el("div", { class: "server-url", text: `${entry.url}${s.serverVersion ? ` · v${s.serverVersion}` : ""}` }));
    section.append(...serverNotices(entry));
    for (const group of entry.toolbox.categories) {
      const cat = el("div", { class: "category", "data-category": group.category },
        el("h4", {}, el("img", { src: categoryIcon(group.category), alt: "" }), el("span", { text: group.label })));
      for (const name of group.tools) {
        const button = entry.toolbox.buttons.find((b) => b.name === name);
        if (!button) continue;
        const node = el("button", {
          type: "button", class: "tool", "data-server": entry.id, "data-tool": name,
          title: button.disabledReason ?? button.tooltip, disabled: Boolean(button.disabledReason),
          onclick: () => chooseTool(entry.id, name),
        }, el("img", { src: button.icon ?? categoryIcon(button.category), alt: "" }), el("span", { text: button.label }));
        cat.append(node);
        if (button.disabledReason) cat.append(el("p", { class: "reason", text: button.disabledReason }));
      }
      section.append(cat);
    }
    const hidden = [...entry.toolbox.unsupportedContract, ...entry.toolbox.unknownApply, ...entry.toolbox.malformed];
    if (hidden.length) {
      section.append(el("h4", { text: "Tools this page cannot use" }),
        el("ul", { class: "hidden-tools" }, ...hidden.map((t) => el("li", {}, el("span", { text: `${t.label} ` }), details(`${t.name}: ${t.reason}`, "why")))));
    }
    if (entry.toolbox.plainTools.length) {
      section.append(el("p", { class: "hint", text: `Other tools of this server (they do not build structures): ${entry.toolbox.plainTools.map((t) => t.label).join(", ")}` }));
    }
    box.append(section);
  }
  markActiveTool();
}

/** Marks the chosen tool's button, in place: the buttons (and the focus on one) stay. */
function markActiveTool() {
  for (const node of document.querySelectorAll("button.tool")) {
    node.classList.toggle("active", Boolean(current) && node.dataset.server === current.serverId && node.dataset.tool === current.button.name);
  }
}

// ---- the form ------------------------------------------------------------------------------

function chooseTool(serverId, name) {
  const entry = servers.get(serverId);
  const button = entry?.toolbox.buttons.find((b) => b.name === name);
  if (!button || button.disabledReason) return;
  current = { serverId, button, values: initialValues(button, formContext()) };
  // An offline tool's form is open: its Worker starts and warms up now, so Run does not wait for it.
  if (entry.kind === "offline") entry.server.prepare();
  say($("form-error"), "");
  $("form-title").textContent = button.label;
  $("form-tooltip").textContent = button.tooltip;
  const dest = destinationNotice(entry, button);
  say($("form-destination"), dest, "destination");
  markActiveTool();
  rerenderForm();
}

/** §9: for an HTTP tool that takes the document or a molecule, say which host receives it. */
function destinationNotice(entry, button) {
  if (entry.kind === "offline") return "Runs in this page: nothing leaves your browser.";
  if (entry.kind === "preview") return "Preview from a file: there is no server to run it.";
  const sends = [];
  if (button.form.documentProperty) sends.push("the open structure");
  if (hasMolecule(button.form.fields)) sends.push("the chosen molecules");
  const host = new URL(entry.url).host;
  return sends.length ? `Sends ${sends.join(" and ")} to ${host}.` : `Runs on ${host}.`;
}

function hasMolecule(fields) {
  return fields.some((f) => f.control === "molecule" || (f.control === "table" && hasMolecule(f.columns)) || (f.control === "fieldset" && hasMolecule(f.fields)));
}

function formHost() {
  const ctx = formContext();
  return {
    values: current.values, library, document: ctx.document, selection: ctx.selection, parseMolblock,
    onChange: refreshForm, rerender: rerenderForm, importMolFiles, openCellEditor,
  };
}

function rerenderForm() {
  renderForm($("tool-form"), current.button, formHost());
  refreshForm();
}

/** After every change: build the arguments; Run is enabled only when they validate. */
function refreshForm() {
  if (!current) return;
  const ctx = formContext();
  refreshLive($("tool-form"), { document: ctx.document, selection: ctx.selection });
  const built = buildArguments(current.button, current.values, ctx);
  current.built = built;
  const problems = built.ok ? [] : built.errors;
  showProblems($("tool-form"), problems);
  say($("form-problem"), problems.length ? `Run is disabled: ${problems[0].message}` : "", "problem");
  $("run").disabled = !built.ok || Boolean(running);
  const replaces = current.button.marker.apply === "new_document" && doc.edited;
  say($("form-warning"), replaces ? "The result replaces the open structure and its history." : "", "warning");
}

/** The form's one line under Run: an error (red, announced), or a note such as a cancel. */
function formLine(text, kind = "error") {
  const node = $("form-error");
  sayFolded(node, text, kind);
  if (kind === "error" && text) node.setAttribute("role", "alert"); else node.removeAttribute("role");
}

// ---- running -------------------------------------------------------------------------------

async function run() {
  if (!current || running || !current.built?.ok) return;
  const { serverId, button } = current;
  const entry = servers.get(serverId);
  if (!entry) { formLine("That server is no longer connected."); return; }
  if (button.marker.apply === "new_document" && doc.edited && !window.confirm("Discard unsaved edits?\n\nThe result replaces the open structure and its history.")) return;
  const args = current.built.arguments;
  const documentAtRun = formContext().document;
  const where = entry.kind === "offline" ? "in this page" : `on ${entry.server.serverName}`;
  $("status").textContent = `Running ${button.label} ${where}…`;
  const outcome = await callWithProgress(entry, button, args);
  $("status").textContent = outcome.ok ? `${button.label} finished ${where}.` : `${button.label} ${outcome.cancelled ? "cancelled" : "failed"}.`;
  if (!outcome.ok) {
    // The form keeps the user's values; the one line says what to do. A cancel is not an error.
    if (outcome.cancelled) formLine("Cancelled: nothing was applied.", "note");
    else formLine(outcome.error);
    return;
  }
  if (!outcome.result) { formLine(`This tool gave no structure: ${outcome.summary}`); return; }
  const planned = planApply(button, outcome.result, documentAtRun, { existingFragmentIds: doc.state.fragmentIds });
  if (!planned.ok) { formLine(planned.error); return; }
  const digest = await planDigest(planned.plan);
  const caption = { text: [outcome.summary, ...outcome.warnings.map((w) => `Warning: ${w}`)].filter(Boolean).join("\n"), warn: outcome.warnings.length > 0 };
  const atoms = doc.applyPlan(planned.plan, caption);
  const identity = { id: entry.id, name: entry.server.serverName, version: entry.server.serverVersion ?? "", ...(entry.url ? { url: entry.url } : {}) };
  const record = provenanceRecord(identity, button, args, outcome.result, atoms);
  provenance.add({ record, serverId, button, args, document: documentAtRun, digest, stateId: doc.state.id, where });
  renderProvenance();
  formLine("", "");
}

/** One call with the progress bar (or spinner) and Cancel wired to an AbortController. */
async function callWithProgress(entry, button, args) {
  const controller = new AbortController();
  running = { controller };
  const bar = progressStyle(button.marker.expectedSeconds) === "bar";
  $("progress").hidden = false;
  $("progress-bar").hidden = !bar;
  $("progress-bar").removeAttribute("value");
  $("spinner").hidden = bar;
  $("progress-message").textContent = "Starting…";
  $("cancel").hidden = false;
  $("run").disabled = true;
  // The plan is made against the document as it was at Run: no edits until the call ends.
  setEditing(false);
  formLine("", "");
  try {
    return await entry.server.call(button.name, args, {
      signal: controller.signal,
      onProgress: (fraction, message) => {
        if (fraction !== null && fraction !== undefined) $("progress-bar").value = fraction;
        $("progress-message").textContent = message ?? (fraction != null ? `${Math.round(fraction * 100)} %` : "Working…");
        $("progress").dataset.events = String(Number($("progress").dataset.events ?? 0) + 1);
      },
    });
  } catch (error) {
    return { ok: false, error: `The call failed: ${error.message ?? error}` };
  } finally {
    running = null;
    setEditing(true);
    $("progress").hidden = true;
    $("cancel").hidden = true;
    refreshForm();
  }
}

// ---- applied results -----------------------------------------------------------------------

/** The applied results, each marked undone while Undo has taken it back. */
function renderProvenance() {
  const list = $("provenance-list");
  list.replaceChildren(...provenance.entries.map((entry, i) => {
    const r = entry.record;
    const seed = entry.args.seed !== undefined ? `, seed ${entry.args.seed}` : "";
    const result = el("span", { class: "rebuild-result" });
    const undone = !doc.inHistory(entry.stateId);
    return el("li", { "data-index": String(i), "data-sha256": entry.digest, class: undone ? "undone" : "" },
      el("span", { text: `${entry.button.label} ${entry.where}: ${r.atoms} atoms${seed}` }), " ",
      undone ? el("span", { class: "undone-mark", text: "(undone)" }) : null,
      el("button", { type: "button", class: "rebuild", text: "Rebuild", title: "Run it again with the same inputs and compare the atoms", onclick: () => rebuild(entry, result) }),
      result);
  }));
  $("provenance-empty").hidden = provenance.entries.length > 0;
  const link = $("export-provenance");
  link.href = provenance.exportUrl();
  link.hidden = provenance.entries.length === 0;
}

/** Calls the same tool with the same recorded arguments and compares the structure (SHA-256 of
 *  its elements and positions); the rebuilt structure is not applied. */
async function rebuild(entry, out) {
  const server = servers.get(entry.serverId);
  if (!server) { out.textContent = "The server is not connected."; return; }
  if (running) { out.textContent = "Wait for the running tool."; return; }
  out.textContent = "Rebuilding…";
  const outcome = await callWithProgress(server, entry.button, entry.args);
  if (!outcome.ok || !outcome.result) { out.textContent = `Rebuild failed: ${outcome.error ?? outcome.summary}`; return; }
  const planned = planApply(entry.button, outcome.result, entry.document, {});
  if (!planned.ok) { out.textContent = `Rebuild failed: ${planned.error}`; return; }
  const digest = await planDigest(planned.plan);
  out.textContent = digest === entry.digest ? "Identical structure: the same atoms at the same positions." : "Different structure: the atoms or their positions differ.";
  out.dataset.identical = String(digest === entry.digest);
}

// ---- the server check ----------------------------------------------------------------------

async function runCheck(id) {
  const entry = servers.get(id);
  if (!entry || running) return;
  const list = $("check-report");
  list.replaceChildren();
  $("check-panel").hidden = false;
  const who = entry.kind === "offline" ? "the tools in this page" : entry.server.serverName;
  $("check-title").textContent = `Check: ${who}`;
  $("check-state").replaceChildren(el("span", { class: "spinner" }), `Checking ${who}: each tool is run with an example…`);
  const button = document.querySelector(`.server[data-server="${CSS.escape(id)}"] button.check`);
  const restore = button?.textContent;
  if (button) { button.textContent = "Checking…"; button.disabled = true; button.setAttribute("aria-busy", "true"); }
  $("check-panel").scrollIntoView({ block: "nearest" });
  running = { controller: new AbortController() };
  refreshForm();
  try {
    await checkServer(entry, formContext(), ({ status, text, detail }) => {
      list.append(el("li", { class: status }, el("span", { class: "plain", text }), details(detail)));
    });
    const fails = list.querySelectorAll("li.fail").length;
    const warnings = list.querySelectorAll("li.warn").length;
    const warned = warnings ? ` (${warnings} warning${warnings === 1 ? "" : "s"})` : "";
    $("check-state").textContent = fails ? `${fails} problem${fails === 1 ? "" : "s"} found${warned}.` : `Every check passed${warned}.`;
  } catch (error) {
    $("check-state").textContent = `The check stopped: ${error.message ?? error}`;
  } finally {
    running = null;
    if (button?.isConnected) { button.textContent = restore; button.disabled = false; button.removeAttribute("aria-busy"); }
    refreshForm();
  }
}

// ---- servers -------------------------------------------------------------------------------

async function connectTo(url, token) {
  say($("server-error"), "");
  $("connect").disabled = true;
  $("status").textContent = `Connecting to ${url}…`;
  const outcome = await servers.connectRemote(url, token);
  $("connect").disabled = false;
  if (!outcome.ok) {
    sayFolded($("server-error"), outcome.error, "error");
    $("status").textContent = "Not connected.";
    return;
  }
  $("server-token").value = "";
  $("status").textContent = `Connected to ${url}.`;
}

async function disconnect(id) {
  if (current?.serverId === id) closeForm();
  await servers.disconnect(id);
  $("status").textContent = `Disconnected from ${id}.`;
}

function closeForm() {
  current = null;
  running?.controller.abort();
  $("tool-form").replaceChildren();
  $("form-title").textContent = "Choose a tool";
  for (const id of ["form-tooltip"]) $(id).textContent = "";
  for (const id of ["form-destination", "form-warning", "form-problem", "form-error"]) say($(id), "");
  $("run").disabled = true;
}

/** Undo, Redo, Open and Save are off while a tool runs. */
function setEditing(on) {
  $("open-file").disabled = !on;
  $("open-label").classList.toggle("disabled", !on);
  $("undo").disabled = !on || !doc.canUndo;
  $("redo").disabled = !on || !doc.canRedo;
  refreshSave(doc, !on);
}

/** §8: #tools=<url>&token=<token> connects on load; the fragment leaves the address bar first. */
async function launchFromFragment(hash = location.hash) {
  const launch = parseLaunchFragment(hash);
  if (!launch) return;
  const rest = launch.ok ? launch.remainingFragment : "";
  history.replaceState(null, "", location.pathname + location.search + rest);
  if (!launch.ok) { say($("server-error"), launch.error, "error"); return; }
  $("server-url").value = launch.url;
  await connectTo(launch.url, launch.token);
}

async function previewToolList(file) {
  say($("server-error"), "");
  let json;
  try { json = JSON.parse(await file.text()); } catch { say($("server-error"), `${file.name}: not a tool list (it is not JSON).`, "error"); return; }
  const outcome = servers.addPreview(file.name, json);
  if (!outcome.ok) say($("server-error"), `${file.name}: ${outcome.error}`, "error");
}

/** The reference server's tools/list as recorded (www/samples/tools-list.json), previewed. */
async function previewSampleList() {
  try {
    const response = await fetch("samples/tools-list.json");
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    await previewToolList(new File([await response.blob()], "reference tools"));
  } catch (error) {
    say($("server-error"), `The reference tools could not be read: ${error.message}`, "error");
  }
}

// ---- the document --------------------------------------------------------------------------

/** Opens "Set cell…", prefilled with the cell's a, b, c, else the atoms' extent plus 10 Å. */
function openCellEditor() {
  const s = doc.state;
  let abc = [20, 20, 20];
  if (s.cell) abc = [0, 4, 8].map((k) => s.cell[k]);
  else if (s.elements.length) {
    abc = [0, 1, 2].map((k) => {
      let lo = Infinity, hi = -Infinity;
      for (let i = k; i < s.positions.length; i += 3) { lo = Math.min(lo, s.positions[i]); hi = Math.max(hi, s.positions[i]); }
      return Math.round((hi - lo + 10) * 100) / 100;
    });
  }
  ["cell-a", "cell-b", "cell-c"].forEach((id, i) => { $(id).value = String(abc[i]); });
  $("cell-editor").open = true;
  $("cell-a").focus();
}

function applyCell() {
  const abc = ["cell-a", "cell-b", "cell-c"].map((id) => Number($(id).value));
  if (!abc.every((x) => Number.isFinite(x) && x > 0)) { $("cell-msg").textContent = "Give a, b and c in Å, each above 0."; return; }
  if (doc.atomCount === 0) { $("cell-msg").textContent = "Open or build a structure first."; return; }
  doc.setCell([abc[0], 0, 0, 0, abc[1], 0, 0, 0, abc[2]], { text: `Cell set: ${abc.join(" × ")} Å.`, warn: false });
  $("cell-msg").textContent = `Cell set: ${abc.join(" × ")} Å.`;
  $("cell-editor").open = false;
}

function onDocumentChange(state, reason) {
  view?.show(state, reason !== "selection");
  const n = state.elements.length;
  $("atom-count").textContent = `${n} atom${n === 1 ? "" : "s"}`;
  $("view-empty").hidden = n > 0;
  $("doc-name").textContent = n ? state.name : "";
  $("selection-count").textContent = state.selection.length ? `${state.selection.length} selected` : "";
  $("undo").disabled = !doc.canUndo || Boolean(running);
  $("redo").disabled = !doc.canRedo || Boolean(running);
  // The caption is the open state's: it follows Undo and Redo.
  const caption = state.caption;
  say($("notice"), caption?.text ?? "", caption?.warn ? "warn" : "");
  if (reason !== "selection") renderProvenance();
  refreshSave(doc, Boolean(running));
  refreshForm();
}

function onPick(index, add) {
  const sel = new Set(add ? doc.state.selection : []);
  if (index === null) { if (!add) doc.setSelection([]); return; }
  if (add && sel.has(index)) sel.delete(index); else sel.add(index);
  doc.setSelection([...sel]);
}

// ---- start ---------------------------------------------------------------------------------

async function main() {
  try {
    await init();
  } catch (error) {
    $("status").textContent = `The page did not load: ${error.message}`;
    return;
  }
  try {
    // Loaded on its own so the page still works (without 3D) if three.js was not vendored.
    const { StructureView } = await import("./view.js");
    view = new StructureView($("view"), { onPick });
  } catch (error) {
    $("view-wrap").append(el("p", { class: "error", text: `No 3D view: ${error.message}` }));
  }
  doc.onChange(onDocumentChange);
  onDocumentChange(doc.state, "start");
  servers = new Servers(renderTools);
  servers.addOffline();
  // Before the first await: the offline tools' buttons show now, so a user (or a test) may fill the
  // server field and press Connect while the library loads; that must neither be overwritten nor
  // submit the form natively.
  $("server-url").value = rememberedUrl();
  $("connect-form").addEventListener("submit", (e) => { e.preventDefault(); connectTo($("server-url").value.trim(), $("server-token").value); });
  await loadLibrary();
  $("list-file").addEventListener("change", (e) => { if (e.target.files[0]) previewToolList(e.target.files[0]); e.target.value = ""; });
  $("sample-list").addEventListener("click", previewSampleList);
  $("mol-file").addEventListener("change", (e) => { importMolFiles([...e.target.files]); e.target.value = ""; });
  $("open-file").addEventListener("change", (e) => { if (e.target.files[0] && !running) openStructureFile(doc, e.target.files[0]); e.target.value = ""; });
  $("save").addEventListener("click", () => { if (!running) saveStructure(doc, $("save-format").value); });
  $("undo").addEventListener("click", () => { if (!running) doc.undo(); });
  $("cell-editor").addEventListener("toggle", () => { if ($("cell-editor").open && !$("cell-a").value) openCellEditor(); });
  $("cell-apply").addEventListener("click", () => { if (!running) applyCell(); });
  $("redo").addEventListener("click", () => { if (!running) doc.redo(); });
  // Ctrl/Cmd+Z and Ctrl/Cmd+Shift+Z (or Y), except while typing in a field.
  document.addEventListener("keydown", (e) => {
    if (!(e.ctrlKey || e.metaKey) || running || e.target.closest?.("input, select, textarea")) return;
    const key = e.key.toLowerCase();
    if (key === "z" && !e.shiftKey) { e.preventDefault(); doc.undo(); }
    else if (key === "y" || (key === "z" && e.shiftKey)) { e.preventDefault(); doc.redo(); }
  });
  $("run").addEventListener("click", run);
  $("cancel").addEventListener("click", () => running?.controller.abort());
  // For the end-to-end tests (and the curious): read-only handles on the page's state.
  window.meganeDemo = { doc, get view() { return view; }, servers, provenance, get built() { return current?.built ?? null; } };
  $("status").textContent = `Ready. The tools in this page need no server; library: ${library.map((m) => m.name).join(", ") || "empty"}.`;
  await launchFromFragment(launchHash);
  // A link opened in this tab again changes only the fragment: handle it the same way.
  window.addEventListener("hashchange", () => launchFromFragment(location.hash));
}

main();
