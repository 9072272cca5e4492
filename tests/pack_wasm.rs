//! The packing core compiled to wasm32 and run under Node: it packs, meets the
//! tolerance (checked by brute force here), and is deterministic. This guards
//! against anything unavailable on wasm32-unknown-unknown (clocks, threads:
//! rayon falls back to the current thread).
//!
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!  cargo test --target wasm32-unknown-unknown --test pack_wasm`
#![cfg(target_arch = "wasm32")]

use megane_builder_client::pack::{pack, PackControl, PackProblem, Species, Template};
use wasm_bindgen_test::*;

/// water.mol from the shared fixtures (no file system under wasm).
fn water() -> Template {
    Template {
        elements: vec![8, 1, 1],
        positions: vec![
            [0.0053, 0.3978, 0.0],
            [-0.7661, -0.1886, 0.0],
            [0.7607, -0.2091, 0.0],
        ],
    }
}

#[wasm_bindgen_test]
fn packs_water_under_wasm() {
    let n = 300;
    // 1.0 g/cm³: V = n · 18.015 / 0.602214076 Å³
    let l = (n as f64 * 18.015 / 0.602214076).cbrt();
    let p = PackProblem {
        species: vec![Species {
            template: water(),
            count: n,
        }],
        box_lengths: [l; 3],
        fixed: vec![],
        tolerance: 2.0,
        seed: 5,
        max_iterations: 2000,
    };
    let t0 = js_sys::Date::now();
    let a = pack(&p, &PackControl::default()).unwrap();
    let ms = js_sys::Date::now() - t0;
    console_log!("300 water packed in {ms} ms ({} iterations)", a.iterations);
    assert!(a.converged, "{:?}", a.warnings);
    assert_eq!(a.positions.len(), 3 * n);
    let mi = |d: f64| d - l * (d / l).round();
    let mut bad = 0;
    for i in 0..a.positions.len() {
        for j in i + 1..a.positions.len() {
            if i / 3 == j / 3 {
                continue;
            }
            let d: f64 = (0..3)
                .map(|k| mi(a.positions[j][k] - a.positions[i][k]).powi(2))
                .sum::<f64>()
                .sqrt();
            if d < 2.0 {
                bad += 1;
            }
        }
    }
    assert_eq!(bad, 0);
    let b = pack(&p, &PackControl::default()).unwrap();
    assert_eq!(a, b);
}

/// Baseline case a (1000 water, 31.0428 Å, 2.0 Å) under wasm; prints the time.
#[wasm_bindgen_test]
fn case_a_under_wasm() {
    let p = PackProblem {
        species: vec![Species {
            template: water(),
            count: 1000,
        }],
        box_lengths: [31.0428; 3],
        fixed: vec![],
        tolerance: 2.0,
        seed: 1,
        max_iterations: 5000,
    };
    let t0 = js_sys::Date::now();
    let a = pack(&p, &PackControl::default()).unwrap();
    let ms = js_sys::Date::now() - t0;
    console_log!(
        "case a (1000 water) packed in {ms} ms, {} iterations, min d {:.4}",
        a.iterations,
        a.min_distance
    );
    assert!(a.converged && a.offending_pairs == 0, "{:?}", a.warnings);
}
