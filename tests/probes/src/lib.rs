//! One probe kernel per documented primitive of `gpu-std`: `probe_<key>`, where the key is the
//! primitive's type (snake case) or, for a free function, its module, then its name — e.g.
//! `probe_warp_shfl_down` for `warp::shfl_down`, `probe_atomic_ref_fetch_add` for
//! `AtomicRef::fetch_add`. Each probe calls its primitive in every form its documentation lists (types,
//! scopes, state spaces), and the PTX test checks that every instruction the documentation names is in
//! the probe's own code — not merely somewhere in the module.
//!
//! Probes are built (`cargo xtask build-ptx -p gpu-std-probes`) and assembled by ptxas, never launched.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_gpu_kernel))]

use gpu_std::atomic::System;
use gpu_std::block::{sync_threads, sync_threads_and, sync_threads_count, sync_threads_or};
use gpu_std::fence::{nanosleep, threadfence, threadfence_block, threadfence_system};
use gpu_std::grid::{this_grid, tiled_partition};
use gpu_std::thread::{block_dim, block_idx, grid_dim, thread_idx};
use gpu_std::warp::{self, FULL_MASK, ShflMode};
use gpu_std::{Global, GlobalMut, Output, kernel, shared_layout};

shared_layout! {
    /// Shared cells for the shared-memory forms of the probed primitives.
    pub struct Cells {
        pub ints: [u32; 32],
        pub floats: [f32; 32],
    }
}

/// The calling thread's lane, used as an operand the compiler cannot fold.
fn lane() -> u32 {
    warp::lane_id()
}

// ---- thread --------------------------------------------------------------------------------------

kernel! {
    pub fn probe_thread_thread_idx<'a>(out: GlobalMut<'a, u32>) {
        let t = thread_idx();
        out.set(0, t.x + t.y + t.z);
    }
}
kernel! {
    pub fn probe_thread_block_idx<'a>(out: GlobalMut<'a, u32>) {
        let b = block_idx();
        out.set(0, b.x + b.y + b.z);
    }
}
kernel! {
    pub fn probe_thread_block_dim<'a>(out: GlobalMut<'a, u32>) {
        let d = block_dim();
        out.set(0, d.x + d.y + d.z);
    }
}
kernel! {
    pub fn probe_thread_grid_dim<'a>(out: GlobalMut<'a, u32>) {
        let d = grid_dim();
        out.set(0, d.x + d.y + d.z);
    }
}

// ---- block ---------------------------------------------------------------------------------------

kernel! {
    pub fn probe_block_sync_threads<'a>(out: GlobalMut<'a, u32>) {
        sync_threads();
        out.set(0, 1);
    }
}
kernel! {
    pub fn probe_block_sync_threads_count<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, sync_threads_count(lane() > 3));
    }
}
kernel! {
    pub fn probe_block_sync_threads_and<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, sync_threads_and(lane() > 3) as u32);
    }
}
kernel! {
    pub fn probe_block_sync_threads_or<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, sync_threads_or(lane() > 3) as u32);
    }
}

// ---- warp ----------------------------------------------------------------------------------------

