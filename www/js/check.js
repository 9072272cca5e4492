// "Check" (contract §10, the parts a page can check): markers and contract versions, the
// form-generation subset, seeds on stochastic tools, document rules, then per tool a sample call
// validated and planned (the sample arguments are the schema's own examples where it has some; a
// molecule example the library holds is the library's molecule, with its 3D coordinates, as the
// form would start with it) and checked against the tool's declared outputSchema (§5), the same
// seed reproducing the structure, and a call without the required arguments refused. A server's
// refusal of a sample is a warning in its own words: the sample may just not suit it.
// Each line is {status: "pass"|"fail"|"warn"|"skip", text, detail?}: `text` in plain words a
// chemist reads, `detail` the contract's own terms, shown folded.
import { buildArguments, initialValues, planApply, validateAgainstSchema } from "../pkg/megane_builder_client.js";
import { planDigest } from "./provenance.js";

/** Whether a form field (at the top level) is a molecule picker. */
function isMolecule(button, key) {
  return button.form?.fields.some((f) => f.key === key && f.control === "molecule");
}

/** §10 sample arguments: the form's initial values, with every top-level property the schema gives
 *  examples for set to its first example as written (a whole-object example of the inputSchema
 *  first), then built and validated like a form's. A molecule field the form already started on
 *  a library molecule (the one the example names) keeps it. */
function sampleArguments(button, context) {
  const values = initialValues(button, context);
  const schema = button.inputSchema ?? {};
  const whole = Array.isArray(schema.examples) ? schema.examples.find((e) => e && typeof e === "object" && !Array.isArray(e)) : null;
  if (whole) Object.assign(values, structuredClone(whole));
  else {
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      if (!Array.isArray(property?.examples) || property.examples.length === 0) continue;
      if (isMolecule(button, key) && typeof values[key] === "string" && libraryHolds(context, property.examples[0])) continue;
      values[key] = structuredClone(property.examples[0]);
    }
  }
  return buildArguments(button, values, context);
}

/** Whether the library has the molecule an example names (by name or by SMILES). */
function libraryHolds(context, example) {
  const name = typeof example === "string" ? example : example?.name;
  const smiles = example?.smiles;
  return (context.library ?? []).some((m) => (name && m.name.toLowerCase() === String(name).toLowerCase()) || (smiles && m.smiles === smiles));
}

const MODE = { new_document: "a new structure", insert: "added to the open structure" };

