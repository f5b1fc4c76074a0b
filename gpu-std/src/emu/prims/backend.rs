//! The emulator backend of every primitive: the same functions as the PTX layer, implemented on the
//! engine, telling the memory model what each did. Each synchronisation point may switch threads —
//! except while the calling thread unwinds (a panic, a stack overflow caught by the reserve check, the
//! teardown of a failed launch): then every primitive completes at once, without suspending (see
//! `context::unwinding`).

use super::access_check;
pub use super::access_check::dynamic_shared;
use super::memory;
use crate::Dim3;
use crate::Site;
use crate::atomic::{AtomOp, Atomic, ScopeKind, SpaceKind};
use crate::emu::config::{MutationKind, SiteKind};
use crate::emu::engine::context::{info, suspend, unwinding, with_state};
use crate::emu::engine::polled::{Polled, bits_of};
use crate::emu::engine::state::{BarOp, CollKind, State, Status};
use crate::emu::model::{Agent, Kind};
use crate::emu::report::EmuError;
use crate::memory::Access;
use crate::warp::ShflMode;

/// A synchronisation site is executed: recorded when the launch records its sites, and the mutation
/// the launch applies to it, if it is the site under test (see `emu::mutation_test`).
fn sync_site(kind: SiteKind, scope: Option<ScopeKind>, site: Site) -> Option<MutationKind> {
    with_state(|st, _| {
        if st.opts.record_sites {
            st.sites
                .entry((site.file(), site.line(), site.column(), kind))
                .and_modify(|s| s.count += 1)
                .or_insert_with(|| crate::emu::report::SyncSite::at(site, kind, scope));
        }
        match st.opts.mutation {
            Some(m)
                if m.site == kind && m.line == site.line() && m.column == site.column() && m.file == site.file() =>
            {
                Some(m.kind)
            }
            _ => None,
        }
    })
}

/// Thread `me` made an access: the engine notes that it touched memory in its barrier interval, and
/// the memory model judges and records the access.
fn record_access(st: &mut State, me: usize, addr: usize, size: usize, space: SpaceKind, kind: Kind, site: Site) {
    let first = &mut st.threads[me].first_access;
    if first.is_none() {
        *first = Some(site);
    }
    st.model.access(Agent::Gpu(me), addr, size, space, kind, site);
}

pub fn thread_idx() -> Dim3 {
    info().tid
}
pub fn block_idx() -> Dim3 {
    info().bid
}
pub fn block_dim() -> Dim3 {
    info().bdim
}
pub fn grid_dim() -> Dim3 {
    info().gdim
}
pub fn lane_id() -> u32 {
    info().lane
}

fn barrier(op: BarOp, pred: bool, site: Site) -> u32 {
    if unwinding() {
        // Skipped: a barrier cannot complete without suspending (the result is meaningless).
        return 0;
    }
    with_state(|st, me| st.barrier_arrive(me, op, pred, site));
    suspend();
    with_state(|st, me| st.threads[me].result)
}
pub fn sync_threads(site: Site) {
    if !unwinding() && sync_site(SiteKind::BlockBarrier, None, site) == Some(MutationKind::Skip) {
        return;
    }
    barrier(BarOp::Sync, false, site);
}
pub fn sync_threads_count(pred: bool, site: Site) -> u32 {
    barrier(BarOp::Count, pred, site)
}
pub fn sync_threads_and(pred: bool, site: Site) -> bool {
    barrier(BarOp::And, pred, site) != 0
}
pub fn sync_threads_or(pred: bool, site: Site) -> bool {
    barrier(BarOp::Or, pred, site) != 0
}

pub fn grid_sync(site: Site) {
    if unwinding() || sync_site(SiteKind::GridBarrier, None, site) == Some(MutationKind::Skip) {
        return;
    }
    with_state(|st, me| st.grid_arrive(me, site));
    suspend();
}

