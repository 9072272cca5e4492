// A small labelled picture of a molecule for the atom fields (§4.2 atom widget: a polymer's head
// and tail): the molecule turned so that its widest spread faces the viewer (principal axes of its
// positions), atoms as circles in element colours drawn back to front, bonds as lines, and each
// atom's number — the index the tool takes — written on it. A click on an atom chooses it.
import { color, radius, symbol } from "./elements.js";

/** Eigenvectors of a symmetric 3×3 matrix (rows of the result), largest eigenvalue first (Jacobi). */
function principalAxes(m) {
  const a = m.map((row) => row.slice());
  const v = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
  for (let sweep = 0; sweep < 12; sweep++) {
    for (const [p, q] of [[0, 1], [0, 2], [1, 2]]) {
      if (Math.abs(a[p][q]) < 1e-12) continue;
      const theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
      const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
      const c = 1 / Math.sqrt(t * t + 1);
      const s = t * c;
      for (let k = 0; k < 3; k++) {
        const akp = a[k][p], akq = a[k][q];
        a[k][p] = c * akp - s * akq;
        a[k][q] = s * akp + c * akq;
      }
      for (let k = 0; k < 3; k++) {
        const apk = a[p][k], aqk = a[q][k];
        a[p][k] = c * apk - s * aqk;
        a[q][k] = s * apk + c * aqk;
      }
      for (let k = 0; k < 3; k++) {
        const vkp = v[k][p], vkq = v[k][q];
        v[k][p] = c * vkp - s * vkq;
        v[k][q] = s * vkp + c * vkq;
      }
    }
  }
  return [0, 1, 2].sort((i, j) => a[j][j] - a[i][i]).map((i) => [v[0][i], v[1][i], v[2][i]]);
}

/** Screen positions {x, y, depth, r} of `molecule`'s atoms in a canvas of `w` × `h` pixels. */
function layout(molecule, w, h) {
  const p = molecule.positions;
  const n = p.length;
  const mean = [0, 1, 2].map((k) => p.reduce((s, q) => s + q[k], 0) / Math.max(n, 1));
  const cov = [0, 1, 2].map((i) => [0, 1, 2].map((j) => p.reduce((s, q) => s + (q[i] - mean[i]) * (q[j] - mean[j]), 0)));
  const [px, py, pz] = principalAxes(cov);
  // The widest spread faces the viewer; among turns about the long axis (and a little across
  // it), the one that keeps every two atoms furthest apart on screen, so that no atom hides
  // behind another (ethane's hydrogens, seen exactly side-on, would).
  const mix = (u, v, t) => u.map((x, k) => Math.cos(t) * x + Math.sin(t) * v[k]);
  const dotc = (u, q) => u[0] * (q[0] - mean[0]) + u[1] * (q[1] - mean[1]) + u[2] * (q[2] - mean[2]);
  let best = null;
  for (let a = 0; a < 12; a++) {
    for (const b of [-0.45, -0.2, 0, 0.2, 0.45]) {
      const y = mix(py, pz, (a * Math.PI) / 12);
      const z0 = mix(pz, py.map((x) => -x), (a * Math.PI) / 12);
      const x = mix(px, z0, b);
      const z = mix(z0, px.map((v) => -v), b);
      const flat = p.map((q) => [dotc(x, q), dotc(y, q)]);
      let closest = Infinity;
      for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) closest = Math.min(closest, Math.hypot(flat[i][0] - flat[j][0], flat[i][1] - flat[j][1]));
      if (!best || closest > best.closest + 1e-6) best = { closest, axes: [x, y, z] };
    }
  }
  const [ex, ey, ez] = best.axes;
  const dot = dotc;
  const flat = p.map((q, i) => ({ x: dot(ex, q), y: dot(ey, q), depth: dot(ez, q), i }));
  const pad = 1.0;
  const xs = flat.map((a) => a.x), ys = flat.map((a) => a.y);
  const spanX = Math.max(...xs) - Math.min(...xs) + 2 * pad, spanY = Math.max(...ys) - Math.min(...ys) + 2 * pad;
  const scale = Math.min(w / spanX, h / spanY, 60);
  const cx = (Math.max(...xs) + Math.min(...xs)) / 2, cy = (Math.max(...ys) + Math.min(...ys)) / 2;
  return flat.map((a) => ({
    ...a, x: w / 2 + (a.x - cx) * scale, y: h / 2 - (a.y - cy) * scale, r: Math.max(5, radius(molecule.elements[a.i]) * scale * 0.9),
  }));
}

