//! A litmus suite for the race detector, checked against the PTX memory consistency model (PTX ISA,
//! "Memory Consistency Model"): classic shapes (MP, SB, LB, WRC/ISA2 chains, IRIW, 2+2W, CoRR, RMW
//! chains and release sequences, a lock handoff, a barrier after a relaxed observation, a transitive
//! chain through two scopes) x where the threads are (one warp, two warps of a block, other blocks)
//! x the synchronisation (none, volatile, fences at each scope, release/acquire at each scope,
//! atomics at each scope). Each case states the locations that must race (none for a race-free case)
//! and the rule of the model it follows from; every case runs on 5 schedule seeds, and once more as a
//! trace: the same operations told to the memory model directly, in one interleaving
//! ([`gpu_std::emu::model::Trace`]), with no kernel and no scheduler, so that a rule change is tested
//! in milliseconds. The readings chosen where the model is subtle are written down in
//! `docs/memory-model.md`.

mod common;

use common::{Buf, launch, reports, seed};
use gpu_std::atomic::ScopeKind;
use gpu_std::block::sync_threads;
use gpu_std::emu::model::{Location, Op, Trace, TraceBuffer, Who};
use gpu_std::emu::{LaunchConfig, Outcome};
use gpu_std::fence::{nanosleep, threadfence, threadfence_block, threadfence_system};
use gpu_std::thread::{block_idx, grid_dim, thread_idx};
use gpu_std::{Block, Device, GlobalMut, System};
use std::collections::HashMap;

// ---- where the threads are ---------------------------------------------------------------------

/// Roles 0..4 are lanes 0..4 of one warp.
const WARP: u32 = 0;
/// Roles 0..4 are warps 0..4 of one block (threads 0, 32, 64, 96).
const WARPS: u32 = 1;
/// Roles 0..4 are thread 0 of blocks 0..4.
const BLOCKS: u32 = 2;
/// Roles 0 and 1 are warps 0 and 1 of block 0; roles 2 and 3 warps 0 and 1 of block 1.
const MIXED: u32 = 3;

fn config(placement: u32) -> LaunchConfig {
    match placement {
        WARP => LaunchConfig::linear(1, 32, 0),
        WARPS => LaunchConfig::linear(1, 128, 0),
        BLOCKS => LaunchConfig::linear(4, 32, 0),
        _ => LaunchConfig::linear(2, 64, 0),
    }
}

/// The role of the calling thread (0..4), or `None`.
fn role(placement: u32) -> Option<u32> {
    let (b, t) = (block_idx().x, thread_idx().x);
    match placement {
        WARP => (t < 4).then_some(t),
        WARPS => (t % 32 == 0).then_some(t / 32),
        BLOCKS => (t == 0).then_some(b),
        _ => (t % 32 == 0).then_some(b * 2 + t / 32),
    }
}

// ---- synchronisation ---------------------------------------------------------------------------

/// Plain flag store and one plain load (no spin: a plain spin may never see the store).
const PLAIN: u32 = 0;
/// Volatile flag store, volatile polls, no fence.
const VOLATILE: u32 = 1;
/// `fence.sc.<scope>` + volatile flag store; volatile polls + `fence.sc.<scope>`.
const FENCE_CTA: u32 = 2;
const FENCE_GPU: u32 = 3;
const FENCE_SYS: u32 = 4;
/// `st.release.<scope>` / `ld.acquire.<scope>`.
const RELACQ_CTA: u32 = 5;
const RELACQ_GPU: u32 = 6;
const RELACQ_SYS: u32 = 7;
/// `__threadfence()` + `atom.exch.<scope>`; `atom.add.<scope>` of 0 polls + `__threadfence()`.
const ATOM_CTA: u32 = 8;
const ATOM_GPU: u32 = 9;
const ATOM_SYS: u32 = 10;
/// Relaxed atomics at device scope, no fence.
const ATOM_RELAXED: u32 = 11;

/// Polls before a waiting thread gives up (it never needs as many: the writer always writes).
const SPIN: u32 = 1 << 20;

fn fence_for(mode: u32) {
    match mode {
        FENCE_CTA => threadfence_block(),
        FENCE_GPU | ATOM_CTA | ATOM_GPU | ATOM_SYS => threadfence(),
        FENCE_SYS => threadfence_system(),
        _ => {}
    }
}

/// Raises `flag[i]` to 1, releasing as `mode` says.
fn release(flag: GlobalMut<'_, u32>, i: usize, mode: u32) {
    fence_for(mode);
    match mode {
        PLAIN => flag.set(i, 1),
        VOLATILE | FENCE_CTA | FENCE_GPU | FENCE_SYS => flag.set_volatile(i, 1),
        RELACQ_CTA => flag.atomic_scoped::<Block>(i).store_release(1),
        RELACQ_GPU => flag.atomic_scoped::<Device>(i).store_release(1),
        RELACQ_SYS => flag.atomic_scoped::<System>(i).store_release(1),
        ATOM_CTA => _ = flag.atomic_scoped::<Block>(i).swap(1),
        ATOM_SYS => _ = flag.atomic_scoped::<System>(i).swap(1),
        _ => _ = flag.atomic_scoped::<Device>(i).swap(1),
    }
}

/// Reads `flag[i]` once as `mode` says.
fn poll(flag: GlobalMut<'_, u32>, i: usize, mode: u32) -> u32 {
    match mode {
        PLAIN => flag.get(i),
        VOLATILE | FENCE_CTA | FENCE_GPU | FENCE_SYS => flag.get_volatile(i),
        RELACQ_CTA => flag.atomic_scoped::<Block>(i).load_acquire(),
        RELACQ_GPU => flag.atomic_scoped::<Device>(i).load_acquire(),
        RELACQ_SYS => flag.atomic_scoped::<System>(i).load_acquire(),
        ATOM_CTA => flag.atomic_scoped::<Block>(i).fetch_add(0),
        ATOM_SYS => flag.atomic_scoped::<System>(i).fetch_add(0),
        _ => flag.atomic_scoped::<Device>(i).fetch_add(0),
    }
}