fn collective(kind: CollKind, mask: u32, val: u32, b: u32, c: u32, site: Site) -> u32 {
    if unwinding() {
        // Skipped, as a barrier: the lane gets its own value back.
        return val;
    }
    if let Err(trap) = with_state(|st, me| st.warp_arrive(me, kind, mask, val, b, c, site)) {
        // A GPU traps here (the safe functions check the mask): the thread ends, and the launch
        // reports the reason, which names the call site.
        std::panic::resume_unwind(Box::new(trap));
    }
    suspend();
    with_state(|st, me| st.threads[me].result)
}
pub fn shfl(mode: ShflMode, mask: u32, x: u32, b: u32, c: u32, site: Site) -> u32 {
    collective(CollKind::Shfl(mode), mask, x, b, c, site)
}
pub fn ballot(mask: u32, pred: bool, site: Site) -> u32 {
    collective(CollKind::Ballot, mask, pred as u32, 0, 0, site)
}
pub fn match_bits(mask: u32, value: u32, bits: u32, site: Site) -> u32 {
    // `bits` is the clamp operand: lanes that pass different widths meet different collectives.
    collective(CollKind::MatchBits, mask, value, 0, bits, site)
}
pub fn vote_any(mask: u32, pred: bool, site: Site) -> bool {
    collective(CollKind::Any, mask, pred as u32, 0, 0, site) != 0
}
pub fn vote_all(mask: u32, pred: bool, site: Site) -> bool {
    collective(CollKind::All, mask, pred as u32, 0, 0, site) != 0
}
pub fn sync_warp(mask: u32, site: Site) {
    if !unwinding() && sync_site(SiteKind::WarpBarrier, None, site) == Some(MutationKind::Skip) {
        return;
    }
    collective(CollKind::SyncWarp, mask, 0, 0, 0, site);
}
/// The lanes of the caller's warp that have not exited.
pub fn active_mask() -> u32 {
    with_state(|st, me| {
        let th = &st.threads[me];
        let blk = &st.blocks[th.block];
        let w = (th.rank / 32) as usize;
        let first = blk.first + w * 32;
        let lanes = (blk.n - w * 32).min(32);
        (0..lanes).filter(|&l| !matches!(st.threads[first + l].status, Status::Exited)).fold(0u32, |m, l| m | (1 << l))
    })
}

