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

/// The global memory the running launch may touch.
#[derive(Debug, Default)]
enum Regions {
    /// Nothing: no launch runs, or its views were never set. An access is refused.
    #[default]
    Unknown,
    /// Anything: a `launch_fn` launch, whose caller vouches for every view its body uses.
    Unchecked,
    /// The memory of the views passed to the launch.
    Views(Vec<Region>),
}

thread_local! {
    /// What the running launch on this OS thread may touch.
    static REGIONS: RefCell<Regions> = const { RefCell::new(Regions::Unknown) };
}

/// The view argument of the running launch whose memory holds `addr`, if the launch's views are known.
pub(crate) fn region_of(addr: usize) -> Option<Region> {
    REGIONS.with(|r| match &*r.borrow() {
        Regions::Views(rs) => rs.iter().find(|g| addr >= g.base && addr < g.base + g.bytes).copied(),
        _ => None,
    })
}

/// Sets what a launch may touch for as long as the guard lives, then restores what was there before.
pub(crate) struct LaunchRegions {
    previous: Option<Regions>,
}

impl LaunchRegions {
    /// The launch may touch the memory of `regions`, and nothing else.
    pub(crate) fn set(regions: Vec<Region>) -> LaunchRegions {
        Self::replace(Regions::Views(regions))
    }

    /// The launch's accesses are not checked (`launch_fn`).
    pub(crate) fn unchecked() -> LaunchRegions {
        Self::replace(Regions::Unchecked)
    }

    fn replace(now: Regions) -> LaunchRegions {
        LaunchRegions { previous: Some(REGIONS.with(|r| std::mem::replace(&mut *r.borrow_mut(), now))) }
    }
}

impl Drop for LaunchRegions {
    fn drop(&mut self) {
        // Restores the state before the launch (not a fixed "nothing"), so that no guard can leave a
        // launch that is still running with different regions than it started with.
        let previous = self.previous.take().unwrap_or_default();
        REGIONS.with(|r| *r.borrow_mut() = previous);
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
            // Soundness: with no regions known, an access is refused, never allowed; only `launch_fn`
            // (whose caller vouches for its views) turns the check off.
            let inside = REGIONS.with(|r| match &*r.borrow() {
                Regions::Views(rs) => rs.iter().any(|g| addr >= g.base && addr + size <= g.base + g.bytes),
                Regions::Unchecked => true,
                Regions::Unknown => false,
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
