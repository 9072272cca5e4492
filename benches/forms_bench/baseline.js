// The JavaScript baseline of the forms benchmark: §3 discovery and §4.1/§4.2 form fields written
// from the contract as a TypeScript client does them (marker, labels, tooltip, icon, categories,
// form fields with widgets, bounds and units), with no JSON Schema compilation. Not used by the
// package; it is the peer the wasm `parseToolList` is measured against in the same run.

const MARKER = "io.github.megane-labs/builder";
const CATEGORIES = ["bulk", "molecule", "polymer", "surface", "solvation", "other"];
const WIDGETS = new Set(["molecule", "atom", "element", "cell", "selection", "seed", "document"]);
const ICON_TYPES = new Set(["image/png", "image/jpeg", "image/webp", "image/gif", "image/svg+xml"]);
const UNITS = { angstrom: "Å", degree: "°", "g/cm3": "g/cm³", kelvin: "K", count: "" };
const UNSUPPORTED = ["oneOf", "anyOf", "allOf", "if", "not"];

const plain = (s) => String(s).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "").trim();

function firstSentence(text) {
  const t = text.trim();
  for (let i = 0; i < t.length; i++) {
    if (t[i] === "\n") return t.slice(0, i).trim();
    if (".!?".includes(t[i]) && (i + 1 === t.length || /\s/.test(t[i + 1]))) return t.slice(0, i + 1);
  }
  return t;
}

function icon(tool) {
  for (const i of Array.isArray(tool.icons) ? tool.icons : []) {
    const m = typeof i?.src === "string" && /^data:([^;,]+)[^,]*,/i.exec(i.src);
    if (m && ICON_TYPES.has(m[1].toLowerCase())) return i.src;
  }
  return null;
}

function readMarker(tool) {
  const m = tool?._meta?.[MARKER];
  if (m === undefined) return { absent: true };
  if (!m || typeof m !== "object") return { error: "its Builder marker is not an object" };
  if (!Number.isInteger(m.contract) || m.contract < 0) return { error: "bad contract" };
  if (m.contract !== 1) return { unsupported: m.contract };
  if (m.apply !== "new_document" && m.apply !== "insert") return typeof m.apply === "string" ? { unknownApply: m.apply } : { error: "bad apply" };
  const category = CATEGORIES.includes(m.category) ? m.category : "other";
  const document = m.document ?? "none";
  if (!["none", "optional", "required"].includes(document)) return { error: "bad document" };
  if (m.stochastic !== undefined && typeof m.stochastic !== "boolean") return { error: "bad stochastic" };
  const es = m.expectedSeconds;
  if (es != null && !(typeof es === "number" && es >= 0)) return { error: "bad expectedSeconds" };
  return { marker: { contract: 1, category, apply: m.apply, document, stochastic: Boolean(m.stochastic), expectedSeconds: es ?? undefined } };
}

function resolve(schema, root) {
  let cur = schema === true ? {} : { ...schema };
  for (let depth = 0; depth < 16; depth++) {
    if (typeof cur.$ref !== "string") return cur;
    const ref = cur.$ref;
    if (!ref.startsWith("#")) throw new Error(`its $ref ${ref} is not local`);
    let target = root;
    for (const part of ref.slice(2).split("/").filter(Boolean)) target = target?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (!target || typeof target !== "object") throw new Error(`its $ref ${ref} does not resolve`);
    const { $ref, ...own } = cur;
    cur = { ...target, ...own };
  }
  throw new Error("cyclic $ref");
}

function stripNullable(s) {
  if (Array.isArray(s.anyOf) && s.anyOf.length === 2) {
    const i = s.anyOf.findIndex((o) => o?.type === "null");
    if (i >= 0) { const { anyOf, ...rest } = s; return [{ ...s.anyOf[1 - i], ...rest }, true]; }
  }
  if (Array.isArray(s.type) && s.type.length === 2 && s.type.includes("null")) return [{ ...s, type: s.type.find((t) => t !== "null") }, true];
  return [s, false];
}

function bounds(s) {
  const unit = typeof s["x-megane-unit"] === "string" ? { unit: s["x-megane-unit"], label: UNITS[s["x-megane-unit"]] ?? s["x-megane-unit"] } : null;
  return { integer: s.type === "integer", minimum: s.minimum ?? null, maximum: s.maximum ?? null,
    exclusiveMinimum: s.exclusiveMinimum ?? null, exclusiveMaximum: s.exclusiveMaximum ?? null, multipleOf: s.multipleOf ?? null, unit };
}

