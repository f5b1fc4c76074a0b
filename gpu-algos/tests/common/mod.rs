//! The checks that the library's emulator tests and its GPU tests (`tests/tests/algos_gpu.rs`, which
//! includes this file) share.
#![allow(dead_code)]

/// The inclusive and the exclusive prefix sums of `x` by `add` (wrapping, for integers).
pub fn prefixes<T: Copy + Default>(x: &[T], add: impl Fn(T, T) -> T) -> (Vec<T>, Vec<T>) {
    let mut incl = Vec::with_capacity(x.len());
    let mut acc = T::default();
    for &v in x {
        acc = add(acc, v);
        incl.push(acc);
    }
    let excl = (0..x.len()).map(|i| if i == 0 { T::default() } else { incl[i - 1] }).collect();
    (incl, excl)
}

/// Asserts that `got`, the float scan of `x` (`exclusive` or inclusive) on tiles of `tile` elements,
/// is within the library's stated bound of the exact prefix: `(t + 64) u sum|x[..=i]|` for an
/// element of tile `t`, `u` the unit roundoff.
pub fn assert_float_scan<T: Copy + Into<f64> + std::fmt::Debug>(
    x: &[T],
    got: &[T],
    exclusive: bool,
    tile: usize,
    u: f64,
) {
    let n = x.len();
    let (mut exact, mut abs) = (0.0f64, 0.0f64);
    for i in 0..n {
        if !exclusive {
            exact += x[i].into();
            abs += x[i].into().abs();
        }
        let bound = ((i / tile) as f64 + 64.0) * u * abs;
        let g: f64 = got[i].into();
        assert!((g - exact).abs() <= bound, "exclusive {exclusive}, n = {n}, i = {i}: {g} against {exact}");
        if exclusive {
            exact += x[i].into();
            abs += x[i].into().abs();
        }
    }
}
