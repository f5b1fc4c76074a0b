//! A launch's arguments on the host: the kernel's parameter tuple ([`KernelArgs`]), the checks every
//! launcher makes before launching ([`KernelArgs::check_launch`]), and the argument tuples launchers
//! accept ([`IntoArgs`]): the parameters themselves, or views that *borrow* the buffer they point into
//! ([`Arg`]), so that a launch can never be given a freed buffer.
//!
//! A buffer type hands out its views as `Arg`s tied to a borrow of itself: `view()` and `view_mut()`
//! borrow it shared, `output()` exclusively (an [`Output`](crate::Output) must be the only view of its elements).
//! Both the emulator's [`Buffer`](crate::emu::Buffer) and the host runner's device buffers work this way.

use crate::Dim3;
use crate::memory::KernelParam;
use crate::pod::Pod;
use core::ffi::c_void;
use core::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// The memory a view points into: host memory (the emulator's buffers), or one GPU context's device
/// memory. A launcher accepts only views into its own memory: a device address dereferenced on the host
/// (or a host address on a GPU) is refused before the launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemorySpace(u64);

impl MemorySpace {
    /// Host memory: where the emulator's buffers live.
    pub const HOST: MemorySpace = MemorySpace(0);

    /// A memory space distinct from every other this process made (for a GPU context).
    pub fn unique() -> MemorySpace {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        MemorySpace(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// One view among a launch's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewArg {
    /// Position of the argument in the kernel's parameter list.
    pub position: usize,
    /// First byte the view reaches.
    pub base: usize,
    /// Bytes the view reaches.
    pub bytes: usize,
    /// Whether it is an [`Output`](crate::Output) view (one writer per element; no other view may overlap it).
    pub output: bool,
}

/// A kernel's parameter tuple: every element a [`KernelParam`]. The emulator reads the device memory
/// regions the views give access to, and checks each access of the launch against them. Sealed
/// through [`ParamList`](crate::signature::ParamList): the tuples of [`KernelParam`]s, whose
/// implementations are this crate's.
pub trait KernelArgs: Copy + crate::signature::ParamList {
    /// Every view among the arguments, in parameter order.
    fn views(&self) -> Vec<ViewArg>;
    /// A pointer to each parameter, in order: the argument array of `cuLaunchKernel`.
    fn pointers(&mut self) -> Vec<*mut c_void>;
    /// The size in bytes of each parameter, in order (checked against the kernel's parameters in a
    /// PTX module before a GPU launch).
    fn sizes() -> Vec<usize>;
    /// Whether an argument (an [`Output`](crate::Output) view) requires a 1-D launch.
    fn needs_1d_launch(&self) -> bool;
    /// `Err` with the reason if the launch breaks what an argument requires: an [`Output`](crate::Output) view needs
    /// grid and block `y = z = 1`, and no other view of the launch may overlap an `Output` (two
    /// threads could then write one element). `params` are the kernel's parameter names
    /// ([`Kernel::PARAMS`](crate::Kernel::PARAMS)), for the message. Every safe launcher calls it.
    fn check_launch(&self, kernel: &str, params: &[&str], grid: Dim3, block: Dim3) -> Result<(), String> {
        let one_d = |d: Dim3| d.y == 1 && d.z == 1;
        if self.needs_1d_launch() && !(one_d(grid) && one_d(block)) {
            return Err(format!(
                "kernel `{kernel}` writes through an Output view, whose one-writer-per-element rule is defined on \
                 the 1-D global index: launch it 1-D (grid {grid:?} and block {block:?} must have y = z = 1)"
            ));
        }
        let views = self.views();
        for v in &views {
            check_region(kernel, params, v)?;
        }
        for out in views.iter().filter(|v| v.output && v.bytes > 0) {
            let overlap = views.iter().find(|v| v.position != out.position && v.overlaps(out));
            if let Some(other) = overlap {
                return Err(format!(
                    "kernel `{kernel}`: {} (an Output view of {} bytes at {:#x}) overlaps {}; an Output must be \
                     the only view of its elements in a launch, or two threads could write one element",
                    param_name(params, out.position),
                    out.bytes,
                    out.base,
                    param_name(params, other.position),
                ));
            }
        }
        Ok(())
    }
}

impl ViewArg {
    /// One past the last byte the view reaches (`base + bytes`; saturating, for a view that
    /// [`KernelArgs::check_launch`] refuses).
    pub fn end(&self) -> usize {
        self.base.saturating_add(self.bytes)
    }

    /// Whether both views reach at least one common byte (an empty view overlaps nothing).
    pub fn overlaps(&self, other: &ViewArg) -> bool {
        self.bytes > 0 && other.bytes > 0 && self.base < other.end() && other.base < self.end()
    }
}

/// `Err` naming both parameters when an [`Output`](crate::Output) view of one of two launches that run
/// at the same time overlaps any view of the other: the `Output`'s rule (one writer per element, no
/// other view of its elements) holds within each launch ([`KernelArgs::check_launch`]), and must hold
/// across the pair too, or a thread of each grid could write one element. `kernel0`, `params0` and
/// `views0` describe the first launch (its [`Kernel::NAME`](crate::Kernel::NAME),
/// [`Kernel::PARAMS`](crate::Kernel::PARAMS) and [`KernelArgs::views`]), the others the second.
/// [`GlobalMut`](crate::GlobalMut) and [`Global`](crate::Global) views may overlap across the pair as
/// they may within one launch (flags and atomics that both grids use; races there are racy values).
/// Every launcher of two grids at once calls it, after checking each launch alone.
pub fn check_concurrent_views(
    kernel0: &str,
    params0: &[&str],
    views0: &[ViewArg],
    kernel1: &str,
    params1: &[&str],
    views1: &[ViewArg],
) -> Result<(), String> {
    let launch = |first: bool, kernel: &str, params: &[&str], v: &ViewArg| {
        format!(
            "{} of the {} launch (kernel `{kernel}`)",
            param_name(params, v.position),
            if first { "first" } else { "second" }
        )
    };
    for a in views0 {
        for b in views1 {
            if (a.output || b.output) && a.overlaps(b) {
                let (out, other) = if a.output {
                    (launch(true, kernel0, params0, a), launch(false, kernel1, params1, b))
                } else {
                    (launch(false, kernel1, params1, b), launch(true, kernel0, params0, a))
                };
                let o = if a.output { a } else { b };
                return Err(format!(
                    "kernels `{kernel0}` and `{kernel1}` run at the same time, and {out} (an Output view of {} bytes \
                     at {:#x}) overlaps {other}; an Output must be the only view of its elements, or two threads \
                     could write one element",
                    o.bytes, o.base
                ));
            }
        }
    }
    Ok(())
}

/// `Err` unless the view's bytes lie within one possible allocation: at most `isize::MAX` of them, and
/// the last one below the end of the address space. A view from its buffer always does; one made with
/// `from_raw_parts` from a length whose size in bytes overflows does not, and must not reach a launch
/// (the regions a launch may touch, and the overlap checks, are computed from `base + bytes`).
fn check_region(kernel: &str, params: &[&str], v: &ViewArg) -> Result<(), String> {
    if v.bytes > isize::MAX as usize || v.base.checked_add(v.bytes).is_none() {
        return Err(format!(
            "kernel `{kernel}`: {} is a view of {} bytes at {:#x}, more than one allocation can hold (its \
             length in bytes overflows): no buffer has such a view",
            param_name(params, v.position),
            if v.bytes == usize::MAX { "more than usize::MAX".to_string() } else { v.bytes.to_string() },
            v.base,
        ));
    }
    Ok(())
}

/// `parameter `name`` if the name is known, else `parameter k`.
pub(crate) fn param_name(params: &[&str], position: usize) -> String {
    match params.get(position) {
        Some(name) => format!("parameter `{name}`"),
        None => format!("parameter {position}"),
    }
}

/// A kernel argument that is a view into a buffer and borrows that buffer for `'a`: the buffer cannot
/// be freed (or, for an [`Output`](crate::Output), viewed again) while the argument exists. It also
/// knows which memory the buffer is in, so that a launcher can refuse another device's memory.
#[derive(Clone, Copy, Debug)]
pub struct Arg<'a, P: KernelParam> {
    param: P,
    space: MemorySpace,
    _buffer: PhantomData<&'a ()>,
}

impl<'a, P: KernelParam> Arg<'a, P> {
    /// Wraps a view into host memory that borrows its buffer for `'a`.
    ///
    /// # Safety
    /// The memory `param` reaches must stay valid for `'a`, and the caller must tie `'a` to a borrow
    /// of the buffer that owns it: a shared borrow for [`Global`](crate::Global) and
    /// [`GlobalMut`](crate::GlobalMut) views, an exclusive one for an [`Output`](crate::Output).
    pub unsafe fn new(param: P) -> Self {
        // SAFETY: the caller's contract, for host memory.
        unsafe { Arg::in_space(param, MemorySpace::HOST) }
    }

