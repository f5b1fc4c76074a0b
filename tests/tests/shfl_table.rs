//! Shuffle source lanes pinned to the PTX ISA's definition of `shfl.sync`, not to our own helper.
//!
//! `TABLE` was worked out by hand from the pseudo-code of `shfl.sync` in the PTX ISA. In our words:
//!
//! - Only the low five bits count: `lane` is the caller's lane (0..31), `bval = b & 31`, the clamp
//!   `cval = c & 31` and the segment mask `segmask = (c >> 8) & 31`.
//! - `minLane = lane & segmask` (the first lane of the caller's segment) and
//!   `maxLane = minLane | (cval & !segmask)`.
//! - up: `j = lane - bval` (signed), in range iff `j >= maxLane`; down: `j = lane + bval`, in range iff
//!   `j <= maxLane`; bfly (xor): `j = lane ^ bval`, in range iff `j <= maxLane`; idx:
//!   `j = minLane | (bval & !segmask)`, in range iff `j <= maxLane`.
//! - Out of range, the caller reads its own value (`j = lane`).
//!
//! CUDA's `__shfl_*_sync(mask, v, b, width)` pass `c = (32 - width) << 8` for up and
//! `((32 - width) << 8) | 0x1f` for down/xor/idx. So for up `maxLane` is the segment's first lane
//! (no reading below the segment), and for the others it is the segment's last lane. For xor the only
//! bound is that upper one: a mask that leaves the segment downwards reads a lower segment (as CUDA's
//! guide says: groups can read earlier groups but not later ones). idx always stays inside the segment
//! (`b` is taken modulo 32, then modulo `width`).
//!
//! Widths here: 32 (`segmask` 0), 16 (`segmask` 16), 8 (`segmask` 24).
//!
//! Each row is launched on a full warp (two warps, in fact) where every lane has its own operand and
//! shuffles its own lane id, so the result is the lane read; the same launch shuffles a u64 (two 32-bit
//! shuffles) whose high word is lane + 100. It runs on the emulator always and on the GPU when present.

use gpu_host::Device;
use gpu_kernels::primitives::{MODE_DOWN, MODE_IDX, MODE_UP, MODE_XOR, SHFL_TABLE_WORDS, prim_shfl_table};
use gpu_std::emu::LaunchConfig;
use gpu_std::warp::ShflMode::{self, Down, Idx, Up, Xor};
use gpu_std::warp::shfl_source_lane;
use tests::gpu_or_skip;

