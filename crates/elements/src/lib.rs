//! The element table for Z = 1–118: symbols, standard atomic weights and van der Waals radii; and
//! covalent radii for Z = 1–96 (Cordero 2008, see [`covalent_radius`]).
//!
//! Sources:
//! - Atomic weights (g/mol): IUPAC 2021 abridged standard atomic weights (CIAAW, "Standard
//!   atomic weights of the elements 2021", Pure Appl. Chem. 2022), with the conventional single
//!   values for elements given as intervals (H 1.008, C 12.011, …). Elements without a stable
//!   isotope and without a standard weight carry the mass number of their longest-lived known
//!   isotope (Tc 97, Pm 145, Po 209, …, Og 294), as the IUPAC periodic table shows in brackets.
//! - Van der Waals radii (Å): S. Alvarez, "A cartography of the van der Waals territories",
//!   Dalton Trans. 2013, 42, 8617–8636 (Table 1). Alvarez tabulates no radius for Pm, Po–Ra and
//!   Z ≥ 100; for those [`vdw_radius`] returns [`DEFAULT_VDW_RADIUS`] (2.0 Å).
//!
//! Hand-written table: the crate needs only these few numbers per element, and the values are
//! published data, not code.

/// Van der Waals radius (Å) used where Alvarez 2013 tabulates none.
pub const DEFAULT_VDW_RADIUS: f64 = 2.0;

/// One row of the table.
struct Element {
    symbol: &'static str,
    /// Standard (or conventional) atomic weight in g/mol, or the mass number of the
    /// longest-lived isotope.
    mass: f64,
    /// Alvarez 2013 radius in Å, when tabulated.
    vdw: Option<f64>,
}

