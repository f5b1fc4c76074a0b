//! Which kernel of `gpu-algos-kernels` serves each element type: one trait per family, implemented for
//! each type by a macro, so that the calls are generic over the element type.
use gpu_algos_kernels::element::{Element, Max, Min, Sum};
use gpu_algos_kernels::histogram::even::{self, Sample};
use gpu_algos_kernels::{reduce as rk, scan as sk, sort as so};
use gpu_host::Result;
use gpu_host::{Buffer, Device, Launch, Sequence};
use gpu_std::{Arg, Dim3, Global, GlobalMut};

mod sealed {
    /// The element types of the scans, histograms and sorts.
    pub trait Sealed {}
    /// The pairs (element type, operation) of the reductions: sealed on the pair, not only on the
    /// type, or `impl Reducible<MyOp> for u32` would compile downstream and be handed the library's
    /// temporary storage.
    pub trait SealedWith<O> {}
}

/// An element type that the reductions with `O` take: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`, with
/// `O` one of [`Sum`], [`Min`], [`Max`]. Sealed on the pair: the library's kernels exist for these
/// only, and another crate cannot add a pair (the library hands an implementation its temporary
/// storage):
///
/// ```compile_fail,E0277
/// #[derive(Clone, Copy)]
/// struct MyOp;
/// impl gpu_algos::Reducible<MyOp> for u32 { // error: `SealedWith<MyOp>` is not implemented for `u32`
///     const SMALL_KERNEL: &'static str = "reduce_small_sum_u32";
///     const FAST_KERNEL: &'static str = "reduce_sum_u32";
///     fn identity() -> u32 { 0 }
///     fn launch_small(_: &gpu_host::Device, _: gpu_host::Launch, _: &gpu_host::Buffer<'_, u32>, _: &gpu_host::Buffer<'_, u32>) -> gpu_host::Result<()> { Ok(()) }
///     fn launch_fast(_: &gpu_host::Device, _: gpu_host::Launch, _: &gpu_host::Buffer<'_, u32>, _: u32, _: &gpu_host::Buffer<'_, u64>, _: &gpu_host::Buffer<'_, u32>, _: &gpu_host::Buffer<'_, u32>) -> gpu_host::Result<()> { Ok(()) }
///     fn resident(_: &gpu_host::Device) -> gpu_host::Result<u32> { Ok(1) }
/// }
/// ```
pub trait Reducible<O>: Element + sealed::SealedWith<O> {
    /// The PTX entry of the one-block kernel (`reduce_small_*`).
    const SMALL_KERNEL: &'static str;
    /// The PTX entry of the grid-wide kernel (`reduce_*`).
    const FAST_KERNEL: &'static str;
    /// The identity of `O` (the result of an empty input).
    fn identity() -> Self;
    /// Launches `reduce_small_*` with `x` into `out[0]`.
    fn launch_small(dev: &Device, cfg: Launch, x: &Buffer<'_, Self>, out: &Buffer<'_, Self>) -> Result<()>;
    /// Launches `reduce_*` with `x` into `out[0]`.
    fn launch_fast(
        dev: &Device,
        cfg: Launch,
        x: &Buffer<'_, Self>,
        vblocks: u32,
        partials: &Buffer<'_, u64>,
        ticket: &Buffer<'_, u32>,
        out: &Buffer<'_, Self>,
    ) -> Result<()>;
    /// Blocks of `reduce_*` resident at once (occupancy x SMs; the emulator's resident blocks).
    fn resident(dev: &Device) -> Result<u32>;
}

