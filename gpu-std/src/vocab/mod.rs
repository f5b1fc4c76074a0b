//! The ground floor of gpu-std: the words every other file speaks, and nothing else.
//!
//! Scopes and state spaces ([`scope`]), plain and volatile accesses and cache operators ([`access`]),
//! atomic operations and the types that have them ([`atom`]), call sites ([`site`]), `dim3`
//! ([`dim3`]), a warp's lanes and shuffle rule ([`lanes`]), a shared layout's arrays
//! ([`shared_field`]) and a kernel parameter's type as a signature names it ([`param`]).
//!
//! The files here import nothing of gpu-std but each other and [`crate::pod`]: not the PTX layer,
//! not the emulator, no view or primitive. Every item is re-exported where kernels have always found
//! it (`gpu_std::atomic::ScopeKind`, `gpu_std::memory::Access`, `gpu_std::Site`, `gpu_std::Dim3`,
//! ...), so this module is private.

pub mod access;
pub mod atom;
pub mod dim3;
pub mod lanes;
pub mod param;
pub mod scope;
pub mod shared_field;
pub mod site;
