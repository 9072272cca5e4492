// Strict gate over one `conformance client --suite all` run of @modelcontextprotocol/conformance.
// Usage: node conformance_gate.mjs <leg> <results-dir> <suite-stdout> <scenario-list> <known-failures>
//   leg:            a label such as "0.2.0-alpha.12 2025-11-25 node/auto" (first two words + last are matched
//                   against the known-failures file: "<suite-version> <spec-version> <client>/<protocol>")
//   results-dir:    the suite's --output-dir (one <scenario>-<timestamp>/checks.json per scenario)
//   suite-stdout:   what the suite printed (its "=== SUITE SUMMARY ===" block is parsed strictly)
//   scenario-list:  the output of `conformance list --client --spec-version …` (the scenarios that must run)
//   known-failures: lines "<suite-version> <spec-version> <client>/<protocol> <scenario> # why"
// A scenario passes when its checks.json has at least one SUCCESS and no FAILURE or WARNING, the summary
// line agrees with checks.json, and the driver printed its last line. The gate fails (exit 1) on: a
// scenario that fails and is not a known failure; a known failure that now passes (so the list stays
// honest); a scenario that reports 0 checks; a listed scenario that did not run; anything in the summary
// it does not recognise. auth/* scenarios (the MCP authorization flow, src/mcp/auth) gate like the rest
// (issue 13); the table counts them apart.
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";

const [leg, resultsDir, stdoutFile, listFile, knownFile] = process.argv.slice(2);
if (!knownFile) {
  console.error("usage: conformance_gate.mjs <leg> <results-dir> <suite-stdout> <scenario-list> <known-failures>");
  process.exit(2);
}
const problems = [];
const [suiteVersion, specVersion, clientMode] = (() => {
  const w = leg.split(/\s+/);
  return [w[0], w[1], w.at(-1)];
})();

// 1. The scenarios the suite says it has for this spec version.
const expected = [];
for (const line of readFileSync(listFile, "utf8").split("\n")) {
  const m = /^ {2}- (\S+) \[[^\]]*\]$/.exec(line);
  if (m) expected.push(m[1]);
  else if (line.trim() !== "" && !/^Client scenarios/.test(line)) problems.push(`unrecognised line in the scenario list: ${JSON.stringify(line)}`);
}
if (expected.length === 0) problems.push("the scenario list is empty");

// 2. The summary block, parsed strictly.
const out = readFileSync(stdoutFile, "utf8").split("\n");
const start = out.indexOf("=== SUITE SUMMARY ===");
const summary = new Map();
let total = null;
if (start < 0) problems.push("no '=== SUITE SUMMARY ===' in the suite's output");
else {
  for (const line of out.slice(start + 1)) {
    let m;
    if (line.trim() === "") continue;
    if ((m = /^([✓✗]) (\S+): (\d+) passed, (\d+) failed(?:, (\d+) warnings)?$/.exec(line))) {
      summary.set(m[2], { passed: +m[3], failed: +m[4], warnings: +(m[5] ?? 0), mark: m[1] });
    } else if ((m = /^- (\S+): skipped$/.exec(line))) {
      summary.set(m[1], { skipped: true });
    } else if ((m = /^Total: (\d+) passed, (\d+) failed, (\d+) warnings(?:, \d+ skipped)?$/.exec(line))) {
      total = m;
      break;
    } else problems.push(`unrecognised summary line: ${JSON.stringify(line)}`);
  }
  if (!total) problems.push("no 'Total:' line after the summary");
}

// 3. Each scenario's checks.json (the newest directory for the scenario).
// The drivers print this line last, so a client that timed out or crashed is caught (the suite's summary
// does not say so in --suite mode).
const FINISHED = "mbc-conformance-driver: finished";

