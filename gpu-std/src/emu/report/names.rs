//! What reports call an address of global memory: the host buffers registered by name (every
//! [`Buffer`](crate::emu::Buffer), and [`register_buffer`] for memory the caller owns), and the view
//! arguments of the running launch (the memory it may touch, which the primitives check every access
//! against; see `prims::access_check`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Mutex;

// ---- registered buffers ---------------------------------------------------------------------------

struct Named {
    name: String,
    bytes: usize,
    elem: usize,
}

static BUFFERS: Mutex<BTreeMap<usize, Named>> = Mutex::new(BTreeMap::new());

/// Names a host allocation so that reports can say `buffer[index]` instead of an address. The name is
/// forgotten when the returned guard drops. ([`Buffer`](crate::emu::Buffer) does this
/// itself.)
pub fn register_buffer<T>(name: &str, data: *const T, len: usize) -> BufferName {
    let base = data as usize;
    // A length whose bytes overflow the address space names nothing real (such memory cannot exist):
    // it is not registered, so that no report does arithmetic past the end of memory.
    let Some(bytes) = len.checked_mul(size_of::<T>()).filter(|&b| base.checked_add(b).is_some()) else {
        return BufferName { base: None };
    };
    if bytes == 0 {
        return BufferName { base: None };
    }
    let mut m = BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
    m.insert(base, Named { name: name.to_string(), bytes, elem: size_of::<T>() });
    BufferName { base: Some(base) }
}

/// Keeps a buffer's name registered; see [`register_buffer`].
#[derive(Debug)]
pub struct BufferName {
    base: Option<usize>,
}

impl Drop for BufferName {
    fn drop(&mut self) {
        if let Some(base) = self.base {
            BUFFERS.lock().unwrap_or_else(|e| e.into_inner()).remove(&base);
        }
    }
}

/// The buffer holding global address `addr` and the index of the `size`-byte element there: a
/// registered buffer by name; else the running launch's view argument that holds it, named by its
/// parameter and base address; else the address itself, index 0.
pub(crate) fn describe(addr: usize, size: usize) -> (String, usize) {
    {
        let m = BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((&base, n)) = m.range(..=addr).next_back()
            && addr < base + n.bytes
        {
            return (n.name.clone(), (addr - base) / n.elem.max(1));
        }
    }
    match region_of(addr) {
        Some(r) => (format!("{} at {:#x}", r.param(), r.base), (addr - r.base) / size.max(1)),
        None => (format!("{addr:#x}"), 0),
    }
}

// ---- the running launch's views -------------------------------------------------------------------

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

/// Whether the running launch may touch the global memory `[addr, addr + size)`: it lies inside one
/// of its views, or the launch's views are not checked. With no views known, nothing may be touched.
pub(crate) fn launch_may_touch(addr: usize, size: usize) -> bool {
    REGIONS.with(|r| match &*r.borrow() {
        Regions::Views(rs) => {
            rs.iter().any(|g| addr >= g.base && addr.checked_add(size).is_some_and(|end| end <= g.base + g.bytes))
        }
        Regions::Unchecked => true,
        Regions::Unknown => false,
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
