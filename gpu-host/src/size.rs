//! The size in bytes of an allocation of `len` elements, checked: a buffer's length and its
//! allocation must never disagree ([`byte_len`]).
//!
//! Imports `error` only.

use crate::error::{Result, fail};

/// Bytes of `len` elements of `T` for the buffer `name` (a `what`: "buffer", "mapped buffer"), or an
/// error naming it when they overflow or exceed the largest allocation (`isize::MAX` bytes).
pub(crate) fn byte_len<T>(what: &str, name: &str, len: usize) -> Result<usize> {
    match len.checked_mul(size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(bytes),
        _ => fail!(
            OutOfMemory,
            "{what} `{name}`: {len} elements of {} bytes are more than one allocation can hold ({} bytes at most)",
            size_of::<T>(),
            isize::MAX
        ),
    }
}