function resultDirOf(scenario) {
  const parts = scenario.split("/");
  const dir = join(resultsDir, ...parts.slice(0, -1));
  const base = parts.at(-1);
  if (!existsSync(dir)) return null;
  const re = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}-\\d{4}-\\d\\d-\\d\\dT`);
  const dirs = readdirSync(dir).filter((d) => re.test(d)).sort();
  return dirs.length === 0 ? null : join(dir, dirs.at(-1));
}

function checksOf(dir) {
  const file = join(dir, "checks.json");
  if (!existsSync(file)) return null;
  const checks = JSON.parse(readFileSync(file, "utf8"));
  if (!Array.isArray(checks)) throw new Error(`${file} is not an array`);
  return checks;
}

function finished(dir) {
  const file = join(dir, "stdout.txt");
  return existsSync(file) && readFileSync(file, "utf8").split("\n").includes(FINISHED);
}

const known = new Map();
for (const raw of readFileSync(knownFile, "utf8").split("\n")) {
  const line = raw.replace(/#.*/, "").trim();
  if (!line) continue;
  const [sv, spec, cm, scenario] = line.split(/\s+/);
  if (sv === suiteVersion && spec === specVersion && cm === clientMode) known.set(scenario, raw.split("#")[1]?.trim() ?? "");
}

const rows = [];
let gatedPass = 0;
let gated = 0;
for (const scenario of expected) {
  const auth = scenario.startsWith("auth/");
  const s = summary.get(scenario);
  let checks = null;
  const dir = resultDirOf(scenario);
  try {
    checks = dir && checksOf(dir);
  } catch (e) {
    problems.push(`${scenario}: ${e.message}`);
  }
  const count = (st) => (checks ?? []).filter((c) => c.status === st).length;
  const ok = count("SUCCESS");
  const failed = count("FAILURE");
  const warnings = count("WARNING");
  let verdict;
  if (!s) verdict = "did not run (missing from the summary)";
  else if (s.skipped) verdict = "skipped";
  else if (!checks) verdict = "no checks.json";
  else if (s.passed !== ok || s.failed !== failed || s.warnings !== warnings)
    verdict = `summary (${s.passed}/${s.failed}/${s.warnings}) disagrees with checks.json (${ok}/${failed}/${warnings})`;
  else if (ok + failed + warnings === 0) verdict = "0 checks";
  else if (!finished(dir)) verdict = "FAIL: the client did not finish (timed out or crashed)";
  else if (failed || warnings) verdict = "FAIL";
  else verdict = "pass";
  const failedNames = (checks ?? []).filter((c) => c.status === "FAILURE" || c.status === "WARNING").map((c) => c.id);
  rows.push({ scenario, auth, verdict, ok, total: ok + failed + warnings, failedNames });
  gated++;
  if (verdict === "pass") {
    gatedPass++;
    if (known.has(scenario)) problems.push(`${scenario} passes but is listed as a known failure: remove it from the list`);
  } else if (!known.has(scenario) || !verdict.startsWith("FAIL") && verdict !== "0 checks") {
    problems.push(`${scenario}: ${verdict}${failedNames.length ? ` (${[...new Set(failedNames)].join(", ")})` : ""}`);
  }
}
for (const name of summary.keys()) if (!expected.includes(name)) problems.push(`${name} ran but is not in the scenario list`);
for (const name of known.keys()) if (!expected.includes(name)) problems.push(`known failure ${name} is not a scenario of this leg`);

console.log(`conformance ${leg}:`);
for (const r of rows) {
  const tag = known.has(r.scenario) && r.verdict !== "pass" ? ` (known: ${known.get(r.scenario)})` : "";
  const detail = r.failedNames.length ? ` [${[...new Set(r.failedNames)].join(", ")}]` : "";
  console.log(`  ${r.verdict === "pass" ? "✓" : "✗"} ${r.scenario}: ${r.ok}/${r.total} checks, ${r.verdict}${tag}${detail}`);
}
const authRows = rows.filter((r) => r.auth);
const plainRows = rows.filter((r) => !r.auth);
console.log(
  `  ${gatedPass}/${gated} scenarios pass (non-auth: ${plainRows.filter((r) => r.verdict === "pass").length}/${plainRows.length}; auth: ${authRows.filter((r) => r.verdict === "pass").length}/${authRows.length})`,
);
if (problems.length) {
  console.log(`conformance ${leg}: GATE FAILED`);
  for (const p of problems) console.log(`  - ${p}`);
  process.exit(1);
}
console.log(`conformance ${leg}: gate passed`);