    /// Wraps a view into the memory `space` that borrows its buffer for `'a`.
    ///
    /// # Safety
    /// As [`Arg::new`], and `param` must point into `space`.
    pub unsafe fn in_space(param: P, space: MemorySpace) -> Self {
        Arg { param, space, _buffer: PhantomData }
    }
}

/// One argument of a launch as the caller writes it: a [`Pod`] scalar, or an [`Arg`] holding a view
/// that borrows its buffer. A bare view is not one: it proves nothing about the memory it points to,
/// and goes only to the `unsafe` launchers that take the parameter tuple itself. Sealed: a launcher
/// trusts what `space` says, so no other type may implement it.
pub trait IntoParam: Copy + into_param_sealed::Sealed {
    /// What the kernel receives.
    type Param: KernelParam;
    /// The parameter, without the borrow an [`Arg`] holds.
    ///
    /// # Safety
    /// Use the result only while `self` is alive (for a launch that completes before the call that
    /// received `self` returns): a view taken out of its [`Arg`] no longer keeps its buffer alive.
    unsafe fn into_param(self) -> Self::Param;
    /// The memory a view points into (`None` for a scalar).
    fn space(&self) -> Option<MemorySpace>;
}
mod into_param_sealed {
    pub trait Sealed {}
    impl<T: crate::pod::Pod + crate::memory::KernelParam> Sealed for T {}
    impl<P: crate::memory::KernelParam> Sealed for super::Arg<'_, P> {}
}

mod into_args_sealed {
    pub trait Sealed {}
}

impl<T: Pod + KernelParam> IntoParam for T {
    type Param = T;
    unsafe fn into_param(self) -> T {
        self
    }
    fn space(&self) -> Option<MemorySpace> {
        None
    }
}
impl<P: KernelParam> IntoParam for Arg<'_, P> {
    type Param = P;
    unsafe fn into_param(self) -> P {
        self.param
    }
    fn space(&self) -> Option<MemorySpace> {
        Some(self.space)
    }
}