/// Waits for `flag[i]` to reach `want` (once, for a plain flag), then acquires as `mode` says.
fn acquire(flag: GlobalMut<'_, u32>, i: usize, mode: u32, want: u32) {
    let mut spins = 0;
    while poll(flag, i, mode) < want && mode != PLAIN && spins < SPIN {
        spins += 1;
        nanosleep(8);
    }
    fence_for(mode);
}

/// A store of `v` to `x[i]` as `mode` accesses a shared location: plain, volatile, or atomic at a
/// scope.
fn store(x: GlobalMut<'_, u32>, i: usize, v: u32, mode: u32) {
    match mode {
        PLAIN => x.set(i, v),
        VOLATILE => x.set_volatile(i, v),
        ATOM_CTA => _ = x.atomic_scoped::<Block>(i).swap(v),
        ATOM_SYS => _ = x.atomic_scoped::<System>(i).swap(v),
        RELACQ_CTA => x.atomic_scoped::<Block>(i).store_release(v),
        _ => _ = x.atomic_scoped::<Device>(i).swap(v),
    }
}

/// A load of `x[i]` as `mode` accesses a shared location.
fn load(x: GlobalMut<'_, u32>, i: usize, mode: u32) -> u32 {
    match mode {
        PLAIN => x.get(i),
        VOLATILE => x.get_volatile(i),
        ATOM_CTA => x.atomic_scoped::<Block>(i).fetch_add(0),
        ATOM_SYS => x.atomic_scoped::<System>(i).fetch_add(0),
        RELACQ_CTA => x.atomic_scoped::<Block>(i).load_acquire(),
        _ => x.atomic_scoped::<Device>(i).fetch_add(0),
    }
}

// ---- shapes ------------------------------------------------------------------------------------

/// MP: role 0 writes `data[0]`, releases `flag[0]`; role 1 acquires it and reads `data[0]`.
const MP: u32 = 0;
/// A chain (ISA2 / WRC): role 0 writes `data[0]` and releases `flag[0]` (`mode`); role 1 acquires it
/// and releases `flag[1]` (`mode2`); role 2 acquires that and reads `data[0]`.
const CHAIN: u32 = 1;
/// SB: role 0 stores `x[0]` then loads `x[1]`, role 1 stores `x[1]` then loads `x[0]` (`mode` access,
/// `mode2` a fence between when `FENCE_*`).
const SB: u32 = 2;
/// LB: role 0 loads `x[0]` then stores `x[1]`, role 1 loads `x[1]` then stores `x[0]`.
const LB: u32 = 3;
/// IRIW: roles 0 and 1 store `x[0]` and `x[1]`; roles 2 and 3 load both, in opposite orders.
const IRIW: u32 = 4;
/// 2+2W: role 0 stores `x[0]` then `x[1]`, role 1 stores `x[1]` then `x[0]`.
const TWO_TWO_W: u32 = 5;
/// CoRR: role 0 stores `x[0]`; role 1 loads it twice.
const CORR: u32 = 6;
/// An RMW chain: roles 0..4 each add 1 to `x[0]` with an atomic at `mode`'s scope.
const RMW: u32 = 7;
/// A release sequence: role 0 writes `data[0]`, `__threadfence()`, adds 1 to `flag[0]`; role 1 waits
/// for it and adds 1 to `flag[0]` with a relaxed device atomic; role 2 waits for `flag[0] == 2`,
/// `__threadfence()`, reads `data[0]`.
const REL_SEQ: u32 = 8;
/// A lock handoff: roles 0 and 1 each take `flag[0]` with a compare-and-swap loop, fence (`mode`:
/// none, `FENCE_CTA`, `FENCE_GPU`), add 1 to `data[0]` with a plain load and store, fence (`mode2`),
/// and release with an exchange.
const LOCK: u32 = 9;
/// A barrier after a relaxed observation (placement `MIXED`): role 0 writes `data[0]`,
/// `__threadfence()`, raises `flag[0]` (volatile); role 2 polls it (volatile), then (`mode2 ==
/// FENCE_GPU`) `__threadfence()`, then `__syncthreads()` with its whole block; role 3 reads `data[0]`
/// after the barrier.
const BARRIER: u32 = 10;

