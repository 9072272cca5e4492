// Lazy properties, the JavaScript half of the package's wasm bindings (imported by
// src/wasm/snapshot.rs and ./toolbox.js; wasm-bindgen copies this module into pkg/snippets).
//
// Lazy per-atom string arrays. Building 500 000 JavaScript strings from wasm costs one
// `TextDecoder` call each (about 1 µs) and used to be ~70 % of `planApply` on a 500 000-atom
// result. The snapshot instead carries each string channel as a small table of distinct strings
// plus a `Uint32Array` of indices, and `labels`, `residueNames`, `atomNames` and `residueIds` are
// getters that build the plain array (`string[]`, `number[]`) on first read, then replace
// themselves with an ordinary writable data property holding it: a consumer reads exactly what
// it read before (also through spread, `JSON.stringify`, `structuredClone` / `postMessage`, all
// of which read the getter). On a snapshot frozen before the first read (e.g. by a state store)
// the getter keeps returning the one array it built, and assignment throws as it would on a
// frozen data property. A module (no `eval` / `new Function`: CSP-safe).

// `target[key]`: `build()` on the first read, then an ordinary data property holding it.
export function lazy(target, key, build) {
  let built = false;
  let value;
  const settle = () => {
    // Once built, an ordinary data property (unless the object was frozen meanwhile).
    if (Object.getOwnPropertyDescriptor(target, key)?.configurable) {
      Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
    }
    return value;
  };
  Object.defineProperty(target, key, {
    get() {
      if (!built) {
        value = build();
        built = true;
      }
      return settle();
    },
    set(next) {
      if (!Object.getOwnPropertyDescriptor(target, key)?.configurable) {
        throw new TypeError(`Cannot assign to read only property '${key}' of object`);
      }
      value = next;
      built = true;
      settle();
    },
    enumerable: true,
    configurable: true,
  });
}
export function lazyStrings(target, key, table, index) {
  lazy(target, key, () => {
    const out = new Array(index.length);
    for (let i = 0; i < index.length; i++) out[i] = table[index[i]];
    return out;
  });
}
export function lazyLabels(target, key, table, index, ids) {
  lazy(target, key, () => {
    const out = new Array(index.length);
    for (let i = 0; i < index.length; i++) out[i] = table[index[i]] + ids[i];
    return out;
  });
}
export function lazyNumbers(target, key, values) {
  lazy(target, key, () => Array.from(values));
}