/// A launch's argument tuple as the caller writes it: each element an [`IntoParam`]. Launchers take
/// `impl IntoArgs<Params = K::Args>`. Sealed (the tuples of [`IntoParam`]s): a launcher trusts what
/// [`spaces`](IntoArgs::spaces) and [`check_space`](IntoArgs::check_space) say before it gives the
/// views to a kernel, so no other type may implement it, nor override them:
///
/// ```compile_fail,E0277
/// #[derive(Clone, Copy)]
/// struct Lies;
/// impl gpu_std::IntoArgs for Lies { // error: the sealed trait's supertrait is not implemented
///     type Params = (u32,);
///     unsafe fn into_args(self) -> (u32,) { (0,) }
///     fn spaces(&self) -> Vec<(usize, gpu_std::MemorySpace)> { Vec::new() }
/// }
/// ```
pub trait IntoArgs: Copy + into_args_sealed::Sealed {
    /// The kernel's parameter tuple.
    type Params: KernelArgs;
    /// The parameters, without the borrows the [`Arg`]s hold.
    ///
    /// # Safety
    /// As [`IntoParam::into_param`]: use the result only while `self` is alive, for a launch that
    /// completes before the launcher returns.
    unsafe fn into_args(self) -> Self::Params;
    /// The memory each view argument points into, as `(position, space)`.
    fn spaces(&self) -> Vec<(usize, MemorySpace)>;
    /// `Err` naming the first argument whose view points outside `space` (the launcher's memory: a GPU
    /// buffer given to the emulator, a host buffer or another GPU context's given to a GPU).
    fn check_space(&self, kernel: &str, params: &[&str], space: MemorySpace) -> Result<(), String> {
        self.check_space_with_peers(kernel, params, space, &[])
    }
    /// [`IntoArgs::check_space`] for a launcher that may also reach the memory `peers` (other GPUs'
    /// contexts whose memory it enabled peer access to): `Err` naming the first argument whose view
    /// points into neither `space` nor a peer.
    fn check_space_with_peers(
        &self,
        kernel: &str,
        params: &[&str],
        space: MemorySpace,
        peers: &[MemorySpace],
    ) -> Result<(), String> {
        match self.spaces().into_iter().find(|(_, s)| *s != space && !peers.contains(s)) {
            None => Ok(()),
            Some((position, _)) => Err(format!(
                "kernel `{kernel}`: {} is a view of another device's memory (a buffer of another device, or \
                 of a GPU given to the emulator); a launch takes only views of its own device's buffers, or of a \
                 peer GPU's after enabling peer access to it",
                param_name(params, position)
            )),
        }
    }
}