gpu_std::kernel! {
    /// Test-only: one litmus test: `case` packs its shape, mode, second mode and placement, a byte each
    /// (see [`Case::packed`]).
    pub fn litmus<'a>(data: GlobalMut<'a, u32>, flag: GlobalMut<'a, u32>, x: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>, case: u32) {
        let (shape, mode, mode2, placement) = (case & 0xff, (case >> 8) & 0xff, (case >> 16) & 0xff, case >> 24);
        let r = role(placement);
        if shape == BARRIER {
            if block_idx().x == 1 {
                if r == Some(2) {
                    acquire(flag, 0, VOLATILE, 1);
                    fence_for(mode2);
                }
                sync_threads();
                if r == Some(3) {
                    out.set(3, data.get(0));
                }
            } else if r == Some(0) {
                data.set(0, 7);
                release(flag, 0, FENCE_GPU);
            }
            return;
        }
        let Some(r) = r else { return };
        let o = r as usize;
        match (shape, r) {
            (MP, 0) => {
                data.set(0, 7);
                release(flag, 0, mode);
            }
            (MP, 1) => {
                acquire(flag, 0, mode, 1);
                out.set(o, data.get(0));
            }
            (CHAIN, 0) => {
                data.set(0, 7);
                release(flag, 0, mode);
            }
            (CHAIN, 1) => {
                acquire(flag, 0, mode, 1);
                release(flag, 1, mode2);
            }
            (CHAIN, 2) => {
                acquire(flag, 1, mode2, 1);
                out.set(o, data.get(0));
            }
            (SB, 0 | 1) => {
                store(x, o, 1, mode);
                fence_for(mode2);
                out.set(o, load(x, 1 - o, mode));
            }
            (LB, 0 | 1) => {
                out.set(o, load(x, o, mode));
                store(x, 1 - o, 1, mode);
            }
            (IRIW, 0 | 1) => store(x, o, 1, mode),
            (IRIW, 2 | 3) => {
                let first = o - 2;
                let a = load(x, first, mode);
                let b = load(x, 1 - first, mode);
                out.set(o, a * 2 + b);
            }
            (TWO_TWO_W, 0 | 1) => {
                store(x, o, 1, mode);
                store(x, 1 - o, 2, mode);
            }
            (CORR, 0) => store(x, 0, 1, mode),
            (CORR, 1) => {
                let a = load(x, 0, mode);
                let b = load(x, 0, mode);
                out.set(o, a * 2 + b);
            }
            (RMW, _) => _ = match mode {
                ATOM_CTA => x.atomic_scoped::<Block>(0).fetch_add(1),
                ATOM_SYS => x.atomic_scoped::<System>(0).fetch_add(1),
                _ => x.atomic_scoped::<Device>(0).fetch_add(1),
            },
            (REL_SEQ, 0) => {
                data.set(0, 7);
                threadfence();
                flag.atomic(0).fetch_add(1);
            }
            (REL_SEQ, 1) => {
                // Only after role 0's add, so that it continues the release sequence.
                acquire(flag, 0, ATOM_RELAXED, 1);
                flag.atomic(0).fetch_add(1);
            }
            (REL_SEQ, 2) => {
                let mut spins = 0;
                while flag.get_volatile(0) < 2 && spins < SPIN {
                    spins += 1;
                    nanosleep(8);
                }
                threadfence();
                out.set(o, data.get(0));
            }
            (LOCK, 0 | 1) => {
                let mut spins = 0;
                while flag.atomic(0).compare_and_swap(0, 1) != 0 && spins < SPIN {
                    spins += 1;
                    nanosleep(8);
                }
                fence_for(mode);
                data.set(0, data.get(0) + 1);
                fence_for(mode2);
                flag.atomic(0).swap(0);
            }
            _ => {}
        }
    }
}

// ---- the cases ---------------------------------------------------------------------------------

/// One litmus test: what runs, where, and what must be reported.
struct Case {
    name: String,
    shape: u32,
    mode: u32,
    mode2: u32,
    placement: u32,
    /// The buffers that must race (each at least once); empty: no race at all.
    races: &'static [&'static str],
    /// The rule of the PTX memory model the verdict follows from.
    rule: &'static str,
}

const DATA_RACE: &str = "data race: two conflicting accesses, at least one not morally strong, unordered by causality \
                         order";
const MORALLY_STRONG: &str = "morally strong: strong operations whose scopes each include the other thread do not race";
const NOT_MORALLY_STRONG: &str = "not morally strong: a .cta operation does not include a thread of another block, so \
                                  the pair races";
const REL_ACQ: &str = "release and acquire patterns (fence + strong write / strong read + fence, or st.release / \
                       ld.acquire), morally strong, synchronize: the data write is in causality order before the read";
const REL_ACQ_CUT: &str = "release/acquire patterns synchronize only when morally strong: a .cta pattern does not reach \
                           another block";
const NO_ACQUIRE: &str = "a strong read without an acquire pattern (no fence after it, not ld.acquire) observes but does \
                          not synchronize";
const CAUSALITY: &str = "causality order is transitive: base causality through each morally strong synchronize edge";
const RMW_SEQ: &str = "a release pattern's write is observed through later atomic read-modify-writes of the location \
                       (release sequence), so the acquire synchronizes with the release";
const FENCE_SC: &str = "morally strong fence.sc operations are related by Fence-SC order, and the earlier synchronizes \
                        with the later (the order the threads ran them in, which cannot contradict causality)";
const FENCE_SC_NOT_MORALLY_STRONG: &str = "Fence-SC order relates only morally strong fences: a .cta fence does not \
                                           include a thread of another block (nor a .gpu fence the host)";
const BARRIER_CTA: &str = "bar.sync orders memory like a .cta fence among the block's threads: it does not acquire a \
                           release of another block that a relaxed read observed";

fn name_of(mode: u32) -> &'static str {
    [
        "plain",
        "volatile",
        "fence.cta",
        "fence.gpu",
        "fence.sys",
        "rel/acq.cta",
        "rel/acq.gpu",
        "rel/acq.sys",
        "atom.cta+fence",
        "atom.gpu+fence",
        "atom.sys+fence",
        "atom.gpu relaxed",
    ][mode as usize]
}

fn place_of(p: u32) -> &'static str {
    ["one warp", "two warps", "two blocks", "mixed"][p as usize]
}