kernel! {
    pub fn probe_warp_shfl_down<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::shfl_down(FULL_MASK, lane(), 1));
    }
}
kernel! {
    pub fn probe_warp_shfl_down_width<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::shfl_down_width(FULL_MASK, lane(), 1, 16));
    }
}
kernel! {
    pub fn probe_warp_shfl_up<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::shfl_up(FULL_MASK, lane(), 1));
    }
}
kernel! {
    pub fn probe_warp_shfl_up_width<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::shfl_up_width(FULL_MASK, lane(), 1, 16));
    }
}
kernel! {
    pub fn probe_warp_shfl_xor<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::shfl_xor(FULL_MASK, lane(), 1));
    }
}
kernel! {
    pub fn probe_warp_shfl_xor_width<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::shfl_xor_width(FULL_MASK, lane(), 1, 16));
    }
}
kernel! {
    pub fn probe_warp_shfl_idx<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::shfl_idx(FULL_MASK, lane(), 3));
    }
}
kernel! {
    pub fn probe_warp_shfl_idx_width<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::shfl_idx_width(FULL_MASK, lane(), 3, 16));
    }
}
kernel! {
    pub fn probe_warp_shfl_unchecked<'a>(out: GlobalMut<'a, u32>, mask: u32) {
        // SAFETY: a probe: built and assembled, never launched.
        unsafe {
            out.set(0, warp::shfl_unchecked(ShflMode::Up, mask, lane(), 1, 32));
            out.set(1, warp::shfl_unchecked(ShflMode::Down, mask, lane(), 1, 32));
            out.set(2, warp::shfl_unchecked(ShflMode::Xor, mask, lane(), 1, 32));
            out.set(3, warp::shfl_unchecked(ShflMode::Idx, mask, lane(), 1, 32));
        }
    }
}
kernel! {
    pub fn probe_warp_ballot<'a>(out: GlobalMut<'a, u32>, mask: u32) {
        out.set(0, warp::ballot(mask, lane() > 3));
    }
}
kernel! {
    pub fn probe_warp_ballot_unchecked<'a>(out: GlobalMut<'a, u32>, mask: u32) {
        // SAFETY: a probe: built and assembled, never launched.
        out.set(0, unsafe { warp::ballot_unchecked(mask, lane() > 3) });
    }
}
kernel! {
    pub fn probe_warp_match_bits<'a>(out: GlobalMut<'a, u32>, mask: u32) {
        out.set(0, warp::match_bits(mask, lane() >> 1, 8));
    }
}
kernel! {
    pub fn probe_warp_any<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::any(FULL_MASK, lane() > 3) as u32);
    }
}
kernel! {
    pub fn probe_warp_all<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::all(FULL_MASK, lane() > 3) as u32);
    }
}
kernel! {
    pub fn probe_warp_sync_warp<'a>(out: GlobalMut<'a, u32>, mask: u32) {
        warp::sync_warp(mask);
        out.set(0, 1);
    }
}
kernel! {
    pub fn probe_warp_sync_warp_unchecked<'a>(out: GlobalMut<'a, u32>, mask: u32) {
        // SAFETY: a probe: built and assembled, never launched.
        unsafe { warp::sync_warp_unchecked(mask) };
        out.set(0, 1);
    }
}
kernel! {
    pub fn probe_warp_active_mask<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::active_mask());
    }
}
kernel! {
    pub fn probe_warp_lane_id<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, warp::lane_id());
    }
}

// ---- fence ---------------------------------------------------------------------------------------

kernel! {
    pub fn probe_fence_threadfence_block<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, 1);
        threadfence_block();
        out.set(1, 1);
    }
}
kernel! {
    pub fn probe_fence_threadfence<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, 1);
        threadfence();
        out.set(1, 1);
    }
}
kernel! {
    pub fn probe_fence_threadfence_system<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, 1);
        threadfence_system();
        out.set(1, 1);
    }
}
kernel! {
    pub fn probe_fence_nanosleep<'a>(out: GlobalMut<'a, u32>) {
        nanosleep(lane());
        out.set(0, 1);
    }
}

// ---- views ---------------------------------------------------------------------------------------

kernel! {
    pub fn probe_memory_get<'a>(a: Global<'a, u8>, b: Global<'a, u16>, c: Global<'a, u32>, d: Global<'a, u64>, out: GlobalMut<'a, u64>) {
        let i = lane() as usize;
        let s = Cells::view().ints;
        let x = a.get(i) as u64 + b.get(i) as u64 + c.get(i) as u64 + d.get(i) + s.get(i) as u64;
        out.set(0, x);
    }
}
kernel! {
    pub fn probe_memory_get_volatile<'a>(a: Global<'a, u32>, out: GlobalMut<'a, u32>) {
        let i = lane() as usize;
        out.set(0, a.get_volatile(i) + Cells::view().ints.get_volatile(i));
    }
}
kernel! {
    pub fn probe_memory_set<'a>(a: GlobalMut<'a, u8>, b: GlobalMut<'a, u16>, c: GlobalMut<'a, u32>, d: GlobalMut<'a, u64>, out: GlobalMut<'a, u32>) {
        let i = lane() as usize;
        a.set(i, i as u8);
        b.set(i, i as u16);
        c.set(i, i as u32);
        d.set(i, i as u64);
        let s = Cells::view().ints;
        s.set(i, i as u32);
        sync_threads();
        out.set(0, s.get(31 - i));
    }
}
kernel! {
    pub fn probe_memory_set_volatile<'a>(a: GlobalMut<'a, u32>, out: GlobalMut<'a, u32>) {
        let i = lane() as usize;
        a.set_volatile(i, 7);
        let s = Cells::view().ints;
        s.set_volatile(i, 7);
        sync_threads();
        out.set(0, s.get(31 - i));
    }
}
kernel! {
    pub fn probe_global_get_strided<'a>(a: Global<'a, u32>, out: GlobalMut<'a, u32>) {
        let v: [u32; 3] = a.get_strided(lane() as usize, 32);
        out.set(0, v[0] ^ v[1] ^ v[2]);
    }
}
kernel! {
    pub fn probe_global_mut_scatter<'a>(out: GlobalMut<'a, u32>) {
        out.scatter([lane() as usize, 32 + lane() as usize], [lane(), 7]);
    }
}
kernel! {
    pub fn probe_global_mut_set_strided<'a>(out: GlobalMut<'a, u32>) {
        out.set_strided(lane() as usize, 32, [lane(), 7, 9]);
    }
}
kernel! {
    pub fn probe_global_load_acquire<'a>(a: Global<'a, u32>, out: GlobalMut<'a, u32>) {
        out.set(0, a.load_acquire(lane() as usize));
    }
}
kernel! {
    pub fn probe_slot_set<'a>(out: Output<'a, u32>) {
        if let Some(s) = out.mine() {
            s.set(lane());
        }
    }
}
kernel! {
    pub fn probe_slot_get<'a>(out: Output<'a, u32>) {
        if let Some(s) = out.mine() {
            s.set(s.get() + 1);
        }
    }
}