/// Row `z - 1` is element `z`.
const ELEMENTS: [Element; 118] = [
    Element {
        symbol: "H",
        mass: 1.008,
        vdw: Some(1.2),
    }, // 1
    Element {
        symbol: "He",
        mass: 4.0026,
        vdw: Some(1.43),
    }, // 2
    Element {
        symbol: "Li",
        mass: 6.94,
        vdw: Some(2.12),
    }, // 3
    Element {
        symbol: "Be",
        mass: 9.0122,
        vdw: Some(1.98),
    }, // 4
    Element {
        symbol: "B",
        mass: 10.81,
        vdw: Some(1.91),
    }, // 5
    Element {
        symbol: "C",
        mass: 12.011,
        vdw: Some(1.77),
    }, // 6
    Element {
        symbol: "N",
        mass: 14.007,
        vdw: Some(1.66),
    }, // 7
    Element {
        symbol: "O",
        mass: 15.999,
        vdw: Some(1.5),
    }, // 8
    Element {
        symbol: "F",
        mass: 18.998,
        vdw: Some(1.46),
    }, // 9
    Element {
        symbol: "Ne",
        mass: 20.180,
        vdw: Some(1.58),
    }, // 10
    Element {
        symbol: "Na",
        mass: 22.990,
        vdw: Some(2.5),
    }, // 11
    Element {
        symbol: "Mg",
        mass: 24.305,
        vdw: Some(2.51),
    }, // 12
    Element {
        symbol: "Al",
        mass: 26.982,
        vdw: Some(2.25),
    }, // 13
    Element {
        symbol: "Si",
        mass: 28.085,
        vdw: Some(2.19),
    }, // 14
    Element {
        symbol: "P",
        mass: 30.974,
        vdw: Some(1.9),
    }, // 15
    Element {
        symbol: "S",
        mass: 32.06,
        vdw: Some(1.89),
    }, // 16
    Element {
        symbol: "Cl",
        mass: 35.45,
        vdw: Some(1.82),
    }, // 17
    Element {
        symbol: "Ar",
        mass: 39.95,
        vdw: Some(1.83),
    }, // 18
    Element {
        symbol: "K",
        mass: 39.098,
        vdw: Some(2.73),
    }, // 19
    Element {
        symbol: "Ca",
        mass: 40.078,
        vdw: Some(2.62),
    }, // 20
    Element {
        symbol: "Sc",
        mass: 44.956,
        vdw: Some(2.58),
    }, // 21
    Element {
        symbol: "Ti",
        mass: 47.867,
        vdw: Some(2.46),
    }, // 22
    Element {
        symbol: "V",
        mass: 50.942,
        vdw: Some(2.42),
    }, // 23
    Element {
        symbol: "Cr",
        mass: 51.996,
        vdw: Some(2.45),
    }, // 24
    Element {
        symbol: "Mn",
        mass: 54.938,
        vdw: Some(2.45),
    }, // 25
    Element {
        symbol: "Fe",
        mass: 55.845,
        vdw: Some(2.44),
    }, // 26
    Element {
        symbol: "Co",
        mass: 58.933,
        vdw: Some(2.4),
    }, // 27
    Element {
        symbol: "Ni",
        mass: 58.693,
        vdw: Some(2.4),
    }, // 28
    Element {
        symbol: "Cu",
        mass: 63.546,
        vdw: Some(2.38),
    }, // 29
    Element {
        symbol: "Zn",
        mass: 65.38,
        vdw: Some(2.39),
    }, // 30
    Element {
        symbol: "Ga",
        mass: 69.723,
        vdw: Some(2.32),
    }, // 31
    Element {
        symbol: "Ge",
        mass: 72.630,
        vdw: Some(2.29),
    }, // 32
    Element {
        symbol: "As",
        mass: 74.922,
        vdw: Some(1.88),
    }, // 33
    Element {
        symbol: "Se",
        mass: 78.971,
        vdw: Some(1.82),
    }, // 34
    Element {
        symbol: "Br",
        mass: 79.904,
        vdw: Some(1.86),
    }, // 35
    Element {
        symbol: "Kr",
        mass: 83.798,
        vdw: Some(2.25),
    }, // 36
    Element {
        symbol: "Rb",
        mass: 85.468,
        vdw: Some(3.21),
    }, // 37
    Element {
        symbol: "Sr",
        mass: 87.62,
        vdw: Some(2.84),
    }, // 38
    Element {
        symbol: "Y",
        mass: 88.906,
        vdw: Some(2.75),
    }, // 39
    Element {
        symbol: "Zr",
        mass: 91.224,
        vdw: Some(2.52),
    }, // 40
    Element {
        symbol: "Nb",
        mass: 92.906,
        vdw: Some(2.56),
    }, // 41
    Element {
        symbol: "Mo",
        mass: 95.95,
        vdw: Some(2.45),
    }, // 42
    Element {
        symbol: "Tc",
        mass: 97.0,
        vdw: Some(2.44),
    }, // 43
    Element {
        symbol: "Ru",
        mass: 101.07,
        vdw: Some(2.46),
    }, // 44
    Element {
        symbol: "Rh",
        mass: 102.91,
        vdw: Some(2.44),
    }, // 45
    Element {
        symbol: "Pd",
        mass: 106.42,
        vdw: Some(2.15),
    }, // 46
    Element {
        symbol: "Ag",
        mass: 107.87,
        vdw: Some(2.53),
    }, // 47
    Element {
        symbol: "Cd",
        mass: 112.41,
        vdw: Some(2.49),
    }, // 48
    Element {
        symbol: "In",
        mass: 114.82,
        vdw: Some(2.43),
    }, // 49
    Element {
        symbol: "Sn",
        mass: 118.71,
        vdw: Some(2.42),
    }, // 50
    Element {
        symbol: "Sb",
        mass: 121.76,
        vdw: Some(2.47),
    }, // 51
    Element {
        symbol: "Te",
        mass: 127.60,
        vdw: Some(1.99),
    }, // 52
    Element {
        symbol: "I",
        mass: 126.90,
        vdw: Some(2.04),
    }, // 53
    Element {
        symbol: "Xe",
        mass: 131.29,
        vdw: Some(2.06),
    }, // 54
    Element {
        symbol: "Cs",
        mass: 132.91,
        vdw: Some(3.48),
    }, // 55
    Element {
        symbol: "Ba",
        mass: 137.33,
        vdw: Some(3.03),
    }, // 56
    Element {
        symbol: "La",
        mass: 138.91,
        vdw: Some(2.98),
    }, // 57
    Element {
        symbol: "Ce",
        mass: 140.12,
        vdw: Some(2.88),
    }, // 58
    Element {
        symbol: "Pr",
        mass: 140.91,
        vdw: Some(2.92),
    }, // 59
    Element {
        symbol: "Nd",
        mass: 144.24,
        vdw: Some(2.95),
    }, // 60
    Element {
        symbol: "Pm",
        mass: 145.0,
        vdw: None,
    }, // 61
    Element {
        symbol: "Sm",
        mass: 150.36,
        vdw: Some(2.9),
    }, // 62
    Element {
        symbol: "Eu",
        mass: 151.96,
        vdw: Some(2.87),
    }, // 63
    Element {
        symbol: "Gd",
        mass: 157.25,
        vdw: Some(2.83),
    }, // 64
    Element {
        symbol: "Tb",
        mass: 158.93,
        vdw: Some(2.79),
    }, // 65
    Element {
        symbol: "Dy",
        mass: 162.50,
        vdw: Some(2.87),
    }, // 66
    Element {
        symbol: "Ho",
        mass: 164.93,
        vdw: Some(2.81),
    }, // 67
    Element {
        symbol: "Er",
        mass: 167.26,
        vdw: Some(2.83),
    }, // 68
    Element {
        symbol: "Tm",
        mass: 168.93,
        vdw: Some(2.79),
    }, // 69
    Element {
        symbol: "Yb",
        mass: 173.05,
        vdw: Some(2.8),
    }, // 70
    Element {
        symbol: "Lu",
        mass: 174.97,
        vdw: Some(2.74),
    }, // 71
    Element {
        symbol: "Hf",
        mass: 178.49,
        vdw: Some(2.63),
    }, // 72
    Element {
        symbol: "Ta",
        mass: 180.95,
        vdw: Some(2.53),
    }, // 73
    Element {
        symbol: "W",
        mass: 183.84,
        vdw: Some(2.57),
    }, // 74
    Element {
        symbol: "Re",
        mass: 186.21,
        vdw: Some(2.49),
    }, // 75
    Element {
        symbol: "Os",
        mass: 190.23,
        vdw: Some(2.48),
    }, // 76
    Element {
        symbol: "Ir",
        mass: 192.22,
        vdw: Some(2.41),
    }, // 77
    Element {
        symbol: "Pt",
        mass: 195.08,
        vdw: Some(2.29),
    }, // 78
    Element {
        symbol: "Au",
        mass: 196.97,
        vdw: Some(2.32),
    }, // 79
    Element {
        symbol: "Hg",
        mass: 200.59,
        vdw: Some(2.45),
    }, // 80
    Element {
        symbol: "Tl",
        mass: 204.38,
        vdw: Some(2.47),
    }, // 81
    Element {
        symbol: "Pb",
        mass: 207.2,
        vdw: Some(2.6),
    }, // 82
    Element {
        symbol: "Bi",
        mass: 208.98,
        vdw: Some(2.54),
    }, // 83
    Element {
        symbol: "Po",
        mass: 209.0,
        vdw: None,
    }, // 84
    Element {
        symbol: "At",
        mass: 210.0,
        vdw: None,
    }, // 85
    Element {
        symbol: "Rn",
        mass: 222.0,
        vdw: None,
    }, // 86
    Element {
        symbol: "Fr",
        mass: 223.0,
        vdw: None,
    }, // 87
    Element {
        symbol: "Ra",
        mass: 226.0,
        vdw: None,
    }, // 88
    Element {
        symbol: "Ac",
        mass: 227.0,
        vdw: Some(2.8),
    }, // 89
    Element {
        symbol: "Th",
        mass: 232.04,
        vdw: Some(2.93),
    }, // 90
    Element {
        symbol: "Pa",
        mass: 231.04,
        vdw: Some(2.88),
    }, // 91
    Element {
        symbol: "U",
        mass: 238.03,
        vdw: Some(2.71),
    }, // 92
    Element {
        symbol: "Np",
        mass: 237.0,
        vdw: Some(2.82),
    }, // 93
    Element {
        symbol: "Pu",
        mass: 244.0,
        vdw: Some(2.81),
    }, // 94
    Element {
        symbol: "Am",
        mass: 243.0,
        vdw: Some(2.83),
    }, // 95
    Element {
        symbol: "Cm",
        mass: 247.0,
        vdw: Some(3.05),
    }, // 96
    Element {
        symbol: "Bk",
        mass: 247.0,
        vdw: Some(3.4),
    }, // 97
    Element {
        symbol: "Cf",
        mass: 251.0,
        vdw: Some(3.05),
    }, // 98
    Element {
        symbol: "Es",
        mass: 252.0,
        vdw: Some(2.7),
    }, // 99
    Element {
        symbol: "Fm",
        mass: 257.0,
        vdw: None,
    }, // 100
    Element {
        symbol: "Md",
        mass: 258.0,
        vdw: None,
    }, // 101
    Element {
        symbol: "No",
        mass: 259.0,
        vdw: None,
    }, // 102
    Element {
        symbol: "Lr",
        mass: 266.0,
        vdw: None,
    }, // 103
    Element {
        symbol: "Rf",
        mass: 267.0,
        vdw: None,
    }, // 104
    Element {
        symbol: "Db",
        mass: 268.0,
        vdw: None,
    }, // 105
    Element {
        symbol: "Sg",
        mass: 269.0,
        vdw: None,
    }, // 106
    Element {
        symbol: "Bh",
        mass: 270.0,
        vdw: None,
    }, // 107
    Element {
        symbol: "Hs",
        mass: 269.0,
        vdw: None,
    }, // 108
    Element {
        symbol: "Mt",
        mass: 278.0,
        vdw: None,
    }, // 109
    Element {
        symbol: "Ds",
        mass: 281.0,
        vdw: None,
    }, // 110
    Element {
        symbol: "Rg",
        mass: 282.0,
        vdw: None,
    }, // 111
    Element {
        symbol: "Cn",
        mass: 285.0,
        vdw: None,
    }, // 112
    Element {
        symbol: "Nh",
        mass: 286.0,
        vdw: None,
    }, // 113
    Element {
        symbol: "Fl",
        mass: 289.0,
        vdw: None,
    }, // 114
    Element {
        symbol: "Mc",
        mass: 290.0,
        vdw: None,
    }, // 115
    Element {
        symbol: "Lv",
        mass: 293.0,
        vdw: None,
    }, // 116
    Element {
        symbol: "Ts",
        mass: 294.0,
        vdw: None,
    }, // 117
    Element {
        symbol: "Og",
        mass: 294.0,
        vdw: None,
    }, // 118
];

