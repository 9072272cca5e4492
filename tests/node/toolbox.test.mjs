// parseToolList's two ways in Node (issue 15): the fast way (each tool's schemas stay in
// JavaScript; only the rest of the list and each distinct inputSchema cross as JSON text) and the
// general way (the whole list through JSON text into Rust and the whole toolbox back) must give
// the same toolbox for the same list. A list whose tools are not plain objects takes the general
// way, so wrapping one tool in an object with another prototype (same JSON) compares the two.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, test } from "node:test";
import { ROOT, FIXTURES } from "./harness.mjs";

let pkg;
before(async () => {
  pkg = await import(join(ROOT, "pkg", "megane_builder_client.js"));
  await pkg.default({ module_or_path: readFileSync(join(ROOT, "pkg", "megane_builder_client_bg.wasm")) });
});

const recorded = JSON.parse(readFileSync(join(FIXTURES, "megane-recorded/tools-list.json"), "utf8")).tools;
const MARKER = "io.github.megane-labs/builder";
const marked = (extra = {}) => ({ [MARKER]: { contract: 1, apply: "new_document", ...extra } });
/** The same tool with a prototype other than Object.prototype: same JSON, general way. */
const general = (tool) => Object.assign(Object.create({ inherited: 1 }), tool);

function lists() {
  const tools = [
    ...structuredClone(recorded),
    { name: "plain", description: "  An ordinary MCP tool.\r\nMore.  ", inputSchema: { type: "object" } },
    { name: "plain-no-schema" },
    { name: "no-schema", _meta: marked() },
    { name: "null-schema", _meta: marked(), inputSchema: null, outputSchema: null },
    { name: "string-schema", _meta: marked(), inputSchema: "not a schema" },
    { name: "bad-pattern", _meta: marked(), inputSchema: { type: "object", properties: { x: { type: "string", pattern: "(unclosed" } } } },
    { name: "oneof", _meta: marked(), inputSchema: { type: "object", properties: { m: { oneOf: [{ type: "string" }, { type: "integer" }] } } } },
    { name: "stochastic", title: " Stochastic\u202E one ", _meta: marked({ stochastic: true, category: "bulk" }), inputSchema: { type: "object", properties: { n: { type: "integer" } } } },
    { name: "icon", _meta: marked(), inputSchema: { type: "object" }, icons: [{ src: "https://x/i.png" }, { src: "data:image/png;base64,AAAA", mimeType: "image/png" }] },
    { name: "v2", _meta: { [MARKER]: { contract: 2, apply: "new_document" } }, inputSchema: { type: "object" } },
    { name: "weird-apply", _meta: marked({ apply: "explode" }), inputSchema: { type: "object" } },
    { name: "bad-marker", _meta: { [MARKER]: "yes" } },
    { name: "recorded_liquid_box", ...structuredClone(recorded[0]), title: "Duplicate name" },
    { name: "", _meta: marked() },
    42,
    null,
    ["an", "array"],
    { name: "undefined-schema", _meta: marked(), inputSchema: undefined, outputSchema: () => 1 },
    { name: "desc", description: "Tab\there, bidi \u2066x\u2069, line\u2028two. Rest", _meta: marked(), inputSchema: { type: "object", properties: { d: { type: "object", "x-megane-widget": "document" } }, required: ["d"] } },
  ];
  tools[tools.length - 2].inputSchema = undefined;
  // One schema object shared by two tools (stringified once), and descriptions whose tooltip is
  // cut from the host's text in UTF-16 units (astral and accented characters before the stop).
  const shared = { type: "object", properties: { n: { type: "integer", minimum: 1 } } };
  tools.push(
    { name: "shared-a", description: "Emoji \u{1F9EA} tube, café. Rest of it.", _meta: marked(), inputSchema: shared },
    { name: "shared-b", description: "  Needs a trim. Then more.  ", _meta: marked(), inputSchema: shared },
    { name: "plain-astral", description: "\u{1D54F} only, no stop", inputSchema: shared },
    { name: "tooltip-not-prefix", description: "First  line\twith tab.\nSecond.", _meta: marked(), inputSchema: shared },
    // annotations: only `title` is read (the page sends no more of a plain object).
    { name: "ann-only", annotations: { readOnlyHint: true, title: "  From annotations ", title2: 1 }, _meta: marked(), inputSchema: shared },
    { name: "ann-class", annotations: Object.assign(Object.create({ title: "inherited" }), { readOnlyHint: true }), _meta: marked(), inputSchema: shared },
    { name: "ann-own-class", annotations: Object.assign(Object.create({ inherited: 1 }), { title: "Own title" }), _meta: marked(), inputSchema: shared },
    { name: "ann-json", annotations: { title: { toJSON: () => "From toJSON" } }, _meta: marked(), inputSchema: shared },
    { name: "ann-hidden", annotations: Object.defineProperty({}, "title", { value: "Not enumerable" }), _meta: marked(), inputSchema: shared },
    { name: "ann-list", annotations: ["title"], _meta: marked(), inputSchema: shared },
    { name: "ann-number-title", title: "", annotations: { title: 5 }, _meta: marked(), inputSchema: shared },
  );
  return [
    { tools },
    [{ tools: tools.slice(0, 5) }, { tools: tools.slice(5) }],
    tools,
    { tools: recorded.map((t, i) => ({ ...structuredClone(t), name: `t${i}` })), nextCursor: "x" },
  ];
}

