// Contract playground: tools/list → buttons and forms → arguments; tools/call result → apply plan.
// Every string from a server or a file is set with textContent, never innerHTML (contract §9).
import init, {
  buildArguments, callTimeoutMs, initialValues, interpretCall, parseToolList, planApply, progressStyle,
} from "./pkg/megane_builder_client.js";

const $ = (id) => document.getElementById(id);
const state = { toolbox: null, button: null, values: {}, library: [] };

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

async function fetchText(path) {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.text();
}

async function loadLibrary() {
  for (const name of ["water", "methanol", "ethanol", "acetonitrile", "benzene", "caffeine"]) {
    try {
      state.library.push({ name, molblock: await fetchText(`samples/molecules/${name}.mol`) });
    } catch { /* samples are optional */ }
  }
}

function context() {
  const text = $("document-json").value.trim();
  let doc = null;
  if (text) { try { doc = JSON.parse(text); } catch { doc = null; } }
  return { document: doc, library: state.library, selection: [] };
}

function showToolbox() {
  const box = $("toolbox");
  box.replaceChildren();
  let parsed;
  try { parsed = JSON.parse($("list-json").value); } catch (e) {
    box.append(el("p", { class: "error", text: `Not JSON: ${e.message}` }));
    return;
  }
  const toolbox = parseToolList(parsed, "playground");
  if (!toolbox.ok) { box.append(el("p", { class: "error", text: toolbox.error })); return; }
  state.toolbox = toolbox;
  for (const notice of toolbox.notices) box.append(el("p", { class: "notice", text: notice }));
  for (const group of toolbox.categories) {
    const section = el("div", { class: "category" }, el("h3", { text: group.label }));
    for (const name of group.tools) {
      const button = toolbox.buttons.find((b) => b.name === name);
      const node = el("button", { type: "button", class: "tool", title: button.disabledReason ?? button.tooltip, "data-tool": name,
        onclick: () => chooseTool(button, node) });
      if (button.icon) node.append(el("img", { src: button.icon, alt: "" }));
      node.append(document.createTextNode(button.label));
      if (button.disabledReason) node.disabled = true;
      section.append(node);
    }
    box.append(section);
  }
  const hidden = [
    ["Unsupported contract", toolbox.unsupportedContract], ["Unknown apply mode", toolbox.unknownApply],
    ["Malformed", toolbox.malformed],
  ];
  for (const [title, tools] of hidden) {
    if (tools.length === 0) continue;
    const list = el("ul", { class: "hidden-tools" });
    for (const t of tools) list.append(el("li", { text: `${t.label} (${t.name}): ${t.reason}` }));
    box.append(el("h3", { text: `Hidden: ${title}` }), list);
  }
  if (toolbox.plainTools.length) {
    box.append(el("p", { text: `Plain MCP tools (not buttons): ${toolbox.plainTools.map((t) => t.label).join(", ")}` }));
  }
  $("status").textContent = `${toolbox.buttons.length} button(s)`;
}

function chooseTool(button, node) {
  document.querySelectorAll(".tool.active").forEach((b) => b.classList.remove("active"));
  node.classList.add("active");
  state.button = button;
  state.values = initialValues(button, context());
  const m = button.marker;
  $("form-hint").textContent = `${button.label}: ${button.tooltip} — apply ${m.apply}, document ${m.document}, ` +
    `timeout ${callTimeoutMs(m.expectedSeconds) / 1000} s, ${progressStyle(m.expectedSeconds)}.`;
  renderForm();
  refreshArguments();
}

function renderForm() {
  const form = $("tool-form");
  form.replaceChildren();
  for (const field of state.button.form.fields) form.append(renderField(field, state.values, []));
}