/// The emulator checks masks in the collective itself and reports misuse with the lanes involved.
pub fn check_in_mask(_mask: u32, _what: &'static core::ffi::CStr, _site: Site) {}

pub fn fence(scope: ScopeKind, site: Site) {
    if unwinding() {
        return;
    }
    let scope = match sync_site(SiteKind::Fence, Some(scope), site) {
        Some(MutationKind::Skip) => return,
        Some(MutationKind::NarrowScope) => match scope {
            ScopeKind::System => ScopeKind::Device,
            _ => ScopeKind::Block,
        },
        _ => scope,
    };
    with_state(|st, me| {
        // Neither progress nor a poll: a spin loop may fence between its polls.
        st.threads[me].at = Some(site);
        st.model.fence(Agent::Gpu(me), scope);
    });
    suspend();
}
pub fn nanosleep(_ns: u32, site: Site) {
    if unwinding() {
        return;
    }
    with_state(|st, me| st.poll(me, site, None));
    suspend();
}

fn maybe_preempt() {
    if unwinding() {
        return;
    }
    let switch = with_state(|st, _| {
        let n = st.opts.preempt_one_in;
        n > 0 && st.rng.below(n as usize) == 0
    });
    if switch {
        suspend();
    }
}

/// # Safety
/// `p` is valid for reads (checked by the view).
#[track_caller]
pub unsafe fn load<T: Copy>(p: *const T, access: Access, space: SpaceKind, site: Site) -> T {
    access_check::check(space, p as usize, size_of::<T>(), site);
    if unwinding() {
        // SAFETY: as below.
        return unsafe { memory::read(p) };
    }
    // A volatile load made plain (a mutant) is a plain access to the memory model, and still a poll to
    // the engine, so that a spin on it ends as a livelock rather than at the time limit.
    let strong =
        access == Access::Volatile && sync_site(SiteKind::VolatileLoad, None, site) != Some(MutationKind::Plain);
    if strong {
        suspend()
    } else {
        maybe_preempt()
    }
    let kind = if strong { Kind::VolatileRead } else { Kind::Read };
    // SAFETY: caller's contract (a view over `Pod` elements); each access is atomic (see `memory`).
    let v = unsafe { memory::read(p) };
    with_state(|st, me| {
        record_access(st, me, p as usize, size_of::<T>(), space, kind, site);
        if access == Access::Volatile {
            st.poll(me, site, Some(Polled::of(p, space, v)));
        } else {
            st.busy(me, site);
        }
    });
    v
}

/// One 16-byte vector load of `V` (`[T; LANES]`) from global memory: one scheduling point, recorded
/// as one read of each element, as the memory model treats a vector access (the cache operator changes
/// nothing here: a write racing with a read-only load is reported like any race).
///
/// # Safety
/// `p` is valid for 16 bytes of reads (checked by the view) and 16-byte aligned.
#[track_caller]
pub unsafe fn load_vector<T: Copy, V: Copy>(p: *const T, _op: crate::vector::CacheOp, site: Site) -> V {
    let size = size_of::<T>();
    access_check::check(SpaceKind::Global, p as usize, 16, site);
    assert!((p as usize).is_multiple_of(16), "a 16-byte vector load needs a 16-byte aligned address");
    if unwinding() {
        // SAFETY: as below.
        return unsafe { memory::read_vector::<T, V>(p) };
    }
    maybe_preempt();
    // SAFETY: caller's contract; each element is one atomic access (see `memory`).
    let v = unsafe { memory::read_vector::<T, V>(p) };
    with_state(|st, me| {
        for k in 0..16 / size {
            record_access(st, me, p as usize + k * size, size, SpaceKind::Global, Kind::Read, site);
        }
        st.busy(me, site);
    });
    v
}

/// One 16-byte vector store of `V` (`[T; LANES]`) to global memory: one scheduling point, recorded as
/// one plain write of each element (whatever the cache operator).
///
/// # Safety
/// `p` is valid for 16 bytes of writes (checked by the view) and 16-byte aligned.
#[track_caller]
pub unsafe fn store_vector<T: Copy, V: Copy>(p: *mut T, v: V, _op: crate::vector::CacheOp, site: Site) {
    let size = size_of::<T>();
    access_check::check(SpaceKind::Global, p as usize, 16, site);
    assert!((p as usize).is_multiple_of(16), "a 16-byte vector store needs a 16-byte aligned address");
    if unwinding() {
        // SAFETY: as below.
        return unsafe { memory::write_vector(p, v) };
    }
    maybe_preempt();
    with_state(|st, me| {
        for k in 0..16 / size {
            record_access(st, me, p as usize + k * size, size, SpaceKind::Global, Kind::Write, site);
        }
        // 16 bytes: every thread parked on a location among them looks again.
        st.wrote(me, site, (p as usize, 16, 0), false);
    });
    // SAFETY: caller's contract; each element is one atomic access (see `memory`).
    unsafe { memory::write_vector(p, v) }
}

/// # Safety
/// `p` is valid for writes (checked by the view).
#[track_caller]
pub unsafe fn store<T: Copy>(p: *mut T, v: T, access: Access, space: SpaceKind, site: Site) {
    access_check::check(space, p as usize, size_of::<T>(), site);
    if unwinding() {
        // SAFETY: as below.
        return unsafe { memory::write(p, v) };
    }
    let strong =
        access == Access::Volatile && sync_site(SiteKind::VolatileStore, None, site) != Some(MutationKind::Plain);
    if strong {
        suspend()
    } else {
        maybe_preempt()
    }
    let kind = if strong { Kind::VolatileWrite } else { Kind::Write };
    with_state(|st, me| {
        if strong {
            st.model.lock_store(me, p as usize, bits_of(v));
        }
        record_access(st, me, p as usize, size_of::<T>(), space, kind, site);
        st.wrote(me, site, (p as usize, size_of::<T>(), bits_of(v)), access == Access::Volatile);
    });
    // SAFETY: as in `load`.
    unsafe { memory::write(p, v) }
}

/// The kernel's shared layout (its arrays, with their offsets), for reports of shared memory.
pub fn name_shared_layout(fields: &'static [crate::shared::SharedField]) {
    if unwinding() {
        return;
    }
    with_state(|st, _| {
        st.model.name_shared_layout(fields);
    });
}

/// A shared layout needs more dynamic shared memory than the launch gave: the launch ends with
/// `EmuError::SharedMemoryTooSmall`.
#[cold]
pub fn shared_too_small(layout: &'static str, needed: usize, given: usize) -> ! {
    let reason = with_state(|st, _| {
        let e = EmuError::SharedMemoryTooSmall { kernel: st.kernel.clone(), layout: layout.to_string(), needed, given };
        let reason = e.to_string();
        st.error.get_or_insert(e);
        reason
    });
    // The thread ends here; the scheduler reports the error recorded above.
    std::panic::resume_unwind(Box::new(reason))
}

/// Applies one atomic op to a value held as bits, per type.
trait EmuAtomic: Atomic + PartialEq {
    fn apply(op: AtomOp, old: Self, a: Self, b: Self) -> Self;
}

macro_rules! emu_int {
    ($($t:ty),*) => {$(
        impl EmuAtomic for $t {
            fn apply(op: AtomOp, old: Self, a: Self, b: Self) -> Self {
                match op {
                    AtomOp::Add => old.wrapping_add(a),
                    AtomOp::Min => old.min(a),
                    AtomOp::Max => old.max(a),
                    AtomOp::And => old & a,
                    AtomOp::Or => old | a,
                    AtomOp::Xor => old ^ a,
                    AtomOp::Exch => a,
                    AtomOp::Cas => if old == a { b } else { old },
                    AtomOp::Inc | AtomOp::Dec => inc_dec(op, old as u64, a as u64) as $t,
                }
            }
        }
    )*};
}
fn inc_dec(op: AtomOp, old: u64, limit: u64) -> u64 {
    match op {
        AtomOp::Inc => {
            if old >= limit {
                0
            } else {
                old + 1
            }
        }
        _ => {
            if old == 0 || old > limit {
                limit
            } else {
                old - 1
            }
        }
    }
}
emu_int!(u32, i32, u64, i64);
macro_rules! emu_float {
    ($($t:ty),*) => {$(
        impl EmuAtomic for $t {
            fn apply(op: AtomOp, old: Self, a: Self, b: Self) -> Self {
                match op {
                    AtomOp::Add => old + a,
                    AtomOp::Exch => a,
                    // Compare-and-swap compares bit patterns, as the hardware does.
                    AtomOp::Cas => if old.to_bits() == a.to_bits() { b } else { old },
                    _ => unreachable!("no such float atomic"),
                }
            }
        }
    )*};
}
emu_float!(f32, f64);

#[track_caller]
fn atom_generic<T: EmuAtomic>(op: AtomOp, space: SpaceKind, scope: ScopeKind, p: *mut T, a: T, b: T, site: Site) -> T {
    access_check::check(space, p as usize, size_of::<T>(), site);
    let quiet = unwinding();
    if !quiet && sync_site(SiteKind::Atomic, Some(scope), site) == Some(MutationKind::PlainReadModifyWrite) {
        return plain_read_modify_write(op, space, p, a, b, site);
    }
    if !quiet {
        suspend();
    }
    // SAFETY: the view checked the pointer. The read-modify-write is one atomic operation (see
    // `memory`): no emulated thread runs until this one suspends, and another OS thread touching the
    // same word (a host view of mapped memory) sees it as indivisible too.
    let (old, new) = unsafe { memory::read_modify_write(p, |old| T::apply(op, old, a, b)) };
    if quiet {
        return old;
    }
    with_state(|st, me| {
        if matches!(op, AtomOp::Cas | AtomOp::Exch) {
            st.model.lock_rmw(me, p as usize, bits_of(old), bits_of(new), site);
        }
        record_access(st, me, p as usize, size_of::<T>(), space, Kind::Atomic(scope), site);
        // Memory left as it was (a failed compare, an exchange or add that changes nothing) is a poll;
        // bits are compared, so that NaN patterns and -0.0 count as they are stored.
        if bits_of(new) == bits_of(old) {
            let polled = Polled::of(p, space, old);
            st.poll(me, site, Some(if op == AtomOp::Cas { polled.comparing(a) } else { polled }));
        } else {
            st.wrote(me, site, (p as usize, size_of::<T>(), bits_of(new)), true);
        }
    });
    old
}

/// A read-modify-write made a plain load and a plain store (a mutant): the scheduler may run another
/// thread between them, and the memory model sees a plain read and a plain write. To the engine a store
/// of an unchanged value is still a poll, so that a spin lock made of it ends as a livelock.
fn plain_read_modify_write<T: EmuAtomic>(op: AtomOp, space: SpaceKind, p: *mut T, a: T, b: T, site: Site) -> T {
    maybe_preempt();
    // SAFETY: the view checked the pointer; each access is atomic (see `memory`).
    let old = unsafe { memory::read(p) };
    with_state(|st, me| {
        record_access(st, me, p as usize, size_of::<T>(), space, Kind::Read, site);
        st.busy(me, site);
    });
    suspend();
    let new = T::apply(op, old, a, b);
    with_state(|st, me| {
        record_access(st, me, p as usize, size_of::<T>(), space, Kind::Write, site);
        if bits_of(new) == bits_of(old) {
            st.poll(me, site, Some(Polled::of(p, space, old)));
        } else {
            st.wrote(me, site, (p as usize, size_of::<T>(), bits_of(new)), false);
        }
    });
    // SAFETY: as above.
    unsafe { memory::write(p, new) };
    old
}

#[track_caller]
fn load_acquire_generic<T: Copy>(space: SpaceKind, scope: ScopeKind, p: *const T, site: Site) -> T {
    access_check::check(space, p as usize, size_of::<T>(), site);
    if unwinding() {
        // SAFETY: as in `load`.
        return unsafe { memory::read(p) };
    }
    let kind = match sync_site(SiteKind::AcquireLoad, Some(scope), site) {
        Some(MutationKind::Relaxed) => Kind::VolatileRead,
        _ => Kind::AcquireLoad(scope),
    };
    suspend();
    // SAFETY: as in `load`.
    let v = unsafe { memory::read(p) };
    with_state(|st, me| {
        record_access(st, me, p as usize, size_of::<T>(), space, kind, site);
        st.poll(me, site, Some(Polled::of(p, space, v)));
    });
    v
}

#[track_caller]
fn store_release_generic<T: Copy>(space: SpaceKind, scope: ScopeKind, p: *mut T, v: T, site: Site) {
    access_check::check(space, p as usize, size_of::<T>(), site);
    if unwinding() {
        // SAFETY: as in `load`.
        return unsafe { memory::write(p, v) };
    }
    let kind = match sync_site(SiteKind::ReleaseStore, Some(scope), site) {
        Some(MutationKind::Relaxed) => Kind::VolatileWrite,
        _ => Kind::ReleaseStore(scope),
    };
    suspend();
    with_state(|st, me| {
        st.model.lock_store(me, p as usize, bits_of(v));
        record_access(st, me, p as usize, size_of::<T>(), space, kind, site);
        st.wrote(me, site, (p as usize, size_of::<T>(), bits_of(v)), true);
    });
    // SAFETY: as in `load`.
    unsafe { memory::write(p, v) }
}

macro_rules! impl_atomic {
    ($($t:ty => $zero:expr),*) => {$(
        impl Atomic for $t {
            unsafe fn atom(op: AtomOp, space: SpaceKind, scope: ScopeKind, p: *mut Self, a: Self, b: Self, site: Site) -> Self {
                atom_generic(op, space, scope, p, a, b, site)
            }
            unsafe fn load_acquire(space: SpaceKind, scope: ScopeKind, p: *const Self, site: Site) -> Self {
                load_acquire_generic(space, scope, p, site)
            }
            unsafe fn store_release(space: SpaceKind, scope: ScopeKind, p: *mut Self, v: Self, site: Site) {
                store_release_generic(space, scope, p, v, site)
            }
            unsafe fn red_add(space: SpaceKind, scope: ScopeKind, p: *mut Self, v: Self, site: Site) {
                // A reduction is an atomic add whose old value is dropped: the same indivisible update,
                // the same race and ordering rules.
                atom_generic(AtomOp::Add, space, scope, p, v, v, site);
            }
            fn zero() -> Self {
                $zero
            }
        }
    )*};
}
impl_atomic!(u32 => 0, i32 => 0, u64 => 0, i64 => 0, f32 => 0.0, f64 => 0.0);