fn row(z: u8) -> Option<&'static Element> {
    ELEMENTS.get(usize::from(z).checked_sub(1)?)
}

/// The symbol of atomic number `z` (1–118), e.g. `symbol(26) == Some("Fe")`.
pub fn symbol(z: u8) -> Option<&'static str> {
    row(z).map(|e| e.symbol)
}

/// The atomic number of a symbol, case-insensitive (`"Fe"`, `"fe"`, `"FE"` → 26); surrounding
/// whitespace is ignored.
pub fn atomic_number(symbol: &str) -> Option<u8> {
    let wanted = symbol.trim();
    ELEMENTS
        .iter()
        .position(|e| e.symbol.eq_ignore_ascii_case(wanted))
        .and_then(|i| u8::try_from(i + 1).ok())
}

/// Standard atomic weight of `z` in g/mol (see the module doc for the source).
pub fn atomic_mass(z: u8) -> Option<f64> {
    row(z).map(|e| e.mass)
}

/// Van der Waals radius of `z` in Å (Alvarez 2013; [`DEFAULT_VDW_RADIUS`] where untabulated).
pub fn vdw_radius(z: u8) -> Option<f64> {
    row(z).map(|e| e.vdw.unwrap_or(DEFAULT_VDW_RADIUS))
}

/// Single-bond covalent radii (Å) for Z = 1–96: B. Cordero et al., "Covalent radii revisited",
/// Dalton Trans. 2008, 2832–2838 (Table 2; C sp3, and the low-spin values for Mn, Fe and Co).
/// Row `z - 1` is element `z`.
const COVALENT: [f64; 96] = [
    0.31, 0.28, 1.28, 0.96, 0.84, 0.76, 0.71, 0.66, 0.57, 0.58, // 1–10
    1.66, 1.41, 1.21, 1.11, 1.07, 1.05, 1.02, 1.06, 2.03, 1.76, // 11–20
    1.70, 1.60, 1.53, 1.39, 1.39, 1.32, 1.26, 1.24, 1.32, 1.22, // 21–30
    1.22, 1.20, 1.19, 1.20, 1.20, 1.16, 2.20, 1.95, 1.90, 1.75, // 31–40
    1.64, 1.54, 1.47, 1.46, 1.42, 1.39, 1.45, 1.44, 1.42, 1.39, // 41–50
    1.39, 1.38, 1.39, 1.40, 2.44, 2.15, 2.07, 2.04, 2.03, 2.01, // 51–60
    1.99, 1.98, 1.98, 1.96, 1.94, 1.92, 1.92, 1.89, 1.90, 1.87, // 61–70
    1.87, 1.75, 1.70, 1.62, 1.51, 1.44, 1.41, 1.36, 1.36, 1.32, // 71–80
    1.45, 1.46, 1.48, 1.40, 1.50, 1.50, 2.60, 2.21, 2.15, 2.06, // 81–90
    2.00, 1.96, 1.90, 1.87, 1.80, 1.69, // 91–96
];

