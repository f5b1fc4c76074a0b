//! `Vectors::sub` / `VectorsMut::sub`: a sub-range of a 16-byte vector view, bounds-checked once;
//! `Vectors::get_strided`: several vectors after one bounds check; `Global::get_strided`: several
//! elements after one; `GlobalMut::set_strided` and `scatter`: several stores after one. (Reads and writes through such
//! views run in the scan's and the reductions' emulator tests.)

use gpu_std::vector::Vectors;
use gpu_std::{Global, GlobalMut};

/// The whole 16-byte vectors of `data` (64 `u32`s make at least 15).
fn body(data: &[u32]) -> Vectors<'_, u32> {
    // SAFETY: the view borrows `data`, which outlives it and is not written while it exists.
    unsafe { Global::from_raw_parts(data.as_ptr(), data.len()) }.split_vectors().body
}

#[test]
fn sub_views_have_the_asked_length_and_stay_in_bounds() {
    // 4 leading elements may be a head; 64 elements make at least 15 whole vectors.
    let data = vec![0u32; 64];
    let body = body(&data);
    let n = body.len();
    assert!(n >= 15);
    assert_eq!(body.sub(0, n).len(), n);
    assert_eq!(body.sub(3, 5).len(), 5);
    assert_eq!(body.sub(n, 0).len(), 0);
    assert_eq!(body.sub(3, 5).sub(4, 1).len(), 1);
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn a_sub_view_past_the_end_panics() {
    let data = vec![0u32; 64];
    let body = body(&data);
    let _ = body.sub(2, body.len() - 1);
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn a_writable_sub_view_past_the_end_panics() {
    let mut data = vec![0u32; 64];
    // SAFETY: `data` outlives the view and is accessed only through it.
    let view = unsafe { GlobalMut::from_raw_parts(data.as_mut_ptr(), data.len()) };
    let body = view.split_vectors_mut().body;
    // A start past the end, whatever the length (no overflow in the check).
    let _ = body.sub(body.len() + 1, usize::MAX);
}

gpu_std::kernel! {
    /// out[0] = 1 when `Vectors::get_strided` and `Global::get_strided` return what `get` returns.
    pub fn strided_matches_get<'a>(input: Global<'a, u32>, out: GlobalMut<'a, u32>) {
        if gpu_std::thread::thread_idx().x == 0 {
            let b = input.split_vectors().body;
            let v: [[u32; 4]; 3] = b.get_strided(1, 4);
            let last: [[u32; 4]; 2] = b.get_strided(0, b.len() - 1);
            let none: [[u32; 4]; 0] = b.get_strided(usize::MAX, usize::MAX);
            let same = v == [b.get(1), b.get(5), b.get(9)] && last == [b.get(0), b.get(b.len() - 1)] && none.is_empty();
            // `Global::get_strided`: elements, as `get` returns them.
            let e: [u32; 2] = input.get_strided(3, 32);
            let end: [u32; 1] = input.get_strided(input.len() - 1, usize::MAX);
            let no: [u32; 0] = input.get_strided(usize::MAX, usize::MAX);
            let scalar = e == [input.get(3), input.get(35)] && end == [input.get(63)] && no.is_empty();
            out.set(0, (same && scalar) as u32);
        }
    }
}

#[test]
fn strided_reads_return_the_vectors_they_name() {
    use gpu_std::emu::{self, LaunchConfig, Options};
    let input = emu::buffer("input", (0..64u32).collect::<Vec<_>>());
    let out = emu::buffer("out", vec![0u32]);
    emu::launch::<strided_matches_get>(
        &LaunchConfig::linear(1, 32, 0),
        &Options::default(),
        (input.view(), out.view_mut()),
    )
    .expect("launch");
    assert_eq!(out.to_vec(), [1]);
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn a_strided_read_past_the_end_panics() {
    let data = vec![0u32; 64];
    let body = body(&data);
    let _: [[u32; 4]; 4] = body.get_strided(body.len() - 3, 1);
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn a_strided_read_whose_last_index_overflows_panics() {
    let data = vec![0u32; 64];
    let _: [[u32; 4]; 3] = body(&data).get_strided(1, usize::MAX / 2 + 1);
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn a_scalar_strided_read_past_the_end_panics() {
    let data = vec![0u32; 64];
    // SAFETY: the view borrows `data`, which outlives it and is not written while it exists.
    let view = unsafe { Global::from_raw_parts(data.as_ptr(), data.len()) };
    let _: [u32; 3] = view.get_strided(0, 32);
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn a_scalar_strided_read_whose_last_index_overflows_panics() {
    let data = vec![0u32; 64];
    // SAFETY: as above.
    let view = unsafe { Global::from_raw_parts(data.as_ptr(), data.len()) };
    let _: [u32; 3] = view.get_strided(1, usize::MAX / 2 + 1);
}

gpu_std::kernel! {
    /// Lane `l` scatters `l + 1` to `63 - l` and `100 + l` to `l` (two stores, one bounds check).
    pub fn scatter_two<'a>(out: GlobalMut<'a, u32>) {
        let lane = gpu_std::thread::thread_idx().x as usize;
        out.scatter([63 - lane, lane], [lane as u32 + 1, 100 + lane as u32]);
    }
}

#[test]
fn a_scatter_writes_each_value_at_its_index() {
    use gpu_std::emu::{self, LaunchConfig, Options};
    let out = emu::buffer("out", vec![0u32; 64]);
    emu::launch::<scatter_two>(&LaunchConfig::linear(1, 32, 0), &Options::default(), (out.view_mut(),))
        .expect("launch");
    let want: Vec<u32> = (0..64u32).map(|i| if i < 32 { 100 + i } else { 64 - i }).collect();
    assert_eq!(out.to_vec(), want);
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn a_scatter_past_the_end_panics() {
    let mut data = vec![0u32; 64];
    // SAFETY: `data` outlives the view and is accessed only through it.
    let view = unsafe { GlobalMut::from_raw_parts(data.as_mut_ptr(), data.len()) };
    view.scatter([3, 64, 5], [1, 2, 3]);
}

gpu_std::kernel! {
    /// Lane `l` writes `l`, `100 + l` to `l`, `l + 32` (two stores, one bounds check), and nothing with
    /// an empty array at an index past the end.
    pub fn set_strided_two<'a>(out: GlobalMut<'a, u32>) {
        let lane = gpu_std::thread::thread_idx().x as usize;
        out.set_strided(lane, 32, [lane as u32, 100 + lane as u32]);
        out.set_strided(usize::MAX, usize::MAX, [0u32; 0]);
    }
}

#[test]
fn a_strided_write_writes_each_value_at_its_index() {
    use gpu_std::emu::{self, LaunchConfig, Options};
    let out = emu::buffer("out", vec![0u32; 65]);
    emu::launch::<set_strided_two>(&LaunchConfig::linear(1, 32, 0), &Options::default(), (out.view_mut(),))
        .expect("launch");
    let want: Vec<u32> = (0..65u32)
        .map(|i| {
            if i == 64 {
                0
            } else if i < 32 {
                i
            } else {
                100 + i - 32
            }
        })
        .collect();
    assert_eq!(out.to_vec(), want);
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn a_strided_write_past_the_end_panics() {
    let mut data = vec![0u32; 64];
    // SAFETY: `data` outlives the view and is accessed only through it.
    let view = unsafe { GlobalMut::from_raw_parts(data.as_mut_ptr(), data.len()) };
    view.set_strided(1, 32, [1, 2, 3]);
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn a_strided_write_whose_last_index_overflows_panics() {
    let mut data = vec![0u32; 64];
    // SAFETY: as above.
    let view = unsafe { GlobalMut::from_raw_parts(data.as_mut_ptr(), data.len()) };
    view.set_strided(1, usize::MAX / 2 + 1, [1, 2, 3]);
}

struct Kernels;
// SAFETY: no kernel of this crate, nor anything it calls, reaches gpu-std inside a thread-local's
// lazy initialiser or a closure run with a thread-local set for its duration (`gpu_std::KernelCrate`).
unsafe impl gpu_std::KernelCrate for Kernels {}
