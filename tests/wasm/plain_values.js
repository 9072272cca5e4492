// The values `src/wasm/interop.rs`'s test reads both ways (its plain-data walk and
// serde-wasm-bindgen), made here rather than from JavaScript text evaluated inside Rust. Each
// case is `[source, value, walked]`: the source of the arrow that made the value (named in a
// failure), the value, and whether the walk itself must read it (`true`), must hand it on to
// serde-wasm-bindgen (`false`), or may do either (`null`). Imported only by the test build.

/** @type {[() => unknown, boolean | null][]} */
const CASES = [
  [() => ({ seed: 7, tolerance: 2.0000000000000004, density: 0.1 + 0.2, n: -3, z: -0 }), true],
  [() => ({ a: undefined, b: null, c: [1, , 3, undefined], d: true, e: "x\u00e9\ud83d\ude00" }), true],
  [() => ({ big: 9007199254740991, past: 9007199254740992, huge: 1152921504606846976, e: 1e300 }), true],
  [() => ({ nan: NaN, inf: Infinity, ninf: -Infinity, frac: 5e-324, neg: -1.5 }), true],
  [() => ({ z: 1, a: { y: [{}, [], [[0.30000000000000004]]], b: "q" }, m: 2 }), true],
  [() => {
    const o = Object.create(null);
    o.k = 1;
    return { o };
  }, true],
  [() => ({ bi: 10n }), false],
  [() => ({ bytes: new Uint8Array([1, 2]) }), false],
  [() => ({ buffer: new ArrayBuffer(2) }), null],
  [() => ({ map: new Map([["a", 1]]) }), false],
  [() => ({ set: new Set([1]) }), null],
  [() => ({ f: () => 1 }), false],
  [() => ({ "$serde_json::private::RawValue": "1" }), false],
  [() => [1, "two", { three: 3 }], true],
  [() => ({ lone: "a\ud800b", pair: "\ud83d\ude00" }), null],
  [() => ({ date: new Date(0), n: new Number(3) }), true],
  [() => ({ j: { toJSON() { return 5; }, k: 1 } }), false],
  [() => ({ c: new (class { constructor() { this.x = [1, undefined]; } })() }), true],
  [() => ({ g: Object.defineProperty({}, "v", { get() { return 2; }, enumerable: true }) }), null],
  [() => {
    /** @type {Record<PropertyKey, unknown>} */
    const o = { a: 1 };
    o[Symbol.iterator] = function* () {};
    return { o };
  }, false],
  [() => {
    /** @type {unknown} */
    let v = 1;
    for (let i = 0; i < 70; i++) v = [v];
    return { deep: v };
  }, false],
  [() => ({ big: [9007199254740993, -9007199254740992, 1e21, 2 ** 64] }), null],
  [() => "text", null],
  [() => 12.5, null],
  [() => undefined, null],
  [() => null, null],
];

/** @returns {[string, unknown, boolean | null][]} */
export function plainValueCases() {
  return CASES.map(([make, walked]) => [String(make), make(), walked]);
}