/// Covalent radius of `z` in Å (Cordero 2008), for Z = 1–96; `None` beyond (Cordero tabulates
/// none). The length of a single bond between two atoms is about the sum of their radii.
pub fn covalent_radius(z: u8) -> Option<f64> {
    COVALENT.get(usize::from(z).checked_sub(1)?).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_round_trip_for_every_element() {
        for z in 1..=118u8 {
            let s = symbol(z).unwrap();
            assert_eq!(atomic_number(s), Some(z));
            assert_eq!(atomic_number(&s.to_uppercase()), Some(z));
            assert_eq!(atomic_number(&s.to_lowercase()), Some(z));
        }
        assert_eq!(symbol(0), None);
        assert_eq!(symbol(119), None);
        assert_eq!(atomic_number("Xx"), None);
        assert_eq!(atomic_number(""), None);
    }

    #[test]
    fn known_values() {
        assert_eq!(atomic_number("fe"), Some(26));
        assert_eq!(symbol(118), Some("Og"));
        // Water's molar mass 18.015 g/mol (fixtures/molecules/README.md).
        let water = atomic_mass(8).unwrap() + 2.0 * atomic_mass(1).unwrap();
        assert!((water - 18.015).abs() < 1e-3);
        assert_eq!(vdw_radius(6), Some(1.77));
        assert_eq!(vdw_radius(61), Some(DEFAULT_VDW_RADIUS));
        assert_eq!(vdw_radius(0), None);
        assert_eq!(covalent_radius(6), Some(0.76));
        assert_eq!(covalent_radius(96), Some(1.69));
        assert_eq!(covalent_radius(97), None);
        assert_eq!(covalent_radius(0), None);
    }

    #[test]
    fn masses_increase_roughly_with_z() {
        for z in 1..=118u8 {
            let m = atomic_mass(z).unwrap();
            assert!(m > f64::from(z) && m < 3.0 * f64::from(z) + 2.0, "{z}: {m}");
        }
    }
}
