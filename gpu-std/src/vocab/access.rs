//! How an access reaches memory: plain or volatile ([`Access`]), and the cache operator of a 16-byte
//! vector access ([`CacheOp`]). The views choose them; each backend takes them as arguments.
//!
//! Ground floor: imports nothing of gpu-std. Re-exported by [`crate::memory`] and [`crate::vector`].

/// How an access reaches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `ld` / `st`.
    Plain,
    /// `ld.volatile` / `st.volatile`.
    Volatile,
}

/// Which cache operator a 16-byte vector access carries (the backends' argument; the view methods choose
/// it).
#[doc(hidden)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CacheOp {
    /// No operator: `ld.global` / `st.global` (cache at all levels).
    Normal,
    /// A load through the read-only (non-coherent) data cache: `ld.global.nc`.
    ReadOnly,
    /// Streaming, likely accessed once: `ld.global.cs` / `st.global.cs` (evict-first in L1 and L2).
    Streaming,
}