/// Every case, with its expected verdict written out per rule.
fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let case = |name: String, shape, mode, mode2, placement, races, rule| Case {
        name,
        shape,
        mode,
        mode2,
        placement,
        races,
        rule,
    };
    // MP: 11 kinds of flag x 3 placements.
    for p in [WARP, WARPS, BLOCKS] {
        let across = p == BLOCKS;
        for m in PLAIN..=ATOM_SYS {
            let (races, rule): (&'static [&'static str], _) = match m {
                PLAIN => (&["flag", "data"], DATA_RACE),
                VOLATILE => (&["data"], NO_ACQUIRE),
                FENCE_CTA if across => (&["data"], REL_ACQ_CUT),
                RELACQ_CTA if across => (&["flag", "data"], NOT_MORALLY_STRONG),
                // The flag's .cta atomics race, but both sides fence with fence.sc.gpu.
                ATOM_CTA if across => (&["flag"], FENCE_SC),
                _ => (&[], REL_ACQ),
            };
            v.push(case(format!("MP {} {}", name_of(m), place_of(p)), MP, m, 0, p, races, rule));
        }
    }
    // Chains through two edges (ISA2 / WRC), including a transitive chain through two scopes.
    let chains: [(u32, u32, u32, &'static [&'static str], &str); 8] = [
        (FENCE_CTA, FENCE_GPU, MIXED, &[], CAUSALITY),
        (RELACQ_CTA, RELACQ_GPU, MIXED, &[], CAUSALITY),
        (RELACQ_GPU, RELACQ_CTA, MIXED, &["flag", "data"], NOT_MORALLY_STRONG),
        (FENCE_GPU, FENCE_CTA, MIXED, &["data"], REL_ACQ_CUT),
        (FENCE_GPU, FENCE_GPU, BLOCKS, &[], CAUSALITY),
        (RELACQ_SYS, ATOM_GPU, BLOCKS, &[], CAUSALITY),
        (VOLATILE, FENCE_GPU, BLOCKS, &["data"], NO_ACQUIRE),
        (FENCE_CTA, FENCE_CTA, WARPS, &[], CAUSALITY),
    ];
    for (m1, m2, p, races, rule) in chains {
        let name = format!("chain {} then {} {}", name_of(m1), name_of(m2), place_of(p));
        v.push(case(name, CHAIN, m1, m2, p, races, rule));
    }
    // SB, LB, IRIW, 2+2W, CoRR: plain accesses race, strong ones at a shared scope do not.
    for p in [WARP, WARPS, BLOCKS] {
        let across = p == BLOCKS;
        for (shape, label) in [(SB, "SB"), (LB, "LB"), (IRIW, "IRIW"), (TWO_TWO_W, "2+2W"), (CORR, "CoRR")] {
            for m in [PLAIN, VOLATILE, ATOM_CTA, ATOM_GPU] {
                if (shape == CORR || shape == TWO_TWO_W) && m == VOLATILE && p != BLOCKS {
                    continue;
                }
                let (races, rule): (&'static [&'static str], _) = match m {
                    PLAIN => (&["x"], DATA_RACE),
                    ATOM_CTA if across => (&["x"], NOT_MORALLY_STRONG),
                    _ => (&[], MORALLY_STRONG),
                };
                v.push(case(format!("{label} {} {}", name_of(m), place_of(p)), shape, m, 0, p, races, rule));
            }
        }
        // SB with fences between plain accesses still races: fences order nothing without an observed
        // write.
        v.push(case(format!("SB plain+fence.sys {}", place_of(p)), SB, PLAIN, FENCE_SYS, p, &["x"], DATA_RACE));
        // RMW chains.
        for m in [ATOM_CTA, ATOM_GPU, ATOM_SYS] {
            let (races, rule): (&'static [&'static str], _) =
                if m == ATOM_CTA && across { (&["x"], NOT_MORALLY_STRONG) } else { (&[], MORALLY_STRONG) };
            v.push(case(format!("RMW {} {}", name_of(m), place_of(p)), RMW, m, 0, p, races, rule));
        }
    }
    // Release sequences.
    v.push(case("release sequence through an RMW, two blocks".into(), REL_SEQ, 0, 0, BLOCKS, &[], RMW_SEQ));
    // Lock handoff: fence after the CAS (acquire) and before the release.
    let locks: [(u32, u32, u32, &'static [&'static str], &str); 8] = [
        (FENCE_GPU, FENCE_GPU, BLOCKS, &[], REL_ACQ),
        (PLAIN, FENCE_GPU, BLOCKS, &["data"], NO_ACQUIRE),
        (FENCE_CTA, FENCE_GPU, BLOCKS, &["data"], REL_ACQ_CUT),
        (FENCE_GPU, FENCE_CTA, BLOCKS, &["data"], REL_ACQ_CUT),
        (FENCE_CTA, FENCE_CTA, WARPS, &[], REL_ACQ),
        (PLAIN, FENCE_GPU, WARPS, &["data"], NO_ACQUIRE),
        (FENCE_GPU, PLAIN, WARPS, &["data"], NO_ACQUIRE),
        (FENCE_CTA, FENCE_CTA, WARP, &[], REL_ACQ),
    ];
    for (acq, rel, p, races, rule) in locks {
        let name =
            format!("lock handoff, {} after CAS, {} before release, {}", name_of(acq), name_of(rel), place_of(p));
        v.push(case(name, LOCK, acq, rel, p, races, rule));
    }
    // A barrier after a relaxed observation of another block's release.
    v.push(case("barrier after a relaxed observation".into(), BARRIER, 0, PLAIN, MIXED, &["data"], BARRIER_CTA));
    v.push(case("barrier after an observation and fence.gpu".into(), BARRIER, 0, FENCE_GPU, MIXED, &[], CAUSALITY));
    v
}

impl Case {
    /// Shape, mode, second mode and placement in one word, as [`litmus`] takes them.
    fn packed(&self) -> u32 {
        self.shape | self.mode << 8 | self.mode2 << 16 | self.placement << 24
    }
}

fn run(c: &Case, s: u64) -> Outcome {
    let mut data = Buf::new("data", vec![0u32; 2]);
    let mut flag = Buf::new("flag", vec![0u32; 2]);
    let mut x = Buf::new("x", vec![0u32; 2]);
    let mut out = Buf::new("out", vec![0u32; 4]);
    let args = (data.view_mut(), flag.view_mut(), x.view_mut(), out.view_mut(), c.packed());
    launch::<litmus>(config(c.placement), &seed(s), args)
}