function readable(key) { const t = key.replace(/_/g, " "); return t.charAt(0).toUpperCase() + t.slice(1); }

function fields(object, root, prefix, level) {
  const required = Array.isArray(object.required) ? object.required : [];
  return Object.entries(object.properties ?? {}).map(([key, schema]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    const resolved = resolve(schema, root);
    let [inner, nullable] = stripNullable(resolved);
    if (nullable) inner = resolve(inner, root);
    const widget = resolved["x-megane-widget"];
    const control = WIDGETS.has(widget) ? { control: widget, ...(widget === "atom" ? { of: resolved["x-megane-of"] } : {}) } : plainControl(inner, root, path, level);
    const isRequired = required.includes(key);
    return { key, label: plain(resolved.title ?? "") || readable(key), help: resolved.description != null ? plain(resolved.description) : null,
      required: isRequired, optional: !isRequired && resolved.default === undefined, nullable,
      default: resolved.default, example: Array.isArray(resolved.examples) ? resolved.examples[0] : undefined, ...control };
  });
}

function plainControl(s, root, path, level) {
  for (const k of UNSUPPORTED) if (k in s) throw new Error(`property \`${path}\` uses \`${k}\``);
  if ("const" in s) return { control: "constant", value: s.const };
  if (Array.isArray(s.enum)) return { control: "select", options: s.enum };
  switch (s.type) {
    case "number": case "integer": return { control: "number", ...bounds(s) };
    case "string": return { control: "text", minLength: s.minLength ?? null, maxLength: s.maxLength ?? null, pattern: s.pattern ?? null };
    case "boolean": return { control: "checkbox" };
    case "object":
      if (level !== 0) throw new Error(`property \`${path}\` nests an object`);
      return { control: "fieldset", fields: fields(s, root, path, 1) };
    case "array": {
      const items = resolve(s.items ?? {}, root);
      if (items.type === "number" || items.type === "integer") {
        if (s.minItems === s.maxItems && s.minItems >= 1 && s.minItems <= 9) return { control: "vector", length: s.minItems, ...bounds(items) };
        throw new Error(`property \`${path}\` is a list of numbers without a fixed size`);
      }
      if (items.type === "object" && level === 0) return { control: "table", columns: fields(items, root, `${path}[]`, 2), minRows: s.minItems ?? 0, maxRows: s.maxItems ?? null };
      throw new Error(`property \`${path}\` is a list Builder cannot show`);
    }
    default: throw new Error(`property \`${path}\` has no single type`);
  }
}

/** §3: a tools/list result → buttons (with forms), categories, hidden and plain tools. */
export function parseTools(result) {
  const tools = Array.isArray(result) ? result : result.tools;
  const box = { buttons: [], categories: [], hidden: [], plainTools: [] };
  for (const tool of tools) {
    if (!tool || typeof tool.name !== "string") { box.hidden.push({ reason: "no name" }); continue; }
    const label = [tool.title, tool.annotations?.title].filter((t) => typeof t === "string").map(plain).find(Boolean) ?? tool.name;
    const description = typeof tool.description === "string" ? plain(tool.description) : "";
    const read = readMarker(tool);
    if (read.absent) { box.plainTools.push({ name: tool.name, label, tooltip: firstSentence(description), description, inputSchema: tool.inputSchema }); continue; }
    if (!read.marker) { box.hidden.push({ name: tool.name, label, reason: read.error ?? "unsupported" }); continue; }
    let form = null, disabledReason = null;
    try {
      const root = resolve(tool.inputSchema, tool.inputSchema);
      const f = fields(root, tool.inputSchema, "", 0);
      form = { fields: f, documentProperty: f.find((x) => x.control === "document")?.key ?? null, hasSeed: f.some((x) => x.control === "seed") };
    } catch (e) { disabledReason = `Builder cannot build a form: ${e.message}`; }
    box.buttons.push({ name: tool.name, label, tooltip: firstSentence(description), description, category: read.marker.category,
      marker: read.marker, icon: icon(tool), form, disabledReason, inputSchema: tool.inputSchema });
  }
  for (const category of CATEGORIES) {
    const names = box.buttons.filter((b) => b.category === category).map((b) => b.name);
    if (names.length) box.categories.push({ category, tools: names });
  }
  return box;
}
