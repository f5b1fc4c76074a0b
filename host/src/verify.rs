//! Checking results against CPU references: integers exactly, floats against an f64 reference with a
//! stated relative tolerance; NaN never passes; every element is checked and the first mismatches
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
    let first: Vec<String> = bad.iter().take(5).map(|&i| format!("[{i}] got {:?} want {:?}", got[i], want[i])).collect();
    Some(format!("{what}: {} of {} elements differ: {}", bad.len(), got.len(), first.join(", ")))
}

/// `|got - want| <= rel * max(|want|, floor)` for every element, NaN failing. `floor` keeps the bound
/// meaningful near zero (sums of mixed signs).
pub fn close(got: &[f64], want: &[f64], rel: f64, floor: f64, what: &str) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{what}: {} elements, expected {}", got.len(), want.len()));
    }
    let bad: Vec<usize> = (0..got.len())
        .filter(|&i| {
            let (g, w) = (got[i], want[i]);
            !(g.is_finite() && (g - w).abs() <= rel * w.abs().max(floor))
        })
        .collect();
    if bad.is_empty() {
        return None;
    }
    let first: Vec<String> =
        bad.iter().take(5).map(|&i| format!("[{i}] got {} want {} (rel err {:.2e})", got[i], want[i], ((got[i] - want[i]) / want[i].abs().max(floor)).abs())).collect();
    Some(format!("{what}: {} of {} elements outside rel {rel:e}: {}", bad.len(), got.len(), first.join(", ")))
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
        assert!(close(&[1.0, f64::NAN], &[1.0, 1.0], 1e-6, 1.0, "y").is_some());
        assert!(close(&[1.0 + 1e-9], &[1.0], 1e-6, 1.0, "y").is_none());
        assert!(close(&[1.1], &[1.0], 1e-6, 1.0, "y").is_some());
    }
}