#[test]
fn every_litmus_verdict_holds_on_five_seeds() {
    let all = cases();
    assert!(all.len() >= 60, "{} cases", all.len());
    let mut wrong = Vec::new();
    for c in &all {
        for s in 1..=5 {
            let o = run(c, s);
            let mut got: Vec<&str> = o.races.iter().map(|r| r.buffer.as_str()).collect();
            got.sort();
            got.dedup();
            let mut want = c.races.to_vec();
            want.sort();
            if got != want {
                wrong.push(format!(
                    "{} (seed {s}): want races on {want:?}, got {got:?} [{}]\n{}",
                    c.name,
                    c.rule,
                    reports(&o)
                ));
            }
        }
    }
    println!("{} litmus cases x 5 seeds", all.len());
    assert!(wrong.is_empty(), "{} wrong verdicts:\n{}", wrong.len(), wrong.join("\n"));
}

// ---- the same cases as traces ------------------------------------------------------------------

/// One litmus case told to the memory model as a trace: the kernel's operations for each role, in
/// one interleaving in which every wait is over (a release comes before the acquire that waits for
/// it), with the values memory holds (a compare-and-swap or exchange that changes a word is read as
/// taking a lock, as in a launch).
struct Litmus {
    t: Trace,
    placement: u32,
    data: TraceBuffer,
    flag: TraceBuffer,
    x: TraceBuffer,
    out: TraceBuffer,
    values: HashMap<(u8, usize), u64>,
}

/// The scope of a mode's atomics and release/acquire operations.
fn scope_of(mode: u32) -> ScopeKind {
    match mode {
        ATOM_CTA | RELACQ_CTA | FENCE_CTA => ScopeKind::Block,
        ATOM_SYS | RELACQ_SYS | FENCE_SYS => ScopeKind::System,
        _ => ScopeKind::Device,
    }
}

#[derive(Clone, Copy)]
enum B {
    Data,
    Flag,
    X,
    Out,
}

impl Litmus {
    fn new(placement: u32) -> Litmus {
        let cfg = config(placement);
        let mut t = Trace::new(cfg.grid.x, cfg.block.x);
        let (data, flag, x, out) = (t.buffer("data", 2), t.buffer("flag", 2), t.buffer("x", 2), t.buffer("out", 4));
        Litmus { t, placement, data, flag, x, out, values: HashMap::new() }
    }
    /// The thread that plays role `r` (see [`role`]).
    fn who(&self, r: u32) -> Who {
        match self.placement {
            WARP => Who::thread(0, r),
            WARPS => Who::thread(0, 32 * r),
            BLOCKS => Who::thread(r, 0),
            _ => Who::thread(r / 2, (r % 2) * 32),
        }
    }
    fn loc(&self, b: B, i: usize) -> Location {
        match b {
            B::Data => self.data.at(i),
            B::Flag => self.flag.at(i),
            B::X => self.x.at(i),
            B::Out => self.out.at(i),
        }
    }
    fn op(&mut self, r: u32, b: B, i: usize, op: Op) {
        let (who, at) = (self.who(r), self.loc(b, i));
        self.t.op(who, at, op);
    }
    /// A store of `v` (plain, volatile, release) that memory then holds.
    fn set(&mut self, r: u32, b: B, i: usize, v: u64, op: Op) {
        self.op(r, b, i, op);
        self.values.insert((b as u8, i), v);
    }
    /// An exchange (or compare-and-swap that succeeds) leaving `v`, read as the kernel's atomics are.
    fn swap(&mut self, r: u32, b: B, i: usize, v: u64, scope: ScopeKind) {
        let old = self.values.get(&(b as u8, i)).copied().unwrap_or(0);
        self.set(r, b, i, v, Op::Swap { scope, old, new: v });
    }
    fn fence_for(&mut self, r: u32, mode: u32) {
        let who = self.who(r);
        match mode {
            FENCE_CTA => _ = self.t.fence(who, ScopeKind::Block),
            FENCE_GPU | ATOM_CTA | ATOM_GPU | ATOM_SYS => _ = self.t.fence(who, ScopeKind::Device),
            FENCE_SYS => _ = self.t.fence(who, ScopeKind::System),
            _ => {}
        }
    }
    /// [`release`]: raises `flag[i]` to 1.
    fn release(&mut self, r: u32, i: usize, mode: u32) {
        self.fence_for(r, mode);
        match mode {
            PLAIN => self.set(r, B::Flag, i, 1, Op::Write),
            VOLATILE | FENCE_CTA | FENCE_GPU | FENCE_SYS => self.set(r, B::Flag, i, 1, Op::VolatileWrite(1)),
            RELACQ_CTA | RELACQ_GPU | RELACQ_SYS => self.set(r, B::Flag, i, 1, Op::ReleaseStore(scope_of(mode), 1)),
            _ => self.swap(r, B::Flag, i, 1, scope_of(mode)),
        }
    }
    /// [`poll`]: one read of `flag[i]` (a read-modify-write of 0 for the atomic modes).
    fn poll(&mut self, r: u32, b: B, i: usize, mode: u32) {
        let op = match mode {
            PLAIN => Op::Read,
            VOLATILE | FENCE_CTA | FENCE_GPU | FENCE_SYS => Op::VolatileRead,
            RELACQ_CTA | RELACQ_GPU | RELACQ_SYS => Op::AcquireLoad(scope_of(mode)),
            _ => Op::Atomic(scope_of(mode)),
        };
        self.op(r, b, i, op);
    }
    /// [`acquire`], after the release it waits for: one poll that sees it, then the fence.
    fn acquire(&mut self, r: u32, i: usize, mode: u32) {
        self.poll(r, B::Flag, i, mode);
        self.fence_for(r, mode);
    }
    /// [`store`].
    fn store(&mut self, r: u32, i: usize, v: u64, mode: u32) {
        match mode {
            PLAIN => self.set(r, B::X, i, v, Op::Write),
            VOLATILE => self.set(r, B::X, i, v, Op::VolatileWrite(v)),
            RELACQ_CTA => self.set(r, B::X, i, v, Op::ReleaseStore(ScopeKind::Block, v)),
            _ => self.swap(r, B::X, i, v, scope_of(mode)),
        }
    }
    /// [`load`].
    fn load(&mut self, r: u32, i: usize, mode: u32) {
        let op = match mode {
            PLAIN => Op::Read,
            VOLATILE => Op::VolatileRead,
            RELACQ_CTA => Op::AcquireLoad(ScopeKind::Block),
            _ => Op::Atomic(scope_of(mode)),
        };
        self.op(r, B::X, i, op);
    }
    fn out(&mut self, r: u32) {
        self.op(r, B::Out, r as usize, Op::Write);
    }
}

