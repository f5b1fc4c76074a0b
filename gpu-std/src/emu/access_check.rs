//! Which memory a launch may touch. A kernel reaches global memory only through the views it was
//! given, and shared memory only through its own block's region; anything else is a view kept past its
//! launch or block (dangling), and the emulator stops the thread with a report instead of touching
//! freed memory.

use super::sched;
use crate::Site;
use crate::atomic::SpaceKind;
use std::cell::RefCell;

/// The memory one view argument of the running launch reaches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    pub base: usize,
    pub bytes: usize,
    /// Position of the kernel parameter the view was passed as.
    pub position: usize,
    /// That parameter's name, when the kernel's parameter names are known.
    pub name: Option<&'static str>,
}

impl Region {
    /// `parameter `y`` (or `parameter 2`).
    pub(crate) fn param(&self) -> String {
        match self.name {
            Some(n) => format!("parameter `{n}`"),
            None => format!("parameter {}", self.position),
        }
    }
}

thread_local! {
    /// Every view passed to the running launch; `None` while no launch runs (or for `launch_fn`).
    static REGIONS: RefCell<Option<Vec<Region>>> = const { RefCell::new(None) };
}

/// The view argument of the running launch whose memory holds `addr`, if the launch's views are known.
pub(crate) fn region_of(addr: usize) -> Option<Region> {
    REGIONS.with(|r| r.borrow().as_ref()?.iter().find(|g| addr >= g.base && addr < g.base + g.bytes).copied())
}

/// Sets the regions of a launch for as long as the guard lives.
pub(crate) struct LaunchRegions;

impl LaunchRegions {
    pub(crate) fn set(regions: Vec<Region>) -> LaunchRegions {
        REGIONS.with(|r| *r.borrow_mut() = Some(regions));
        LaunchRegions
    }
}

impl Drop for LaunchRegions {
    fn drop(&mut self) {
        REGIONS.with(|r| *r.borrow_mut() = None);
    }
}

/// Panics (in the emulated thread, which the launch reports with its source line) unless
/// `[addr, addr + size)` is memory the running launch may access in `space`.
#[track_caller]
pub(crate) fn check(space: SpaceKind, addr: usize, size: usize, site: Site) {
    assert!(
        sched::active(),
        "a GPU memory view was accessed outside a kernel launch, at {site} (run kernels with gpu_std::emu::launch)"
    );
    match space {
        SpaceKind::Global => {
            let inside = REGIONS.with(|r| {
                r.borrow()
                    .as_ref()
                    .is_none_or(|rs| rs.iter().any(|g| addr >= g.base && addr + size <= g.base + g.bytes))
            });
            assert!(
                inside,
                "global access at {site} to {addr:#x} ({size} bytes) lies outside every view passed to this launch: a view \
                 kept from an earlier launch (dangling), or made with from_raw_parts over memory the launch was \
                 not given"
            );
        }
        SpaceKind::Shared => {
            let (base, bytes) = super::backend_impl::dynamic_shared(crate::site());
            let base = base as usize;
            assert!(
                addr >= base && addr + size <= base + bytes,
                "shared-memory access at {site} to {addr:#x} ({size} bytes) lies outside this block's {bytes} bytes of \
                 dynamic shared memory: a shared view kept from another block or launch"
            );
        }
    }
}