export async function checkServer(entry, context, report) {
  const { toolbox, server } = entry;
  const line = (status, text, detail = null) => report({ status, text, detail });
  for (const t of [...toolbox.unsupportedContract, ...toolbox.unknownApply, ...toolbox.malformed]) {
    line("fail", `${t.label}: this page cannot use it.`, `${t.name}: ${t.reason}`);
  }
  const n = toolbox.buttons.length;
  if (n === 0) { line("fail", "The server offers no tool this page can use.", "No tool carries the Builder marker."); return; }
  line("pass", `${n} tool${n === 1 ? "" : "s"} can be used from this page.`,
    `${n} Builder tool(s) with a supported marker (contract ${[...new Set(toolbox.buttons.map((b) => b.marker.contract))].join(", ")}).`);
  for (const notice of toolbox.notices) line("fail", "The server's tool list has a problem.", notice);
  for (const button of toolbox.buttons) {
    const name = button.label;
    if (button.disabledReason) { line("fail", `${name}: its form cannot be shown.`, `${button.name}: ${button.disabledReason}`); continue; }
    line("pass", `${name}: its form can be filled in (${button.form.fields.length} fields).`);
    for (const notice of [...button.notices, ...button.form.notices]) line("fail", `${name}: part of its form cannot be shown.`, notice);
    const m = button.marker;
    if (m.stochastic && !button.form.hasSeed) line("fail", `${name}: its result is random but it takes no seed to repeat it.`, "stochastic but has no seed input (§4.4).");
    else if (m.stochastic) line("pass", `${name}: a seed makes its random result repeatable.`);
    if (m.document !== "none" && !button.form.documentProperty) line("fail", `${name}: says it uses the open structure but has no place for it.`, `document "${m.document}" but no document property (§4.3).`);
    if (m.document === "none" && button.form.documentProperty) line("fail", `${name}: takes the open structure but says it does not use it.`, 'a document property with document "none" (§4.3).');
    // §5: the tool declares the BuilderResult schema as its outputSchema; MCP wants an object schema.
    const output = button.outputSchema;
    const outputIsObject = output !== null && typeof output === "object" && !Array.isArray(output) && output.type === "object";
    if (output === null || output === undefined) line("fail", `${name}: does not describe the result it gives.`, "no outputSchema declared (§5: a Builder tool declares the BuilderResult schema).");
    else if (!outputIsObject) line("fail", `${name}: describes its result in a form the page cannot use.`, 'the outputSchema is not an object schema (MCP requires type "object").');
    else line("pass", `${name}: describes the result it gives.`, "declares an object outputSchema.");
    if (m.document === "required" && !context.document) { line("skip", `${name}: not run: it needs an open structure.`); continue; }
    const built = sampleArguments(button, context);
    if (!built.ok) { line("skip", `${name}: not run: no example to run it with (${built.errors[0].message})`); continue; }
    const first = await server.call(button.name, built.arguments, {});
    const refusedSample = !first.ok && first.refused;
    if (refusedSample) line("warn", `${name}: the server declined the example run: ${first.error}`);
    else if (!first.ok || !first.result) { line("fail", `${name}: the example run failed: ${first.error ?? "it gave no structure"}`); continue; }
    const planned = refusedSample ? null : planApply(button, first.result, context.document, {});
    if (planned && !planned.ok) { line("fail", `${name}: its result cannot be used: ${planned.error}`); continue; }
    if (planned) {
      line("pass", `${name}: the example run gave a valid structure (${first.result.atomCount} atoms, ${MODE[planned.plan.mode] ?? planned.plan.mode}).`,
        `sample call: ${first.result.atomCount} atoms, ${planned.plan.mode}.`);
    }
    if (planned && outputIsObject) {
      // The result as Builder read it (unknown fields dropped, §11) against the tool's own schema.
      const problems = validateAgainstSchema(output, first.result);
      if (problems.length === 0) line("pass", `${name}: the result is as the tool describes it.`, "the sample result conforms to the tool's outputSchema.");
      else line("fail", `${name}: the result is not as the tool describes it.`, `outputSchema: ${problems[0].path ? `${problems[0].path}: ` : ""}${problems[0].message}`);
    }
    if (planned && m.stochastic) {
      const again = await server.call(button.name, built.arguments, {});
      const replanned = again.ok && again.result ? planApply(button, again.result, context.document, {}) : null;
      if (!replanned?.ok) line("fail", `${name}: running it again failed: ${again.error ?? replanned?.error}`);
      else if (await planDigest(replanned.plan) === await planDigest(planned.plan)) line("pass", `${name}: the same seed gives the same structure again.`, "same SHA-256 of elements and positions.");
      else line("fail", `${name}: the same seed gave a different structure.`);
    }
    // Only the tool's refusal (isError) or the server's -32602 counts: a timeout or a network
    // failure says nothing about the tool.
    const empty = await server.call(button.name, {}, {});
    if (empty.ok) line("fail", `${name}: a run with nothing filled in was accepted.`, "a call without the required arguments was accepted.");
    else if (empty.refused) line("pass", `${name}: a run with nothing filled in is refused, as it should be.`);
    else if (empty.timedOut || empty.cancelled) line("skip", `${name}: could not check a run with nothing filled in: ${empty.error}`);
    else line("fail", `${name}: a run with nothing filled in was not refused by the tool: ${empty.error}`);
  }
}
