//! §4.4 unit conversion for a form's number fields ([`crate::contract::units`]): the page shows a
//! canonical value in the unit the user picked and turns what they type back, through these, so
//! the conversion is written once, in the core.

use wasm_bindgen::prelude::*;

use crate::contract::units;

/// §4.4: `canonical` (a value of a field whose `x-megane-unit` is `unit`) as shown in the
/// conversion `shownUnit` (the `unit` of one of the field's `unit.conversions`); the value itself
/// for a conversion the unit does not have. Not rounded.
#[wasm_bindgen(js_name = toShownUnit)]
pub fn to_shown_unit(
    unit: &str,
    #[wasm_bindgen(js_name = shownUnit)] shown_unit: &str,
    canonical: f64,
) -> f64 {
    units::to_shown(unit, shown_unit, canonical)
}

/// §4.4: `shown` (a value typed in the conversion `shownUnit` of a field whose `x-megane-unit` is
/// `unit`) in the canonical unit the arguments carry; the value itself for a conversion the unit
/// does not have.
#[wasm_bindgen(js_name = toCanonicalUnit)]
pub fn to_canonical_unit(
    unit: &str,
    #[wasm_bindgen(js_name = shownUnit)] shown_unit: &str,
    shown: f64,
) -> f64 {
    units::to_canonical(unit, shown_unit, shown)
}
