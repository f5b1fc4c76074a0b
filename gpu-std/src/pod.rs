//! Plain old data: the element types that may cross between host and device, live in a view of global
//! or shared memory, or be stored in a host buffer.
//!
//! [`Pod`] is sealed: it holds exactly the integer and floating-point scalars, for which every bit
//! pattern is a valid value, there is no padding, and no pointer or lifetime is hidden inside. That is
//! what makes racy demonstrations sound: a value torn or stale because of a race is still a valid value
//! of its type, and memory read back from the device needs no validation. A `bool`, a reference or a
//! struct with padding cannot be a view element:
//!
//! ```compile_fail,E0277
//! fn needs_pod<T: gpu_std::Pod>() {}
//! needs_pod::<bool>(); // not every byte is a valid bool
//! ```
//! ```compile_fail,E0277
//! fn needs_pod<T: gpu_std::Pod>() {}
//! needs_pod::<&'static u32>(); // a host pointer means nothing on the device
//! ```

mod sealed {
    pub trait Sealed {}
}

/// A scalar that any bit pattern of its size is a valid value of: `u8`, `i8`, `u16`, `i16`, `u32`,
/// `i32`, `u64`, `i64`, `f32`, `f64`. Sealed: the set is fixed, so every access of a view can be
/// emitted as one PTX load or store of the element's width.
pub trait Pod: Copy + Default + PartialEq + core::fmt::Debug + sealed::Sealed + 'static {
    /// The type's name (`u32`), for kernel signatures ([`crate::signature`]).
    #[doc(hidden)]
    const NAME: &'static str;
}

macro_rules! pod {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Pod for $t {
            const NAME: &'static str = stringify!($t);
        }
    )*};
}
pod!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);
