// The README's "Call outcomes" example is tests/node/call-outcomes.ts and its edits for Builder are
// tests/node/builder-edits.ts (both compiled by tsc --strict in the tests), apart from the import
// paths and the files' header comments. (Its Node set-up block for Builder's unit tests is run by
// megane-node.test.mjs as it stands.)
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "./harness.mjs";

test("the README's narrowing example is the compiled call-outcomes.ts", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = readme.split("<!-- call-outcomes.ts -->\n```ts\n")[1]?.split("```\n")[0];
  assert.ok(block, "README has the call-outcomes.ts block");
  const source = readFileSync(join(ROOT, "tests", "node", "call-outcomes.ts"), "utf8")
    .split("\n").slice(3).join("\n")
    .replace('"../../pkg/megane_builder_client.js"', '"megane-builder-client"');
  assert.equal(block, source);
});

test("the README's edits for Builder are the compiled builder-edits.ts", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = readme.split("<!-- builder-edits -->\n```ts\n")[1]?.split("```\n")[0];
  assert.ok(block, "README has the builder-edits block");
  const source = readFileSync(join(ROOT, "tests", "node", "builder-edits.ts"), "utf8")
    .split("\n").slice(3).join("\n")
    .replaceAll('"../../pkg/megane.js"', '"megane-builder-client/megane"');
  assert.equal(block, source);
});
