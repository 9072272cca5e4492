// The toolbox for the page, the JavaScript half of the package's wasm bindings (imported by
// src/wasm/toolbox.rs; wasm-bindgen copies this module into pkg/snippets). parseToolList's fast
// way: `packTools` reduces the host's tools/list for Rust (the schemas and descriptions left
// here), `assembleToolbox` makes the toolbox objects from the text Rust wrote
// (`contract::discovery::page`'s `PageToolbox`), with each button's form, disabledReason and
// notices made on first read; `assembleListed` does the same for connect()'s toolbox.

import { lazy } from "./lazy.js";

const enumerable = Object.prototype.propertyIsEnumerable;
const own = (o, k) => (enumerable.call(o, k) ? o[k] : undefined);
const asSent = (v) => (v === undefined || typeof v === "function" || typeof v === "symbol" ? null : v);
const plain = (o) => {
  const p = Object.getPrototypeOf(o);
  return (p === Object.prototype || p === null) && typeof o.toJSON !== "function";
};
const encoder = new TextEncoder(), NONE = 0xffffffff;
// Of a tool's plain `annotations` object discovery reads only `title`: the rest (the hints) is not sent.
const titleOf = (a) => (a !== null && typeof a === "object" && !Array.isArray(a) && plain(a) ? { title: own(a, "title") } : a);
export function packTools(list) {
  try {
    const holders = [], descriptions = [], copies = [];
    const reduce = (tool) => {
      if (tool === null || typeof tool !== "object" || Array.isArray(tool)) return tool;
      if (!plain(tool)) throw new TypeError("not a plain object");
      const copy = {};
      let description;
      for (const key of Object.keys(tool)) {
        if (key === "description") description = tool[key];
        else if (key === "annotations") copy[key] = titleOf(tool[key]);
        else if (key !== "inputSchema" && key !== "outputSchema") copy[key] = tool[key];
      }
      copy.inputSchema = holders.length;
      holders.push(tool);
      descriptions.push(typeof description === "string" ? description : null);
      copies.push(copy);
      return copy;
    };
    const tools = (a) => (Array.isArray(a) ? a.map(reduce) : a);
    let root;
    if (Array.isArray(list)) {
      root = list.map((item) => {
        const r = reduce(item);
        if (r !== item && Array.isArray(r.tools)) r.tools = tools(r.tools);
        return r;
      });
    } else if (list !== null && typeof list === "object" && plain(list)) {
      root = Object.assign({}, list);
      if ("tools" in root) root.tools = tools(root.tools);
    } else {
      return null;
    }
    // The list's text and each description as UTF-8 in one buffer (native encoding, no escaping).
    const text = JSON.stringify(root);
    let units = text.length;
    for (const d of descriptions) {
      if (d === null) continue;
      if (d.isWellFormed?.() === false) return null;
      units += d.length;
    }
    const bytes = new Uint8Array(3 * units), lengths = new Uint32Array(descriptions.length + 1);
    let at = (lengths[0] = encoder.encodeInto(text, bytes).written);
    descriptions.forEach((d, i) => {
      lengths[i + 1] = d === null ? NONE : encoder.encodeInto(d, bytes.subarray(at)).written;
      if (d !== null) at += lengths[i + 1];
    });
    return { bytes: bytes.subarray(0, at), lengths, holders, descriptions, copies };
  } catch {
    return null;
  }
}
// connect()'s toolbox: every tool through `attach`, every button then through `button` (its lazy parts).
function finishToolbox(box, attach, button) {
  box.buttons.forEach((b, i) => {
    attach(b);
    button(b, i);
  });
  box.plainTools.forEach(attach);
  box.ok = true;
  return box;
}
// A deferred button's form, disabledReason and notices: made together on the first read of any of
// them by `resolve` (Rust) from the schema, label and marker the button had when it was made. The
// same as `lazy` (an ordinary data property once read; on a frozen button the one value built),
// with accessors shared by every button and the state in a non-enumerable symbol property, so a
// toolbox costs no closures per button (and its buttons share their shapes). The buttons of one
// toolbox share `seen`: schema text → the serial of its cache entry and its form's text, so a
// schema whose text an earlier button sent is named by its serial and its form text comes back
// once (see `deferred_part`).
const DEFERRED = Symbol("deferred");
const resolvePart = (s) => {
  let text;
  try {
    text = JSON.stringify(s.schema);
  } catch {}
  const known = typeof text === "string" ? s.seen.get(text) : undefined;
  const p = s.resolve(known === undefined ? text : known.serial, s.schema, s.label, JSON.stringify(s.marker));
  if (p[1] === true) p[1] = known.form;
  else if (p[0] !== null && typeof text === "string") s.seen.set(text, { serial: p[0], form: p[1] });
  return p;
};
const partOf = (s) => (s.part ??= resolvePart(s));
const deferredProperty = (key, build) => ({
  get() {
    const s = this[DEFERRED];
    if (s[key] === undefined) s[key] = build(s);
    if (Object.getOwnPropertyDescriptor(this, key)?.configurable) {
      Object.defineProperty(this, key, { value: s[key], writable: true, enumerable: true, configurable: true });
    }
    return s[key];
  },
  set(next) {
    if (!Object.getOwnPropertyDescriptor(this, key)?.configurable) {
      throw new TypeError(`Cannot assign to read only property '${key}' of object`);
    }
    Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
  },
  enumerable: true,
  configurable: true,
});
const deferredProperties = {
  form: deferredProperty("form", (s) => { const p = partOf(s); return p[1] === null ? null : JSON.parse(p[1]); }),
  disabledReason: deferredProperty("disabledReason", (s) => partOf(s)[2]),
  notices: deferredProperty("notices", (s) => JSON.parse(partOf(s)[3])),
};
// Each button is made afresh in one order (the general way's key order), its lazy parts added as
// new accessors (never a data property redefined, which sends V8 to slow dictionary objects), so
// every button of every toolbox shares one shape. `text` is the toolbox as Rust wrote it for the
// page (`PageToolbox`): a tool is named by its index `k` among the host's tools, whose name it
// keeps; its tooltip and description are made by the §3 rule at parseToolList, each a string or
// `[start, end]`, the slice of the host's description it is (UTF-16 units). Each button's marker
// is a fresh object; the deferred part reads the one it was made from (never handed out), so a
// later change to the button's marker object does not reach its form, disabledReason or notices.
const lazyHead = { form: deferredProperties.form, disabledReason: deferredProperties.disabledReason };
export function assembleToolbox(text, packed, resolve) {
  const { holders, descriptions, copies } = packed;
  const page = JSON.parse(text);
  const serverId = page.serverId, markers = page.markers;
  const made = (k, t) => (typeof t === "string" ? t : descriptions[k].slice(t[0], t[1]));
  const seen = new Map();
  const buttons = page.buttons.map(([k, label, m, icon, tooltip, description]) => {
    const h = holders[k], sent = markers[m];
    const inputSchema = asSent(own(h, "inputSchema"));
    const marker = { ...sent };
    const b = { serverId, name: copies[k].name, label, tooltip: made(k, tooltip), description: made(k, description),
      category: sent.category, marker, icon };
    Object.defineProperties(b, lazyHead);
    b.inputSchema = inputSchema;
    b.outputSchema = asSent(own(h, "outputSchema"));
    Object.defineProperty(b, "notices", deferredProperties.notices);
    Object.defineProperty(b, DEFERRED, { value: { resolve, seen, schema: inputSchema, label, marker: sent,
      part: undefined, form: undefined, disabledReason: undefined, notices: undefined } });
    return b;
  });
  const plainTools = page.plainTools.map(([k, label, tooltip, description]) => ({ name: copies[k].name, label,
    tooltip: made(k, tooltip), description: made(k, description), inputSchema: asSent(own(holders[k], "inputSchema")),
    outputSchema: asSent(own(holders[k], "outputSchema")) }));
  const server = page.notices;
  const box = { serverId, buttons, categories: page.categories, unsupportedContract: page.unsupportedContract,
    unknownApply: page.unknownApply, malformed: page.malformed, plainTools, notices: server, ok: true };
  // The server's notices, then each button's (as parse_tool_list orders them).
  lazy(box, "notices", () => server.concat(...buttons.map((b) => b.notices)));
  return box;
}
// connect()'s toolbox (see `listed_toolbox_to_js`): schemas and forms parsed on first read.
export function assembleListed(text, forms, formIndex, schemas) {
  const box = JSON.parse(text);
  const attach = (tool) => {
    const k = tool.inputSchema;
    lazy(tool, "inputSchema", () => JSON.parse(schemas[k]));
    const o = tool.outputSchema;
    if (o !== null) lazy(tool, "outputSchema", () => JSON.parse(schemas[o]));
  };
  const button = (b, i) => {
    if (formIndex[i] >= 0) lazy(b, "form", () => JSON.parse(forms[formIndex[i]]));
  };
  return finishToolbox(box, attach, button);
}
