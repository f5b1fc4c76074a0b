//! [`Dim3`], CUDA's `dim3`: a grid's or a block's extent, a block's or a thread's index.
//!
//! Ground floor: imports nothing of gpu-std. Re-exported by [`crate::thread`] and the crate root.

/// A 3-component extent or index, like CUDA's `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Dim3 {
    /// First component (the fastest-varying in linear thread numbering).
    pub x: u32,
    /// Second component.
    pub y: u32,
    /// Third component.
    pub z: u32,
}

impl Dim3 {
    /// `(x, 1, 1)`.
    pub const fn x(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }
    /// `(x, y, z)`.
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        Dim3 { x, y, z }
    }
    /// `x * y * z`, as u64 so that no extent overflows.
    pub const fn volume(&self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
    /// Row-major linear index of `idx` within an extent `self` (x fastest), as CUDA numbers threads.
    pub const fn linear(&self, idx: Dim3) -> u32 {
        idx.x + self.x * (idx.y + self.y * idx.z)
    }
    /// Inverse of [`Dim3::linear`].
    pub const fn delinear(&self, i: u32) -> Dim3 {
        Dim3 { x: i % self.x, y: (i / self.x) % self.y, z: i / (self.x * self.y) }
    }
}
