//! [`Site`]: where in the kernel source a primitive was called, and [`site`], which takes it.
//!
//! Ground floor: imports nothing of gpu-std. Re-exported by the crate root.

/// Where in the kernel source a primitive was called: a `Location` on the host (the emulator names it
/// in its reports), nothing on the GPU.
#[cfg(not(target_arch = "nvptx64"))]
pub type Site = &'static core::panic::Location<'static>;
/// Where in the kernel source a primitive was called: nothing on the GPU (a `Location` on the host,
/// where the emulator names it in its reports).
#[cfg(target_arch = "nvptx64")]
pub type Site = ();

#[doc(hidden)]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn site() -> Site {
    #[cfg(not(target_arch = "nvptx64"))]
    {
        core::panic::Location::caller()
    }
}