/// `(mode, width, lane, b, source)`: `Some(j)` reads lane `j`, `None` keeps the caller's own value.
#[rustfmt::skip]
const TABLE: &[(ShflMode, u32, u32, u32, Option<u32>)] = &[
    // up, width 32: maxLane = 0; in range iff lane - bval >= 0.
    (Up, 32, 0, 0, Some(0)),
    (Up, 32, 0, 1, None),
    (Up, 32, 5, 5, Some(0)),
    (Up, 32, 5, 6, None),
    (Up, 32, 31, 1, Some(30)),
    (Up, 32, 31, 31, Some(0)),
    (Up, 32, 16, 1, Some(15)),
    (Up, 32, 10, 32, Some(10)),          // bval = 0
    (Up, 32, 10, 33, Some(9)),           // bval = 1
    (Up, 32, 3, 0xffff_ffff, None),      // bval = 31: 3 - 31 < 0
    (Up, 32, 31, 63, Some(0)),           // bval = 31
    // up, width 16: maxLane = lane & 16.
    (Up, 16, 0, 1, None),
    (Up, 16, 15, 15, Some(0)),
    (Up, 16, 16, 0, Some(16)),
    (Up, 16, 16, 1, None),               // 15 is in the segment below
    (Up, 16, 17, 1, Some(16)),
    (Up, 16, 20, 5, None),
    (Up, 16, 31, 15, Some(16)),
    (Up, 16, 31, 16, None),              // delta = width: 15 < 16
    (Up, 16, 7, 16, None),
    (Up, 16, 24, 40, Some(16)),          // bval = 8
    (Up, 16, 25, 48, None),              // bval = 16: 9 < 16
    (Up, 16, 8, 32, Some(8)),            // bval = 0
    // up, width 8: maxLane = lane & 24.
    (Up, 8, 0, 0, Some(0)),
    (Up, 8, 7, 7, Some(0)),
    (Up, 8, 8, 1, None),
    (Up, 8, 9, 1, Some(8)),
    (Up, 8, 15, 7, Some(8)),
    (Up, 8, 15, 8, None),                // delta = width
    (Up, 8, 23, 3, Some(20)),
    (Up, 8, 24, 1, None),
    (Up, 8, 31, 7, Some(24)),
    (Up, 8, 31, 9, None),                // delta > width: 22 < 24
    (Up, 8, 30, 33, Some(29)),           // bval = 1
    (Up, 8, 4, 0xffff_fffc, None),       // bval = 28
    // down, width 32: maxLane = 31.
    (Down, 32, 0, 0, Some(0)),
    (Down, 32, 0, 31, Some(31)),
    (Down, 32, 1, 31, None),
    (Down, 32, 15, 1, Some(16)),
    (Down, 32, 31, 1, None),
    (Down, 32, 31, 0, Some(31)),
    (Down, 32, 16, 16, None),
    (Down, 32, 10, 32, Some(10)),        // bval = 0
    (Down, 32, 10, 37, Some(15)),        // bval = 5
    (Down, 32, 20, 0xffff_ffff, None),   // bval = 31
    // down, width 16: maxLane = (lane & 16) | 15.
    (Down, 16, 0, 15, Some(15)),
    (Down, 16, 0, 16, None),             // delta = width
    (Down, 16, 14, 1, Some(15)),
    (Down, 16, 15, 1, None),             // 16 is in the segment above
    (Down, 16, 16, 0, Some(16)),
    (Down, 16, 16, 15, Some(31)),
    (Down, 16, 31, 1, None),
    (Down, 16, 20, 11, Some(31)),
    (Down, 16, 20, 12, None),
    (Down, 16, 3, 33, Some(4)),          // bval = 1
    (Down, 16, 5, 48, None),             // bval = 16
    // down, width 8: maxLane = (lane & 24) | 7.
    (Down, 8, 0, 7, Some(7)),
    (Down, 8, 0, 8, None),               // delta = width
    (Down, 8, 7, 1, None),
    (Down, 8, 8, 7, Some(15)),
    (Down, 8, 12, 3, Some(15)),
    (Down, 8, 12, 4, None),
    (Down, 8, 16, 0, Some(16)),
    (Down, 8, 24, 7, Some(31)),
    (Down, 8, 25, 7, None),
    (Down, 8, 29, 2, Some(31)),
    (Down, 8, 17, 34, Some(19)),         // bval = 2
    (Down, 8, 2, 40, None),              // bval = 8
    // xor, width 32: maxLane = 31, so every lane ^ bval is in range.
    (Xor, 32, 0, 0, Some(0)),
    (Xor, 32, 0, 16, Some(16)),
    (Xor, 32, 31, 16, Some(15)),
    (Xor, 32, 5, 3, Some(6)),
    (Xor, 32, 17, 31, Some(14)),
    (Xor, 32, 9, 32, Some(9)),           // bval = 0
    (Xor, 32, 9, 33, Some(8)),           // bval = 1
    (Xor, 32, 30, 0xffff_ffff, Some(1)), // bval = 31
    // xor, width 16: maxLane = (lane & 16) | 15.
    (Xor, 16, 0, 15, Some(15)),
    (Xor, 16, 3, 1, Some(2)),
    (Xor, 16, 0, 16, None),              // leaves the segment upwards
    (Xor, 16, 15, 16, None),
    (Xor, 16, 16, 16, Some(0)),          // leaves it downwards: 0 <= 31, reads the lower segment
    (Xor, 16, 31, 16, Some(15)),
    (Xor, 16, 20, 5, Some(17)),
    (Xor, 16, 31, 31, Some(0)),
    (Xor, 16, 4, 20, None),              // 4 ^ 20 = 16
    (Xor, 16, 24, 48, Some(8)),          // bval = 16
    (Xor, 16, 12, 32, Some(12)),         // bval = 0
    // xor, width 8: maxLane = (lane & 24) | 7.
    (Xor, 8, 0, 7, Some(7)),
    (Xor, 8, 7, 8, None),                // 15 > 7
    (Xor, 8, 8, 8, Some(0)),             // lower segment
    (Xor, 8, 8, 7, Some(15)),
    (Xor, 8, 13, 2, Some(15)),
    (Xor, 8, 16, 8, None),               // 24 > 23
    (Xor, 8, 16, 16, Some(0)),
    (Xor, 8, 24, 16, Some(8)),
    (Xor, 8, 31, 24, Some(7)),
    (Xor, 8, 2, 24, None),               // 26 > 7
    (Xor, 8, 26, 1, Some(27)),
    (Xor, 8, 27, 36, Some(31)),          // bval = 4
    // idx, width 32: j = bval.
    (Idx, 32, 0, 0, Some(0)),
    (Idx, 32, 0, 31, Some(31)),
    (Idx, 32, 31, 0, Some(0)),
    (Idx, 32, 17, 5, Some(5)),
    (Idx, 32, 8, 8, Some(8)),
    (Idx, 32, 5, 32, Some(0)),           // idx >= 32: bval = 0
    (Idx, 32, 6, 45, Some(13)),          // bval = 13
    (Idx, 32, 7, 0xffff_ffff, Some(31)), // bval = 31
    // idx, width 16: j = (lane & 16) | (bval & 15).
    (Idx, 16, 0, 0, Some(0)),
    (Idx, 16, 15, 15, Some(15)),
    (Idx, 16, 16, 0, Some(16)),
    (Idx, 16, 31, 15, Some(31)),
    (Idx, 16, 3, 16, Some(0)),           // idx = width
    (Idx, 16, 20, 16, Some(16)),
    (Idx, 16, 21, 5, Some(21)),
    (Idx, 16, 25, 3, Some(19)),
    (Idx, 16, 4, 21, Some(5)),           // idx > width
    (Idx, 16, 22, 37, Some(21)),         // idx >= 32: bval = 5
    (Idx, 16, 9, 0xffff_fffe, Some(14)), // bval = 30
    // idx, width 8: j = (lane & 24) | (bval & 7).
    (Idx, 8, 0, 7, Some(7)),
    (Idx, 8, 7, 0, Some(0)),
    (Idx, 8, 8, 0, Some(8)),
    (Idx, 8, 15, 7, Some(15)),
    (Idx, 8, 9, 8, Some(8)),             // idx = width
    (Idx, 8, 17, 10, Some(18)),
    (Idx, 8, 31, 3, Some(27)),
    (Idx, 8, 24, 31, Some(31)),
    (Idx, 8, 2, 33, Some(1)),            // bval = 1
    (Idx, 8, 26, 44, Some(28)),          // bval = 12
    (Idx, 8, 12, 0xffff_ffff, Some(15)), // bval = 31
];

