// "Check server" (contract §10, the parts a page can check): markers and contract versions, the
// form-generation subset, seeds on stochastic tools, document rules, then per tool a sample call
// validated and planned (the sample arguments are the schema's own examples where it has some) and
// checked against the tool's declared outputSchema (§5), the
// same seed reproducing the structure, and a call without the required arguments refused. A
// server's refusal of a sample is a warning in its own words: the sample may just not suit it.
// Each line is {status: "pass"|"fail"|"warn"|"skip", text}.
import { buildArguments, initialValues, planApply, validateAgainstSchema } from "../pkg/megane_builder_client.js";
import { planDigest } from "./provenance.js";

/** §10 sample arguments: the form's initial values, with every top-level property the schema gives
 *  examples for set to its first example as written (a whole-object example of the inputSchema
 *  first), then built and validated like a form's. */
function sampleArguments(button, context) {
  const values = initialValues(button, context);
  const schema = button.inputSchema ?? {};
  const whole = Array.isArray(schema.examples) ? schema.examples.find((e) => e && typeof e === "object" && !Array.isArray(e)) : null;
  if (whole) Object.assign(values, structuredClone(whole));
  else {
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      if (Array.isArray(property?.examples) && property.examples.length > 0) values[key] = structuredClone(property.examples[0]);
    }
  }
  return buildArguments(button, values, context);
}

export async function checkServer(entry, context, report) {
  const { toolbox, server } = entry;
  const line = (status, text) => report({ status, text });
  for (const t of toolbox.unsupportedContract) line("fail", `${t.name}: ${t.reason}`);
  for (const t of toolbox.unknownApply) line("fail", `${t.name}: ${t.reason}`);
  for (const t of toolbox.malformed) line("fail", `${t.name}: ${t.reason}`);
  if (toolbox.buttons.length === 0) { line("fail", "No tool carries the Builder marker."); return; }
  line("pass", `${toolbox.buttons.length} Builder tool(s) with a supported marker (contract ${[...new Set(toolbox.buttons.map((b) => b.marker.contract))].join(", ")}).`);
  for (const notice of toolbox.notices) line("fail", notice);
  for (const button of toolbox.buttons) {
    const name = button.name;
    if (button.disabledReason) { line("fail", `${name}: ${button.disabledReason}`); continue; }
    line("pass", `${name}: the form can be generated (${button.form.fields.length} fields).`);
    for (const notice of [...button.notices, ...button.form.notices]) line("fail", `${name}: ${notice}`);
    const m = button.marker;
    if (m.stochastic && !button.form.hasSeed) line("fail", `${name}: stochastic but has no seed input (§4.4).`);
    else if (m.stochastic) line("pass", `${name}: stochastic with a seed input.`);
    if (m.document !== "none" && !button.form.documentProperty) line("fail", `${name}: document "${m.document}" but no document property (§4.3).`);
    if (m.document === "none" && button.form.documentProperty) line("fail", `${name}: a document property with document "none" (§4.3).`);
    // §5: the tool declares the BuilderResult schema as its outputSchema; MCP wants an object schema.
    const output = button.outputSchema;
    const outputIsObject = output !== null && typeof output === "object" && !Array.isArray(output) && output.type === "object";
    if (output === null || output === undefined) line("fail", `${name}: no outputSchema declared (§5: a Builder tool declares the BuilderResult schema).`);
    else if (!outputIsObject) line("fail", `${name}: the outputSchema is not an object schema (MCP requires type "object").`);
    else line("pass", `${name}: declares an object outputSchema.`);
    if (m.document === "required" && !context.document) { line("skip", `${name}: sample call skipped — it needs an open structure.`); continue; }
    const built = sampleArguments(button, context);
    if (!built.ok) { line("skip", `${name}: no sample arguments (${built.errors[0].message})`); continue; }
    const first = await server.call(name, built.arguments, {});
    const refusedSample = !first.ok && first.refused;
    if (refusedSample) line("warn", `${name}: the server refused the sample arguments: ${first.error}`);
    else if (!first.ok || !first.result) { line("fail", `${name}: the sample call failed: ${first.error ?? "not a Builder result"}`); continue; }
    const planned = refusedSample ? null : planApply(button, first.result, context.document, {});
    if (planned && !planned.ok) { line("fail", `${name}: the result cannot be applied: ${planned.error}`); continue; }
    if (planned) line("pass", `${name}: the sample call returned a valid result (${first.result.atomCount} atoms, ${planned.plan.mode}).`);
    if (planned && outputIsObject) {
      // The result as Builder read it (unknown fields dropped, §11) against the tool's own schema.
      const problems = validateAgainstSchema(output, first.result);
      if (problems.length === 0) line("pass", `${name}: the sample result conforms to the tool's outputSchema.`);
      else line("fail", `${name}: the sample result does not conform to the tool's outputSchema: ${problems[0].path ? `${problems[0].path}: ` : ""}${problems[0].message}`);
    }
    if (planned && m.stochastic) {
      const again = await server.call(name, built.arguments, {});
      const replanned = again.ok && again.result ? planApply(button, again.result, context.document, {}) : null;
      if (!replanned?.ok) line("fail", `${name}: the repeated call failed: ${again.error ?? replanned?.error}`);
      else if (await planDigest(replanned.plan) === await planDigest(planned.plan)) line("pass", `${name}: the same seed reproduces the structure (SHA-256).`);
      else line("fail", `${name}: the same seed gave a different structure.`);
    }
    // Only the tool's refusal (isError) or the server's -32602 counts: a timeout or a network
    // failure says nothing about the tool.
    const empty = await server.call(name, {}, {});
    if (empty.ok) line("fail", `${name}: a call without the required arguments was accepted.`);
    else if (empty.refused) line("pass", `${name}: a call without the required arguments is refused.`);
    else if (empty.timedOut || empty.cancelled) line("skip", `${name}: the call without arguments could not be checked: ${empty.error}`);
    else line("fail", `${name}: a call without the required arguments was not refused by the tool: ${empty.error}`);
  }
}
