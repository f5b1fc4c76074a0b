//! The only place with inline PTX. The GPU backend of every primitive. Each function is the
//! instruction its public wrapper documents; `Site` is `()` here.
//!
//! The raw PTX layer: names only gpu-std's vocabulary (`crate::vocab`) and `Pod`; no view, no
//! primitive, nothing of the emulator (its host twin, `emu::prims::backend`).

use crate::pod::Pod;
use crate::vocab::access::{Access, CacheOp};
use crate::vocab::atom::{AtomOp, Atomic};
use crate::vocab::dim3::Dim3;
use crate::vocab::lanes::{FULL_MASK, ShflMode};
use crate::vocab::scope::{ScopeKind, SpaceKind};
use crate::vocab::site::Site;
use core::arch::asm;
use core::arch::nvptx as nv;

#[inline(always)]
pub fn thread_idx() -> Dim3 {
    // SAFETY: special-register reads, valid in any kernel.
    unsafe { Dim3::new(nv::_thread_idx_x(), nv::_thread_idx_y(), nv::_thread_idx_z()) }
}
#[inline(always)]
pub fn block_idx() -> Dim3 {
    // SAFETY: as above.
    unsafe { Dim3::new(nv::_block_idx_x(), nv::_block_idx_y(), nv::_block_idx_z()) }
}
#[inline(always)]
pub fn block_dim() -> Dim3 {
    // SAFETY: as above.
    unsafe { Dim3::new(nv::_block_dim_x(), nv::_block_dim_y(), nv::_block_dim_z()) }
}
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    // SAFETY: as above.
    unsafe { Dim3::new(nv::_grid_dim_x(), nv::_grid_dim_y(), nv::_grid_dim_z()) }
}

#[inline(always)]
pub fn sync_threads(_: Site) {
    // SAFETY: bar.sync 0; uniform reachability is the caller's liveness obligation.
    unsafe { nv::_syncthreads() }
}
#[inline(always)]
pub fn sync_threads_count(pred: bool, _: Site) -> u32 {
    let r: u32;
    // SAFETY: barrier with a popcount reduction; no memory operands.
    unsafe {
        asm!("{{ .reg .pred %p; setp.ne.u32 %p, {x}, 0; bar.red.popc.u32 {r}, 0, %p; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, options(nostack));
    }
    r
}
#[inline(always)]
pub fn sync_threads_and(pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: barrier with an and-reduction.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; bar.red.and.pred %q, 0, %p; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, options(nostack));
    }
    r != 0
}
#[inline(always)]
pub fn sync_threads_or(pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: barrier with an or-reduction.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; bar.red.or.pred %q, 0, %p; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, options(nostack));
    }
    r != 0
}

