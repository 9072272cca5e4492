// The README's "Call outcomes" example is tests/node/call-outcomes.ts (which tsc --strict compiles
// in the tests), apart from the import path and the file's header comment.
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
