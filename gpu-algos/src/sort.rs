//! Device-wide stable radix sort: [`sort_keys`] and [`sort_pairs`] (keys with values), ascending or
//! descending, by all of the key's bits or a range of them ([`Order`]), for `u32`, `i32`, `u64`,
//! `i64`, `f32` and `f64` keys, with values of 4 or 8 bytes.
//!
//! **Order.** Unsigned and signed integers by value; floats in IEEE 754 total order, as
//! `f32::total_cmp`: `-NaN < -inf < … < -0.0 < +0.0 < … < +inf < +NaN` (the NaNs a GPU makes, and
//! `f32::NAN`, have the sign bit clear and sort last). Equal keys keep their input order, in
//! either direction. With [`Order::bits`], only bits `begin .. end` of the key's bits in that order
//! take part (signed keys with the sign bit flipped, floats as above): CUB's `begin_bit`/`end_bit`.
//!
//! **How.** Up to 6144 keys, one block sorts them in shared memory in one launch. Above, one read of
//! the keys counts the digits of every pass, then one pass per 8 bits moves every key (and value) to
//! its place, tiles finding their offsets by decoupled look-back (`gpu_algos_kernels::sort` has the
//! algorithm), all queued at once and waited for once. The input is not changed: passes alternate between
//! the output and a temporary buffer the call owns ([`Algos`] keeps it between calls).
use crate::error::{Result, fail};
use crate::kernels::{SortValue, Sortable, Values};
use crate::plan;
use crate::scratch::Algos;
use gpu_algos_kernels::sort::{self as so, Digits, ERROR_GAVE_UP, MAX_LEN, SortKey};
use gpu_host::{Buffer, Device, Launch};
use gpu_std::{Arg, Global, GlobalMut, Pod};
use std::ops::Range;

/// The order of a sort: ascending or descending, by all of the key's bits or by `bits` of them.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Order {
    /// Largest first.
    pub descending: bool,
    /// The bits that take part (of the key's bits in sort order); `None`: all.
    pub bits: Option<Range<u32>>,
}
impl Order {
    /// Smallest first, by every bit.
    pub fn ascending() -> Order {
        Order::default()
    }
    /// Largest first, by every bit.
    pub fn descending() -> Order {
        Order { descending: true, bits: None }
    }
    /// Only bits `bits` take part (`begin < end <=` the key's bits).
    pub fn bits(self, bits: Range<u32>) -> Order {
        Order { bits: Some(bits), ..self }
    }
}

/// `out` = `keys` sorted ascending (stable); `out` has `keys`' length.
pub fn sort_keys<K: Sortable>(dev: &Device, keys: &Buffer<'_, K>, out: &mut Buffer<'_, K>) -> Result<()> {
    Algos::new(dev)?.sort_keys_by(keys, out, &Order::ascending())
}
/// `out` = `keys` sorted descending (stable: equal keys keep their order).
pub fn sort_keys_descending<K: Sortable>(dev: &Device, keys: &Buffer<'_, K>, out: &mut Buffer<'_, K>) -> Result<()> {
    Algos::new(dev)?.sort_keys_by(keys, out, &Order::descending())
}
/// `keys_out` = `keys` sorted ascending (stable), `vals_out[i]` the value that came with
/// `keys_out[i]`; every buffer has `keys`' length.
pub fn sort_pairs<K: Sortable, V: SortValue>(
    dev: &Device,
    keys: &Buffer<'_, K>,
    vals: &Buffer<'_, V>,
    keys_out: &mut Buffer<'_, K>,
    vals_out: &mut Buffer<'_, V>,
) -> Result<()> {
    Algos::new(dev)?.sort_pairs_by(keys, vals, keys_out, vals_out, &Order::ascending())
}
/// [`sort_pairs`], descending.
pub fn sort_pairs_descending<K: Sortable, V: SortValue>(
    dev: &Device,
    keys: &Buffer<'_, K>,
    vals: &Buffer<'_, V>,
    keys_out: &mut Buffer<'_, K>,
    vals_out: &mut Buffer<'_, V>,
) -> Result<()> {
    Algos::new(dev)?.sort_pairs_by(keys, vals, keys_out, vals_out, &Order::descending())
}