/// The trace of case `c`: what [`litmus`] does, role by role, in one interleaving.
fn trace(c: &Case) -> Trace {
    let mut l = Litmus::new(c.placement);
    let (m, m2) = (c.mode, c.mode2);
    match c.shape {
        MP => {
            l.op(0, B::Data, 0, Op::Write);
            l.release(0, 0, m);
            l.acquire(1, 0, m);
            l.op(1, B::Data, 0, Op::Read);
            l.out(1);
        }
        CHAIN => {
            l.op(0, B::Data, 0, Op::Write);
            l.release(0, 0, m);
            l.acquire(1, 0, m);
            l.release(1, 1, m2);
            l.acquire(2, 1, m2);
            l.op(2, B::Data, 0, Op::Read);
            l.out(2);
        }
        SB => {
            l.store(0, 0, 1, m);
            l.store(1, 1, 1, m);
            l.fence_for(0, m2);
            l.fence_for(1, m2);
            l.load(0, 1, m);
            l.load(1, 0, m);
            l.out(0);
            l.out(1);
        }
        LB => {
            l.load(0, 0, m);
            l.load(1, 1, m);
            l.out(0);
            l.out(1);
            l.store(0, 1, 1, m);
            l.store(1, 0, 1, m);
        }
        IRIW => {
            l.store(0, 0, 1, m);
            l.load(2, 0, m);
            l.load(3, 1, m);
            l.store(1, 1, 1, m);
            l.load(2, 1, m);
            l.load(3, 0, m);
            l.out(2);
            l.out(3);
        }
        TWO_TWO_W => {
            l.store(0, 0, 1, m);
            l.store(1, 1, 1, m);
            l.store(0, 1, 2, m);
            l.store(1, 0, 2, m);
        }
        CORR => {
            l.load(1, 0, m);
            l.store(0, 0, 1, m);
            l.load(1, 0, m);
            l.out(1);
        }
        RMW => {
            for r in 0..4 {
                l.op(r, B::X, 0, Op::Atomic(scope_of(m)));
            }
        }
        REL_SEQ => {
            l.op(0, B::Data, 0, Op::Write);
            l.fence_for(0, ATOM_GPU);
            l.op(0, B::Flag, 0, Op::Atomic(ScopeKind::Device));
            l.acquire(1, 0, ATOM_RELAXED);
            l.op(1, B::Flag, 0, Op::Atomic(ScopeKind::Device));
            l.op(2, B::Flag, 0, Op::VolatileRead);
            l.fence_for(2, ATOM_GPU);
            l.op(2, B::Data, 0, Op::Read);
            l.out(2);
        }
        LOCK => {
            // Role 0 takes the lock; role 1's compare-and-swap fails while role 0 holds it (it
            // changes nothing); role 0's section and release; then role 1 takes it.
            let dev = ScopeKind::Device;
            let (w0, w1, lock) = (l.who(0), l.who(1), l.flag.at(0));
            l.t.op(w0, lock, Op::Swap { scope: dev, old: 0, new: 1 });
            l.t.op(w1, lock, Op::Swap { scope: dev, old: 1, new: 1 });
            for (r, who) in [(0, w0), (1, w1)] {
                if r == 1 {
                    l.t.op(who, lock, Op::Swap { scope: dev, old: 0, new: 1 });
                }
                l.fence_for(r, m);
                l.op(r, B::Data, 0, Op::Read);
                l.op(r, B::Data, 0, Op::Write);
                l.fence_for(r, m2);
                l.t.op(who, lock, Op::Swap { scope: dev, old: 1, new: 0 });
            }
        }
        BARRIER => {
            // Role 0 in block 0; roles 2 and 3 are threads 0 and 32 of block 1.
            l.op(0, B::Data, 0, Op::Write);
            l.release(0, 0, FENCE_GPU);
            l.acquire(2, 0, VOLATILE);
            l.fence_for(2, m2);
            l.t.sync_threads(1);
            l.op(3, B::Data, 0, Op::Read);
            l.op(3, B::Out, 3, Op::Write);
        }
        _ => unreachable!("no shape {}", c.shape),
    }
    l.t
}

#[test]
fn every_litmus_verdict_holds_as_a_trace() {
    let all = cases();
    let start = std::time::Instant::now();
    let mut wrong = Vec::new();
    for c in &all {
        let t = trace(c);
        let got = t.racy_buffers();
        let mut want: Vec<String> = c.races.iter().map(|s| s.to_string()).collect();
        want.sort();
        if got != want {
            let reports: Vec<String> = t.races().iter().map(|r| r.to_string()).collect();
            wrong.push(format!("{}: want races on {want:?}, got {got:?} [{}]\n{}", c.name, c.rule, reports.join("\n")));
        }
    }
    println!("{} litmus cases as traces in {:.1} ms", all.len(), start.elapsed().as_secs_f64() * 1e3);
    assert!(wrong.is_empty(), "{} wrong verdicts:\n{}", wrong.len(), wrong.join("\n"));
}

// ---- Fence-SC order ----------------------------------------------------------------------------