const MODES: [ShflMode; 4] = [Up, Down, Xor, Idx];
const WIDTHS: [u32; 3] = [32, 16, 8];
/// Warps per launch (each gets the same operands).
const WARPS: usize = 2;

fn mode_arg(m: ShflMode) -> u32 {
    match m {
        Up => MODE_UP,
        Down => MODE_DOWN,
        Xor => MODE_XOR,
        Idx => MODE_IDX,
    }
}

fn row_name(k: usize) -> String {
    let (mode, width, lane, b, src) = TABLE[k];
    format!("row {k} ({mode:?}, width {width}, lane {lane}, b {b:#x}) -> {src:?}")
}

/// Launches of one (mode, width) group: rows split into rounds in which each lane appears once.
fn rounds(mode: ShflMode, width: u32) -> Vec<Vec<usize>> {
    let mut left: Vec<usize> = (0..TABLE.len()).filter(|&k| TABLE[k].0 == mode && TABLE[k].1 == width).collect();
    let mut out = Vec::new();
    while !left.is_empty() {
        let mut taken = 0u32;
        let mut round = Vec::new();
        left.retain(|&k| {
            let lane = TABLE[k].2;
            if taken & (1 << lane) != 0 {
                return true;
            }
            taken |= 1 << lane;
            round.push(k);
            false
        });
        out.push(round);
    }
    out
}

