// The demo page: wires the package (megane_builder_client + the offline tools) to a Tools menu,
// generated forms, the in-page document with its 3D view, and the provenance list.
import init, {
  buildArguments, initialValues, parseLaunchFragment, parseMolblock, planApply, progressStyle, provenanceRecord,
} from "../pkg/megane_builder_client.js";
import { $, el, say } from "./dom.js";
import { DocumentModel } from "./document.js";
import { refreshLive, renderForm, showProblems } from "./forms.js";
import { ProvenanceLog, planDigest } from "./provenance.js";
import { Servers, rememberedUrl } from "./servers.js";
import { checkServer } from "./check.js";
import { categoryIcon } from "./icons.js";

// The sample library, committed in www/samples/molecules/ (see www/samples/README.md).
const LIBRARY = ["water", "methanol", "ethanol", "acetonitrile", "benzene", "caffeine", "alanine_dipeptide", "ethylene"];

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
  await Promise.all(LIBRARY.map(async (name) => {
    try {
      const response = await fetch(`samples/molecules/${name}.mol`);
      if (response.ok) library.push({ name, molblock: await response.text() });
    } catch { /* a missing sample is skipped: the library is what exists */ }
  }));
  library.sort((a, b) => LIBRARY.indexOf(a.name) - LIBRARY.indexOf(b.name));
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

function renderTools() {
  const box = $("tools");
  box.replaceChildren();
  for (const entry of servers.entries.values()) {
    const s = entry.server;
    const head = el("div", { class: "server-head" }, el("h3", { text: entry.kind === "offline" ? "Offline (in this page)" : s.serverName }));
    head.append(el("button", { type: "button", class: "check", text: "Check", title: "Run the contract's conformance checks (§10) against this server", "data-server": entry.id, onclick: () => runCheck(entry.id) }));
    if (entry.kind !== "offline") {
      head.append(el("button", { type: "button", class: "disconnect", text: "Disconnect", "data-server": entry.id, onclick: () => disconnect(entry.id) }));
    }
    const section = el("div", { class: "server", "data-server": entry.id }, head);
    if (entry.url) section.append(el("div", { class: "server-url", text: `${entry.url}${s.serverVersion ? ` · v${s.serverVersion}` : ""}` }));
    for (const notice of [...(s.notices ?? []), ...entry.toolbox.notices]) section.append(el("p", { class: "hint", text: notice }));
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
        if (current?.serverId === entry.id && current.button.name === name) node.classList.add("active");
        cat.append(node);
        if (button.disabledReason) cat.append(el("p", { class: "reason", text: button.disabledReason }));
      }
      section.append(cat);
    }
    const hidden = [
      ...entry.toolbox.unsupportedContract.map((t) => [t, "unsupported contract version"]),
      ...entry.toolbox.unknownApply.map((t) => [t, "unknown apply mode"]),
      ...entry.toolbox.malformed.map((t) => [t, "malformed marker"]),
    ];
    if (hidden.length) {
      section.append(el("h4", { text: "Hidden tools" }),
        el("ul", { class: "hidden-tools" }, ...hidden.map(([t, why]) => el("li", { text: `${t.label} (${t.name}) — ${why}: ${t.reason}` }))));
    }
    if (entry.toolbox.plainTools.length) {
      section.append(el("p", { class: "hint", text: `Not Builder buttons (plain MCP tools): ${entry.toolbox.plainTools.map((t) => t.label).join(", ")}` }));
    }
    box.append(section);
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
  renderTools();
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

// ---- running -------------------------------------------------------------------------------

async function run() {
  if (!current || running || !current.built?.ok) return;
  const { serverId, button } = current;
  const entry = servers.get(serverId);
  if (!entry) { say($("form-error"), "That server is no longer connected.", "error"); return; }
  if (button.marker.apply === "new_document" && doc.edited && !window.confirm("Discard unsaved edits?\n\nThe result replaces the open structure and its history.")) return;
  const args = current.built.arguments;
  const documentAtRun = formContext().document;
  const where = entry.kind === "offline" ? "in this page" : `on ${entry.server.serverName}`;
  $("status").textContent = `Running ${button.label} ${where}…`;
  const outcome = await callWithProgress(entry, button, args);
  $("status").textContent = outcome.ok ? `${button.label} finished ${where}.` : `${button.label} ${outcome.cancelled ? "cancelled" : "failed"}.`;
  if (!outcome.ok) {
    // The form keeps the user's values; the one line says what to do.
    say($("form-error"), outcome.cancelled ? "Cancelled: nothing was applied." : outcome.error, "error");
    return;
  }
  if (!outcome.result) { say($("form-error"), `Not a Builder result: ${outcome.summary}`, "error"); return; }
  const planned = planApply(button, outcome.result, documentAtRun, { existingFragmentIds: doc.state.fragmentIds });
  if (!planned.ok) { say($("form-error"), planned.error, "error"); return; }
  const digest = await planDigest(planned.plan);
  const atoms = doc.applyPlan(planned.plan);
  showNotice(outcome.summary, outcome.warnings);
  const identity = { id: entry.id, name: entry.server.serverName, version: entry.server.serverVersion ?? "", ...(entry.url ? { url: entry.url } : {}) };
  const record = provenanceRecord(identity, button, args, outcome.result, atoms);
  provenance.add({ record, serverId, button, args, document: documentAtRun, digest });
  renderProvenance();
  say($("form-error"), "");
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
  say($("form-error"), "");
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

function showNotice(summary, warnings) {
  const text = [summary, ...warnings.map((w) => `Warning: ${w}`)].filter(Boolean).join("\n");
  say($("notice"), text, warnings.length ? "warn" : "");
}

// ---- provenance ----------------------------------------------------------------------------

function renderProvenance() {
  const list = $("provenance-list");
  list.replaceChildren(...provenance.entries.map((entry, i) => {
    const r = entry.record;
    const seed = entry.args.seed !== undefined ? `, seed ${entry.args.seed}` : "";
    const result = el("span", { class: "rebuild-result" });
    return el("li", { "data-index": String(i) },
      el("span", { text: `${r.tool} on ${r.server.name}: ${r.atoms} atoms${seed}, sha256 ${entry.digest.slice(0, 12)}… ` }),
      el("button", { type: "button", class: "rebuild", text: "Rebuild", onclick: () => rebuild(entry, result) }),
      result);
  }));
  const link = $("export-provenance");
  link.href = provenance.exportUrl();
  link.hidden = provenance.entries.length === 0;
}

/** Calls the same tool with the same recorded arguments and compares the structure by SHA-256;
 *  the rebuilt structure is not applied. */
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
  out.textContent = digest === entry.digest ? "Identical structure (same SHA-256)." : `Different structure (sha256 ${digest.slice(0, 12)}…).`;
  out.dataset.identical = String(digest === entry.digest);
}

