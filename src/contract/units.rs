//! §4.4: units. Values on the wire are always canonical; a unit only labels a number field and says
//! which conversions the form may offer.

use serde::Serialize;

/// One way to show a canonical value: `shown = canonical × factor + offset`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Conversion {
    /// Unit key, e.g. `nm`.
    pub unit: String,
    /// What the user reads, e.g. `nm`.
    pub label: String,
    /// Multiplier from the canonical unit.
    pub factor: f64,
    /// Added after multiplying (only temperatures have one).
    pub offset: f64,
}

impl Conversion {
    /// The value shown in this unit for a canonical value.
    pub fn from_canonical(&self, canonical: f64) -> f64 {
        canonical * self.factor + self.offset
    }

    /// The canonical value for a value typed in this unit.
    pub fn to_canonical(&self, shown: f64) -> f64 {
        (shown - self.offset) / self.factor
    }
}

/// §4.4: a number field's unit: the canonical key from `x-megane-unit`, its display label, and the
/// conversions (the canonical unit first, factor 1). Unknown units have no conversions but their own.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitInfo {
    /// The `x-megane-unit` value as the server wrote it.
    pub unit: String,
    /// Display label of the canonical unit (Å, °, g/cm³, K), or the unit verbatim when unknown.
    pub label: String,
    /// Quantity name (`length`, `angle`, `density`, `temperature`, `count`), `None` when unknown.
    pub quantity: Option<&'static str>,
    /// Conversions a form may offer; the first is the canonical unit itself.
    pub conversions: Vec<Conversion>,
}

/// Å per bohr (CODATA 2018 Bohr radius, 0.529177210903 Å).
const ANGSTROM_PER_BOHR: f64 = 0.529_177_210_903;

fn conversion(unit: &str, label: &str, factor: f64, offset: f64) -> Conversion {
    Conversion {
        unit: unit.to_string(),
        label: label.to_string(),
        factor,
        offset,
    }
}

/// §4.4: the unit information for an `x-megane-unit` value.
pub fn unit_info(unit: &str) -> UnitInfo {
    let (label, quantity, conversions) = match unit {
        "angstrom" => (
            "Å",
            Some("length"),
            vec![
                conversion("angstrom", "Å", 1.0, 0.0),
                conversion("nm", "nm", 0.1, 0.0),
                conversion("pm", "pm", 100.0, 0.0),
                conversion("bohr", "bohr", 1.0 / ANGSTROM_PER_BOHR, 0.0),
            ],
        ),
        "degree" => (
            "°",
            Some("angle"),
            vec![
                conversion("degree", "°", 1.0, 0.0),
                conversion("rad", "rad", std::f64::consts::PI / 180.0, 0.0),
            ],
        ),
        "g/cm3" => (
            "g/cm³",
            Some("density"),
            vec![
                conversion("g/cm3", "g/cm³", 1.0, 0.0),
                conversion("kg/m3", "kg/m³", 1000.0, 0.0),
            ],
        ),
        "kelvin" => (
            "K",
            Some("temperature"),
            vec![
                conversion("kelvin", "K", 1.0, 0.0),
                conversion("celsius", "°C", 1.0, -273.15),
            ],
        ),
        "count" => ("", Some("count"), vec![conversion("count", "", 1.0, 0.0)]),
        other => (other, None, Vec::new()),
    };
    UnitInfo {
        unit: unit.to_string(),
        label: label.to_string(),
        quantity,
        conversions,
    }
}

/// §4.4: the conversion `key` of the unit `unit` (`None` when the unit has no such conversion).
fn conversion_of(unit: &str, key: &str) -> Option<Conversion> {
    unit_info(unit)
        .conversions
        .into_iter()
        .find(|c| c.unit == key)
}

/// §4.4: a canonical value of a field whose unit is `unit`, as shown in its conversion `shown`
/// (a `unit` key of its [`UnitInfo::conversions`]); the value itself when the unit has no such
/// conversion (an unknown unit, shown as it is). Not rounded: how many digits to show is the
/// form's choice.
pub fn to_shown(unit: &str, shown: &str, canonical: f64) -> f64 {
    conversion_of(unit, shown).map_or(canonical, |c| c.from_canonical(canonical))
}

/// §4.4: a value typed in the conversion `shown` of a field whose unit is `unit`, back in the
/// canonical unit the arguments carry; the value itself when the unit has no such conversion.
pub fn to_canonical(unit: &str, shown: &str, value: f64) -> f64 {
    conversion_of(unit, shown).map_or(value, |c| c.to_canonical(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(info: &'a UnitInfo, unit: &str) -> &'a Conversion {
        info.conversions.iter().find(|c| c.unit == unit).unwrap()
    }

    #[test]
    fn lengths_convert_both_ways() {
        let info = unit_info("angstrom");
        assert_eq!(info.label, "Å");
        assert!((find(&info, "nm").from_canonical(14.4) - 1.44).abs() < 1e-12);
        assert!((find(&info, "bohr").from_canonical(1.0) - 1.889_726_124_6).abs() < 1e-9);
        assert!((find(&info, "pm").to_canonical(150.0) - 1.5).abs() < 1e-12);
    }

    #[test]
    fn temperature_has_an_offset() {
        let info = unit_info("kelvin");
        let celsius = find(&info, "celsius");
        assert!((celsius.from_canonical(298.15) - 25.0).abs() < 1e-9);
        assert!((celsius.to_canonical(0.0) - 273.15).abs() < 1e-9);
    }

    #[test]
    fn density_and_angle() {
        assert!((find(&unit_info("g/cm3"), "kg/m3").from_canonical(0.997) - 997.0).abs() < 1e-9);
        let rad = unit_info("degree");
        assert!((find(&rad, "rad").from_canonical(180.0) - std::f64::consts::PI).abs() < 1e-12);
    }

    #[test]
    fn by_keys_both_ways_and_unknown_keys_leave_the_value() {
        assert!((to_shown("kelvin", "celsius", 300.0) - 26.85).abs() < 1e-9);
        assert!((to_canonical("kelvin", "celsius", 26.85) - 300.0).abs() < 1e-9);
        assert!((to_shown("angstrom", "nm", 14.4) - 1.44).abs() < 1e-12);
        assert!((to_canonical("angstrom", "pm", 150.0) - 1.5).abs() < 1e-12);
        assert_eq!(to_shown("angstrom", "angstrom", 2.5), 2.5);
        assert_eq!(to_shown("mol/L", "mol/L", 0.1), 0.1);
        assert_eq!(to_canonical("angstrom", "furlong", 7.0), 7.0);
        assert!(to_canonical("angstrom", "nm", f64::NAN).is_nan());
    }

    #[test]
    fn unknown_units_are_verbatim_and_unconverted() {
        let info = unit_info("mol/L");
        assert_eq!(info.label, "mol/L");
        assert!(info.quantity.is_none());
        assert!(info.conversions.is_empty());
    }
}