/// Where a pass reads or writes: the caller's input, the caller's output, the temporary buffer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Slot {
    Input,
    Output,
    Temp,
}
/// The buffers of each pass: pass `p` reads where pass `p - 1` wrote (pass 0 the input) and writes
/// the output or the temporary buffer, so that the last pass writes the output.
fn slots(passes: u32, p: u32) -> (Slot, Slot) {
    let dst = |p: u32| if (passes - 1 - p).is_multiple_of(2) { Slot::Output } else { Slot::Temp };
    (if p == 0 { Slot::Input } else { dst(p - 1) }, dst(p))
}

/// `slot` with exactly `len` words when `exact` (the sort zeroes such a buffer whole before its first
/// pass), else at least `len` (its contents do not matter).
fn ensure<'s, 'd, T: Pod>(
    dev: &'d Device,
    slot: &'s mut Option<Buffer<'d, T>>,
    name: &str,
    len: usize,
    exact: bool,
) -> Result<&'s Buffer<'d, T>> {
    let fits = slot.as_ref().is_some_and(|b| if exact { b.len() == len.max(1) } else { b.len() >= len });
    if !fits {
        *slot = None;
        *slot = Some(dev.filled(name, len.max(1), T::default())?);
    }
    Ok(slot.as_ref().expect("made above"))
}

impl<'d> Algos<'d> {
    /// [`sort_keys`] in `order`, with this object's storage.
    pub fn sort_keys_by<K: Sortable>(
        &self,
        keys: &Buffer<'_, K>,
        out: &mut Buffer<'_, K>,
        order: &Order,
    ) -> Result<()> {
        self.sort::<K, u32>(keys, out, None, order)
    }
    /// [`sort_pairs`] in `order`, with this object's storage.
    pub fn sort_pairs_by<K: Sortable, V: SortValue>(
        &self,
        keys: &Buffer<'_, K>,
        vals: &Buffer<'_, V>,
        keys_out: &mut Buffer<'_, K>,
        vals_out: &mut Buffer<'_, V>,
        order: &Order,
    ) -> Result<()> {
        if vals.len() != keys.len() || vals_out.len() != keys.len() {
            fail!(
                Input,
                "sort: {} keys but {} values in and {} out (every buffer has the keys' length)",
                keys.len(),
                vals.len(),
                vals_out.len()
            );
        }
        self.sort(keys, keys_out, Some((vals, vals_out)), order)
    }

    /// The launches [`Algos::sort_keys_by`] makes for `n` keys of `K` in `order`, and [`Algos::sort_pairs_by`]
    /// with values of `value_bytes` bytes (0: keys alone).
    pub fn sort_plan<K: Sortable>(&self, n: usize, order: &Order, value_bytes: usize) -> Result<plan::Sort> {
        let digits = digits_of::<K>(order)?;
        let resident = self.resident::<(K, so::histogram::HistShared)>(|| Ok(K::histogram_resident(self.dev)?))?;
        Ok(plan::sort(
            n,
            digits,
            crate::device::target(self.dev)?,
            resident,
            so::pass_block(size_of::<K>(), value_bytes),
        ))
    }

    /// [`Algos::sort_keys_by`] with the passes on blocks of `block` threads (a multiple of 32 up to
    /// the pass kernel's launch bound, `sort::pass_block`) instead of the plan's: for a benchmark
    /// that measures the block size. Inputs the one-block sort takes are sorted by it, whatever
    /// `block` is.
    #[doc(hidden)]
    pub fn sort_keys_on_blocks<K: Sortable>(
        &self,
        keys: &Buffer<'_, K>,
        out: &mut Buffer<'_, K>,
        order: &Order,
        block: u32,
    ) -> Result<()> {
        let most = so::pass_block(size_of::<K>(), 0);
        if !block.is_multiple_of(32) || block == 0 || block > most {
            fail!(Input, "sort: {block} threads per block (a multiple of 32 up to {most} is needed)");
        }
        self.sort_with::<K, u32>(keys, out, None, order, Some(block))
    }

