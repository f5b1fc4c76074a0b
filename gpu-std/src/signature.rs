//! A kernel's signature: what its definition says it is, as one line of text —
//!
//! ```text
//! gpu-std kernel 1: user_kernels::saxpy(f32, Global<f32>, GlobalMut<f32>)
//! ```
//!
//! (the module path where [`kernel!`](crate::kernel) was invoked, the kernel's name, and each
//! parameter's type as the compiler resolved it, views with their element type and an
//! [`Output`](crate::Output) with its owner). `kernel!` writes it twice, from the same definition:
//! into the PTX module, as the bytes of a global named [`GLOBAL_PREFIX`]`<name>` next to the kernel's
//! `.entry`; and, on the host, from the same module path, name and parameter types of its
//! [`Kernel`](crate::Kernel) type ([`of`]). A GPU launch refuses a module whose global for the kernel
//! is missing or says anything else.
//!
//! The `.entry` name and the parameter sizes of a module do not tell two definitions apart (a
//! `GlobalMut<u8>` and a `GlobalMut<u64>` are both one 16-byte parameter): a stale module, a kernel
//! of the same name in another crate or module, or a definition whose types differ between the two
//! targets (a `#[cfg]`'d type alias) would launch code compiled for other parameters. Their
//! signatures differ, so the launch is refused.
//!
//! The types come from the compiler, not from the tokens of the definition: a type alias is
//! resolved on each target, and every parameter type (sealed [`KernelParam`](crate::KernelParam))
//! names itself.
//!
//! Kernel floor: names the parameter lists (`crate::params`) and the host's `Kernel`; no primitive
//! beyond the views' `KernelParam`, no backend.

pub use crate::params::{KernelTypes, ParamList, Split};
pub use crate::vocab::param::ParamType;

/// What every signature starts with (the format's version).
pub const PREFIX: &str = "gpu-std kernel 1: ";

/// The PTX global that holds kernel `k`'s signature is `__gpu_std_signature_k`.
pub const GLOBAL_PREFIX: &str = "__gpu_std_signature_";

/// Writes `s` at `at` into `out` (as much as fits; nothing when `out` is empty) and returns the
/// position after it.
const fn put(out: &mut [u8], at: usize, s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if at + i < out.len() {
            out[at + i] = bytes[i];
        }
        i += 1;
    }
    at + bytes.len()
}

/// Renders the signature of kernel `name` of module `path` with parameters `types` into `out` (as
/// much as fits) and returns its length in bytes.
const fn render(out: &mut [u8], path: &str, name: &str, types: &[ParamType]) -> usize {
    let mut at = put(out, 0, PREFIX);
    at = put(out, at, path);
    at = put(out, at, "::");
    at = put(out, at, name);
    at = put(out, at, "(");
    let mut k = 0;
    while k < types.len() {
        if k > 0 {
            at = put(out, at, ", ");
        }
        let t = types[k];
        if t.view.is_empty() {
            at = put(out, at, t.elem);
        } else {
            at = put(out, at, t.view);
            at = put(out, at, "<");
            at = put(out, at, t.elem);
            if !t.owner.is_empty() {
                at = put(out, at, ", ");
                at = put(out, at, t.owner);
            }
            at = put(out, at, ">");
        }
        k += 1;
    }
    put(out, at, ")")
}

/// Bytes of the signature (for the array that holds it).
#[doc(hidden)]
pub const fn len(path: &str, name: &str, types: &[ParamType]) -> usize {
    render(&mut [], path, name, types)
}

/// The signature's bytes; `N` is its [`len`].
#[doc(hidden)]
pub const fn bytes<const N: usize>(path: &str, name: &str, types: &[ParamType]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = render(&mut out, path, name, types);
    assert!(n == N, "gpu-std: a signature's length changed between two evaluations");
    out
}

/// The signature of kernel `name` of module `path` with parameters `types`.
#[cfg(not(target_arch = "nvptx64"))]
pub fn text(path: &str, name: &str, types: &[ParamType]) -> String {
    let mut out = vec![0u8; len(path, name, types)];
    render(&mut out, path, name, types);
    String::from_utf8(out).expect("a signature is made of UTF-8 pieces")
}

/// The signature of kernel `K`, from its [`MODULE_PATH`](crate::Kernel::MODULE_PATH),
/// [`NAME`](crate::Kernel::NAME) and the types of its [`Args`](crate::Kernel::Args): what `kernel!`
/// wrote into the PTX module for the `.entry` of the same definition.
///
/// ```
/// # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
/// gpu_std::kernel! {
///     pub fn scale<'a>(a: f32, x: gpu_std::GlobalMut<'a, f32>, out: gpu_std::Output<'a, u32, gpu_std::PerWarp>) {}
/// }
/// let signature = gpu_std::signature::of::<scale>();
/// // `gpu-std kernel 1: <this module's path>::scale(...)`
/// assert!(signature.starts_with(gpu_std::signature::PREFIX), "{signature}");
/// assert!(signature.ends_with("::scale(f32, GlobalMut<f32>, Output<u32, PerWarp>)"), "{signature}");
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub fn of<K: crate::Kernel>() -> String {
    text(K::MODULE_PATH, K::NAME, <K::Args<'static> as ParamList>::TYPES)
}
