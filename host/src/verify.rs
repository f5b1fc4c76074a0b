//! Checking results against CPU references: integers exactly, floats against an f64 reference within
//! a stated error bound; NaN never passes; every element is checked and the first mismatches
//! are reported.

/// Compensated (Kahan–Babuška) sum in f64: the reference for float reductions.
pub fn kahan_sum(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for x in xs {
        let t = s + x;
        if s.abs() >= x.abs() {
            c += (s - t) + x;
        } else {
            c += (x - t) + s;
        }
        s = t;
    }
    s + c
}

/// Compares every element exactly; returns `None` if equal, else a description of the first
/// mismatches (at most 5) and their count.
pub fn exact<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{what}: {} elements, expected {}", got.len(), want.len()));
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    if bad.is_empty() {
        return None;
    }
    let first: Vec<String> =
        bad.iter().take(5).map(|&i| format!("[{i}] got {:?} want {:?}", got[i], want[i])).collect();
    Some(format!("{what}: {} of {} elements differ: {}", bad.len(), got.len(), first.join(", ")))
}

/// `|got - want| <= bound`, NaN and infinities failing (approx's `abs_diff_eq`, plus a finiteness
/// check so that an infinite result never passes a huge bound).
pub fn within(got: f64, want: f64, bound: f64) -> bool {
    got.is_finite() && approx::abs_diff_eq!(got, want, epsilon = bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn kahan_recovers_small_terms() {
        let xs = std::iter::once(1e16).chain(std::iter::repeat_n(1.0, 1000)).chain(std::iter::once(-1e16));
        assert_eq!(kahan_sum(xs), 1000.0);
    }
    #[test]
    fn comparisons_fail_on_mismatch_and_nan() {
        assert!(exact(&[1, 2, 3], &[1, 2, 3], "x").is_none());
        assert!(exact(&[1, 2, 4], &[1, 2, 3], "x").unwrap().contains("[2] got 4 want 3"));
        assert!(!within(f64::NAN, 1.0, 1e9));
        assert!(!within(f64::INFINITY, 1.0, f64::MAX));
        assert!(within(1.0 + 1e-9, 1.0, 1e-6));
        assert!(!within(1.1, 1.0, 1e-6));
    }
}
