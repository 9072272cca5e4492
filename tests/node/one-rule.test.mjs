// Every rule once, across languages (issue 34): what the page and the package's own modules need of
// a rule — the §4.4 unit conversion, a failed call's words (the one message table), the rendering
// of a JSON-RPC error, discovery's §3/§4.3/§4.4 findings, the TypeScript declarations, URLs and
// secrets — comes from the Rust core, and these checks read the sources for a rule written again.
// `duplicates` sees copied text, not a rule rewritten in another language, so each check looks for
// the rule itself (a conversion's factor read in JavaScript, a failure's words or shape made there,
// a fail line the page's Check decides from the marker, a type declared twice), in the syntax trees
// TypeScript's parser makes of the sources. The core's exports are checked against the rule in
// Node; what the pages show is checked in www-forms.test.mjs (units, Check), remote.test.mjs and
// megane-node.test.mjs (a JSON-RPC error), offline.test.mjs (the offline tools' words).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { before, test } from "node:test";
import ts from "typescript";
import { ROOT } from "./harness.mjs";

const JS_DIRS = ["src/js", "src/js/snippets", "www/js"];
let core;

before(async () => {
  core = await import(pathToFileURL(join(ROOT, "pkg", "megane_builder_client.js")));
  core.initSync({ module: readFileSync(join(ROOT, "pkg", "megane_builder_client_bg.wasm")) });
});

/** Every hand-written JavaScript module of the package and the page: [path, syntax tree]. */
function jsSources() {
  return JS_DIRS.flatMap((dir) => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith(".js")).map((f) => {
    const path = `${dir}/${f}`;
    return [path, ts.createSourceFile(path, readFileSync(join(ROOT, path), "utf8"), ts.ScriptTarget.Latest, true)];
  }));
}

/** Every node of `tree`, depth first. */
function nodes(tree) {
  const out = [];
  const visit = (node) => { out.push(node); ts.forEachChild(node, visit); };
  visit(tree);
  return out;
}

/** Where `node` is, for a failure message. */
const where = (path, node) => `${path}:${node.getSourceFile().getLineAndCharacterOfPosition(node.getStart()).line + 1}`;

/** The text pieces of the string and template literals of a tree (a template's fixed parts). */
function literalTexts(tree) {
  return nodes(tree).filter((n) => ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n)
    || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)).map((n) => [n, n.text]);
}