#[inline(always)]
pub fn shfl(mode: ShflMode, mask: u32, x: u32, b: u32, c: u32, _: Site) -> u32 {
    let r: u32;
    // SAFETY: register exchange within the warp; no memory operands.
    unsafe {
        match mode {
            ShflMode::Down => asm!("shfl.sync.down.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
            ShflMode::Up => asm!("shfl.sync.up.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
            ShflMode::Xor => asm!("shfl.sync.bfly.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
            ShflMode::Idx => asm!("shfl.sync.idx.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
        }
    }
    r
}

#[inline(always)]
pub fn ballot(mask: u32, pred: bool, _: Site) -> u32 {
    let r: u32;
    // SAFETY: warp vote; no memory operands.
    unsafe {
        asm!("{{ .reg .pred %p; setp.ne.u32 %p, {x}, 0; vote.sync.ballot.b32 {r}, %p, {m}; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, m = in(reg32) mask, options(nostack));
    }
    r
}
/// The lanes of `mask` whose `value` agrees with the caller's in its low `bits` bits: the lanes that
/// take part (one ballot), then per bit a ballot of that bit, inverted where the caller's bit is clear.
#[inline(always)]
pub fn match_bits(mask: u32, value: u32, bits: u32, site: Site) -> u32 {
    let mut peers = ballot(mask, true, site);
    let mut b = 0;
    while b < bits {
        // SAFETY: warp vote; no memory operands.
        unsafe {
            asm!("{{ .reg .pred %p; .reg .b32 %t; and.b32 %t, {v}, {bit}; setp.ne.u32 %p, %t, 0; \
                  vote.sync.ballot.b32 %t, %p, {m}; @!%p not.b32 %t, %t; and.b32 {peers}, {peers}, %t; }}",
                 v = in(reg32) value, bit = in(reg32) 1u32 << b, m = in(reg32) mask, peers = inout(reg32) peers,
                 options(nostack));
        }
        b += 1;
    }
    peers
}
#[inline(always)]
pub fn vote_any(mask: u32, pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: warp vote.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; vote.sync.any.pred %q, %p, {m}; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, m = in(reg32) mask, options(nostack));
    }
    r != 0
}
#[inline(always)]
pub fn vote_all(mask: u32, pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: warp vote.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; vote.sync.all.pred %q, %p, {m}; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, m = in(reg32) mask, options(nostack));
    }
    r != 0
}
#[inline(always)]
pub fn sync_warp(mask: u32, _: Site) {
    // SAFETY: warp barrier; orders the named lanes' memory accesses.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}
#[inline(always)]
pub fn active_mask() -> u32 {
    let r: u32;
    // SAFETY: reads the active-lane mask.
    unsafe { asm!("activemask.b32 {r};", r = out(reg32) r, options(nostack)) }
    r
}
#[inline(always)]
pub fn lane_id() -> u32 {
    let r: u32;
    // SAFETY: special-register read.
    unsafe { asm!("mov.u32 {r}, %laneid;", r = out(reg32) r, options(nostack, nomem, pure)) }
    r
}

#[inline(always)]
pub fn fence(scope: ScopeKind, _: Site) {
    // SAFETY: memory fences have no operands.
    unsafe {
        match scope {
            ScopeKind::Block => asm!("fence.sc.cta;", options(nostack)),
            ScopeKind::Device => asm!("fence.sc.gpu;", options(nostack)),
            ScopeKind::System => asm!("fence.sc.sys;", options(nostack)),
        }
    }
}
#[inline(always)]
pub fn nanosleep(ns: u32, _: Site) {
    // SAFETY: suspends the thread; no memory effects.
    unsafe { asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nostack)) }
}

/// One load and one store function per (state space, access kind): each is a single `ld`/`st` of
/// the element's width. Addresses are already in the instruction's state space: a global pointer is its
/// own global address (the generic and global windows coincide on every GPU that runs PTX 7+, as nvcc
/// relies on too), and shared views hold shared-window addresses (see [`dynamic_shared`]). Plain loads
/// are `pure`: the compiler may merge them or keep the value in a register, as for plain C++ loads, but
/// it cannot see the memory, so a racing write yields a racy value, never undefined behaviour.
macro_rules! access_fns {
    ($load:ident, $store:ident, $ld:literal, $st:literal, [$($lopt:ident),*]) => {
        /// # Safety
        /// `p` is a valid, aligned address of a `T` in this state space.
        #[inline(always)]
        unsafe fn $load<T: Pod>(p: *const T) -> T {
            // SAFETY: the caller's contract; the asm reads exactly `size_of::<T>()` bytes at `p`, and
            // any bit pattern of that size is a valid `T` (`Pod`).
            unsafe {
                match size_of::<T>() {
                    1 => {
                        let v: u16;
                        asm!(concat!($ld, ".u8 {v}, [{a}];"),
                             a = in(reg64) p, v = out(reg16) v, options(nostack, $($lopt),*));
                        core::mem::transmute_copy(&(v as u8))
                    }
                    2 => {
                        let v: u16;
                        asm!(concat!($ld, ".b16 {v}, [{a}];"),
                             a = in(reg64) p, v = out(reg16) v, options(nostack, $($lopt),*));
                        core::mem::transmute_copy(&v)
                    }
                    4 => {
                        let v: u32;
                        asm!(concat!($ld, ".b32 {v}, [{a}];"),
                             a = in(reg64) p, v = out(reg32) v, options(nostack, $($lopt),*));
                        core::mem::transmute_copy(&v)
                    }
                    _ => {
                        let v: u64;
                        asm!(concat!($ld, ".b64 {v}, [{a}];"),
                             a = in(reg64) p, v = out(reg64) v, options(nostack, $($lopt),*));
                        core::mem::transmute_copy(&v)
                    }
                }
            }
        }
        /// # Safety
        /// `p` is a valid, aligned address of a `T` in this state space.
        #[inline(always)]
        unsafe fn $store<T: Pod>(p: *mut T, v: T) {
            // SAFETY: the caller's contract; the asm writes exactly `size_of::<T>()` bytes at `p`.
            unsafe {
                match size_of::<T>() {
                    1 => {
                        let x: u8 = core::mem::transmute_copy(&v);
                        asm!(concat!($st, ".b8 [{a}], {x};"),
                             a = in(reg64) p, x = in(reg16) x as u16, options(nostack));
                    }
                    2 => {
                        let x: u16 = core::mem::transmute_copy(&v);
                        asm!(concat!($st, ".b16 [{a}], {x};"),
                             a = in(reg64) p, x = in(reg16) x, options(nostack));
                    }
                    4 => {
                        let x: u32 = core::mem::transmute_copy(&v);
                        asm!(concat!($st, ".b32 [{a}], {x};"),
                             a = in(reg64) p, x = in(reg32) x, options(nostack));
                    }
                    _ => {
                        let x: u64 = core::mem::transmute_copy(&v);
                        asm!(concat!($st, ".b64 [{a}], {x};"),
                             a = in(reg64) p, x = in(reg64) x, options(nostack));
                    }
                }
            }
        }
    };
}
access_fns!(ld_global, st_global, "ld.global", "st.global", [readonly, pure]);
access_fns!(ld_volatile_global, st_volatile_global, "ld.volatile.global", "st.volatile.global", [readonly]);
access_fns!(ld_shared, st_shared, "ld.shared", "st.shared", [readonly, pure]);
access_fns!(ld_volatile_shared, st_volatile_shared, "ld.volatile.shared", "st.volatile.shared", [readonly]);

