// A synthetic liquid-box `tools/call` response, deterministic (seeded PRNG), in the shape of
// tests/fixtures/megane-recorded/call-liquid_box.json: a JSON-RPC envelope around a
// CallToolResult whose structuredContent is a BuilderResult (§5) with a §5.1 Structure.
//
// 166 666 rigid waters (O–H 0.9572 Å, H–O–H 104.52°, random orientation) on a jittered grid in a
// cubic box at 1 g/cm³, plus one Na⁺ and one Cl⁻: exactly 500 000 atoms, 333 332 bonds
// (bondOrders 1), molecules, residueNames, residueIds. Positions carry 6 decimals, as the
// reference server sends them, so the body is realistic in size (~30 MB).

const WATERS = 166_666;
const OH = 0.9572;
const HALF_ANGLE = (104.52 / 2) * (Math.PI / 180);
const WATER_VOLUME = 29.9157; // Å³ per molecule at 1 g/cm³

// mulberry32: a small seeded PRNG, uniform in [0, 1).
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Shortest decimal of x rounded to 6 decimals (as Python's json.dumps(round(x, 6)) prints it).
const fmt = (x) => String(Math.round(x * 1e6) / 1e6);

function unitVector(rand) {
  const z = 2 * rand() - 1;
  const phi = 2 * Math.PI * rand();
  const r = Math.sqrt(1 - z * z);
  return [r * Math.cos(phi), r * Math.sin(phi), z];
}

/** Returns {text, atoms, bonds}: the response body as a string. `omit` lists optional Structure
 *  fields to leave out ("bonds" sends [] and no bondOrders), to see what each field costs;
 *  `waters` sets the size (atoms = 3 × waters + 2). */
export function syntheticLiquidBox(seed = 12345, omit = [], waters = WATERS) {
  const rand = prng(seed);
  const molecules = waters + 2;
  const side = Math.cbrt(waters * WATER_VOLUME);
  const perEdge = Math.ceil(Math.cbrt(molecules));
  const spacing = side / perEdge;

  const elements = [];
  const positions = [];
  const bonds = [];
  const moleculeIndex = [];
  const residueNames = [];
  const residueIds = [];
  const addAtom = (z, p, mol, resname) => {
    elements.push(z);
    positions.push(fmt(p[0]), fmt(p[1]), fmt(p[2]));
    moleculeIndex.push(mol);
    residueNames.push(resname);
    residueIds.push(mol + 1);
  };

  for (let m = 0; m < molecules; m++) {
    const gx = m % perEdge;
    const gy = Math.floor(m / perEdge) % perEdge;
    const gz = Math.floor(m / (perEdge * perEdge));
    const o = [gx, gy, gz].map((g) => (g + 0.5 + 0.3 * (rand() - 0.5)) * spacing);
    if (m >= waters) {
      addAtom(m === waters ? 11 : 17, o, m, m === waters ? "NA" : "CL");
      continue;
    }
    // Bisector u and a perpendicular v give the two O–H directions.
    const u = unitVector(rand);
    let w = unitVector(rand);
    const d = u[0] * w[0] + u[1] * w[1] + u[2] * w[2];
    w = [w[0] - d * u[0], w[1] - d * u[1], w[2] - d * u[2]];
    const wn = Math.hypot(w[0], w[1], w[2]) || 1;
    const v = w.map((c) => c / wn);
    const c = Math.cos(HALF_ANGLE) * OH;
    const s = Math.sin(HALF_ANGLE) * OH;
    const h1 = [0, 1, 2].map((k) => o[k] + c * u[k] + s * v[k]);
    const h2 = [0, 1, 2].map((k) => o[k] + c * u[k] - s * v[k]);
    const first = elements.length;
    addAtom(8, o, m, "HOH");
    addAtom(1, h1, m, "HOH");
    addAtom(1, h2, m, "HOH");
    bonds.push(`[${first},${first + 1}]`, `[${first},${first + 2}]`);
  }

  const atoms = elements.length;
  const a = fmt(side);
  const sent = (field) => !omit.includes(field);
  const structure =
    `{"elements":[${elements.join(",")}],` +
    `"positions":[${positions.join(",")}],` +
    `"cell":[${a},0.0,0.0,0.0,${a},0.0,0.0,0.0,${a}],` +
    `"bonds":[${sent("bonds") ? bonds.join(",") : ""}]` +
    (sent("bonds") && sent("bondOrders") ? `,"bondOrders":[${new Array(bonds.length).fill(1).join(",")}]` : "") +
    (sent("molecules") ? `,"molecules":[${moleculeIndex.join(",")}]` : "") +
    (sent("residueNames") ? `,"residueNames":[${residueNames.map((r) => `"${r}"`).join(",")}]` : "") +
    (sent("residueIds") ? `,"residueIds":[${residueIds.join(",")}]` : "") +
    "}";
  const summary =
    `Liquid box: ${waters} water, 1 Na+ and 1 Cl- in a ${(side / 10).toFixed(1)} nm box ` +
    `(1 g/cm³, ${atoms} atoms).`;
  const text =
    `{"jsonrpc":"2.0","id":7,"result":{` +
    `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"megane-builder-tools","version":"0.1.0"}},` +
    `"content":[{"type":"text","text":${JSON.stringify(summary)}}],` +
    `"structuredContent":{"contract":1,"name":"water","structure":${structure},` +
    `"warnings":[],"provenance":{"packmol":"21.2.3","rdkit":"2026.03.6",` +
    `"megane-builder-tools":"0.1.0","seed":"${seed}"}},` +
    `"isError":false,"resultType":"complete"}}`;
  return { text, atoms, bonds: sent("bonds") ? bonds.length : 0 };
}