/** The Rust sources of the crate outside test modules, comments dropped: [path, text]. */
function rustSources(dir = "src") {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return rustSources(path);
    if (!entry.name.endsWith(".rs")) return [];
    const text = readFileSync(join(ROOT, path), "utf8").split(/^#\[cfg\(test\)\]/m)[0];
    return [[path, text.split("\n").filter((line) => !/^\s*\/\//.test(line)).join("\n")]];
  });
}

// ---- §4.4 units: the conversion is the core's ----

test("§4.4: no JavaScript converts a unit itself; the page's number fields call the core's conversion", () => {
  const found = [];
  for (const [path, tree] of jsSources()) {
    for (const n of nodes(tree)) {
      // A conversion's factor or offset read (`c.factor`, `{factor, offset}`) is the formula again.
      if ((ts.isPropertyAccessExpression(n) && ["factor", "offset"].includes(n.name.text))
        || (ts.isPropertyAssignment(n) && ["factor", "offset"].includes(n.name.getText()))
        || (ts.isBindingElement(n) && ["factor", "offset"].includes((n.propertyName ?? n.name).getText()))) {
        found.push(`${where(path, n)}: ${n.getText()}`);
      }
    }
  }
  assert.deepEqual(found, [], "a unit conversion written in JavaScript");
  const forms = jsSources().find(([path]) => path === "www/js/forms.js")[1];
  const called = new Set(nodes(forms).filter(ts.isCallExpression).map((c) => c.expression.getText()));
  for (const name of ["toShownUnit", "toCanonicalUnit"]) assert.ok(called.has(name), `forms.js calls ${name}`);
});

test("§4.4: the core's conversion exports follow each unit's conversions both ways", () => {
  const schema = { type: "object", properties: {} };
  for (const unit of ["angstrom", "degree", "g/cm3", "kelvin", "count", "mol/L"]) schema.properties[unit.replace("/", "_")] = { type: "number", "x-megane-unit": unit };
  const tool = { name: "units", inputSchema: schema, _meta: { "io.github.megane-labs/builder": { contract: 1, category: "other", apply: "new_document" } } };
  const [button] = core.parseToolList({ tools: [tool] }, "x").buttons;
  let checked = 0;
  for (const field of button.form.fields) {
    const { unit, conversions } = field.unit;
    for (const c of conversions) {
      for (const canonical of [0, 1, 14.4, 298.15, -3.5e-4]) {
        const shown = core.toShownUnit(unit, c.unit, canonical);
        assert.ok(Math.abs(shown - (canonical * c.factor + c.offset)) <= 1e-12 * Math.max(1, Math.abs(shown)), `${unit} → ${c.unit}: ${canonical}`);
        assert.ok(Math.abs(core.toCanonicalUnit(unit, c.unit, shown) - canonical) <= 1e-9 * Math.max(1, Math.abs(canonical)), `${c.unit} → ${unit}`);
        checked += 1;
      }
    }
    // A conversion the unit does not have (or an unknown unit) leaves the value as it is.
    assert.equal(core.toShownUnit(unit, "furlong", 7), 7);
  }
  assert.equal(checked, 5 * (4 + 2 + 2 + 2 + 1));
});

// ---- §6 a failed call's words: the one message table ----

/** The core's words: its lines for a cancel, the offline tools closed, a timeout (the fixed parts
 *  around the seconds) and a server failure. */
function coreWords() {
  const timeout = core.callFailure("timedOut", 7000).error;
  assert.match(timeout, /\b7 s\b/);
  return [
    core.callFailure("cancelled").error, core.callFailure("closed").error, ...timeout.split("7").filter((s) => s.trim().length > 3),
    "The server failed: ", "The tool returned an invalid result: ", "The tool reported an error.", "The server sent no result.",
  ];
}

test("§6: no JavaScript writes a failed call's words or makes its outcome; the core's table is the one place", () => {
  const words = coreWords();
  const found = [];
  for (const [path, tree] of jsSources()) {
    for (const [n, text] of literalTexts(tree)) {
      for (const w of words) if (text.includes(w)) found.push(`${where(path, n)}: "${text}" holds the core's "${w}"`);
    }
    // `{ok: false, error: <words>, cancelled | timedOut}` made here is a failure's shape and words again.
    for (const n of nodes(tree).filter(ts.isObjectLiteralExpression)) {
      const keys = new Map(n.properties.filter(ts.isPropertyAssignment).map((p) => [p.name.getText(), p.initializer]));
      const error = keys.get("error");
      if ((keys.has("cancelled") || keys.has("timedOut")) && error && (ts.isStringLiteralLike(error) || ts.isTemplateExpression(error) || ts.isIdentifier(error))) {
        found.push(`${where(path, n)}: ${n.getText()}`);
      }
    }
  }
  assert.deepEqual(found, [], "a failed call's words written in JavaScript");
});

test("§6: the Rust sources write a failed call's words only in the message table", () => {
  const literals = [/"Cancelled\./, /"The server failed: /, /"The tool returned an invalid result: /, /"The tool reported an error\./,
    /"The server sent no result\./, /No answer (from the server )?within/, /offline tools were closed/];
  const found = [];
  for (const [path, text] of rustSources()) {
    if (path === "src/wire/messages.rs") continue;
    for (const pattern of literals) if (pattern.test(text)) found.push(`${path}: ${pattern}`);
  }
  assert.deepEqual(found, []);
});

test("§6: the core's failure outcomes: a cancel, the offline tools closed, a timeout rounded up", () => {
  assert.deepEqual(core.callFailure("cancelled"), { ok: false, error: "Cancelled.", cancelled: true });
  assert.deepEqual(core.callFailure("closed"), { ok: false, error: "Cancelled: the offline tools were closed.", cancelled: true });
  assert.deepEqual(core.callFailure("timedOut", 300), { ok: false, error: "No answer within 1 s; it was stopped (timeout).", timedOut: true });
  assert.equal(core.callFailure("timedOut", 60000).error, "No answer within 60 s; it was stopped (timeout).");
  assert.notEqual(core.callFailure("cancelled"), core.callFailure("cancelled"), "a fresh object each time");
  assert.throws(() => core.callFailure("late"), /unknown kind/);
});

// ---- §6 a JSON-RPC error: one rendering ----

test("§6: a JSON-RPC error has one rendering: no source puts its code in the line", () => {
  const found = [];
  for (const [path, text] of rustSources()) {
    for (const m of text.matchAll(/"[^"\n]*JSON-RPC error[^"\n]*"/g)) found.push(`${path}: ${m[0]}`);
  }
  for (const [path, tree] of jsSources()) {
    for (const [n, text] of literalTexts(tree)) if (/JSON-RPC error/.test(text)) found.push(`${where(path, n)}: ${text}`);
  }
  assert.deepEqual(found, []);
  // The bytes path (a host's JSON-RPC response): the line, and -32602 refuses the arguments.
  const [button] = core.parseToolList(JSON.parse(readFileSync(join(ROOT, "tests", "fixtures", "megane-recorded", "tools-list.json"), "utf8")), "x").buttons;
  const answer = (code) => ({ jsonrpc: "2.0", id: 3, error: { code, message: "boom\nTraceback (most recent call last):" } });
  assert.deepEqual(core.interpretCall(button, answer(-32603)), { ok: false, error: "The server failed: boom" });
  assert.deepEqual(core.interpretCall(button, answer(-32602)), { ok: false, error: "The server failed: boom", refused: true });
});

// ---- §3/§4.3/§4.4 discovery's findings: the page's Check shows them, never decides them again ----

test("§4.3/§4.4: the page's Check makes no fail line from the marker or the form; it shows each tool's notices", () => {
  const [, check] = jsSources().find(([path]) => path === "www/js/check.js");
  const found = [];
  for (const call of nodes(check).filter(ts.isCallExpression)) {
    const [status] = call.arguments;
    if (call.expression.getText() !== "line" || !status || !ts.isStringLiteral(status) || status.text !== "fail") continue;
    // The conditions the fail line is under, up to its function (the marker read against the form;
    // §10's rerun of a stochastic tool with the same seed is the page's own check).
    for (let up = call.parent; up && !ts.isFunctionLike(up); up = up.parent) {
      if (ts.isIfStatement(up) && /hasSeed|documentProperty|\.document\b/.test(up.expression.getText())) {
        found.push(`${where("www/js/check.js", call)}: if (${up.expression.getText()}) ${call.getText()}`);
      }
    }
  }
  assert.deepEqual(found, [], "a §4.3/§4.4 rule decided again in the page");
  assert.match(check.getText(), /button\.notices/, "each tool's findings are discovery's");
});

test("§4.3/§4.4: Check shows each of discovery's findings once, in its words, and nothing else about them", async () => {
  // The page's own copy of the package (www/pkg, as the page loads it), initialised from its bytes.
  const pagePkg = await import(pathToFileURL(join(ROOT, "www", "pkg", "megane_builder_client.js")));
  pagePkg.initSync({ module: readFileSync(join(ROOT, "www", "pkg", "megane_builder_client_bg.wasm")) });
  const { checkServer } = await import(pathToFileURL(join(ROOT, "www", "js", "check.js")));
  // A stochastic tool with no seed, a document tool with no document property and a widget this
  // Builder does not know: three findings of discovery (§4.4, §4.3, §4.2), none a refusal.
  const tool = {
    name: "odd", title: "Odd tool", description: "A tool the page can run but not fully follow.",
    inputSchema: { type: "object", properties: { n: { type: "integer", default: 1, "x-megane-widget": "dial", title: "N" } } },
    outputSchema: { type: "object" },
    _meta: { "io.github.megane-labs/builder": { contract: 1, category: "other", apply: "new_document", document: "required", stochastic: true } },
  };
  const toolbox = pagePkg.parseToolList({ tools: [tool] }, "x");
  const [button] = toolbox.buttons;
  assert.equal(button.notices.length, 3, button.notices.join(" | "));
  const lines = [];
  await checkServer({ toolbox, server: { call: async () => assert.fail("no run: the tool needs an open structure") } }, { library: [], document: null }, (l) => lines.push(l));
  const fails = lines.filter((l) => l.status === "fail");
  assert.deepEqual(fails.map((l) => l.detail), button.notices, "each finding once, in discovery's words");
  assert.ok(!lines.some((l) => l.status !== "fail" && /seed|document|widget/i.test(`${l.text} ${l.detail ?? ""}`)), JSON.stringify(lines));
});

// ---- TypeScript: one declaration per type ----

/** The names a declaration file declares (interfaces, type aliases, classes), each with its node. */
function declared(file) {
  const tree = ts.createSourceFile(file, readFileSync(join(ROOT, file), "utf8"), ts.ScriptTarget.Latest, true);
  const out = new Map();
  for (const n of tree.statements) {
    if ((ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n) || ts.isClassDeclaration(n)) && n.name) out.set(n.name.text, n);
  }
  return out;
}

test("one declaration per type: a type of the core API is the core's in the megane, offline and loader modules", () => {
  const main = declared("pkg/megane_builder_client.d.ts");
  assert.ok(main.has("Snapshot") && main.has("CallOutcome") && main.has("BuilderResult"), "the core's declarations (types.d.ts and the classes)");
  const found = [];
  for (const file of ["src/js/megane.d.ts", "src/js/offline.d.ts", "src/js/loader.d.ts"]) {
    for (const [name, node] of declared(file)) {
      // Declared again under the core's name: it must be made from the core's types (an alias
      // over `Core.…`), not written out with its own members.
      if (main.has(name) && !(ts.isTypeAliasDeclaration(node) && /\bCore\.\w+/.test(node.type.getText()))) {
        found.push(`${file}: ${name}`);
      }
    }
  }
  assert.deepEqual(found, [], "a type declared twice");
});

// ---- URLs and secrets: the core's ----

test("URLs and secrets: no JavaScript splits a URL or hides a token by hand", () => {
  const found = [];
  for (const [path, tree] of jsSources()) {
    for (const n of nodes(tree)) {
      // `.split("?")`, `.indexOf("#")`, `.lastIndexOf("@")`, … on a URL's separators.
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)
        && ["split", "indexOf", "lastIndexOf", "slice", "substring"].includes(n.expression.name.text)
        && n.arguments.some((a) => ts.isStringLiteral(a) && ["?", "#", "@", "://", "//"].includes(a.text))) {
        found.push(`${where(path, n)}: ${n.getText()}`);
      }
      // A pattern over a URL's query, user info or a token (`/[?#].*/`, `/token=[^&]*/`, `/Bearer \S+/`).
      if (ts.isRegularExpressionLiteral(n) && /\[\?#\]|\\\?|token|bearer|:\/\/|@/i.test(n.text)) {
        found.push(`${where(path, n)}: ${n.text}`);
      }
      // `.replace(token, …)` / `.replaceAll(secret, …)`: a secret taken out of a text by hand.
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && ["replace", "replaceAll"].includes(n.expression.name.text)
        && /token|secret|password/i.test(n.arguments[0]?.getText() ?? "")) {
        found.push(`${where(path, n)}: ${n.getText()}`);
      }
    }
  }
  assert.deepEqual(found, []);
});
