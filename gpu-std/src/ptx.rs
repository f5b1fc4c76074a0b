//! The only place with inline PTX. The GPU backend of every primitive. Each function is the
//! instruction its public wrapper documents; `Site` is `()` here.
//!
//! The raw PTX layer: names only gpu-std's vocabulary (`crate::vocab`) and `Pod`; no view, no
//! primitive, nothing of the emulator (its host counterpart, `emu::prims::backend`).
//!
//! By instruction family: the special registers (`index`), barriers, fences and sleeps (`sync`), warp
//! collectives (`warp`), memory accesses (`access`) and atomics (`atomics`); the traps with a reason,
//! the warp-mask check and the block's dynamic shared memory are here.

mod access;
mod atomics;
mod index;
mod sync;
mod warp;

pub use access::{load, load_vector, store, store_vector};
pub use index::{active_mask, block_dim, block_idx, grid_dim, lane_id, thread_idx};
pub use sync::{fence, nanosleep, sync_threads, sync_threads_and, sync_threads_count, sync_threads_or, sync_warp};
pub use warp::{ballot, match_bits, shfl, vote_all, vote_any};

use crate::vocab::lanes::FULL_MASK;
use crate::vocab::site::Site;
use core::arch::asm;
use core::arch::nvptx as nv;

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

/// A shared layout needs more dynamic shared memory than the launch gave: traps with the reason. (Inlined
/// so that the layout's name, used only by the emulator, never reaches the PTX.)
#[inline(always)]
pub fn shared_too_small(_layout: &'static str, _needed: usize, _given: usize) -> ! {
    trap_with(
        c"gpu-std: the launch gave less dynamic shared memory than the kernel's shared layout needs (its BYTES)\n",
    )
}