/// Loads a `T` from `p` in `space` with `access`: one `ld` instruction.
///
/// # Safety
/// `p` is a valid, aligned address of a `T` in `space`.
#[inline(always)]
pub unsafe fn load<T: Pod>(p: *const T, access: Access, space: SpaceKind, _: Site) -> T {
    // SAFETY: the caller's contract.
    unsafe {
        match (space, access) {
            (SpaceKind::Global, Access::Plain) => ld_global(p),
            (SpaceKind::Global, Access::Volatile) => ld_volatile_global(p),
            (SpaceKind::Shared, Access::Plain) => ld_shared(p),
            (SpaceKind::Shared, Access::Volatile) => ld_volatile_shared(p),
        }
    }
}
/// Stores `v` (`[T; 16 / size_of::<T>()]`) at `p`: one `st.global.v4.b32` (for 8-byte `T`,
/// `st.global.v2.b64`), with the `.cs` operator when `op` is `Streaming`.
///
/// # Safety
/// `p` is a valid, 16-byte aligned global address of 16 bytes of `T`s, and `V` is 16 bytes of `Pod`.
#[inline(always)]
pub unsafe fn store_vector<T: Pod, V: Copy>(p: *mut T, v: V, op: CacheOp, _: Site) {
    const { assert!(size_of::<V>() == 16) };
    macro_rules! st2 {
        ($op:literal, $a:ident, $b:ident) => {
            asm!(concat!("st.global", $op, ".v2.b64 [{p}], {{{a}, {b}}};"), p = in(reg64) p, a = in(reg64) $a,
                 b = in(reg64) $b, options(nostack))
        };
    }
    macro_rules! st4 {
        ($op:literal, $a:ident, $b:ident, $c:ident, $d:ident) => {
            asm!(concat!("st.global", $op, ".v4.b32 [{p}], {{{a}, {b}, {c}, {d}}};"), p = in(reg64) p,
                 a = in(reg32) $a, b = in(reg32) $b, c = in(reg32) $c, d = in(reg32) $d, options(nostack))
        };
    }
    // SAFETY: the caller's contract; the asm writes exactly the 16 bytes at `p`.
    unsafe {
        if size_of::<T>() == 8 {
            let [a, b]: [u64; 2] = core::mem::transmute_copy(&v);
            match op {
                CacheOp::Streaming => st2!(".cs", a, b),
                _ => st2!("", a, b),
            }
        } else {
            let [a, b, c, d]: [u32; 4] = core::mem::transmute_copy(&v);
            match op {
                CacheOp::Streaming => st4!(".cs", a, b, c, d),
                _ => st4!("", a, b, c, d),
            }
        }
    }
}
/// Loads the 16 bytes at `p` as a `V` (`[T; 16 / size_of::<T>()]`): one `ld.global.v4.b32` (for 8-byte
/// `T`, `ld.global.v2.b64`); `ld.global.nc…` through the read-only data cache for `ReadOnly`,
/// `ld.global.cs…` for `Streaming`.
///
/// # Safety
/// `p` is a valid, 16-byte aligned global address of 16 bytes of `T`s, and `V` is 16 bytes of `Pod`.
#[inline(always)]
pub unsafe fn load_vector<T: Pod, V: Copy>(p: *const T, op: CacheOp, _: Site) -> V {
    const { assert!(size_of::<V>() == 16) };
    macro_rules! ld2 {
        ($op:literal) => {{
            let (a, b): (u64, u64);
            asm!(concat!("ld.global", $op, ".v2.b64 {{{a}, {b}}}, [{p}];"), p = in(reg64) p, a = out(reg64) a,
                 b = out(reg64) b, options(nostack, readonly, pure));
            core::mem::transmute_copy(&[a, b])
        }};
    }
    macro_rules! ld4 {
        ($op:literal) => {{
            let (a, b, c, d): (u32, u32, u32, u32);
            asm!(concat!("ld.global", $op, ".v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];"), p = in(reg64) p,
                 a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d,
                 options(nostack, readonly, pure));
            core::mem::transmute_copy(&[a, b, c, d])
        }};
    }
    // SAFETY: the caller's contract; the asm reads exactly the 16 bytes at `p` (two 8-byte lanes land in
    // 64-bit registers as they are).
    unsafe {
        if size_of::<T>() == 8 {
            match op {
                CacheOp::Normal => ld2!(""),
                CacheOp::ReadOnly => ld2!(".nc"),
                CacheOp::Streaming => ld2!(".cs"),
            }
        } else {
            match op {
                CacheOp::Normal => ld4!(""),
                CacheOp::ReadOnly => ld4!(".nc"),
                CacheOp::Streaming => ld4!(".cs"),
            }
        }
    }
}

