//! Why a race is one: the explanation a report gives of two accesses that nothing orders — the
//! barrier, fence or scope missing, the edge a block or device scope cut (with the scope used and
//! the scope needed), or, for strong accesses, why they are not morally strong.

use super::clock::cut;
use super::kind::Kind;
use super::race::{Cur, Epoch};
use crate::atomic::ScopeKind;

/// Why nothing orders two accesses of threads on different GPUs.
const GPUS_UNORDERED: &str = "threads of two GPUs, and no release/acquire edge at system scope between the accesses \
     (publish with __threadfence_system() or a system-scope release, acquire with a system-scope load or fence): a \
     device-scope (.gpu) operation orders memory only among the threads of one GPU; needs system scope";

/// Two strong accesses of threads on different GPUs that are not morally strong: one of them is not
/// system-scoped.
fn gpus_strong_pair(a: Kind, b: Kind) -> String {
    let narrow = if a.scope() != ScopeKind::System { a } else { b };
    format!(
        "the threads are on different GPUs, and the {} is {}-scoped: only system-scope (.sys) atomics, volatile \
         accesses and release/acquire operations are strong between threads of two GPUs; needs system scope",
        narrow.name(),
        if narrow.scope() == ScopeKind::Block { "block" } else { "device" }
    )
}

/// Why nothing orders `e` before the current access. `cut` holds the reasons of edges that a block
/// scope cut (or that no fence acquired), if one of them would have ordered the two.
pub(crate) fn explain(e: &Epoch, cur: &Cur<'_>, cut: Option<cut::Why>) -> String {
    let (ek, xk) = (e.kind(), cur.kind);
    let host = cur.with_host(e);
    let gpus = host && cur.topo.two_devices();
    if ek.strong() && xk.strong() {
        return if gpus {
            gpus_strong_pair(ek, xk)
        } else if host {
            host_strong_pair(ek, xk)
        } else {
            strong_pair(ek, xk)
        };
    }
    if let Some(why) = cut {
        return cut_edges(why, cur.topo.two_devices());
    }
    let eb = cur.block_of(e);
    let x = &cur.x;
    if gpus {
        return GPUS_UNORDERED.into();
    }
    if host {
        return "a GPU thread and the host thread, and no release/acquire edge at system scope between the accesses \
                (publish with __threadfence_system() or a system-scope release, acquire with a system-scope load or \
                fence)"
            .into();
    }
    if eb != cur.block {
        return "different blocks, and no grid barrier or release/acquire edge between the accesses".into();
    }
    if e.grid() != x.grid() || e.bar != x.bar {
        return "no barrier or release/acquire edge between the accesses".into();
    }
    let (place, barrier) = in_one_block(e, cur);
    format!("{place}: no {barrier} between the accesses")
}

/// Where two accesses of threads of one block in one barrier interval are, and the barrier that
/// would order them: `same warp (warp 1, lanes 3 and 7), same barrier interval (0)` and
/// `__syncwarp()`, or `same block, same barrier interval (0)` and `__syncthreads()`.
fn in_one_block(e: &Epoch, cur: &Cur<'_>) -> (String, &'static str) {
    let (ra, rb) = (e.gid % cur.block_threads, cur.x.gid % cur.block_threads);
    if ra / 32 == rb / 32 {
        let place = format!(
            "same warp (warp {}, lanes {} and {}), same barrier interval ({})",
            ra / 32,
            ra % 32,
            rb % 32,
            e.bar
        );
        (place, "__syncwarp()")
    } else {
        (format!("same block, same barrier interval ({})", e.bar), "__syncthreads()")
    }
}

/// Two strong accesses of a GPU thread and the host thread that are not morally strong: one of them is
/// not system-scoped.
fn host_strong_pair(a: Kind, b: Kind) -> String {
    let narrow = if a.scope() != ScopeKind::System { a } else { b };
    format!(
        "the host thread's accesses are system-scoped, but the GPU thread's {} is {}-scoped: only system-scope \
         (.sys) atomics, volatile accesses and release/acquire operations are strong between a GPU thread and the \
         host; needs system scope",
        narrow.name(),
        if narrow.scope() == ScopeKind::Block { "block" } else { "device" }
    )
}

/// Two strong accesses that are not morally strong: a block scope across blocks.
fn strong_pair(a: Kind, b: Kind) -> String {
    if matches!(a, Kind::Atomic(ScopeKind::Block)) || matches!(b, Kind::Atomic(ScopeKind::Block)) {
        return "a block-scoped atomic (.cta) is atomic only among threads of one block, and these threads are in \
                different blocks: use device scope"
            .into();
    }
    let what = if matches!(a, Kind::ReleaseStore(ScopeKind::Block)) || matches!(b, Kind::ReleaseStore(ScopeKind::Block))
    {
        "release store (st.release.cta)"
    } else {
        "acquire load (ld.acquire.cta)"
    };
    format!(
        "a block-scoped {what} synchronises only threads of one block, and these threads are in different blocks: \
         use device scope (store_release / load_acquire at Device scope)"
    )
}