// ---- atomics -------------------------------------------------------------------------------------

kernel! {
    pub fn probe_atomic_ref_swap<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, u64>) {
        let old = a.atomic(0).swap(lane());
        b.atomic(0).swap(old as u64);
    }
}
kernel! {
    pub fn probe_atomic_ref_compare_and_swap<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, u64>) {
        let old = a.atomic(0).compare_and_swap(0, lane());
        b.atomic(0).compare_and_swap(0, old as u64);
        let s = Cells::view().ints;
        let o = s.atomic(0).compare_and_swap(0, old);
        a.set(1, o);
    }
}
kernel! {
    pub fn probe_atomic_ref_load_acquire<'a>(a: GlobalMut<'a, u32>) {
        let x = a.atomic(0).load_acquire() + a.atomic_scoped::<System>(1).load_acquire();
        a.set(2, x);
    }
}
kernel! {
    pub fn probe_atomic_ref_store_release<'a>(a: GlobalMut<'a, u32>) {
        a.atomic(0).store_release(lane());
        a.atomic_scoped::<System>(1).store_release(lane());
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_add<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, i32>, c: GlobalMut<'a, u64>) {
        let x = a.atomic(0).fetch_add(lane());
        b.atomic(0).fetch_add(x as i32);
        c.atomic(0).fetch_add(x as u64);
        let s = Cells::view().ints;
        let y = s.atomic(0).fetch_add(x);
        a.atomic_scoped::<System>(1).fetch_add(y);
    }
}
kernel! {
    pub fn probe_atomic_ref_add<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, i32>, c: GlobalMut<'a, u64>, f: GlobalMut<'a, f32>, d: GlobalMut<'a, f64>) {
        let x = lane();
        a.atomic(0).add(x);
        b.atomic(0).add(x as i32);
        c.atomic(0).add(x as u64);
        f.atomic(0).add(x as f32);
        d.atomic(0).add(x as f64);
        Cells::view().ints.atomic(x as usize).add(1);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_sub<'a>(a: GlobalMut<'a, u32>) {
        let x = a.atomic(0).fetch_sub(lane());
        a.set(1, x);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_min<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, i32>, c: GlobalMut<'a, u64>, d: GlobalMut<'a, i64>) {
        let x = a.atomic(0).fetch_min(lane());
        b.atomic(0).fetch_min(x as i32);
        c.atomic(0).fetch_min(x as u64);
        d.atomic(0).fetch_min(x as i64);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_max<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, i32>, c: GlobalMut<'a, u64>, d: GlobalMut<'a, i64>) {
        let x = a.atomic(0).fetch_max(lane());
        b.atomic(0).fetch_max(x as i32);
        c.atomic(0).fetch_max(x as u64);
        d.atomic(0).fetch_max(x as i64);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_and<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, u64>) {
        let x = a.atomic(0).fetch_and(lane());
        b.atomic(0).fetch_and(x as u64);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_or<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, u64>) {
        let x = a.atomic(0).fetch_or(lane());
        b.atomic(0).fetch_or(x as u64);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_xor<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, u64>) {
        let x = a.atomic(0).fetch_xor(lane());
        b.atomic(0).fetch_xor(x as u64);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_inc<'a>(a: GlobalMut<'a, u32>) {
        let x = a.atomic(0).fetch_inc(lane());
        a.set(1, x);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_dec<'a>(a: GlobalMut<'a, u32>) {
        let x = a.atomic(0).fetch_dec(lane());
        a.set(1, x);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_add_float<'a>(a: GlobalMut<'a, f32>, b: GlobalMut<'a, f64>) {
        let x = a.atomic(0).fetch_add_float(lane() as f32);
        b.atomic(0).fetch_add_float(x as f64);
        let s = Cells::view().floats;
        let y = s.atomic(0).fetch_add_float(x);
        a.set(1, y);
    }
}
kernel! {
    pub fn probe_atomic_ref_fetch_add_cas_loop<'a>(a: GlobalMut<'a, f64>) {
        let x = a.atomic(0).fetch_add_cas_loop(lane() as f64);
        a.set(1, x);
    }
}