async function runCheck(id) {
  const entry = servers.get(id);
  if (!entry || running) return;
  const list = $("check-report");
  list.replaceChildren();
  $("check-panel").hidden = false;
  $("check-title").textContent = `Server check: ${entry.kind === "offline" ? "offline tools" : entry.server.serverName}`;
  $("check-state").textContent = "Checking…";
  running = { controller: new AbortController() };
  try {
    await checkServer(entry, formContext(), ({ status, text }) => {
      list.append(el("li", { class: status, text: `${{ pass: "✓", fail: "✗", warn: "⚠", skip: "–" }[status]} ${text}` }));
    });
    const fails = list.querySelectorAll("li.fail").length;
    const warnings = list.querySelectorAll("li.warn").length;
    const warned = warnings ? ` (${warnings} warning${warnings === 1 ? "" : "s"})` : "";
    $("check-state").textContent = fails ? `${fails} problem(s) found${warned}.` : `Every check passed${warned}.`;
  } finally {
    running = null;
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
    say($("server-error"), outcome.error, "error");
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

/** Undo, Redo and Open structure are off while a tool runs. */
function setEditing(on) {
  $("open-file").disabled = !on;
  $("undo").disabled = !on || !doc.canUndo;
  $("redo").disabled = !on || !doc.canRedo;
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
  try { json = JSON.parse(await file.text()); } catch (error) { say($("server-error"), `${file.name}: not JSON (${error.message})`, "error"); return; }
  const outcome = servers.addPreview(file.name, json);
  if (!outcome.ok) say($("server-error"), `${file.name}: ${outcome.error}`, "error");
}

/** The reference server's tools/list as recorded (www/samples/tools-list.json), previewed. */
async function previewSampleList() {
  try {
    const response = await fetch("samples/tools-list.json");
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    await previewToolList(new File([await response.blob()], "tools-list.json"));
  } catch (error) {
    say($("server-error"), `The sample tools/list could not be read: ${error.message}`, "error");
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
  doc.setCell([abc[0], 0, 0, 0, abc[1], 0, 0, 0, abc[2]]);
  $("cell-msg").textContent = `Cell set: ${abc.join(" × ")} Å.`;
  $("cell-editor").open = false;
}

async function openStructureFile(file) {
  const text = await file.text();
  const name = file.name.replace(/\.[^.]*$/, "");
  let structure;
  if (/\.mol$/i.test(file.name)) {
    const parsed = parseMolblock(text);
    if (!parsed.ok) { showNotice(`${file.name}: ${parsed.error}`, []); return; }
    const m = parsed.molecule;
    structure = { elements: m.elements, positions: m.positions.flat(), cell: null, bonds: m.bonds ?? [], bondOrders: m.bondOrders };
  } else {
    try {
      structure = JSON.parse(text);
      const n = structure.elements?.length;
      if (!Array.isArray(structure.elements) || !Array.isArray(structure.positions) || structure.positions.length !== 3 * n) throw new Error("not a Structure (elements, positions, cell, bonds)");
    } catch (error) {
      showNotice(`${file.name}: ${error.message}`, []);
      return;
    }
  }
  doc.openStructure(structure, name);
  showNotice(`Opened ${file.name}: ${structure.elements.length} atoms.`, []);
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
    $("status").textContent = `The package did not load: ${error.message}`;
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
  $("mol-file").addEventListener("change", (e) => importMolFiles([...e.target.files]));
  $("open-file").addEventListener("change", (e) => { if (e.target.files[0]) openStructureFile(e.target.files[0]); e.target.value = ""; });
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
  $("status").textContent = `Ready. Offline tools loaded; library: ${library.map((m) => m.name).join(", ") || "empty"}.`;
  await launchFromFragment(launchHash);
  // A link opened in this tab again changes only the fragment: handle it the same way.
  window.addEventListener("hashchange", () => launchFromFragment(location.hash));
}

main();