    fn sort<K: Sortable, V: SortValue>(
        &self,
        keys: &Buffer<'_, K>,
        out: &mut Buffer<'_, K>,
        vals: Option<(&Buffer<'_, V>, &mut Buffer<'_, V>)>,
        order: &Order,
    ) -> Result<()> {
        self.sort_with(keys, out, vals, order, None)
    }

    fn sort_with<K: Sortable, V: SortValue>(
        &self,
        keys: &Buffer<'_, K>,
        out: &mut Buffer<'_, K>,
        vals: Option<(&Buffer<'_, V>, &mut Buffer<'_, V>)>,
        order: &Order,
        block: Option<u32>,
    ) -> Result<()> {
        let n = keys.len();
        if out.len() != n {
            fail!(Input, "sort: the output holds {} keys, the input {n}", out.len());
        }
        if n > MAX_LEN {
            fail!(Input, "sort: {n} keys are more than the sort takes ({MAX_LEN})");
        }
        let value_bytes = if vals.is_some() { V::BYTES } else { 0 };
        let mut p = self.sort_plan::<K>(n, order, value_bytes)?;
        if let Some(block) = block
            && !p.small
        {
            p.block = block;
            p.tiles = so::tiles(n, block);
            p.state_words = so::state_len(n, block, p.passes);
        }
        if n == 0 {
            return Ok(());
        }
        let digits = digits_of::<K>(order)?.to_arg();
        let dev = self.dev;
        if p.small {
            let shared = so::small::shared_bytes(size_of::<K>(), value_bytes);
            let values = match &vals {
                None => Values::None,
                Some((vi, vo)) if V::BYTES == 8 => Values::Eight(vi.view_of::<u64>(n)?, vo.view_mut_of::<u64>(n)?),
                Some((vi, vo)) => Values::Four(vi.view_of::<u32>(n)?, vo.view_mut_of::<u32>(n)?),
            };
            let cfg = Launch::linear(1, p.block, shared);
            return Ok(K::launch_small(dev, cfg, keys.view_of::<K>(n)?, out.view_mut_of::<K>(n)?, values, digits)?);
        }
        let mut guard = self.sort_scratch.borrow_mut();
        let s = &mut *guard;
        let counts = ensure(dev, &mut s.counts, "sort counts", p.passes as usize * so::RADIX, true)?;
        let state = ensure(dev, &mut s.state, "sort state", p.state_words, true)?;
        let keys_temp: Temp<'_, 'd> = if size_of::<K>() == 8 {
            Temp::Eight(ensure(dev, &mut s.keys8, "sort keys (temporary)", n, false)?)
        } else {
            Temp::Four(ensure(dev, &mut s.keys4, "sort keys (temporary)", n, false)?)
        };
        let vals_temp = match &vals {
            None => None,
            Some(_) if V::BYTES == 8 => {
                Some(Temp::Eight(ensure(dev, &mut s.vals8, "sort values (temporary)", n, false)?))
            }
            Some(_) => Some(Temp::Four(ensure(dev, &mut s.vals4, "sort values (temporary)", n, false)?)),
        };
        let shared = so::onesweep::shared_bytes(size_of::<K>(), value_bytes);
        let hist = Launch::linear(p.histogram_grid, so::histogram::BLOCK, so::histogram::SHARED_BYTES);
        let cfg = Launch::linear(p.tiles as u32, p.block, shared);
        let (out, vals) = (&*out, vals.as_ref().map(|(vi, vo)| (*vi, &**vo)));
        // One wait for the whole sort: the zeroings, the histogram and the passes are queued in turn,
        // then the copy back of the error word.
        let ((), error) = dev.sequence_then_read(state, 1, |seq| {
            seq.zero(counts)?;
            seq.zero(state)?;
            K::launch_histogram(seq, hist, keys, counts, digits)?;
            for pass in 0..p.passes {
                let (from, to) = slots(p.passes, pass);
                let src = match from {
                    Slot::Input => keys.view_of::<K>(n)?,
                    Slot::Output => out.view_of::<K>(n)?,
                    Slot::Temp => keys_temp.view::<K>(n)?,
                };
                let dst = match to {
                    Slot::Output => out.view_mut_of::<K>(n)?,
                    _ => keys_temp.view_mut::<K>(n)?,
                };
                let values = match (vals, &vals_temp) {
                    (Some((vi, vo)), Some(temp)) => pass_values(vi, vo, temp, from, to, n)?,
                    _ => Values::None,
                };
                K::launch_pass(seq, cfg, src, dst, values, counts, state, digits, pass)?;
            }
            Ok(())
        })?;
        // A tile that waited past its bound set the error word: the output is wrong.
        if error & ERROR_GAVE_UP != 0 {
            fail!(GaveUp, "sort: a tile gave up waiting for the tiles before it (the output is not valid)");
        }
        Ok(())
    }
}

