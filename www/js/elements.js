// Element symbols, colours (Jmol-like) and radii for the view and the periodic-table picker.
// Only what the page draws: anything not listed falls back to a grey of medium size.
export const SYMBOLS = ("H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr " +
  "Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu " +
  "Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr " +
  "Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og").split(" ");

export function symbol(z) {
  return SYMBOLS[z - 1] ?? `Z${z}`;
}

const COLORS = {
  1: 0xffffff, 2: 0xd9ffff, 3: 0xcc80ff, 5: 0xffb5b5, 6: 0x909090, 7: 0x3050f8, 8: 0xff0d0d, 9: 0x90e050,
  10: 0xb3e3f5, 11: 0xab5cf2, 12: 0x8aff00, 13: 0xbfa6a6, 14: 0xf0c8a0, 15: 0xff8000, 16: 0xffff30,
  17: 0x1ff01f, 18: 0x80d1e3, 19: 0x8f40d4, 20: 0x3dff00, 22: 0xbfc2c7, 26: 0xe06633, 29: 0xc88033,
  30: 0x7d80b0, 35: 0xa62929, 53: 0x940094, 79: 0xffd123,
};
export function color(z) {
  return COLORS[z] ?? 0xb0a0c0;
}

// Drawn sphere radius in Å: a fraction of the covalent radius, so bonds stay visible.
const COVALENT = { 1: 0.31, 5: 0.84, 6: 0.76, 7: 0.71, 8: 0.66, 9: 0.57, 14: 1.11, 15: 1.07, 16: 1.05, 17: 1.02, 35: 1.2, 53: 1.39 };
export function radius(z) {
  return 0.45 * (COVALENT[z] ?? 1.2) + 0.12;
}

/** [row, column] of element z in an 18-column table; lanthanides/actinides in rows 8 and 9. */
export function tablePosition(z) {
  if (z === 1) return [1, 1];
  if (z === 2) return [1, 18];
  const periods = [[3, 10, 2], [11, 18, 3], [19, 36, 4], [37, 54, 5], [55, 86, 6], [87, 118, 7]];
  for (const [first, last, row] of periods) {
    if (z < first || z > last) continue;
    const k = z - first;
    if (row <= 3) return [row, k < 2 ? k + 1 : k + 11];
    if (row <= 5) return [row, k + 1];
    // Periods 6 and 7: the f-block (La–Yb / Ac–No) goes to a separate row.
    if (k < 2) return [row, k + 1];
    if (k < 16) return [row + 2, k + 2];
    return [row, k - 13];
  }
  return [1, 1];
}
