//! Which memory a launch may touch. A kernel reaches global memory only through the views it was
//! given, and shared memory only through its own block's region; anything else is a view kept past its
//! launch or block (dangling), and the emulator stops the thread with a report instead of touching
//! freed memory.

use crate::Site;
use crate::atomic::SpaceKind;
use crate::emu::engine::context;
use crate::emu::report::names;

/// Panics (in the emulated thread, which the launch reports with its source line) unless
/// `[addr, addr + size)` is memory the running launch may access in `space`.
#[track_caller]
pub(crate) fn check(space: SpaceKind, addr: usize, size: usize, site: Site) {
    assert!(
        context::active(),
        "a GPU memory view was accessed outside a kernel launch, at {site} (run kernels with gpu_std::emu::launch)"
    );
    match space {
        SpaceKind::Global => {
            // Soundness: with no regions known, an access is refused, never allowed; only `launch_fn`
            // (whose caller vouches for its views) turns the check off.
            let inside = names::launch_may_touch(addr, size);
            assert!(
                inside,
                "global access at {site} to {addr:#x} ({size} bytes) lies outside every view passed to this launch: a view \
                 kept from an earlier launch (dangling), or made with from_raw_parts over memory the launch was \
                 not given"
            );
        }
        SpaceKind::Shared => {
            let (base, bytes) = dynamic_shared(crate::site());
            let base = base as usize;
            assert!(
                addr >= base && addr + size <= base + bytes,
                "shared-memory access at {site} to {addr:#x} ({size} bytes) lies outside this block's {bytes} bytes of \
                 dynamic shared memory: a shared view kept from another block or launch"
            );
        }
    }
}

/// The dynamic shared memory of the caller's block, and its size in bytes.
pub fn dynamic_shared(_site: Site) -> (*mut u8, usize) {
    context::with_state(|st, me| {
        let b = st.threads[me].block;
        let blk = &mut st.blocks[b];
        (blk.shared.as_mut_ptr() as *mut u8, st.cfg.shared_bytes)
    })
}
