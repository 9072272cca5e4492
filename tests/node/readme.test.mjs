// The README's "Call outcomes" example is tests/node/call-outcomes.ts and its edits for Builder are
// tests/node/builder-edits.ts (both compiled by tsc --strict in the tests), apart from the import
// paths and the files' header comments. (Its Node set-up block for Builder's unit tests is run by
// megane-node.test.mjs as it stands.)
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "./harness.mjs";

/** README's block after `<!-- marker -->` is `file` (tests/node/), without the file's `header` lines
 *  and with its relative import path written as the package's name. */
function assertReadmeBlock(marker, file, header, path, name) {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = readme.split(`<!-- ${marker} -->\n\`\`\`ts\n`)[1]?.split("```\n")[0];
  assert.ok(block, `README has the ${marker} block`);
  const source = readFileSync(join(ROOT, "tests", "node", file), "utf8")
    .split("\n").slice(header).join("\n")
    .replaceAll(`"${path}"`, `"${name}"`);
  assert.equal(block, source);
}

test("the README's narrowing example is the compiled call-outcomes.ts", () => {
  assertReadmeBlock("call-outcomes.ts", "call-outcomes.ts", 3, "../../pkg/megane_builder_client.js", "megane-builder-client");
});

test("the README's edits for Builder are the compiled builder-edits.ts", () => {
  assertReadmeBlock("builder-edits", "builder-edits.ts", 3, "../../pkg/megane.js", "megane-builder-client/megane");
});
