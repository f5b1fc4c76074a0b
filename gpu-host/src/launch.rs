//! Launch shapes, argument marshalling for the driver API, and timings.
//!
//! A leaf: imports nothing of the crate.

use gpu_std::emu::LaunchConfig;

/// A launch: grid, block, dynamic shared bytes, cooperative or not (`kernel<<<grid, block, shared>>>`).
pub type Launch = LaunchConfig;

/// The whole-warp-aligned 1-D launch that covers `n` items with `block` threads per block, capped at
/// `max_grid` blocks (a kernel loops grid-stride over the rest), with `shared_bytes` of dynamic shared
/// memory per block.
pub fn cover(n: usize, block: u32, max_grid: u32, shared_bytes: usize) -> Launch {
    let blocks = n.div_ceil(block as usize).clamp(1, max_grid.max(1) as usize) as u32;
    LaunchConfig::linear(blocks, block, shared_bytes)
}

/// Median kernel time over repeated launches.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// The median, in milliseconds.
    pub median_ms: f64,
    /// How many timed launches it is the median of.
    pub reps: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cover_caps_the_grid_and_launches_at_least_one_block() {
        assert_eq!(cover(0, 256, 8, 0).grid.x, 1);
        assert_eq!(cover(257, 256, 8, 0).grid.x, 2);
        assert_eq!(cover(1 << 20, 256, 8, 64).grid.x, 8);
        assert_eq!(cover(1 << 20, 256, 8, 64).shared_bytes, 64);
    }

    #[test]
    fn views_are_sixteen_bytes_and_scalars_their_own_size() {
        use gpu_std::KernelArgs;
        assert_eq!(<(f32, gpu_std::Global<u8>, u64)>::sizes(), [4, 16, 8]);
    }
}