macro_rules! reducible {
    ($($op:ident, $t:ty: $small:ident, $fast:ident;)*) => {$(
        impl sealed::SealedWith<$op> for $t {}
        impl Reducible<$op> for $t {
            const SMALL_KERNEL: &'static str = <rk::$small as gpu_std::Kernel>::NAME;
            const FAST_KERNEL: &'static str = <rk::$fast as gpu_std::Kernel>::NAME;
            fn identity() -> $t {
                <$op as gpu_algos_kernels::element::Op<$t>>::identity()
            }
            fn launch_small(dev: &Device, cfg: Launch, x: &Buffer<'_, $t>, out: &Buffer<'_, $t>) -> Result<()> {
                dev.launch::<rk::$small>(cfg, (x.view(), out.view_mut()))
            }
            fn launch_fast(
                dev: &Device,
                cfg: Launch,
                x: &Buffer<'_, $t>,
                vblocks: u32,
                partials: &Buffer<'_, u64>,
                ticket: &Buffer<'_, u32>,
                out: &Buffer<'_, $t>,
            ) -> Result<()> {
                dev.launch::<rk::$fast>(cfg, (x.view(), vblocks, partials.view_mut(), ticket.view_mut(), out.view_mut()))
            }
            fn resident(dev: &Device) -> Result<u32> {
                dev.max_coresident_blocks::<rk::$fast>(Dim3::x(rk::BLOCK), rk::SHARED_BYTES)
            }
        }
    )*};
}
reducible! {
    Sum, u32: reduce_small_sum_u32, reduce_sum_u32;
    Sum, i32: reduce_small_sum_i32, reduce_sum_i32;
    Sum, u64: reduce_small_sum_u64, reduce_sum_u64;
    Sum, i64: reduce_small_sum_i64, reduce_sum_i64;
    Sum, f32: reduce_small_sum_f32, reduce_sum_f32;
    Sum, f64: reduce_small_sum_f64, reduce_sum_f64;
    Min, u32: reduce_small_min_u32, reduce_min_u32;
    Min, i32: reduce_small_min_i32, reduce_min_i32;
    Min, u64: reduce_small_min_u64, reduce_min_u64;
    Min, i64: reduce_small_min_i64, reduce_min_i64;
    Min, f32: reduce_small_min_f32, reduce_min_f32;
    Min, f64: reduce_small_min_f64, reduce_min_f64;
    Max, u32: reduce_small_max_u32, reduce_max_u32;
    Max, i32: reduce_small_max_i32, reduce_max_i32;
    Max, u64: reduce_small_max_u64, reduce_max_u64;
    Max, i64: reduce_small_max_i64, reduce_max_i64;
    Max, f32: reduce_small_max_f32, reduce_max_f32;
    Max, f64: reduce_small_max_f64, reduce_max_f64;
}