/// Stores `v` at `p` in `space` with `access`: one `st` instruction.
///
/// # Safety
/// `p` is a valid, aligned address of a `T` in `space`.
#[inline(always)]
pub unsafe fn store<T: Pod>(p: *mut T, v: T, access: Access, space: SpaceKind, _: Site) {
    // SAFETY: the caller's contract.
    unsafe {
        match (space, access) {
            (SpaceKind::Global, Access::Plain) => st_global(p, v),
            (SpaceKind::Global, Access::Volatile) => st_volatile_global(p, v),
            (SpaceKind::Shared, Access::Plain) => st_shared(p, v),
            (SpaceKind::Shared, Access::Volatile) => st_volatile_shared(p, v),
        }
    }
}

// ---- traps with a reason ---------------------------------------------------------------------------

unsafe extern "C" {
    /// The CUDA driver's device-side `printf`: a format string and a packed argument buffer.
    fn vprintf(format: *const core::ffi::c_char, args: *const core::ffi::c_void) -> i32;
}

/// Prints `msg` (device `printf`, shown by the driver when the launch ends) and ends the launch with
/// `trap`: the host sees "unspecified launch failure".
#[cold]
#[inline(never)]
pub fn trap_with(msg: &core::ffi::CStr) -> ! {
    // SAFETY: a NUL-terminated format string without conversions, and no arguments; `trap` has no
    // operands.
    unsafe {
        vprintf(msg.as_ptr(), core::ptr::null());
        nv::trap()
    }
}

/// The arguments of [`MASK_MISSING_LANE`], packed as `vprintf` reads them.
#[repr(C)]
struct MaskArgs {
    what: *const core::ffi::c_char,
    mask: u32,
    lane: u32,
    block: u32,
    thread: u32,
}

const MASK_MISSING_LANE: &core::ffi::CStr =
    c"gpu-std: %s with mask 0x%08x called by lane %u, which is not in the mask (block %u, thread %u): trap\n";

