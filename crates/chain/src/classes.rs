//! The classes of `polymer_chain`'s junction rule: of a junction atom and of its substituents.
//! Their own module so that the rule ([`super::junction`]) and the table it reads
//! ([`super::junction_lengths`], written by scripts/make_junction_lengths.py) both name them
//! without naming each other.

/// The class of a junction atom in the joined chain: element, hybridisation (from the orders of
/// its bonds: a triple or two doubles sp, one double or an aromatic bond sp2, else sp3) and, for
/// carbon, whether its double bond is to a heteroatom outside a ring (`C2x`: carbonyl, imine,
/// thiocarbonyl; not a pyridine's C=N, whose Kekulé structure is arbitrary); for
/// an sp3 N, O or S, whether it is bonded to an sp2 or sp atom (`…c`: amide N, ester and aryl ether
/// O, thioester S).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// sp3 carbon.
    C3,
    /// sp2 carbon double-bonded to carbon, or aromatic.
    C2,
    /// sp2 carbon double-bonded to N, O or S.
    C2x,
    /// sp carbon.
    C1,
    /// Amine nitrogen.
    N3,
    /// Nitrogen bonded to an sp2 or sp atom (amide, aniline, pyrrole).
    N3c,
    /// Ether or alcohol oxygen.
    O3,
    /// Oxygen bonded to an sp2 or sp atom (ester, aryl ether).
    O3c,
    /// Thioether sulfur.
    S3,
    /// Sulfur bonded to an sp2 or sp atom.
    S3c,
    /// Silicon with single bonds.
    Si3,
    /// Anything else (the fallback length applies).
    Other,
}

/// The class of a substituent of a junction atom: carbon by hybridisation, else its element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Substituent {
    C3,
    C2,
    C1,
    N,
    O,
    F,
    Cl,
    Br,
    I,
    S,
    Si,
    P,
    Other,
}
