//! `Vectors::sub` / `VectorsMut::sub`: a sub-range of a 16-byte vector view, bounds-checked once.
//! (Reads and writes through such views run in the scan's emulator tests.)

use gpu_std::{Global, GlobalMut};

#[test]
fn sub_views_have_the_asked_length_and_stay_in_bounds() {
    // 4 leading elements may be a head; 64 elements make at least 15 whole vectors.
    let data = vec![0u32; 64];
    // SAFETY: `data` outlives the view and is not written while it exists.
    let view = unsafe { Global::from_raw_parts(data.as_ptr(), data.len()) };
    let body = view.split_vectors().body;
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
    // SAFETY: as above.
    let view = unsafe { Global::from_raw_parts(data.as_ptr(), data.len()) };
    let body = view.split_vectors().body;
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
