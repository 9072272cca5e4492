// The 3D view: three.js (vendored from npm by scripts/build.sh, never a CDN) drawing atoms as
// instanced spheres in element colours, bonds as two-coloured lines, and the cell box. Drag rotates,
// the wheel zooms, a click selects an atom (shift-click adds) for the selection widget.
import * as THREE from "../vendor/three.module.js";
import { color, radius } from "./elements.js";

const BACKGROUND = 0x1d2330;
const SELECTED = new THREE.Color(0xffd84a);

export class StructureView {
  constructor(canvas, { onPick } = {}) {
    this.canvas = canvas;
    this.onPick = onPick ?? (() => {});
    // preserveDrawingBuffer: the tests read the pixels back to check the view is not blank.
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    this.renderer.setClearColor(BACKGROUND);
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.1, 10000);
    this.scene.add(new THREE.AmbientLight(0xffffff, 1.2));
    const light = new THREE.DirectionalLight(0xffffff, 2.0);
    light.position.set(1, 2, 3);
    this.camera.add(light);
    this.scene.add(this.camera);
    this.root = new THREE.Group(); // rotated by dragging; holds the structure centred on the origin
    this.scene.add(this.root);
    this.distance = 30;
    this.atoms = null;
    this.state = null;
    this.dirty = true;
    this.installControls();
    new ResizeObserver(() => this.resize()).observe(canvas.parentElement);
    this.resize();
    this.loop();
  }

  resize() {
    const { clientWidth: w, clientHeight: h } = this.canvas.parentElement;
    if (w === 0 || h === 0) return;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    this.dirty = true;
  }

  loop() {
    requestAnimationFrame(() => this.loop());
    if (!this.dirty) return;
    this.dirty = false;
    this.camera.position.set(0, 0, this.distance);
    this.camera.lookAt(0, 0, 0);
    this.renderer.render(this.scene, this.camera);
  }

  installControls() {
    let last = null;
    let moved = 0;
    this.canvas.addEventListener("pointerdown", (e) => {
      last = [e.clientX, e.clientY];
      moved = 0;
      this.canvas.setPointerCapture(e.pointerId);
    });
    this.canvas.addEventListener("pointermove", (e) => {
      if (!last) return;
      const dx = e.clientX - last[0];
      const dy = e.clientY - last[1];
      last = [e.clientX, e.clientY];
      moved += Math.abs(dx) + Math.abs(dy);
      const q = new THREE.Quaternion().setFromEuler(new THREE.Euler(dy * 0.01, dx * 0.01, 0));
      this.root.quaternion.premultiply(q);
      this.dirty = true;
    });
    this.canvas.addEventListener("pointerup", (e) => {
      if (last && moved < 4) this.pick(e);
      last = null;
    });
    this.canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      this.distance = Math.max(2, this.distance * Math.exp(e.deltaY * 0.001));
      this.dirty = true;
    }, { passive: false });
  }

  /** The front-most atom under the pointer, by projecting every atom (deterministic, and the
   *  same projection screenPosition uses), or null. */
  pick(event) {
    if (!this.atoms) return;
    const rect = this.canvas.getBoundingClientRect();
    const { elements, positions } = this.state;
    this.updateCamera();
    const m = new THREE.Matrix4().multiplyMatrices(this.camera.projectionMatrix, this.camera.matrixWorldInverse).multiply(this.root.matrixWorld);
    const toView = new THREE.Matrix4().multiplyMatrices(this.camera.matrixWorldInverse, this.root.matrixWorld);
    const focal = rect.height / 2 / Math.tan(THREE.MathUtils.degToRad(this.camera.fov / 2));
    const v = new THREE.Vector3();
    const c = this.center;
    let best = null;
    let bestDepth = Infinity;
    for (let i = 0; i < elements.length; i++) {
      v.set(positions[3 * i] - c.x, positions[3 * i + 1] - c.y, positions[3 * i + 2] - c.z).applyMatrix4(toView);
      const depth = -v.z;
      if (depth <= 0 || depth >= bestDepth) continue;
      v.set(positions[3 * i] - c.x, positions[3 * i + 1] - c.y, positions[3 * i + 2] - c.z).applyMatrix4(m);
      const x = rect.left + ((v.x + 1) / 2) * rect.width;
      const y = rect.top + ((1 - v.y) / 2) * rect.height;
      const r = (radius(elements[i]) * focal) / depth;
      if ((x - event.clientX) ** 2 + (y - event.clientY) ** 2 <= r * r) { best = i; bestDepth = depth; }
    }
    this.onPick(best, event.shiftKey);
  }

  updateCamera() {
    this.camera.position.set(0, 0, this.distance);
    this.camera.lookAt(0, 0, 0);
    this.camera.updateMatrixWorld();
    this.root.updateMatrixWorld();
  }

  /** Where atom i is drawn, in client pixels (used by the tests to click an atom). */
  screenPosition(i) {
    const p = this.state.positions;
    this.updateCamera();
    const v = new THREE.Vector3(p[3 * i], p[3 * i + 1], p[3 * i + 2]).sub(this.center).applyMatrix4(this.root.matrixWorld);
    v.project(this.camera);
    const rect = this.canvas.getBoundingClientRect();
    return { x: rect.left + ((v.x + 1) / 2) * rect.width, y: rect.top + ((1 - v.y) / 2) * rect.height };
  }

  clear() {
    for (const child of [...this.root.children]) {
      this.root.remove(child);
      child.geometry?.dispose();
      child.material?.dispose();
    }
    this.atoms = null;
  }

  /** Redraws the document state. `refit` recentres the camera (new structure, not a selection). */
  show(state, refit) {
    const structureChanged = !this.state || this.state.elements !== state.elements || this.state.cell !== state.cell;
    this.state = state;
    if (structureChanged) this.rebuild(refit);
    this.paintSelection();
    this.dirty = true;
  }

  rebuild(refit) {
    this.clear();
    const { elements, positions, bonds, cell } = this.state;
    const n = elements.length;
    if (refit || !this.center) this.fit();
    const c = this.center;
    if (n > 0) {
      // Fewer sphere segments for big boxes keep 100 000+ atoms interactive in software WebGL.
      const seg = n > 50000 ? 6 : n > 1500 ? 10 : 16;
      const sphere = new THREE.SphereGeometry(1, seg, Math.max(4, seg * 0.75 | 0));
      const mesh = new THREE.InstancedMesh(sphere, new THREE.MeshLambertMaterial(), n);
      const m = new THREE.Matrix4();
      for (let i = 0; i < n; i++) {
        const r = radius(elements[i]);
        m.makeScale(r, r, r).setPosition(positions[3 * i] - c.x, positions[3 * i + 1] - c.y, positions[3 * i + 2] - c.z);
        mesh.setMatrixAt(i, m);
        mesh.setColorAt(i, new THREE.Color(color(elements[i])));
      }
      mesh.computeBoundingSphere();
      this.atoms = mesh;
      this.root.add(mesh);
    }
    if (bonds.length > 0) {
      // Each bond as two half-lines in the colours of its atoms.
      const pos = new Float32Array(bonds.length * 12);
      const col = new Float32Array(bonds.length * 12);
      const a = new THREE.Color();
      const b = new THREE.Color();
      bonds.forEach(([i, j], k) => {
        const pi = [positions[3 * i] - c.x, positions[3 * i + 1] - c.y, positions[3 * i + 2] - c.z];
        const pj = [positions[3 * j] - c.x, positions[3 * j + 1] - c.y, positions[3 * j + 2] - c.z];
        const mid = [(pi[0] + pj[0]) / 2, (pi[1] + pj[1]) / 2, (pi[2] + pj[2]) / 2];
        pos.set([...pi, ...mid, ...mid, ...pj], k * 12);
        a.setHex(color(elements[i]));
        b.setHex(color(elements[j]));
        col.set([a.r, a.g, a.b, a.r, a.g, a.b, b.r, b.g, b.b, b.r, b.g, b.b], k * 12);
      });
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute("position", new THREE.BufferAttribute(pos, 3));
      geometry.setAttribute("color", new THREE.BufferAttribute(col, 3));
      this.root.add(new THREE.LineSegments(geometry, new THREE.LineBasicMaterial({ vertexColors: true })));
    }
    if (cell) {
      const o = new THREE.Vector3(-c.x, -c.y, -c.z);
      const va = new THREE.Vector3(cell[0], cell[1], cell[2]);
      const vb = new THREE.Vector3(cell[3], cell[4], cell[5]);
      const vc = new THREE.Vector3(cell[6], cell[7], cell[8]);
      const corner = (i, j, k) => o.clone().addScaledVector(va, i).addScaledVector(vb, j).addScaledVector(vc, k);
      const edges = [];
      for (const [p, q] of [[[0, 0, 0], [1, 0, 0]], [[0, 0, 0], [0, 1, 0]], [[0, 0, 0], [0, 0, 1]], [[1, 0, 0], [1, 1, 0]],
        [[1, 0, 0], [1, 0, 1]], [[0, 1, 0], [1, 1, 0]], [[0, 1, 0], [0, 1, 1]], [[0, 0, 1], [1, 0, 1]], [[0, 0, 1], [0, 1, 1]],
        [[1, 1, 0], [1, 1, 1]], [[1, 0, 1], [1, 1, 1]], [[0, 1, 1], [1, 1, 1]]]) {
        edges.push(corner(...p), corner(...q));
      }
      this.root.add(new THREE.LineSegments(new THREE.BufferGeometry().setFromPoints(edges), new THREE.LineBasicMaterial({ color: 0x7fb0ff })));
    }
  }

  paintSelection() {
    if (!this.atoms) return;
    const { elements, selection } = this.state;
    const chosen = new Set(selection);
    const tmp = new THREE.Color();
    // Selected atoms are tinted, not repainted, so their elements stay recognisable.
    for (let i = 0; i < elements.length; i++) {
      tmp.setHex(color(elements[i]));
      this.atoms.setColorAt(i, chosen.has(i) ? tmp.lerp(SELECTED, 0.6) : tmp);
    }
    this.atoms.instanceColor.needsUpdate = true;
  }

  /** Centre on the cell (else the atoms) and back off far enough to see all of it. */
  fit() {
    const { positions, cell } = this.state;
    const box = new THREE.Box3();
    for (let i = 0; i < positions.length; i += 3) box.expandByPoint(new THREE.Vector3(positions[i], positions[i + 1], positions[i + 2]));
    if (cell) {
      for (const [i, j, k] of [[0, 0, 0], [1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]]) {
        box.expandByPoint(new THREE.Vector3(i * cell[0] + j * cell[3] + k * cell[6], i * cell[1] + j * cell[4] + k * cell[7], i * cell[2] + j * cell[5] + k * cell[8]));
      }
    }
    if (box.isEmpty()) box.set(new THREE.Vector3(-5, -5, -5), new THREE.Vector3(5, 5, 5));
    this.center = box.getCenter(new THREE.Vector3());
    const size = box.getSize(new THREE.Vector3()).length();
    this.distance = Math.max(6, size * 1.25 + 2);
    this.root.quaternion.setFromEuler(new THREE.Euler(0.35, -0.5, 0));
  }
}
