//! JSON numbers: the grammar checked byte by byte, integers of up to 15 digits converted
//! exactly (eight digits at a time), everything else left to `fast-float2`; and the ranges of the
//! integer members (atomic numbers, bond orders, indices, charges).

/// The most digits an integer may have (exact in `f64` and `i64`; [`Scanner::int`]).
pub(crate) const MAX_INT_DIGITS: usize = 15;

/// An atomic number, 1–118 (`elements`).
#[inline]
pub(crate) fn atomic_number(v: i64) -> Option<u8> {
    (1..=118).contains(&v).then_some(v as u8)
}

/// A bond order, 1–4 (`bondOrders`).
#[inline]
pub(crate) fn bond_order(v: i64) -> Option<u8> {
    (1..=4).contains(&v).then_some(v as u8)
}

/// An index in `u32` (an atom of `bonds`, a molecule of `molecules`).
#[inline]
pub(crate) fn atom_index(v: i64) -> Option<u32> {
    u32::try_from(v).ok()
}

/// A formal charge in `i32` (`formalCharges`).
#[inline]
pub(crate) fn formal_charge(v: i64) -> Option<i32> {
    i32::try_from(v).ok()
}

/// The sign and integer part of a JSON number ([`integer_part`]).
pub(crate) struct IntegerPart {
    /// A leading `-`.
    pub(crate) negative: bool,
    /// The digits as an integer (exact up to 19 digits; the callers refuse more than 15).
    pub(crate) mantissa: u64,
    /// Digits counted (a lone `0` counts none).
    pub(crate) significant: usize,
    /// Just after the last digit.
    pub(crate) end: usize,
}

/// The sign and integer part of a JSON number at `i`: `-`?, then [`unsigned_digits`]; `None`
/// without a digit. The one integer-part rule of both number readers ([`Scanner::number`],
/// [`Scanner::int`]).
#[inline(always)]
pub(crate) fn integer_part(b: &[u8], mut i: usize) -> Option<IntegerPart> {
    let negative = b.get(i) == Some(&b'-');
    if negative {
        i += 1;
    }
    let (mantissa, end) = unsigned_digits(b, i)?;
    Some(IntegerPart {
        negative,
        mantissa,
        // A lone `0` has no significant digit; otherwise every digit is.
        significant: if b[i] == b'0' { 0 } else { end - i },
        end,
    })
}

/// The digits of an integer part at `i`, `0` or a non-zero digit and the digits after it: their
/// value (wrapping past 19 digits) and where they end; `None` without a digit. The first digit
/// is taken before the loop (in V8, ~6 % off the scan of a 500 000-atom body against the loop
/// reading it again).
#[inline(always)]
pub(crate) fn unsigned_digits(b: &[u8], i: usize) -> Option<(u64, usize)> {
    match *b.get(i)? {
        b'0' => Some((0, i + 1)),
        d @ b'1'..=b'9' => {
            let (end, value) = digits_one_by_one(b, i + 1, u64::from(d - b'0'));
            Some((value, end))
        }
        _ => None,
    }
}

/// The run of ASCII digits at `i`: where it ends, and `mantissa` with the run's digits appended
/// (wrapping past 19 digits; the callers refuse more than 15 significant ones). Eight bytes at a
/// time where eight are in hand, then byte by byte for the last few bytes of the piece. Used for
/// a fraction's digits (a position has six or more): in V8, 3–5 % off the whole scan of a
/// 500 000-atom body. Integer parts are short (atom indices, element numbers, a position's one
/// or two digits), and there the per-digit loop ([`digits_one_by_one`]) measured 25 % faster.
#[inline(always)]
pub(crate) fn digit_run(b: &[u8], mut i: usize, mut mantissa: u64) -> (usize, u64) {
    while let Some(chunk) = b.get(i..i + 8) {
        let (n, value) = eight_digits(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])));
        if n == 0 {
            return (i, mantissa);
        }
        mantissa = mantissa.wrapping_mul(POW10_INT[n]).wrapping_add(value);
        i += n;
        if n < 8 {
            return (i, mantissa);
        }
    }
    digits_one_by_one(b, i, mantissa)
}

/// The run of ASCII digits at `i`, one byte at a time: where it ends, and `mantissa` with the
/// run's digits appended (wrapping). The loop of [`unsigned_digits`] and of [`digit_run`]'s
/// last bytes.
#[inline(always)]
pub(crate) fn digits_one_by_one(b: &[u8], mut i: usize, mut mantissa: u64) -> (usize, u64) {
    while let Some(&d @ b'0'..=b'9') = b.get(i) {
        mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
        i += 1;
    }
    (i, mantissa)
}

/// The leading ASCII digits of eight bytes read little-endian (the first byte lowest): how many
/// (0–8), and their value. A byte is a digit when its high nibble is 3 and adding 6 keeps it
/// so; a carry out of a non-digit byte only reaches bytes after it, which do not count.
#[inline(always)]
pub(crate) fn eight_digits(x: u64) -> (usize, u64) {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let other = ((x & HIGH) ^ ZEROS) | ((x.wrapping_add(0x0606_0606_0606_0606) & HIGH) ^ ZEROS);
    let n = (other.trailing_zeros() / 8) as usize;
    if n == 0 {
        return (0, 0);
    }
    // The n digits moved to the top bytes, zeros (value 0) below them, then pairs, quads and
    // the eight combined by three multiplications.
    let v = (x.wrapping_sub(ZEROS) & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - n));
    let v = (v.wrapping_mul(10 << 8 | 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul(100 << 16 | 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    let v = v.wrapping_mul(10_000 << 32 | 1) >> 32;
    (n, v)
}

/// Powers of ten for [`digit_run`] (10⁰ to 10⁸).
pub(crate) const POW10_INT: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Powers of ten exact in `f64` (10²² is the largest).
pub(crate) const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The end of a JSON exponent (`e`/`E`, an optional sign, at least one digit) that starts at
/// `i`, or `None` when it has no digits ([`Scanner::number`]'s exponent rule).
#[inline]
pub(crate) fn exponent_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    if let Some(b'+' | b'-') = b.get(i) {
        i += 1;
    }
    let digits = i;
    while let Some(b'0'..=b'9') = b.get(i) {
        i += 1;
    }
    (i > digits).then_some(i)
}