// ---- cooperative groups --------------------------------------------------------------------------

kernel! {
    pub fn probe_grid_sync<'a>(data: GlobalMut<'a, u32>, workspace: GlobalMut<'a, u32>) {
        data.set(lane() as usize, 1);
        this_grid(workspace).sync();
        data.set(0, data.get(31 - lane() as usize));
    }
}
kernel! {
    pub fn probe_tile_shfl_down<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, tiled_partition::<16>().shfl_down(lane(), 1));
    }
}
kernel! {
    pub fn probe_tile_sync<'a>(out: GlobalMut<'a, u32>) {
        tiled_partition::<16>().sync();
        out.set(0, 1);
    }
}

// ---- vector --------------------------------------------------------------------------------------

kernel! {
    pub fn probe_vectors_get<'a>(a: Global<'a, f32>, b: Global<'a, f64>, out: GlobalMut<'a, f32>) {
        let v = a.split_vectors().body.get(lane() as usize);
        let w = b.split_vectors().body.get(lane() as usize);
        out.set(0, v[0] + v[1] + v[2] + v[3] + (w[0] + w[1]) as f32);
    }
}
kernel! {
    pub fn probe_vectors_mut_set<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, f64>) {
        a.split_vectors_mut().body.set(lane() as usize, [lane(), 1, 2, 3]);
        b.split_vectors_mut().body.set(lane() as usize, [lane() as f64, 1.0]);
    }
}
kernel! {
    pub fn probe_vectors_get_nc<'a>(a: Global<'a, u8>, b: Global<'a, u64>, out: GlobalMut<'a, u32>) {
        let v = a.split_vectors().body.get_nc(lane() as usize);
        let w = b.split_vectors().body.get_nc(lane() as usize);
        out.set(0, v.iter().map(|&b| b as u32).sum::<u32>() + (w[0] ^ w[1]) as u32);
    }
}
kernel! {
    pub fn probe_vectors_get_strided<'a>(a: Global<'a, f32>, b: Global<'a, f64>, out: GlobalMut<'a, f32>) {
        let v: [[f32; 4]; 4] = a.split_vectors().body.get_strided(lane() as usize, 32);
        let w: [[f64; 2]; 2] = b.split_vectors().body.get_strided(lane() as usize, 32);
        out.set(0, v.iter().map(|x| x[0] + x[3]).sum::<f32>() + (w[0][1] + w[1][0]) as f32);
    }
}
kernel! {
    pub fn probe_vectors_get_strided_nc<'a>(a: Global<'a, u8>, b: Global<'a, i64>, out: GlobalMut<'a, u32>) {
        let v: [[u8; 16]; 3] = a.split_vectors().body.get_strided_nc(lane() as usize, 32);
        let w: [[i64; 2]; 2] = b.split_vectors().body.get_strided_nc(lane() as usize, 32);
        out.set(0, v.iter().map(|x| x[0] as u32 + x[15] as u32).sum::<u32>() + (w[0][1] ^ w[1][0]) as u32);
    }
}
kernel! {
    #[launch_bounds(256, 2)]
    pub fn probe_launch_bounds_marker<'a>(out: GlobalMut<'a, u32>) {
        out.set(0, lane());
    }
}
kernel! {
    pub fn probe_vectors_get_streaming<'a>(a: Global<'a, f32>, b: Global<'a, u64>, out: GlobalMut<'a, u32>) {
        let v = a.split_vectors().body.get_streaming(lane() as usize);
        let w = b.split_vectors().body.get_streaming(lane() as usize);
        out.set(0, (v[0] + v[1] + v[2] + v[3]) as u32 + (w[0] ^ w[1]) as u32);
    }
}
kernel! {
    pub fn probe_vectors_mut_set_streaming<'a>(a: GlobalMut<'a, u32>, b: GlobalMut<'a, f64>) {
        a.split_vectors_mut().body.set_streaming(lane() as usize, [lane(), 1, 2, 3]);
        b.split_vectors_mut().body.set_streaming(lane() as usize, [lane() as f64, 1.0]);
    }
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
