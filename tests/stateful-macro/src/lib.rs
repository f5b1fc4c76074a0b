//! Macros whose every expansion differs from the one before, within one compilation: what a macro
//! that takes a fragment (`$len:expr`, `$ty:ty`) must survive by expanding it once.
use proc_macro::TokenStream;
use std::sync::atomic::{AtomicUsize, Ordering};

static LENGTHS: AtomicUsize = AtomicUsize::new(0);
static TYPES: AtomicUsize = AtomicUsize::new(0);

/// `1` the first time it is expanded, `64` every time after.
#[proc_macro]
pub fn grows(_: TokenStream) -> TokenStream {
    let n = if LENGTHS.fetch_add(1, Ordering::Relaxed) == 0 { 1 } else { 64 };
    format!("{n}usize").parse().unwrap()
}

/// `u8` the first time it is expanded, `u64` every time after.
#[proc_macro]
pub fn widens(_: TokenStream) -> TokenStream {
    let t = if TYPES.fetch_add(1, Ordering::Relaxed) == 0 { "u8" } else { "u64" };
    t.parse().unwrap()
}