#[cold]
#[inline(never)]
fn trap_not_in_mask(what: &'static core::ffi::CStr, mask: u32) -> ! {
    let (b, t) = (block_idx(), thread_idx());
    let args = MaskArgs {
        what: what.as_ptr(),
        mask,
        lane: lane_id(),
        block: grid_dim().linear(b),
        thread: block_dim().linear(t),
    };
    // SAFETY: the format's conversions (%s, %08x, %u, %u, %u) match `MaskArgs` field by field, in order.
    unsafe {
        vprintf(MASK_MISSING_LANE.as_ptr(), &args as *const MaskArgs as *const core::ffi::c_void);
        nv::trap()
    }
}

/// A warp collective's precondition: the calling lane is in `mask`. Free for `FULL_MASK`; otherwise
/// one compare and a branch, trapping with the reason.
#[inline(always)]
pub fn check_in_mask(mask: u32, what: &'static core::ffi::CStr, _: Site) {
    if mask != FULL_MASK && mask & (1u32 << (lane_id() & 31)) == 0 {
        trap_not_in_mask(what, mask)
    }
}

/// Marker type giving the dynamic shared memory base its alignment.
#[repr(C, align(16))]
struct SharedBase([u8; 16]);

#[inline(always)]
/// The block's dynamic shared memory as a *shared-window* address (what `ld.shared`, `st.shared` and
/// `atom.shared` take), converted once here rather than at every access, and its size in bytes. Shared
/// views hold such addresses; they are never dereferenced as Rust pointers.
pub fn dynamic_shared(_: Site) -> (*mut u8, usize) {
    let size: u32;
    // SAFETY: special-register read of the launch's dynamic shared size.
    unsafe { asm!("mov.u32 {r}, %dynamic_smem_size;", r = out(reg32) size, options(nostack, nomem, pure)) }
    let base = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<SharedBase>() as *mut u8;
    let window: u64;
    // SAFETY: an address conversion; no memory is touched.
    unsafe {
        asm!("cvta.to.shared.u64 {w}, {p};", w = out(reg64) window, p = in(reg64) base, options(nostack, nomem, pure))
    };
    (window as *mut u8, size as usize)
}

// ---- atomics -------------------------------------------------------------------------------------

/// A shared layout needs more dynamic shared memory than the launch gave: traps with the reason. (Inlined
/// so that the layout's name, used only by the emulator, never reaches the PTX.)
#[inline(always)]
pub fn shared_too_small(_layout: &'static str, _needed: usize, _given: usize) -> ! {
    trap_with(
        c"gpu-std: the launch gave less dynamic shared memory than the kernel's shared layout needs (its BYTES)\n",
    )
}

/// One-operand `atom` on an address of the state space (see [`dynamic_shared`] for shared memory).
macro_rules! atom1 {
    ($sc:literal, $sp:literal, $op:literal, $ty:literal, $cls:ident, $p:expr, $a:expr) => {{
        let o;
        asm!(concat!("atom.relaxed.", $sc, ".", $sp, ".", $op, ".", $ty, " {o}, [{p}], {a};"),
             p = in(reg64) $p, a = in($cls) $a, o = out($cls) o, options(nostack));
        o
    }};
}
macro_rules! cas1 {
    ($sc:literal, $sp:literal, $ty:literal, $cls:ident, $p:expr, $a:expr, $b:expr) => {{
        let o;
        asm!(concat!("atom.relaxed.", $sc, ".", $sp, ".cas.", $ty, " {o}, [{p}], {a}, {b};"),
             p = in(reg64) $p, a = in($cls) $a, b = in($cls) $b, o = out($cls) o, options(nostack));
        o
    }};
}
macro_rules! red1 {
    ($sc:literal, $sp:literal, $op:literal, $ty:literal, $cls:ident, $p:expr, $a:expr) => {{
        asm!(concat!("red.relaxed.", $sc, ".", $sp, ".", $op, ".", $ty, " [{p}], {a};"),
             p = in(reg64) $p, a = in($cls) $a, options(nostack));
    }};
}
macro_rules! ld_acq {
    ($sc:literal, $sp:literal, $ty:literal, $cls:ident, $p:expr) => {{
        let o;
        asm!(concat!("ld.acquire.", $sc, ".", $sp, ".", $ty, " {o}, [{p}];"),
             p = in(reg64) $p, o = out($cls) o, options(nostack));
        o
    }};
}
macro_rules! st_rel {
    ($sc:literal, $sp:literal, $ty:literal, $cls:ident, $p:expr, $v:expr) => {{
        asm!(concat!("st.release.", $sc, ".", $sp, ".", $ty, " [{p}], {v};"),
             p = in(reg64) $p, v = in($cls) $v, options(nostack));
    }};
}
/// Expands `$m!(scope, space, rest...)` for the (space, scope) pair known at compile time.
macro_rules! by_scope {
    ($m:ident, $space:expr, $scope:expr, $($rest:tt)*) => {
        match ($space, $scope) {
            (SpaceKind::Global, ScopeKind::Block) => $m!("cta", "global", $($rest)*),
            (SpaceKind::Global, ScopeKind::Device) => $m!("gpu", "global", $($rest)*),
            (SpaceKind::Global, ScopeKind::System) => $m!("sys", "global", $($rest)*),
            (SpaceKind::Shared, ScopeKind::Block) => $m!("cta", "shared", $($rest)*),
            (SpaceKind::Shared, ScopeKind::Device) => $m!("gpu", "shared", $($rest)*),
            (SpaceKind::Shared, ScopeKind::System) => $m!("sys", "shared", $($rest)*),
        }
    };
}

