//! Rigid copies: every internal distance of a copy, on its raw (unwrapped) coordinates, against the
//! same distance in its template. Raw, not under the minimum image: a molecule longer than half the
//! box is judged right (`check_packing.py`'s minimum-image distances call it distorted), and a copy
//! split across the boundary is caught as the distortion it is for a host that keeps molecules whole.

/// The largest |d_ij(copy) − d_ij(template)| (Å) over the atom pairs of one copy (atoms in the
/// template's order). 0 for a single atom.
pub fn max_deviation(copy: &[[f64; 3]], template: &[[f64; 3]]) -> f64 {
    let d = |a: &[f64; 3], b: &[f64; 3]| {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    };
    let mut worst = 0.0f64;
    for i in 0..copy.len() {
        for j in i + 1..copy.len() {
            worst = worst.max((d(&copy[i], &copy[j]) - d(&template[i], &template[j])).abs());
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_copy_is_rigid_a_split_one_is_not() {
        let t = [[0.0, 0.0, 0.0], [0.96, 0.0, 0.0], [-0.24, 0.93, 0.0]];
        let moved: Vec<[f64; 3]> = t.iter().map(|p| [p[2] + 40.0, p[0] - 3.0, p[1]]).collect();
        assert!(max_deviation(&moved, &t) < 1e-12);
        // One atom wrapped into the other side of a 20 Å box.
        let split = [t[0], [t[1][0] - 20.0, 0.0, 0.0], t[2]];
        assert!(max_deviation(&split, &t) > 18.0);
    }
}