gpu_std::kernel! {
    /// Test-only: CUDA's last-block reduction (the threadFenceReduction shape). Thread 0 of each block
    /// writes its block's partial, `__threadfence()`, and takes a ticket with `atomicInc`; it records
    /// whether it drew the last one, and after `__syncthreads()` every thread of the last block
    /// fences (`reader_fence`: 0 none, 1 `__threadfence_block()`, 2 `__threadfence()`) and reads one
    /// partial. With `reset` 1 thread 0 of the last block then resets the ticket with a plain store;
    /// with `reset` 2 thread 1 does (it did not take part in the ticket's chain).
    pub fn last_block<'a>(
        partial: GlobalMut<'a, u32>,
        ticket: GlobalMut<'a, u32>,
        last: GlobalMut<'a, u32>,
        out: GlobalMut<'a, u32>,
        reader_fence: u32,
        reset: u32,
    ) {
        let (b, t, blocks) = (block_idx().x as usize, thread_idx().x, grid_dim().x);
        if t == 0 {
            partial.set(b, b as u32 + 1);
            threadfence();
            let drew = ticket.atomic(0).fetch_inc(blocks);
            last.set(b, (drew == blocks - 1) as u32);
        }
        sync_threads();
        if last.get(b) == 1 {
            match reader_fence {
                1 => threadfence_block(),
                2 => threadfence(),
                _ => {}
            }
            if t < blocks {
                out.set(t as usize, partial.get(t as usize));
            }
            if reset == 1 && t == 0 || reset == 2 && t == 1 {
                ticket.set(0, 0);
            }
        }
    }
}

/// Runs [`last_block`] on 4 blocks of 32 threads; checks the sum and returns the outcome.
fn run_last_block(reader_fence: u32, reset: u32, s: u64) -> Outcome {
    let mut partial = Buf::new("partial", vec![0u32; 4]);
    let mut ticket = Buf::new("ticket", vec![0u32]);
    let mut last = Buf::new("last", vec![0u32; 4]);
    let mut out = Buf::new("out", vec![0u32; 4]);
    let args = (partial.view_mut(), ticket.view_mut(), last.view_mut(), out.view_mut(), reader_fence, reset);
    let o = launch::<last_block>(LaunchConfig::linear(4, 32, 0), &seed(s), args);
    assert_eq!(out.data, [1, 2, 3, 4], "the last block reads every partial");
    o
}

fn racy(o: &Outcome) -> Vec<&str> {
    let mut got: Vec<&str> = o.races.iter().map(|r| r.buffer.as_str()).collect();
    got.sort();
    got.dedup();
    got
}

#[test]
fn the_last_block_reduction_is_decided_by_fence_sc_order() {
    for s in 1..=5 {
        // Every reader fences at device scope: each writer's fence precedes it in Fence-SC order (the
        // last ticket is drawn after every writer's fence), so it synchronizes with each reader's.
        let o = run_last_block(2, 0, s);
        assert!(racy(&o).is_empty(), "seed {s} [{FENCE_SC}]:\n{}", reports(&o));
    }
    // Readers that fence at block scope, or not at all, are not ordered after another block's
    // partial — unless that block's fence came before the last block's own writer fence (thread 0 of
    // the last block writes a partial too, fenced at device scope, and the barrier hands on what
    // that fence acquired). So it races in some executions, not all: on some of ten seeds, and each
    // report asks for the device-scope fence.
    for (fence, rule) in [(1, FENCE_SC_NOT_MORALLY_STRONG), (0, NO_ACQUIRE)] {
        let mut seen = 0;
        for s in 1..=10 {
            let o = run_last_block(fence, 0, s);
            let got = racy(&o);
            assert!(got.is_empty() || got == ["partial"], "reader fence {fence}, seed {s} [{rule}]:\n{}", reports(&o));
            for r in &o.races {
                assert!(r.why.contains("__threadfence"), "reader fence {fence}, seed {s}: {r}");
            }
            seen += !got.is_empty() as usize;
        }
        assert!(seen > 0, "reader fence {fence}: no seed of ten reported the race [{rule}]");
    }
}