/// The bits and direction of `order` for keys of `K`.
fn digits_of<K: SortKey>(order: &Order) -> Result<Digits> {
    let bits = order.bits.clone().unwrap_or(0..K::BITS);
    if bits.start >= bits.end || bits.end > K::BITS {
        fail!(
            Input,
            "sort: the bit range {}..{} is not a non-empty range within the key's {} bits",
            bits.start,
            bits.end,
            K::BITS
        );
    }
    Ok(Digits::new(bits.start, bits.end, order.descending))
}

/// A temporary buffer of 4-byte or 8-byte words, viewed as the keys or the values of that size.
enum Temp<'a, 'd> {
    Four(&'a Buffer<'d, u32>),
    Eight(&'a Buffer<'d, u64>),
}
impl Temp<'_, '_> {
    fn view<U: Pod>(&self, n: usize) -> gpu_host::Result<Arg<'_, Global<'_, U>>> {
        match self {
            Temp::Four(b) => b.view_of::<U>(n),
            Temp::Eight(b) => b.view_of::<U>(n),
        }
    }
    fn view_mut<U: Pod>(&self, n: usize) -> gpu_host::Result<Arg<'_, GlobalMut<'_, U>>> {
        match self {
            Temp::Four(b) => b.view_mut_of::<U>(n),
            Temp::Eight(b) => b.view_mut_of::<U>(n),
        }
    }
}

/// The values' views of a pass from `from` to `to`, as their bits.
fn pass_values<'a, V: SortValue>(
    input: &'a Buffer<'_, V>,
    out: &'a Buffer<'_, V>,
    temp: &'a Temp<'_, '_>,
    from: Slot,
    to: Slot,
    n: usize,
) -> gpu_host::Result<Values<'a>> {
    fn src<'a, V: Pod, U: Pod>(
        input: &'a Buffer<'_, V>,
        out: &'a Buffer<'_, V>,
        temp: &'a Temp<'_, '_>,
        from: Slot,
        n: usize,
    ) -> gpu_host::Result<Arg<'a, Global<'a, U>>> {
        match from {
            Slot::Input => input.view_of::<U>(n),
            Slot::Output => out.view_of::<U>(n),
            Slot::Temp => temp.view::<U>(n),
        }
    }
    fn dst<'a, V: Pod, U: Pod>(
        out: &'a Buffer<'_, V>,
        temp: &'a Temp<'_, '_>,
        to: Slot,
        n: usize,
    ) -> gpu_host::Result<Arg<'a, GlobalMut<'a, U>>> {
        match to {
            Slot::Output => out.view_mut_of::<U>(n),
            _ => temp.view_mut::<U>(n),
        }
    }
    Ok(if V::BYTES == 8 {
        Values::Eight(src(input, out, temp, from, n)?, dst(out, temp, to, n)?)
    } else {
        Values::Four(src(input, out, temp, from, n)?, dst(out, temp, to, n)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_pass_writes_the_output_and_the_input_is_only_read() {
        for passes in 1..=8 {
            let mut prev = Slot::Input;
            for p in 0..passes {
                let (from, to) = slots(passes, p);
                assert_eq!(from, prev, "pass {p} of {passes} reads what the one before wrote");
                assert_ne!(to, Slot::Input);
                assert_ne!(from, to);
                prev = to;
            }
            assert_eq!(prev, Slot::Output);
        }
    }
}