/// An element type the scans take: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`. Sealed.
pub trait Scannable: Element + sealed::Sealed {
    /// The PTX entries: inclusive, exclusive, inclusive in place, exclusive in place.
    const KERNELS: [&'static str; 4];
    /// Launches the scan of `x` into `out` (`exclusive` or inclusive).
    fn launch(
        dev: &Device,
        cfg: Launch,
        exclusive: bool,
        x: &Buffer<'_, Self>,
        out: &Buffer<'_, Self>,
        state: &Buffer<'_, u64>,
        epoch: u32,
    ) -> Result<()>;
    /// Launches the scan of `data` in place.
    fn launch_in_place(
        dev: &Device,
        cfg: Launch,
        exclusive: bool,
        data: &Buffer<'_, Self>,
        state: &Buffer<'_, u64>,
        epoch: u32,
    ) -> Result<()>;
}

macro_rules! scannable {
    ($($t:ty: $incl:ident, $excl:ident, $incl_ip:ident, $excl_ip:ident;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Scannable for $t {
            const KERNELS: [&'static str; 4] = [
                <sk::$incl as gpu_std::Kernel>::NAME,
                <sk::$excl as gpu_std::Kernel>::NAME,
                <sk::$incl_ip as gpu_std::Kernel>::NAME,
                <sk::$excl_ip as gpu_std::Kernel>::NAME,
            ];
            fn launch(
                dev: &Device,
                cfg: Launch,
                exclusive: bool,
                x: &Buffer<'_, $t>,
                out: &Buffer<'_, $t>,
                state: &Buffer<'_, u64>,
                epoch: u32,
            ) -> Result<()> {
                let args = (x.view(), out.view_mut(), state.view_mut(), epoch);
                if exclusive { dev.launch::<sk::$excl>(cfg, args) } else { dev.launch::<sk::$incl>(cfg, args) }
            }
            fn launch_in_place(
                dev: &Device,
                cfg: Launch,
                exclusive: bool,
                data: &Buffer<'_, $t>,
                state: &Buffer<'_, u64>,
                epoch: u32,
            ) -> Result<()> {
                let args = (data.view_mut(), state.view_mut(), epoch);
                if exclusive { dev.launch::<sk::$excl_ip>(cfg, args) } else { dev.launch::<sk::$incl_ip>(cfg, args) }
            }
        }
    )*};
}
scannable! {
    u32: scan_inclusive_u32, scan_exclusive_u32, scan_inclusive_in_place_u32, scan_exclusive_in_place_u32;
    i32: scan_inclusive_i32, scan_exclusive_i32, scan_inclusive_in_place_i32, scan_exclusive_in_place_i32;
    u64: scan_inclusive_u64, scan_exclusive_u64, scan_inclusive_in_place_u64, scan_exclusive_in_place_u64;
    i64: scan_inclusive_i64, scan_exclusive_i64, scan_inclusive_in_place_i64, scan_exclusive_in_place_i64;
    f32: scan_inclusive_f32, scan_exclusive_f32, scan_inclusive_in_place_f32, scan_exclusive_in_place_f32;
    f64: scan_inclusive_f64, scan_exclusive_f64, scan_inclusive_in_place_f64, scan_exclusive_in_place_f64;
}

/// A sample type of the even histogram: `u16`, `u32`, `f32`. Sealed.
pub trait EvenSample: Sample + PartialOrd + core::fmt::Debug + sealed::Sealed {
    /// The PTX entry (`histogram_even_*`).
    const KERNEL: &'static str;
    /// Launches `histogram_even_*` of `data` into `hist` (added to it).
    fn launch(
        dev: &Device,
        cfg: Launch,
        data: &Buffer<'_, Self>,
        lower: Self,
        upper: Self,
        hist: &Buffer<'_, u32>,
    ) -> Result<()>;
    /// Blocks of `histogram_even_*` resident at once.
    fn resident(dev: &Device) -> Result<u32>;
}

macro_rules! even_sample {
    ($($t:ty: $k:ident;)*) => {$(
        impl EvenSample for $t {
            const KERNEL: &'static str = <even::$k as gpu_std::Kernel>::NAME;
            fn launch(
                dev: &Device,
                cfg: Launch,
                data: &Buffer<'_, $t>,
                lower: $t,
                upper: $t,
                hist: &Buffer<'_, u32>,
            ) -> Result<()> {
                dev.launch::<even::$k>(cfg, (data.view(), lower, upper, hist.view_mut()))
            }
            fn resident(dev: &Device) -> Result<u32> {
                dev.max_coresident_blocks::<even::$k>(Dim3::x(even::BLOCK), even::SHARED_BYTES)
            }
        }
    )*};
}
impl sealed::Sealed for u16 {}
even_sample! {
    u16: histogram_even_u16;
    u32: histogram_even_u32;
    f32: histogram_even_f32;
}

/// A key type of the sort: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`. Sealed.
pub trait Sortable: gpu_algos_kernels::sort::SortKey + sealed::Sealed {
    /// The PTX entries: the histogram, the pass of keys, with 4-byte values, with 8-byte values.
    const KERNELS: [&'static str; 4];
    /// The PTX entries of the one-block sort: keys, with 4-byte values, with 8-byte values.
    const SMALL_KERNELS: [&'static str; 3];
    /// Launches the one-block sort of `keys` into `out`, with values when `vals` holds them.
    fn launch_small<'s>(
        dev: &Device,
        cfg: Launch,
        keys: Arg<'s, Global<'s, Self>>,
        out: Arg<'s, GlobalMut<'s, Self>>,
        vals: Values<'s>,
        digits: u32,
    ) -> Result<()>;
    /// The histogram kernel's resident blocks.
    fn histogram_resident(dev: &Device) -> Result<u32>;
    /// Queues the histogram of `keys` into `counts` for the range `digits` names.
    fn launch_histogram<'s>(
        seq: &Sequence<'s>,
        cfg: Launch,
        keys: &'s Buffer<'_, Self>,
        counts: &'s Buffer<'_, u32>,
        digits: u32,
    ) -> Result<()>;
    /// Queues pass `pass` from `src` to `dst`, with values when `vals` holds them.
    #[allow(clippy::too_many_arguments)]
    fn launch_pass<'s>(
        seq: &Sequence<'s>,
        cfg: Launch,
        src: Arg<'s, Global<'s, Self>>,
        dst: Arg<'s, GlobalMut<'s, Self>>,
        vals: Values<'s>,
        counts: &'s Buffer<'_, u32>,
        state: &'s Buffer<'_, u32>,
        digits: u32,
        pass: u32,
    ) -> Result<()>;
}

/// The values of a pass: none, or views of a source and a destination, as 4-byte or 8-byte bits.
pub enum Values<'a> {
    None,
    Four(Arg<'a, Global<'a, u32>>, Arg<'a, GlobalMut<'a, u32>>),
    Eight(Arg<'a, Global<'a, u64>>, Arg<'a, GlobalMut<'a, u64>>),
}

