//! `Kind`: how an access touched memory (plain or volatile read or write, atomic, acquire load,
//! release store, with its scope), and the code an epoch of the race record keeps it as.
//!
//! The model's lowest file: names only gpu-std's vocabulary (the scopes).

use crate::vocab::scope::ScopeKind;

/// How an access touched memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
    VolatileRead,
    VolatileWrite,
    Atomic(ScopeKind),
    AcquireLoad(ScopeKind),
    ReleaseStore(ScopeKind),
}

fn scope_code(s: ScopeKind) -> u32 {
    match s {
        ScopeKind::Block => 0,
        ScopeKind::Device => 1,
        ScopeKind::System => 2,
    }
}

fn scope_of(c: u32) -> ScopeKind {
    match c {
        0 => ScopeKind::Block,
        1 => ScopeKind::Device,
        _ => ScopeKind::System,
    }
}

impl Kind {
    pub fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::VolatileWrite | Kind::Atomic(_) | Kind::ReleaseStore(_))
    }
    /// Whether the access reads the old value (read-modify-writes do).
    pub fn reads(self) -> bool {
        matches!(self, Kind::Read | Kind::VolatileRead | Kind::Atomic(_) | Kind::AcquireLoad(_))
    }
    pub fn strong(self) -> bool {
        !matches!(self, Kind::Read | Kind::Write)
    }
    /// Whether the access is a strong load that may observe a release (and then acquire it).
    pub fn observes(self) -> bool {
        matches!(self, Kind::VolatileRead | Kind::Atomic(_) | Kind::AcquireLoad(_))
    }
    /// The scope of a strong access; volatile accesses are system-scoped (relaxed, `.sys`).
    pub fn scope(self) -> ScopeKind {
        match self {
            Kind::Atomic(s) | Kind::AcquireLoad(s) | Kind::ReleaseStore(s) => s,
            _ => ScopeKind::System,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::VolatileRead => "volatile read",
            Kind::VolatileWrite => "volatile write",
            Kind::Atomic(ScopeKind::Block) => "atomic (block)",
            Kind::Atomic(ScopeKind::Device) => "atomic",
            Kind::Atomic(ScopeKind::System) => "atomic (system)",
            Kind::AcquireLoad(ScopeKind::Block) => "acquire load (block)",
            Kind::AcquireLoad(ScopeKind::Device) => "acquire load",
            Kind::AcquireLoad(ScopeKind::System) => "acquire load (system)",
            Kind::ReleaseStore(ScopeKind::Block) => "release store (block)",
            Kind::ReleaseStore(ScopeKind::Device) => "release store",
            Kind::ReleaseStore(ScopeKind::System) => "release store (system)",
        }
    }
    pub(super) fn code(self) -> u32 {
        match self {
            Kind::Read => 1,
            Kind::Write => 2,
            Kind::VolatileRead => 3,
            Kind::VolatileWrite => 4,
            Kind::Atomic(s) => 5 + scope_code(s),
            Kind::AcquireLoad(s) => 8 + scope_code(s),
            Kind::ReleaseStore(s) => 11 + scope_code(s),
        }
    }
    pub(super) fn from_code(c: u32) -> Kind {
        match c {
            1 => Kind::Read,
            2 => Kind::Write,
            3 => Kind::VolatileRead,
            4 => Kind::VolatileWrite,
            5..=7 => Kind::Atomic(scope_of(c - 5)),
            8..=10 => Kind::AcquireLoad(scope_of(c - 8)),
            _ => Kind::ReleaseStore(scope_of(c - 11)),
        }
    }
}