/** The same list with its first tool (or page's first tool) taken the general way. */
function generalWay(list) {
  if (Array.isArray(list)) {
    if (list[0]?.tools) return [{ ...list[0], tools: [general(list[0].tools[0]), ...list[0].tools.slice(1)] }, ...list.slice(1)];
    return [general(list[0]), ...list.slice(1)];
  }
  return { ...list, tools: [general(list.tools[0]), ...list.tools.slice(1)] };
}

test("the fast and the general way give the same toolbox", () => {
  for (const [i, list] of lists().entries()) {
    const fast = pkg.parseToolList(list, "srv");
    const slow = pkg.parseToolList(generalWay(list), "srv");
    assert.equal(fast.ok, true);
    assert.deepEqual(JSON.parse(JSON.stringify(fast)), JSON.parse(JSON.stringify(slow)));
    if (i < 3) {
      // Enabled and disabled buttons, plain, hidden and malformed tools, notices: all compared.
      assert.ok(fast.buttons.some((b) => b.disabledReason) && fast.buttons.some((b) => b.form));
      assert.ok(fast.plainTools.length && fast.malformed.length && fast.unknownApply.length);
      assert.ok(fast.unsupportedContract.length && fast.notices.length);
    }
  }
});

test("the toolbox carries the host's own schema objects and a fresh form per button", () => {
  const tools = recorded.map((t, i) => ({ ...structuredClone(t), name: `t${i}` }));
  tools.push({ ...structuredClone(recorded[0]), name: "again" });
  const box = pkg.parseToolList({ tools });
  assert.equal(box.buttons.length, 4);
  box.buttons.forEach((b, i) => {
    assert.equal(b.inputSchema, tools[i].inputSchema);
    assert.equal(b.outputSchema, tools[i].outputSchema ?? null);
  });
  const [first, , , again] = box.buttons;
  assert.deepEqual(first.form, again.form);
  assert.notEqual(first.form, again.form);
  first.form.fields.length = 0;
  assert.ok(again.form.fields.length > 0);
  // Spread and structuredClone read the form like any other field.
  assert.deepEqual({ ...again }.form, again.form);
  assert.deepEqual(structuredClone(again).form, again.form);
});

