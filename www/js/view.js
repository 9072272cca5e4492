// The 3D view: three.js (vendored from npm by scripts/build.sh, never a CDN) drawing atoms as
// instanced spheres in element colours, bonds as sticks in the colours of their two atoms, and the
// cell box. Drag rotates, the wheel zooms, a click selects an atom (shift-click adds) for the
// selection widget. Selected atoms keep their element colour and get a yellow halo. A new
// structure is framed whole: the camera backs off until the bounding sphere of the atoms (and the
// cell) fits the narrower of the two fields of view, and again when the view is resized, until
// the user zooms.
import * as THREE from "../vendor/three.module.js";
import { color, radius } from "./elements.js";

const BACKGROUND = 0x1d2330;
const HALO = 0xffd84a;
/** Stick radius in Å: thin beside the spheres, wide enough to see at a box's scale. */
const STICK = 0.11;

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
    this.radius = 10; // of the framed structure's bounding sphere, Å
    this.autoFit = true;
    this.atoms = null;
    this.halo = null;
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
    if (this.autoFit) this.distance = this.fitDistance();
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
      this.autoFit = false;
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

  /** Where atom i is drawn, in client pixels, with its depth (-1 nearest to 1 farthest), and
   *  its drawn radius in pixels (used by the tests to click an atom and to check the framing). */
  screenPosition(i) {
    const p = this.state.positions;
    this.updateCamera();
    const v = new THREE.Vector3(p[3 * i], p[3 * i + 1], p[3 * i + 2]).sub(this.center).applyMatrix4(this.root.matrixWorld);
    const away = v.clone().applyMatrix4(this.camera.matrixWorldInverse).z;
    v.project(this.camera);
    const rect = this.canvas.getBoundingClientRect();
    const focal = rect.height / 2 / Math.tan(THREE.MathUtils.degToRad(this.camera.fov / 2));
    return {
      x: rect.left + ((v.x + 1) / 2) * rect.width, y: rect.top + ((1 - v.y) / 2) * rect.height, depth: v.z,
      radius: (radius(this.state.elements[i]) * focal) / Math.max(-away, 1e-6),
    };
  }

  clear() {
    for (const child of [...this.root.children]) {
      this.root.remove(child);
      child.geometry?.dispose();
      child.material?.dispose();
    }
    this.atoms = null;
    this.halo = null;
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
    if (bonds.length > 0) this.root.add(this.sticks(elements, positions, bonds, c));
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

  /** Each bond as two half-sticks (open cylinders) in the colours of its two atoms. */
  sticks(elements, positions, bonds, c) {
    const seg = bonds.length > 100000 ? 5 : 8;
    const mesh = new THREE.InstancedMesh(new THREE.CylinderGeometry(1, 1, 1, seg, 1, true), new THREE.MeshLambertMaterial(), 2 * bonds.length);
    const up = new THREE.Vector3(0, 1, 0);
    const a = new THREE.Vector3();
    const b = new THREE.Vector3();
    const dir = new THREE.Vector3();
    const q = new THREE.Quaternion();
    const m = new THREE.Matrix4();
    const scale = new THREE.Vector3();
    const at = (i, v) => v.set(positions[3 * i] - c.x, positions[3 * i + 1] - c.y, positions[3 * i + 2] - c.z);
    bonds.forEach(([i, j], k) => {
      at(i, a);
      at(j, b);
      dir.subVectors(b, a);
      const length = dir.length();
      if (length === 0) return;
      q.setFromUnitVectors(up, dir.divideScalar(length));
      scale.set(STICK, length / 2, STICK);
      // The half at atom i: centred a quarter of the way along; the half at j: three quarters.
      m.compose(a.clone().addScaledVector(dir, length / 4), q, scale);
      mesh.setMatrixAt(2 * k, m);
      mesh.setColorAt(2 * k, new THREE.Color(color(elements[i])));
      m.compose(a.clone().addScaledVector(dir, (3 * length) / 4), q, scale);
      mesh.setMatrixAt(2 * k + 1, m);
      mesh.setColorAt(2 * k + 1, new THREE.Color(color(elements[j])));
    });
    mesh.computeBoundingSphere();
    return mesh;
  }

  /** Selected atoms keep their element colour; a translucent yellow shell (its back faces only,
   *  so the atom in front hides all but a ring) marks each one. */
  paintSelection() {
    if (this.halo) {
      this.root.remove(this.halo);
      this.halo.geometry.dispose();
      this.halo.material.dispose();
      this.halo = null;
    }
    if (!this.atoms) return;
    const { elements, positions, selection } = this.state;
    if (selection.length === 0) return;
    const c = this.center;
    const halo = new THREE.InstancedMesh(new THREE.SphereGeometry(1, 12, 9),
      new THREE.MeshBasicMaterial({ color: HALO, transparent: true, opacity: 0.5, side: THREE.BackSide, depthWrite: false }), selection.length);
    const m = new THREE.Matrix4();
    selection.forEach((i, k) => {
      const r = radius(elements[i]) * 1.3 + 0.05;
      m.makeScale(r, r, r).setPosition(positions[3 * i] - c.x, positions[3 * i + 1] - c.y, positions[3 * i + 2] - c.z);
      halo.setMatrixAt(k, m);
    });
    halo.computeBoundingSphere();
    this.halo = halo;
    this.root.add(halo);
  }

  /** How far the camera stands to see the whole bounding sphere in both fields of view. */
  fitDistance() {
    const vertical = THREE.MathUtils.degToRad(this.camera.fov) / 2;
    const horizontal = Math.atan(Math.tan(vertical) * this.camera.aspect);
    return Math.max(4, (this.radius / Math.sin(Math.min(vertical, horizontal))) * 1.06);
  }

  /** Centre on the atoms and the cell, and back off far enough to see all of them. */
  fit() {
    const { elements, positions, cell } = this.state;
    const box = new THREE.Box3();
    const v = new THREE.Vector3();
    for (let i = 0; i < positions.length; i += 3) box.expandByPoint(v.set(positions[i], positions[i + 1], positions[i + 2]));
    if (cell) {
      for (const [i, j, k] of [[0, 0, 0], [1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]]) {
        box.expandByPoint(v.set(i * cell[0] + j * cell[3] + k * cell[6], i * cell[1] + j * cell[4] + k * cell[7], i * cell[2] + j * cell[5] + k * cell[8]));
      }
    }
    if (box.isEmpty()) box.set(new THREE.Vector3(-5, -5, -5), new THREE.Vector3(5, 5, 5));
    this.center = box.getCenter(new THREE.Vector3());
    // The sphere round the centre that holds every atom (with its drawn radius) and cell corner.
    let r2 = 0;
    for (let i = 0; i < positions.length; i += 3) {
      const d = Math.hypot(positions[i] - this.center.x, positions[i + 1] - this.center.y, positions[i + 2] - this.center.z) + radius(elements[i / 3]);
      r2 = Math.max(r2, d);
    }
    const corners = box.getSize(new THREE.Vector3()).length() / 2;
    this.radius = Math.max(r2, cell ? corners : 0, 2);
    this.autoFit = true;
    this.distance = this.fitDistance();
    this.root.quaternion.setFromEuler(new THREE.Euler(0.35, -0.5, 0));
  }
}
