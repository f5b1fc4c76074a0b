//! A warp's vocabulary: its size, the mask of all its lanes, the four shuffle modes, and PTX's rule
//! for which lane a shuffle reads ([`shfl_source_lane`], shared by the emulator and the host's CPU
//! models).
//!
//! Ground floor: imports nothing of gpu-std. Re-exported by [`crate::warp`].

/// Lanes in a warp.
pub const WARP_SIZE: u32 = 32;
/// All 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

/// The four shuffle modes of `shfl.sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    /// Read from `lane - delta` (`shfl.sync.up`).
    Up,
    /// Read from `lane + delta` (`shfl.sync.down`).
    Down,
    /// Read from `lane ^ mask` (`shfl.sync.bfly`).
    Xor,
    /// Read from lane `index` of the segment (`shfl.sync.idx`).
    Idx,
}

/// The lane a shuffle reads for `lane`, or `None` if the source is out of the segment (the caller then
/// receives its own value). Exactly PTX's rule for `shfl.sync` with clamp `((32-width)<<8)|0x1f`
/// (`(32-width)<<8` for up). Shared by the emulator and the host's CPU models.
pub const fn shfl_source_lane(mode: ShflMode, lane: u32, b: u32, width: u32) -> Option<u32> {
    let seg_mask = (32 - width) & 0x1f; // c[12:8]
    let clamp = match mode {
        ShflMode::Up => 0,
        _ => 0x1f,
    };
    let min_lane = lane & seg_mask;
    let max_lane = min_lane | (clamp & !seg_mask);
    let b = b & 0x1f;
    let (j, ok) = match mode {
        ShflMode::Up => {
            let j = lane as i32 - b as i32;
            (j, j >= max_lane as i32)
        }
        ShflMode::Down => {
            let j = (lane + b) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Xor => {
            let j = (lane ^ b) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Idx => {
            let j = (min_lane | (b & !seg_mask)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if ok { Some(j as u32) } else { None }
}