macro_rules! sortable {
    ($($t:ty: $hist:ident, $keys:ident, $pairs4:ident, $pairs8:ident, $small:ident, $small4:ident, $small8:ident;)*) => {$(
        impl Sortable for $t {
            const SMALL_KERNELS: [&'static str; 3] = [
                <so::small::$small as gpu_std::Kernel>::NAME,
                <so::small::$small4 as gpu_std::Kernel>::NAME,
                <so::small::$small8 as gpu_std::Kernel>::NAME,
            ];
            fn launch_small<'s>(
                dev: &Device,
                cfg: Launch,
                keys: Arg<'s, Global<'s, $t>>,
                out: Arg<'s, GlobalMut<'s, $t>>,
                vals: Values<'s>,
                digits: u32,
            ) -> Result<()> {
                match vals {
                    Values::None => dev.launch::<so::small::$small>(cfg, (keys, out, digits)),
                    Values::Four(vi, vo) => dev.launch::<so::small::$small4>(cfg, (keys, out, vi, vo, digits)),
                    Values::Eight(vi, vo) => dev.launch::<so::small::$small8>(cfg, (keys, out, vi, vo, digits)),
                }
            }
            const KERNELS: [&'static str; 4] = [
                <so::histogram::$hist as gpu_std::Kernel>::NAME,
                <so::onesweep::$keys as gpu_std::Kernel>::NAME,
                <so::onesweep::$pairs4 as gpu_std::Kernel>::NAME,
                <so::onesweep::$pairs8 as gpu_std::Kernel>::NAME,
            ];
            fn histogram_resident(dev: &Device) -> Result<u32> {
                dev.max_coresident_blocks::<so::histogram::$hist>(Dim3::x(so::histogram::BLOCK), so::histogram::SHARED_BYTES)
            }
            fn launch_histogram<'s>(
                seq: &Sequence<'s>,
                cfg: Launch,
                keys: &'s Buffer<'_, $t>,
                counts: &'s Buffer<'_, u32>,
                digits: u32,
            ) -> Result<()> {
                seq.launch::<so::histogram::$hist>(cfg, (keys.view(), counts.view_mut(), digits))
            }
            fn launch_pass<'s>(
                seq: &Sequence<'s>,
                cfg: Launch,
                src: Arg<'s, Global<'s, $t>>,
                dst: Arg<'s, GlobalMut<'s, $t>>,
                vals: Values<'s>,
                counts: &'s Buffer<'_, u32>,
                state: &'s Buffer<'_, u32>,
                digits: u32,
                pass: u32,
            ) -> Result<()> {
                let (c, s) = (counts.view(), state.view_mut());
                match vals {
                    Values::None => seq.launch::<so::onesweep::$keys>(cfg, (src, dst, c, s, digits, pass)),
                    Values::Four(vi, vo) => seq.launch::<so::onesweep::$pairs4>(cfg, (src, dst, vi, vo, c, s, digits, pass)),
                    Values::Eight(vi, vo) => seq.launch::<so::onesweep::$pairs8>(cfg, (src, dst, vi, vo, c, s, digits, pass)),
                }
            }
        }
    )*};
}
sortable! {
    u32: sort_histogram_u32, sort_keys_u32, sort_pairs4_u32, sort_pairs8_u32, sort_small_keys_u32, sort_small_pairs4_u32, sort_small_pairs8_u32;
    i32: sort_histogram_i32, sort_keys_i32, sort_pairs4_i32, sort_pairs8_i32, sort_small_keys_i32, sort_small_pairs4_i32, sort_small_pairs8_i32;
    f32: sort_histogram_f32, sort_keys_f32, sort_pairs4_f32, sort_pairs8_f32, sort_small_keys_f32, sort_small_pairs4_f32, sort_small_pairs8_f32;
    u64: sort_histogram_u64, sort_keys_u64, sort_pairs4_u64, sort_pairs8_u64, sort_small_keys_u64, sort_small_pairs4_u64, sort_small_pairs8_u64;
    i64: sort_histogram_i64, sort_keys_i64, sort_pairs4_i64, sort_pairs8_i64, sort_small_keys_i64, sort_small_pairs4_i64, sort_small_pairs8_i64;
    f64: sort_histogram_f64, sort_keys_f64, sort_pairs4_f64, sort_pairs8_f64, sort_small_keys_f64, sort_small_pairs4_f64, sort_small_pairs8_f64;
}

/// A value type the sort moves with its keys: any 4-byte or 8-byte [`Pod`](gpu_std::Pod) type the
/// crate implements it for (`u32`, `i32`, `f32`, `u64`, `i64`, `f64`), as its bits. Sealed.
pub trait SortValue: gpu_std::Pod + sealed::Sealed {
    /// 4 or 8.
    const BYTES: usize;
}
macro_rules! sort_value {
    ($($t:ty),*) => {$(
        impl SortValue for $t {
            const BYTES: usize = size_of::<$t>();
        }
    )*};
}
sort_value!(u32, i32, f32, u64, i64, f64);