/// The Fence-SC cases as traces, in fixed interleavings (where a kernel's verdict depends on the
/// order its fences ran in): each names the buffers that must race.
fn fence_sc_traces() -> Vec<(&'static str, Trace, Vec<&'static str>, &'static str)> {
    use ScopeKind::{Block as Cta, Device as Gpu, System as Sys};
    let mut v = Vec::new();
    // SB through two fences: T0 writes data, fences, reads flag; T1 writes flag, fences, reads data;
    // T0's fence runs first, so T1's read is ordered after T0's write, T0's read of flag is not.
    let sb = |blocks: u32, threads: u32, t1: Who, f0: ScopeKind, f1: ScopeKind| {
        let mut t = Trace::new(blocks, threads);
        let (data, flag) = (t.buffer("data", 1), t.buffer("flag", 1));
        let t0 = Who::thread(0, 0);
        t.op(t0, data.at(0), Op::Write).op(t1, flag.at(0), Op::Write);
        t.fence(t0, f0).fence(t1, f1);
        t.op(t0, flag.at(0), Op::Read).op(t1, data.at(0), Op::Read);
        t
    };
    let (warp1, block1) = (Who::thread(0, 32), Who::thread(1, 0));
    v.push(("SB fence.gpu x2, two blocks", sb(2, 64, block1, Gpu, Gpu), vec!["flag"], FENCE_SC));
    v.push(("SB fence.sys x2, two blocks", sb(2, 64, block1, Sys, Sys), vec!["flag"], FENCE_SC));
    v.push(("SB fence.cta x2, two warps", sb(1, 64, warp1, Cta, Cta), vec!["flag"], FENCE_SC));
    v.push((
        "SB fence.cta x2, two blocks",
        sb(2, 64, block1, Cta, Cta),
        vec!["data", "flag"],
        FENCE_SC_NOT_MORALLY_STRONG,
    ));
    // A .cta and a .gpu fence: morally strong in one block (the .cta fence includes the other
    // thread), not across blocks (it does not).
    v.push(("SB fence.cta + fence.gpu, two warps", sb(1, 64, warp1, Cta, Gpu), vec!["flag"], FENCE_SC));
    v.push(("SB fence.gpu + fence.cta, two warps", sb(1, 64, warp1, Gpu, Cta), vec!["flag"], FENCE_SC));
    v.push((
        "SB fence.cta + fence.gpu, two blocks",
        sb(2, 64, block1, Cta, Gpu),
        vec!["data", "flag"],
        FENCE_SC_NOT_MORALLY_STRONG,
    ));
    // The host agent: its fences are fence.sc.sys; a GPU thread's __threadfence_system() is morally
    // strong with them, its __threadfence() is not.
    v.push(("SB fence.sys, GPU thread and host", sb(1, 32, Who::Host, Sys, Sys), vec!["flag"], FENCE_SC));
    v.push((
        "SB fence.gpu and host fence",
        sb(1, 32, Who::Host, Gpu, Sys),
        vec!["data", "flag"],
        FENCE_SC_NOT_MORALLY_STRONG,
    ));
    // Transitivity through a .cta fence: T0 (block 0) writes data and fences at .cta; T1 (block 0)
    // fences at .gpu; T2 (block 1) fences at .gpu and reads data.
    let mut t = Trace::new(2, 64);
    let data = t.buffer("data", 1);
    let (t0, t1, t2) = (Who::thread(0, 0), Who::thread(0, 32), Who::thread(1, 0));
    t.op(t0, data.at(0), Op::Write).fence(t0, Cta).fence(t1, Gpu).fence(t2, Gpu).op(t2, data.at(0), Op::Read);
    v.push(("fence.cta then fence.gpu then fence.gpu, a chain", t, vec![], FENCE_SC));
    // The last-block reduction in the interleaving where the last block's own writer fence runs
    // first: its readers' .cta fences do not reach the other blocks' partials; .gpu fences do.
    for (reader, races, rule) in [(Cta, vec!["partial"], FENCE_SC_NOT_MORALLY_STRONG), (Gpu, vec![], FENCE_SC)] {
        let mut t = Trace::new(3, 32);
        let (partial, ticket) = (t.buffer("partial", 3), t.buffer("ticket", 1));
        let w = |b| Who::thread(b, 0);
        // Block 2 will draw the last ticket: it writes and fences first.
        t.op(w(2), partial.at(2), Op::Write).fence(w(2), Gpu);
        for b in 0..2 {
            t.op(w(b), partial.at(b as usize), Op::Write).fence(w(b), Gpu).op(w(b), ticket.at(0), Op::Atomic(Gpu));
        }
        t.op(w(2), ticket.at(0), Op::Atomic(Gpu)).sync_threads(2);
        for r in 0..3 {
            let who = Who::thread(2, r);
            t.fence(who, reader).op(who, partial.at(r as usize), Op::Read);
        }
        v.push((
            if reader == Cta { "last block, .cta reader fences" } else { "last block, .gpu reader fences" },
            t,
            races,
            rule,
        ));
    }
    v
}

#[test]
fn every_fence_sc_trace_verdict_holds() {
    let mut wrong = Vec::new();
    let all = fence_sc_traces();
    assert!(all.len() >= 8);
    for (name, t, want, rule) in &all {
        let got = t.racy_buffers();
        if got != *want {
            let reports: Vec<String> = t.races().iter().map(|r| r.to_string()).collect();
            wrong.push(format!("{name}: want races on {want:?}, got {got:?} [{rule}]\n{}", reports.join("\n")));
        }
    }
    println!("{} Fence-SC traces", all.len());
    assert!(wrong.is_empty(), "{} wrong verdicts:\n{}", wrong.len(), wrong.join("\n"));
}

const SAME_LOCATION: &str = "causality order: X precedes Z in observation order, Z precedes Y in base causality order, \
                             and X and Y overlap (an observed atomic write, then the observer's later access)";

#[test]
fn the_ticket_reset_is_decided_by_the_same_location_rule_on_five_seeds() {
    for s in 1..=5 {
        // The last block's thread 0 drew the last ticket: its atomicInc observed every other
        // block's, so its plain reset is ordered after each of them.
        let o = run_last_block(2, 1, s);
        assert!(racy(&o).is_empty(), "seed {s} [{SAME_LOCATION}]:\n{}", reports(&o));
        // Thread 1 of the last block observed nothing of the ticket: its reset races.
        let o = run_last_block(2, 2, s);
        assert_eq!(racy(&o), ["ticket"], "seed {s} [{DATA_RACE}]:\n{}", reports(&o));
    }
}

#[test]
fn the_same_location_rule_as_traces() {
    use ScopeKind::Device as Gpu;
    let chain = |observer_reads: bool, store_between: bool| {
        let mut t = Trace::new(3, 32);
        let count = t.buffer("count", 1);
        let (a, b, c) = (Who::thread(0, 0), Who::thread(1, 0), Who::thread(2, 0));
        t.op(a, count.at(0), Op::Atomic(Gpu));
        if store_between {
            // A store starts a new chain: a later read observes it, not what came before.
            t.op(b, count.at(0), Op::VolatileWrite(5));
        } else {
            t.op(b, count.at(0), Op::Atomic(Gpu));
        }
        if observer_reads {
            t.op(c, count.at(0), Op::Atomic(Gpu));
        }
        t.op(c, count.at(0), Op::Write);
        t.racy_buffers()
    };
    assert!(chain(true, false).is_empty(), "an RMW that read the chain orders its thread's reset [{SAME_LOCATION}]");
    assert_eq!(chain(false, false), ["count"], "a reset by a thread that observed nothing races [{DATA_RACE}]");
    assert_eq!(chain(true, true), ["count"], "the write before a store is not observed through it [{DATA_RACE}]");
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