macro_rules! kernel_args {
    ($($p:ident $a:ident : $i:tt),*) => {
        impl<$($p: KernelParam),*> KernelArgs for ($($p,)*) {
            fn views(&self) -> Vec<ViewArg> {
                #[allow(unused_mut)]
                let mut v = Vec::new();
                $(if let Some((base, bytes)) = self.$i.region() {
                    v.push(ViewArg { position: $i, base, bytes, output: self.$i.exclusive() });
                })*
                v
            }
            fn needs_1d_launch(&self) -> bool {
                false $(|| self.$i.needs_1d_launch())*
            }
            fn pointers(&mut self) -> Vec<*mut c_void> {
                vec![$(&mut self.$i as *mut $p as *mut c_void),*]
            }
            fn sizes() -> Vec<usize> {
                vec![$(size_of::<$p>()),*]
            }
        }
        impl<$($a: IntoParam),*> into_args_sealed::Sealed for ($($a,)*) {}
        impl<$($a: IntoParam),*> IntoArgs for ($($a,)*) {
            type Params = ($($a::Param,)*);
            #[allow(clippy::unused_unit)]
            unsafe fn into_args(self) -> Self::Params {
                // SAFETY: the caller's contract covers every element.
                #[allow(unused_unsafe)]
                unsafe { ($(self.$i.into_param(),)*) }
            }
            fn spaces(&self) -> Vec<(usize, MemorySpace)> {
                #[allow(unused_mut)]
                let mut v = Vec::new();
                $(if let Some(s) = self.$i.space() { v.push(($i, s)); })*
                v
            }
        }
    };
}
kernel_args!();
kernel_args!(PA A: 0);
kernel_args!(PA A: 0, PB B: 1);
kernel_args!(PA A: 0, PB B: 1, PC C: 2);
kernel_args!(PA A: 0, PB B: 1, PC C: 2, PD D: 3);
kernel_args!(PA A: 0, PB B: 1, PC C: 2, PD D: 3, PE E: 4);
kernel_args!(PA A: 0, PB B: 1, PC C: 2, PD D: 3, PE E: 4, PF F: 5);
kernel_args!(PA A: 0, PB B: 1, PC C: 2, PD D: 3, PE E: 4, PF F: 5, PG G: 6);
kernel_args!(PA A: 0, PB B: 1, PC C: 2, PD D: 3, PE E: 4, PF F: 5, PG G: 6, PH H: 7);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Global, GlobalMut, Output};

    #[test]
    fn a_view_whose_size_in_bytes_overflows_is_refused_by_every_launcher() {
        let data = [0u64; 1];
        // (2^61 + 1) * 8 wraps round to 8 bytes: unchecked, the launch's regions (what the emulator lets
        // the kernel touch) and the overlap checks would see one element where the view has 2^61 + 1.
        // SAFETY: never launched: only its region is read (and refused).
        let huge = unsafe { GlobalMut::from_raw_parts(data.as_ptr() as *mut u64, (1 << 61) + 1) };
        assert_eq!(huge.region(), Some((data.as_ptr() as usize, usize::MAX)), "saturates, never wraps");
        let e = (1u32, huge).check_launch("k", &["n", "x"], Dim3::x(1), Dim3::x(1)).unwrap_err();
        assert!(e.contains("kernel `k`: parameter `x`") && e.contains("more than one allocation can hold"), "{e}");
        // A region that fits in the address space but runs past its end.
        // SAFETY: as above.
        let past_end = unsafe { Global::from_raw_parts((usize::MAX - 7) as *const u64, 2) };
        assert!((past_end,).check_launch("k", &["x"], Dim3::x(1), Dim3::x(1)).is_err());
        // SAFETY: as above.
        let fine = unsafe { Global::from_raw_parts(data.as_ptr(), 1) };
        assert!((fine,).check_launch("k", &["x"], Dim3::x(1), Dim3::x(1)).is_ok());
    }

    #[test]
    fn an_output_of_one_launch_overlapping_a_view_of_another_running_with_it_is_refused() {
        let data = [0u32; 8];
        // SAFETY: never launched.
        let (out, flags, x) = unsafe {
            (
                Output::<u32>::from_raw_parts(data.as_ptr() as *mut u32, 4),
                GlobalMut::from_raw_parts(data[4..].as_ptr() as *mut u32, 4),
                Global::from_raw_parts(data[2..].as_ptr(), 1),
            )
        };
        let (first, second) = ((out, flags).views(), (flags, x).views());
        // `flags` in both launches is allowed; `x` of the second overlaps `out` of the first.
        let e = check_concurrent_views("a", &["out", "flags"], &first, "b", &["flags", "x"], &second).unwrap_err();
        assert!(
            e.contains("parameter `out` of the first launch (kernel `a`)")
                && e.contains("overlaps parameter `x` of the second launch (kernel `b`)"),
            "{e}"
        );
        // The other way round: the Output is named first either way.
        let e = check_concurrent_views("b", &["flags", "x"], &second, "a", &["out", "flags"], &first).unwrap_err();
        assert!(e.contains("parameter `out` of the second launch (kernel `a`)"), "{e}");
        // One Output given to both launches.
        let e = check_concurrent_views("a", &["out"], &(out,).views(), "a", &["out"], &(out,).views()).unwrap_err();
        assert!(e.contains("of the first launch") && e.contains("of the second launch"), "{e}");
        // Shared GlobalMut views, and views apart from the Output, are fine.
        assert!(check_concurrent_views("a", &[], &(flags,).views(), "b", &[], &(flags, flags).views()).is_ok());
        let apart = (flags,).views();
        assert!(check_concurrent_views("a", &[], &(out,).views(), "b", &[], &apart).is_ok());
    }

    #[test]
    fn an_output_overlapping_another_view_is_refused() {
        let data = [0u32; 8];
        // SAFETY: never launched.
        let (out, x) = unsafe {
            (Output::<u32>::from_raw_parts(data.as_ptr() as *mut u32, 4), Global::from_raw_parts(data[3..].as_ptr(), 5))
        };
        let e = (x, out).check_launch("k", &["x", "out"], Dim3::x(1), Dim3::x(1)).unwrap_err();
        assert!(e.contains("parameter `out`") && e.contains("overlaps parameter `x`"), "{e}");
        // SAFETY: as above.
        let apart = unsafe { Global::from_raw_parts(data[4..].as_ptr(), 4) };
        assert!((apart, out).check_launch("k", &["x", "out"], Dim3::x(1), Dim3::x(1)).is_ok());
    }

    #[test]
    fn a_view_of_another_space_is_accepted_only_from_a_listed_peer() {
        let (own, peer, other) = (MemorySpace::unique(), MemorySpace::unique(), MemorySpace::unique());
        let data = [0u32; 4];
        // SAFETY: never launched: only the space the argument names is read.
        let view = unsafe { Arg::in_space(Global::from_raw_parts(data.as_ptr(), 4), peer) };
        let args = (view, 1u32);
        let names = ["x", "n"];
        let refused = args.check_space("k", &names, own).unwrap_err();
        assert!(refused.contains("parameter `x`") && refused.contains("after enabling peer access"), "{refused}");
        assert!(args.check_space_with_peers("k", &names, own, &[peer]).is_ok());
        assert!(args.check_space_with_peers("k", &names, own, &[other]).is_err());
        assert!(args.check_space_with_peers("k", &names, peer, &[]).is_ok());
    }
}