test("a button's form, disabledReason and notices are made on first read, as data properties", () => {
  const tools = [
    { ...structuredClone(recorded[0]), name: "a" },
    { name: "broken", _meta: { "io.github.megane-labs/builder": { contract: 1, apply: "insert", stochastic: true } }, inputSchema: { type: "object", properties: { x: { type: "string", pattern: "(unclosed" } } } },
    { name: "b", description: "No seed.", _meta: { "io.github.megane-labs/builder": { contract: 1, apply: "new_document", stochastic: true } }, inputSchema: { type: "object", properties: { n: { type: "integer" } } } },
  ];
  const expected = JSON.parse(JSON.stringify(pkg.parseToolList(generalWay({ tools }))));
  const box = pkg.parseToolList({ tools });
  // Nothing of a schema is read until a button is looked at: a schema changed before the
  // first read is the one the form is made of (the button carries the host's object).
  tools[0].inputSchema.properties.extra = { type: "integer" };
  const [a, broken, b] = box.buttons;
  // A tooltip and description are made at parseToolList, as data properties, from the host's
  // description as it was then: a later change to the host's tool does not reach them.
  tools[2].description = "Changed. Later.";
  tools[0].description = 42;
  for (const key of ["tooltip", "description"]) assert.equal(Object.getOwnPropertyDescriptor(a, key).get, undefined);
  assert.equal(a.description, expected.buttons[0].description);
  assert.equal(Object.getOwnPropertyDescriptor(a, "description").value, a.description);
  assert.equal(a.tooltip, expected.buttons[0].tooltip);
  assert.equal(Object.getOwnPropertyDescriptor(a, "tooltip").value, a.tooltip);
  assert.ok(a.form.fields.some((f) => f.key === "extra"));
  assert.ok(!expected.buttons[0].form.fields.some((f) => f.key === "extra"));
  assert.equal(Object.getOwnPropertyDescriptor(broken, "disabledReason").get !== undefined, true);
  assert.equal(broken.disabledReason, expected.buttons[1].disabledReason);
  assert.ok(broken.disabledReason.startsWith("Builder cannot build a form"));
  assert.equal(Object.getOwnPropertyDescriptor(broken, "disabledReason").value, broken.disabledReason);
  assert.equal(broken.form, null);
  // The marker is the one the button had when the toolbox was made: a later change to the
  // button's marker object does not reach its form or notices (no seed notice without stochastic).
  b.marker.stochastic = false;
  // A button frozen before the first read gives the one value it made; assignment throws.
  Object.freeze(b);
  assert.equal(b.form, b.form);
  assert.equal(b.tooltip, "No seed.");
  assert.equal(b.description, expected.buttons[2].description);
  assert.deepEqual(b.form, expected.buttons[2].form);
  assert.throws(() => { "use strict"; b.form = null; }, TypeError);
  assert.deepEqual(b.notices, expected.buttons[2].notices);
  // Assigned before read: the assigned value stays.
  a.notices = ["mine"];
  assert.deepEqual(a.notices, ["mine"]);
  // The toolbox's notices: the server's, then every button's (the assigned ones included).
  assert.deepEqual(expected.notices, [...expected.buttons[0].notices, ...expected.buttons[2].notices]);
  assert.ok(b.notices.length > 0);
  assert.deepEqual(box.notices, ["mine", ...b.notices]);
  assert.deepEqual(JSON.parse(JSON.stringify(structuredClone(box.buttons[1]))), expected.buttons[1]);
  assert.deepEqual(Object.keys(box.buttons[2]), Object.keys(expected.buttons[2]));
});

test("every tooltip and description is made at parseToolList, as the general way makes it", () => {
  for (const list of lists()) {
    const fast = pkg.parseToolList(list, "srv");
    const slow = pkg.parseToolList(generalWay(list), "srv");
    for (const kind of ["buttons", "plainTools"]) {
      assert.equal(fast[kind].length, slow[kind].length);
      fast[kind].forEach((tool, i) => {
        for (const key of ["tooltip", "description"]) {
          const own = Object.getOwnPropertyDescriptor(tool, key);
          assert.equal(own.get, undefined, `${tool.name}.${key} is made at parseToolList`);
          assert.equal(own.value, slow[kind][i][key], `${tool.name}.${key}`);
        }
      });
    }
  }
});

test("descriptions that are not well-formed UTF-16 give the general way's texts", () => {
  // A lone surrogate, and a surrogate pair cut between two tools' descriptions.
  for (const texts of [["Bad \uD800 text. More."], ["Ends high \uD83E", "\uDDEA starts low. Rest."]]) {
    const tools = texts.map((description, i) => ({ name: `t${i}`, description, _meta: marked(), inputSchema: { type: "object" } }));
    tools.push({ name: "plain", description: texts[0] });
    const fast = pkg.parseToolList({ tools });
    const slow = pkg.parseToolList(generalWay({ tools }));
    assert.equal(fast.ok, true);
    [...fast.buttons, ...fast.plainTools].forEach((tool, i) => {
      const other = [...slow.buttons, ...slow.plainTools][i];
      assert.equal(tool.tooltip, other.tooltip);
      assert.equal(tool.description, other.description);
    });
  }
});

test("what is not a tool list is refused the same way both ways", () => {
  for (const input of [{ tools: "many" }, { no: "tools" }, [{ tools: 3 }, { tools: [] }], 42, "tools"]) {
    const fast = pkg.parseToolList(input);
    assert.equal(fast.ok, false);
    assert.ok(fast.error && !fast.error.includes("\n"), fast.error);
    if (typeof input === "object") {
      const other = Array.isArray(input) ? [general(input[0]), ...input.slice(1)] : general(input);
      assert.deepEqual(pkg.parseToolList(other), fast);
    }
  }
});
