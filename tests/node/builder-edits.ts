// README's "Builder's edits" block (tests/node/readme.test.mjs checks they are the same, apart from
// this header and the package's path for its name), compiled by megane-seam.ts against Builder's
// own declarations.
// src/builder/tools/client.ts: its connectToolServer and interpretCall go (and the MCP SDK with
// them); its types, firstText and errorMessage stay.
export { connectToolServer, interpretCall } from "../../pkg/megane.js";
// src/builder/tools/contract.ts: its callTimeoutMs and sanitizeName go; the rest stays (its
// parseTools too: its tests build their fake connections' listings with it).
export { callTimeoutMs, sanitizeName } from "../../pkg/megane.js";
// src/builder/tools/payload.ts: its residueLabels, structureToSnapshot and insertOps go; the rest
// stays.
export { insertOps, residueLabels, structureToSnapshot } from "../../pkg/megane.js";
// src/builder/tools/store.ts: its readLaunchParams goes (and one line changes, below).
export { readLaunchParams } from "../../pkg/megane.js";