function renderField(field, holder, path) {
  const id = ["f", ...path, field.key].join("-");
  const wrap = el("div", { class: "field", "data-path": [...path, field.key].join("/") });
  const suffix = field.required ? "" : field.optional ? " (optional)" : "";
  wrap.append(el("label", { for: id, text: field.label + suffix }));
  if (field.help) wrap.append(el("p", { class: "help", text: field.help }));
  const set = (value) => { holder[field.key] = value; refreshArguments(); };
  const value = holder[field.key];
  switch (field.control) {
    case "number": wrap.append(numberInput(id, field, value, set)); break;
    case "seed": {
      const input = el("input", { id, type: "number", step: "1", min: "0", value: value ?? "" });
      input.addEventListener("input", () => set(input.value));
      const again = el("button", { type: "button", text: "New seed",
        onclick: () => { input.value = String(Math.floor(Math.random() * 2 ** 31)); set(input.value); } });
      wrap.append(input, again);
      break;
    }
    case "select": {
      const select = el("select", { id });
      for (const option of field.options) select.append(el("option", { value: String(option), text: String(option) }));
      select.value = value ?? "";
      select.addEventListener("change", () => set(select.value));
      wrap.append(select);
      break;
    }
    case "checkbox": {
      const box = el("input", { id, type: "checkbox" });
      box.checked = Boolean(value);
      box.addEventListener("change", () => set(box.checked));
      wrap.append(box);
      break;
    }
    case "molecule": {
      const select = el("select", { id }, el("option", { value: "", text: "— choose —" }));
      for (const m of state.library) select.append(el("option", { value: m.name, text: m.name }));
      select.value = value ?? "";
      select.addEventListener("change", () => set(select.value));
      wrap.append(select);
      break;
    }
    case "vector": case "cell": {
      const length = field.control === "cell" ? 9 : field.length;
      const values = Array.isArray(value) ? [...value] : new Array(length).fill("");
      holder[field.key] = values;
      const row = el("div", { class: "row" });
      values.forEach((v, i) => {
        const input = el("input", { type: "number", step: "any", value: v, "aria-label": `${field.label} ${i + 1}`, size: "5" });
        input.addEventListener("input", () => { values[i] = input.value; refreshArguments(); });
        row.append(input);
      });
      wrap.append(row);
      break;
    }
    case "table": {
      const rows = Array.isArray(value) ? value : [];
      holder[field.key] = rows;
      const table = el("table");
      rows.forEach((row, i) => {
        const tr = el("tr");
        for (const column of field.columns) tr.append(el("td", {}, renderField(column, row, [...path, field.key, String(i)])));
        tr.append(el("td", {}, el("button", { type: "button", text: "Remove",
          onclick: () => { rows.splice(i, 1); renderForm(); refreshArguments(); } })));
        table.append(tr);
      });
      wrap.append(table, el("button", { type: "button", text: "Add row",
        onclick: () => { rows.push({}); renderForm(); refreshArguments(); } }));
      break;
    }
    case "fieldset": {
      const inner = value && typeof value === "object" ? value : {};
      holder[field.key] = inner;
      const set = el("fieldset", {}, el("legend", { text: field.label }));
      for (const f of field.fields) set.append(renderField(f, inner, [...path, field.key]));
      wrap.append(set);
      break;
    }
    case "document": {
      const doc = context().document;
      wrap.append(el("p", { text: doc ? `The open structure (${doc.elements?.length ?? 0} atoms) is sent.` : "No document is open." }));
      break;
    }
    case "selection": wrap.append(el("p", { text: "0 atoms selected." })); break;
    case "constant": wrap.append(el("code", { text: JSON.stringify(field.value) })); break;
    default: {
      const input = el("input", { id, type: "text", value: value ?? "" });
      if (field.maxLength) input.maxLength = field.maxLength;
      input.addEventListener("input", () => set(input.value));
      wrap.append(input);
    }
  }
  return wrap;
}

/** A number field in a chosen unit; the value kept in state is canonical (§4.4). */
function numberInput(id, field, value, set) {
  const span = el("span");
  const conversions = field.unit?.conversions ?? [];
  let conversion = conversions[0] ?? { factor: 1, offset: 0 };
  const input = el("input", { id, type: "number", step: "any", value: value ?? "" });
  const toCanonical = () => (input.value === "" ? "" : (Number(input.value) - conversion.offset) / conversion.factor);
  input.addEventListener("input", () => set(toCanonical()));
  span.append(input);
  if (conversions.length > 1) {
    const select = el("select", { "aria-label": `${field.label} unit` });
    conversions.forEach((c, i) => select.append(el("option", { value: String(i), text: c.label })));
    select.addEventListener("change", () => {
      const canonical = toCanonical();
      conversion = conversions[Number(select.value)];
      if (canonical !== "") input.value = String(canonical * conversion.factor + conversion.offset);
    });
    span.append(select);
  } else if (field.unit?.label) {
    span.append(document.createTextNode(` ${field.unit.label}`));
  }
  return span;
}