/// Runs every row of the table on `dev`; returns the number of launches.
fn check_table(dev: &Device) -> usize {
    let threads = 32 * WARPS;
    let mut launches = 0;
    for mode in MODES {
        for width in WIDTHS {
            let groups = rounds(mode, width);
            assert!(!groups.is_empty(), "no rows for {mode:?} width {width}");
            for round in groups {
                // Lanes without a row shuffle with operand 0; only the rows are asserted.
                let mut ops = vec![0u32; threads];
                for &k in &round {
                    for w in 0..WARPS {
                        ops[32 * w + TABLE[k].2 as usize] = TABLE[k].3;
                    }
                }
                let ops = dev.upload("shfl_ops", &ops).expect("upload");
                let out = dev.filled("shfl_out", threads * SHFL_TABLE_WORDS, 0xdead_beefu32).expect("alloc");
                dev.launch::<prim_shfl_table>(
                    LaunchConfig::linear(1, threads as u32, 0),
                    (ops.view(), out.view_mut(), mode_arg(mode), width),
                )
                .unwrap_or_else(|e| panic!("{mode:?} width {width} on {}: launch failed: {e:#}", dev.kind()));
                launches += 1;
                let got = out.read().expect("read");
                for &k in &round {
                    let (_, _, lane, _, src) = TABLE[k];
                    let want = src.unwrap_or(lane);
                    for w in 0..WARPS {
                        let o = (32 * w + lane as usize) * SHFL_TABLE_WORDS;
                        let (narrow, lo, hi) = (got[o], got[o + 1], got[o + 2]);
                        assert_eq!(
                            narrow,
                            want,
                            "{} on {}, warp {w}: u32 shuffle read lane {narrow}, want {want}",
                            row_name(k),
                            dev.kind()
                        );
                        assert_eq!(
                            (lo, hi),
                            (want, want + 100),
                            "{} on {}, warp {w}: u64 shuffle read ({lo}, {hi}), want ({want}, {})",
                            row_name(k),
                            dev.kind(),
                            want + 100
                        );
                    }
                }
            }
        }
    }
    launches
}

#[test]
fn table_covers_every_mode_and_width() {
    assert!(TABLE.len() >= 60, "{} rows", TABLE.len());
    for mode in MODES {
        for width in WIDTHS {
            let n = TABLE.iter().filter(|r| r.0 == mode && r.1 == width).count();
            assert!(n >= 8, "{mode:?} width {width}: only {n} rows");
        }
    }
    for (k, &(_, width, lane, _, src)) in TABLE.iter().enumerate() {
        assert!(WIDTHS.contains(&width) && lane < 32, "{}: malformed", row_name(k));
        assert!(src.is_none_or(|j| j < 32), "{}: malformed", row_name(k));
    }
}

#[test]
fn helper_agrees_with_every_row() {
    for (k, &(mode, width, lane, b, src)) in TABLE.iter().enumerate() {
        let got = shfl_source_lane(mode, lane, b, width);
        // Some(lane) and None read the same value, but PTX's predicate tells them apart, and so must
        // the helper.
        assert_eq!(got, src, "{}: shfl_source_lane gives {got:?}", row_name(k));
    }
}

#[test]
fn table_on_emulator() {
    let dev = Device::emulator(Default::default());
    let n = check_table(&dev);
    println!("shfl table on emu: {} rows in {n} launches, PASS", TABLE.len());
}

#[test]
fn table_on_gpu() {
    let Some(dev) = gpu_or_skip("shfl_table on GPU") else { return };
    let n = check_table(&dev);
    println!("shfl table on {}: {} rows in {n} launches, PASS", dev.name(), TABLE.len());
}