macro_rules! impl_atomic {
    ($t:ty, $cls:ident, bits $bits:literal, ld $ldty:literal, red $redty:literal, zero $zero:expr, [$($op:ident => $name:literal $pty:literal),*]) => {
        impl Atomic for $t {
            #[inline(always)]
            unsafe fn atom(op: AtomOp, space: SpaceKind, scope: ScopeKind, p: *mut Self, a: Self, b: Self, _: Site) -> Self {
                // SAFETY: the caller (AtomicRef) holds a valid, aligned pointer into `space`.
                unsafe {
                    match op {
                        $(AtomOp::$op => by_scope!(atom1, space, scope, $name, $pty, $cls, p, a),)*
                        AtomOp::Exch => by_scope!(atom1, space, scope, "exch", $bits, $cls, p, a),
                        AtomOp::Cas => by_scope!(cas1, space, scope, $bits, $cls, p, a, b),
                        #[allow(unreachable_patterns)]
                        _ => nv::trap(),
                    }
                }
            }
            #[inline(always)]
            unsafe fn load_acquire(space: SpaceKind, scope: ScopeKind, p: *const Self, _: Site) -> Self {
                // SAFETY: as above.
                unsafe { by_scope!(ld_acq, space, scope, $ldty, $cls, p) }
            }
            #[inline(always)]
            unsafe fn store_release(space: SpaceKind, scope: ScopeKind, p: *mut Self, v: Self, _: Site) {
                // SAFETY: as above.
                unsafe { by_scope!(st_rel, space, scope, $ldty, $cls, p, v) }
            }
            #[inline(always)]
            unsafe fn red_add(space: SpaceKind, scope: ScopeKind, p: *mut Self, v: Self, _: Site) {
                // SAFETY: as above.
                unsafe { by_scope!(red1, space, scope, "add", $redty, $cls, p, v) }
            }
            #[inline(always)]
            fn zero() -> Self {
                $zero
            }
        }
    };
}

impl_atomic!(u32, reg32, bits "b32", ld "u32", red "u32", zero 0, [Add => "add" "u32", Min => "min" "u32", Max => "max" "u32",
    Inc => "inc" "u32", Dec => "dec" "u32", And => "and" "b32", Or => "or" "b32", Xor => "xor" "b32"]);
impl_atomic!(i32, reg32, bits "b32", ld "s32", red "s32", zero 0, [Add => "add" "s32", Min => "min" "s32", Max => "max" "s32",
    And => "and" "b32", Or => "or" "b32", Xor => "xor" "b32"]);
impl_atomic!(u64, reg64, bits "b64", ld "u64", red "u64", zero 0, [Add => "add" "u64", Min => "min" "u64", Max => "max" "u64",
    And => "and" "b64", Or => "or" "b64", Xor => "xor" "b64"]);
impl_atomic!(i64, reg64, bits "b64", ld "s64", red "u64", zero 0, [Add => "add" "u64", Min => "min" "s64", Max => "max" "s64",
    And => "and" "b64", Or => "or" "b64", Xor => "xor" "b64"]);
impl_atomic!(f32, reg32, bits "b32", ld "f32", red "f32", zero 0.0, [Add => "add" "f32"]);
impl_atomic!(f64, reg64, bits "b64", ld "f64", red "f64", zero 0.0, [Add => "add" "f64"]);
