//! Warp collectives: `shfl.sync` and `vote.sync` (ballot, any, all, and the ballots of `match_bits`).
//!
//! Names only gpu-std's vocabulary and `Pod`, like the rest of the PTX layer, and not `ptx.rs`
//! itself, which re-exports it.

use crate::vocab::lanes::ShflMode;
use crate::vocab::site::Site;
use core::arch::asm;

#[inline(always)]
pub fn shfl(mode: ShflMode, mask: u32, x: u32, b: u32, c: u32, _: Site) -> u32 {
    let r: u32;
    // SAFETY: register exchange within the warp; no memory operands.
    unsafe {
        match mode {
            ShflMode::Down => asm!("shfl.sync.down.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
            ShflMode::Up => asm!("shfl.sync.up.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
            ShflMode::Xor => asm!("shfl.sync.bfly.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
            ShflMode::Idx => asm!("shfl.sync.idx.b32 {r}, {x}, {b}, {c}, {m};",
                r = out(reg32) r, x = in(reg32) x, b = in(reg32) b, c = in(reg32) c, m = in(reg32) mask, options(nostack)),
        }
    }
    r
}

#[inline(always)]
pub fn ballot(mask: u32, pred: bool, _: Site) -> u32 {
    let r: u32;
    // SAFETY: warp vote; no memory operands.
    unsafe {
        asm!("{{ .reg .pred %p; setp.ne.u32 %p, {x}, 0; vote.sync.ballot.b32 {r}, %p, {m}; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, m = in(reg32) mask, options(nostack));
    }
    r
}
/// The lanes of `mask` whose `value` agrees with the caller's in its low `bits` bits: the lanes that
/// take part (one ballot), then per bit a ballot of that bit, inverted where the caller's bit is clear.
#[inline(always)]
pub fn match_bits(mask: u32, value: u32, bits: u32, site: Site) -> u32 {
    let mut peers = ballot(mask, true, site);
    let mut b = 0;
    while b < bits {
        // SAFETY: warp vote; no memory operands.
        unsafe {
            asm!("{{ .reg .pred %p; .reg .b32 %t; and.b32 %t, {v}, {bit}; setp.ne.u32 %p, %t, 0; \
                  vote.sync.ballot.b32 %t, %p, {m}; @!%p not.b32 %t, %t; and.b32 {peers}, {peers}, %t; }}",
                 v = in(reg32) value, bit = in(reg32) 1u32 << b, m = in(reg32) mask, peers = inout(reg32) peers,
                 options(nostack));
        }
        b += 1;
    }
    peers
}
#[inline(always)]
pub fn vote_any(mask: u32, pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: warp vote.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; vote.sync.any.pred %q, %p, {m}; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, m = in(reg32) mask, options(nostack));
    }
    r != 0
}
#[inline(always)]
pub fn vote_all(mask: u32, pred: bool, _: Site) -> bool {
    let r: u32;
    // SAFETY: warp vote.
    unsafe {
        asm!("{{ .reg .pred %p, %q; setp.ne.u32 %p, {x}, 0; vote.sync.all.pred %q, %p, {m}; selp.u32 {r}, 1, 0, %q; }}",
             x = in(reg32) pred as u32, r = out(reg32) r, m = in(reg32) mask, options(nostack));
    }
    r != 0
}