/// The release→acquire edges that were cut, with the scope used and the scope needed.
fn cut_edges(why: cut::Why, two_gpus: bool) -> String {
    const FLAG: cut::Why = cut::FLAG_WRITE | cut::FLAG_READ;
    const PARTS: [(cut::Why, &str, &str); 7] = [
        (cut::REL_FENCE, "released with a {s}-scope fence ({f})", "__threadfence ({nf})"),
        (
            cut::REL_STORE,
            "released with a {s}-scope release store (st.release.{p})",
            "store_release at {n} scope (st.release.{np})",
        ),
        (
            FLAG,
            "the flag or lock word was written and read with {s}-scope atomics (atom.{p})",
            "{n}-scope atomics on it (atom.{np})",
        ),
        (
            cut::FLAG_WRITE,
            "the flag or lock word was written with a {s}-scope atomic (atom.{p})",
            "{n}-scope atomics on it (atom.{np})",
        ),
        (
            cut::FLAG_READ,
            "the flag or lock word was read with a {s}-scope atomic (atom.{p})",
            "{n}-scope atomics on it (atom.{np})",
        ),
        (
            cut::ACQ_LOAD,
            "acquired with a {s}-scope acquire load (ld.acquire.{p})",
            "load_acquire at {n} scope (ld.acquire.{np})",
        ),
        (cut::ACQ_FENCE, "acquired with a {s}-scope fence ({f})", "__threadfence ({nf})"),
    ];
    // Block scope between GPU threads of different blocks, device scope between a GPU thread and the host.
    let levels = [
        (0, "block", "cta", "fence.sc.cta, __threadfence_block", "Device", "gpu", "fence.sc.gpu"),
        (cut::DEVICE, "device", "gpu", "fence.sc.gpu, __threadfence", "System", "sys", "fence.sc.sys"),
    ];
    let mut sentences = Vec::new();
    for (shift, scope, ptx, fence, need, need_ptx, need_fence) in levels {
        let mut used = Vec::new();
        let mut needed: Vec<String> = Vec::new();
        let mut seen = 0;
        let lvl = (why >> shift) & 0x3f;
        for (bits, u, n) in PARTS {
            if lvl & bits == bits && seen & bits == 0 {
                seen |= bits;
                used.push(u.replace("{s}", scope).replace("{p}", ptx).replace("{f}", fence));
                let mut n = n.replace("{n}", need).replace("{np}", need_ptx).replace("{nf}", need_fence);
                if shift != 0 && n.starts_with("__threadfence ") {
                    n = n.replacen("__threadfence ", "__threadfence_system ", 1);
                }
                if !needed.contains(&n) {
                    needed.push(n);
                }
            }
        }
        if used.is_empty() {
            continue;
        }
        sentences.push(if shift == 0 {
            format!(
                "{}, but the threads are in different blocks: a block-scope (.cta) operation orders memory only among \
                 threads of one block; needs device scope: {}",
                used.join(" and "),
                needed.join(", ")
            )
        } else {
            format!(
                "{}, but {}: a device-scope (.gpu) operation orders memory only among the {}; needs system scope: {}",
                used.join(" and "),
                if two_gpus { "the threads are on different GPUs" } else { "one side is the host thread" },
                if two_gpus { "threads of one GPU" } else { "GPU's threads" },
                needed.join(", ")
            )
        });
    }
    let mut s = sentences.join("; ");
    // A block- or device-scope acquire fence explains the missing acquire already (it is the fence
    // that is wrong, not missing).
    if why & cut::NO_ACQ_FENCE != 0 && why & (cut::ACQ_FENCE | cut::ACQ_FENCE << cut::DEVICE) == 0 {
        if !s.is_empty() {
            s.push_str("; also, ");
        }
        s.push_str(if why & cut::BY_RMW != 0 {
            "an atomic read-modify-write (a lock's compare-and-swap or exchange, a ticket's fetch_add) observed \
             the release, but atomics are relaxed and no fence followed it: nothing acquired it (add \
             __threadfence() right after the atomic, before the accesses it guards)"
        } else {
            "a strong load observed the release, but no fence followed the load: nothing acquired it (add \
             __threadfence() after the load, or use load_acquire)"
        });
    }
    s
}

/// Why the volatile access `e` and the current one are an ordering hazard (see `race::Slot::access`),
/// and what would order them.
pub(crate) fn hazard_why(e: &Epoch, cur: &Cur<'_>) -> String {
    let head = "ordering hazard: both accesses are volatile, so they are strong and no data race under PTX, but \
                nothing orders them, and which value the read sees depends on the schedule";
    let (place, barrier) = in_one_block(e, cur);
    format!("{head}: {place}: add {barrier} between them")
}
