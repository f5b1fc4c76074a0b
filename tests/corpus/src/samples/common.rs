//! Host-side helpers shared by the cuda-samples ports: deterministic inputs and comparisons.

/// A 32-bit linear congruential generator (Numerical Recipes' constants): the same inputs on every
/// run and in the CUDA originals, which use the same recurrence.
pub struct Lcg(pub u32);

impl Lcg {
    /// The next 32-bit value.
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        self.0
    }
    /// The next value in `0..m` (from the high bits, which cycle slowest).
    pub fn below(&mut self, m: u32) -> u32 {
        (((self.next_u32() >> 8) as u64 * m as u64) >> 24) as u32
    }
}

/// `Err` naming the first index where `got` differs from `want` (or the lengths differ).
pub fn first_mismatch<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) -> crate::Checked {
    if got.len() != want.len() {
        return Err(format!("{what}: {} elements, expected {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!("{what}[{i}] = {:?}, expected {:?}", got[i], want[i])),
    }
}

/// CUDA samples' `nextPow2`: the smallest power of two at least `x` (1 for 0 and 1).
pub fn next_pow2(x: u32) -> u32 {
    x.max(1).next_power_of_two()
}