const hex = (z) => `#${color(z).toString(16).padStart(6, "0")}`;

/**
 * A canvas showing `molecule` ({elements, positions: [[x, y, z]…], bonds}) with atom numbers,
 * `chosen` (an index or null) ringed; `choose(i)` is called with the clicked atom.
 */
export function unitPicture(molecule, chosen, choose, label) {
  const w = 320;
  const h = 170;
  const canvas = document.createElement("canvas");
  const ratio = Math.min(window.devicePixelRatio || 1, 2);
  canvas.width = w * ratio;
  canvas.height = h * ratio;
  canvas.style.width = `${w}px`;
  canvas.style.maxWidth = "100%";
  canvas.className = "unit-picture";
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", `${label}: the molecule's atoms with their numbers; click an atom to choose it`);
  canvas.title = "Click an atom to choose it";
  const atoms = layout(molecule, w, h);
  const draw = (pick) => {
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    ctx.lineWidth = 3;
    ctx.strokeStyle = "#9aa3b2";
    for (const [i, j] of molecule.bonds ?? []) {
      ctx.beginPath();
      ctx.moveTo(atoms[i].x, atoms[i].y);
      ctx.lineTo(atoms[j].x, atoms[j].y);
      ctx.stroke();
    }
    for (const a of [...atoms].sort((u, v) => u.depth - v.depth)) {
      const z = molecule.elements[a.i];
      ctx.beginPath();
      ctx.arc(a.x, a.y, a.r, 0, 2 * Math.PI);
      ctx.fillStyle = hex(z);
      ctx.fill();
      ctx.lineWidth = 1;
      ctx.strokeStyle = "#4a5468";
      ctx.stroke();
      if (a.i === pick) {
        ctx.lineWidth = 3;
        ctx.strokeStyle = "#1f5fd6";
        ctx.beginPath();
        ctx.arc(a.x, a.y, a.r + 4, 0, 2 * Math.PI);
        ctx.stroke();
      }
      ctx.font = "600 11px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.lineWidth = 3;
      ctx.strokeStyle = "#ffffff";
      const text = String(a.i);
      ctx.strokeText(text, a.x, a.y);
      ctx.fillStyle = "#111827";
      ctx.fillText(text, a.x, a.y);
    }
  };
  draw(chosen);
  canvas.addEventListener("click", (event) => {
    const rect = canvas.getBoundingClientRect();
    const x = ((event.clientX - rect.left) * w) / rect.width;
    const y = ((event.clientY - rect.top) * h) / rect.height;
    // The front-most atom under the pointer.
    const hit = [...atoms].sort((u, v) => v.depth - u.depth).find((a) => (a.x - x) ** 2 + (a.y - y) ** 2 <= (a.r + 2) ** 2);
    if (!hit) return;
    draw(hit.i);
    choose(hit.i);
  });
  /** Where atom i is drawn, in client pixels (for the tests, as the 3D view has). */
  canvas.atomPosition = (i) => {
    const rect = canvas.getBoundingClientRect();
    return { x: rect.left + (atoms[i].x * rect.width) / w, y: rect.top + (atoms[i].y * rect.height) / h };
  };
  canvas.redraw = draw;
  canvas.dataset.atoms = atoms.map((a) => `${a.i}:${symbol(molecule.elements[a.i])}`).join(" ");
  return canvas;
}