function refreshArguments() {
  const built = buildArguments(state.button, state.values, context());
  document.querySelectorAll(".field.invalid").forEach((f) => f.classList.remove("invalid"));
  if (built.ok) {
    $("run-state").textContent = "Run would be enabled: the arguments validate.";
    $("run-state").className = "ok";
    $("arguments").textContent = JSON.stringify(built.arguments, elideLong, 2);
  } else {
    $("run-state").textContent = `Run is disabled: ${built.errors[0].message}`;
    $("run-state").className = "problem";
    $("arguments").textContent = built.errors.map((p) => `${p.path || "(form)"}: ${p.message}`).join("\n");
    for (const p of built.errors) document.querySelector(`.field[data-path="${CSS.escape(p.path)}"]`)?.classList.add("invalid");
  }
}

function elideLong(key, value) {
  return typeof value === "string" && value.length > 120 ? `${value.slice(0, 60)}… (${value.length} chars)` : value;
}

function interpret() {
  const out = $("outcome");
  out.replaceChildren();
  $("plan").textContent = "";
  if (!state.button) { out.append(el("p", { class: "error", text: "Choose a tool first." })); return; }
  const bytes = new TextEncoder().encode($("result-json").value);
  const outcome = interpretCall(state.button, bytes);
  if (!outcome.ok) { out.append(el("p", { class: "error", text: outcome.error })); return; }
  out.append(el("p", { class: "ok", text: outcome.summary || "(no summary)" }));
  for (const w of outcome.warnings) out.append(el("p", { class: "notice", text: w }));
  const planned = planApply(state.button, outcome.result, context().document, { existingFragmentIds: [] });
  if (!planned.ok) { out.append(el("p", { class: "error", text: planned.error })); return; }
  const plan = planned.plan;
  if (plan.mode === "new_document") {
    const s = plan.snapshot;
    $("plan").textContent = `new_document "${s.fileName}": ${s.nAtoms} atoms, ${s.nBonds} bonds, ` +
      `box ${s.box ? Array.from(s.box).map((x) => x.toFixed(3)).join(" ") : "none"}`;
  } else {
    $("plan").textContent = `insert: ${plan.ops.map((op) => op.op === "add_fragment"
      ? `add_fragment ${op.id} (${op.elements.length} atoms)` : `set_cell [${op.box.join(", ")}]`).join(", then ")}; ` +
      `select ${plan.select.length} atoms`;
  }
}

async function loadSampleResult() {
  if (!state.button) { $("outcome").replaceChildren(el("p", { class: "error", text: "Choose a tool first." })); return; }
  const call = JSON.parse(await fetchText(`samples/call-${state.button.name}.json`));
  $("result-json").value = JSON.stringify(call.result);
  if (call.arguments?.document) $("document-json").value = JSON.stringify(call.arguments.document);
}

function readFileInto(input, target) {
  input.addEventListener("change", async () => {
    const file = input.files?.[0];
    if (file) $(target).value = await file.text();
  });
}

async function main() {
  try {
    await init();
  } catch (e) {
    $("status").textContent = `The package did not load: ${e.message}`;
    return;
  }
  await loadLibrary();
  $("status").textContent = `Ready. Library: ${state.library.map((m) => m.name).join(", ") || "empty"}.`;
  $("load-sample-list").addEventListener("click", async () => {
    $("list-json").value = await fetchText("samples/tools-list.json");
    showToolbox();
  });
  $("parse-list").addEventListener("click", showToolbox);
  $("interpret").addEventListener("click", interpret);
  $("load-sample-result").addEventListener("click", async () => { await loadSampleResult(); interpret(); });
  $("document-json").addEventListener("change", () => state.button && refreshArguments());
  readFileInto($("list-file"), "list-json");
  readFileInto($("result-file"), "result-json");
}

main();
