//! [`ParamType`]: one kernel parameter's type, as a kernel's signature names it. Every parameter type
//! names itself with one ([`crate::memory::KernelParam::TYPE`]); [`crate::signature`] writes them.
//!
//! Ground floor: imports nothing of gpu-std. Re-exported by [`crate::signature`].

/// One parameter's type, as a signature names it: `u32`, `Global<f32>`, `Output<u32, PerWarp>`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct ParamType {
    /// `Global`, `GlobalMut`, `Output`, or empty for a scalar.
    pub view: &'static str,
    /// The scalar or element type.
    pub elem: &'static str,
    /// An `Output`'s owner, else empty.
    pub owner: &'static str,
}
