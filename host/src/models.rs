//! CPU models of atomic read-modify-writes: what a serial order of atomic operations on one cell
//! allows as the cell's final value and as the old value each operation returned.
//!
//! An atomic operation is indivisible (§5.5): concurrent operations on one location take effect in
//! *some* serial order that the hardware chooses. So a run is correct exactly when there is an order
//! in which every operation, applied to the value left by the one before, returns the old value the
//! device reported and leaves the final value the device reported. Each function here decides that
//! question for one kind of operation, from the operands, the old values and the final value alone.
//!
//! One source of truth for every example that checks atomics (`primitives`, `atomic_tour`,
//! `atomic_add_f64`, `running_max`).

use std::collections::HashMap;

/// Integer view of the atomic integer types, for the models.
pub trait Num: gpu_std::Pod {
    fn to_i(self) -> i128;
    fn from_i(v: i128) -> Self;
    const BITS: u32;
    const SIGNED: bool;
}
macro_rules! num {
    ($($t:ty: $signed:expr),*) => {$(
        impl Num for $t {
            fn to_i(self) -> i128 { self as i128 }
            fn from_i(v: i128) -> Self { v as $t }
            const BITS: u32 = <$t>::BITS;
            const SIGNED: bool = $signed;
        }
    )*};
}
num!(u32: false, i32: true, u64: false, i64: true);

/// `v` wrapped to `T`'s width, as the device's two's-complement arithmetic does.
pub fn wrap<T: Num>(v: i128) -> i128 {
    T::from_i(v).to_i()
}

/// The old values of `T`'s elements, sorted.
pub fn sorted<T: Num>(v: &[T]) -> Vec<i128> {
    let mut s: Vec<i128> = v.iter().map(|x| x.to_i()).collect();
    s.sort();
    s
}

/// Is there a serial order of the operations `0..olds.len()` — operation `i` replacing the cell's
/// value `c` by `apply(c, i)` — that starts at `init`, hands every operation `i` exactly `olds[i]`,
/// and ends at `fin`? The order is recovered by following the chain from `init`: the next operation
/// is one whose old value is the current value. Exact when the old values are distinct, which holds
/// for add/sub with nonzero operands that never wrap back to an earlier value, and for float adds of
/// positive values that every add changes.
pub fn serial_chain<K: Ord + Copy>(init: K, olds: &[K], fin: K, apply: impl Fn(K, usize) -> K) -> bool {
    // Operations sorted by old value; `taken[g]` counts the operations of the group of equal old values
    // starting at position `g` that the chain has used.
    let mut by_old: Vec<(K, usize)> = olds.iter().copied().zip(0..).collect();
    by_old.sort_unstable();
    let mut taken = vec![0usize; by_old.len()];
    let mut cur = init;
    for _ in 0..olds.len() {
        let g = by_old.partition_point(|&(k, _)| k < cur);
        let Some(&(k, i)) = taken.get(g).and_then(|t| by_old.get(g + t)) else { return false };
        if k != cur {
            return false;
        }
        taken[g] += 1;
        cur = apply(cur, i);
    }
    cur == fin
}

/// [`serial_chain`] for an integer operation `f(cell, operand)` with operands `vals`, wrapping at
/// `T`'s width.
pub fn chain_ok<T: Num>(init: i128, vals: &[T], olds: &[T], fin: T, f: impl Fn(i128, i128) -> i128) -> bool {
    let olds: Vec<i128> = olds.iter().map(|o| o.to_i()).collect();
    serial_chain(init, &olds, fin.to_i(), |c, i| wrap::<T>(f(c, vals[i].to_i())))
}

/// Is there a serial order of `atomicMax(cell, vals[i])` from `init` that returns `olds[i]` to every
/// operation and ends at `fin`? Exact: in any serial order the cell's values rise through
/// `init = o_1 < o_2 < ... < o_m`; the operations that saw `o_j` are those with old value `o_j`, and
/// among them exactly one (the last) carries an operand above `o_j`, which must be `o_{j+1}` (or `fin`
/// for the last group, where at most one may raise). Conversely, those groups in rising order, each
/// with its raiser last, form such an order. For `atomicMin`, pass keys in reverse order
/// ([`std::cmp::Reverse`]).
pub fn max_order_ok<K: Ord + Copy>(init: K, vals: &[K], olds: &[K], fin: K) -> bool {
    if vals.len() != olds.len() {
        return false;
    }
    let mut idx: Vec<usize> = (0..olds.len()).collect();
    idx.sort_by_key(|&i| olds[i]);
    let mut cur = init;
    let mut k = 0;
    while k < idx.len() {
        let o = olds[idx[k]];
        if o != cur {
            return false;
        }
        let end = k + idx[k..].iter().take_while(|&&i| olds[i] == o).count();
        let mut raisers = idx[k..end].iter().filter(|&&i| vals[i] > o);
        match (raisers.next(), raisers.next()) {
            (None, _) => {}
            (Some(&i), None) => cur = vals[i],
            (Some(_), Some(_)) => return false,
        }
        k = end;
    }
    cur == fin
}

/// Is there a serial order of `atomicExch(cell, vals[i])` from `init` that returns `olds[i]` to every
/// operation and ends at `fin`? Exact: operation `i` is an edge `olds[i] -> vals[i]` between cell
/// values, and a serial order is a path from `init` to `fin` through every edge once (an Eulerian
/// path). One exists iff every value is entered as often as it is left, except that `init` is left
/// once more and `fin` entered once more — the multiset `{init} + vals` equals `olds + {fin}` — and
/// every edge is connected to `init`.
pub fn exch_order_ok<K: Ord + Copy + std::hash::Hash>(init: K, vals: &[K], olds: &[K], fin: K) -> bool {
    if vals.len() != olds.len() {
        return false;
    }
    let mut before: Vec<K> = vals.iter().copied().chain([init]).collect();
    let mut after: Vec<K> = olds.iter().copied().chain([fin]).collect();
    before.sort();
    after.sort();
    if before != after {
        return false;
    }
    // Union-find over the values the edges touch.
    let mut id: HashMap<K, usize> = HashMap::new();
    let mut parent: Vec<usize> = Vec::new();
    let mut node = |k: K, parent: &mut Vec<usize>| {
        *id.entry(k).or_insert_with(|| {
            parent.push(parent.len());
            parent.len() - 1
        })
    };
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let start = node(init, &mut parent);
    let mut ends = Vec::with_capacity(vals.len());
    for (&o, &v) in olds.iter().zip(vals) {
        let (a, b) = (node(o, &mut parent), node(v, &mut parent));
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra] = rb;
        ends.push(a);
    }
    let r0 = root(&mut parent, start);
    ends.into_iter().all(|a| root(&mut parent, a) == r0)
}

/// The integer read-modify-writes of §5.5, as the models know them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exch,
    /// An increment by a compare-and-swap loop (the operand is ignored).
    CasIncrement,
    /// `atomicInc(p, limit)`: `old >= limit ? 0 : old + 1` (the operand is ignored).
    Inc(u32),
    /// `atomicDec(p, limit)`: `(old == 0 || old > limit) ? limit : old - 1` (the operand is ignored).
    Dec(u32),
}

/// Whether operations `op` with operands `vals`, applied to a cell holding `init`, can have returned
/// `olds` and left `fin` in some serial order. Exact for every operation except and/or/xor, where the
/// final value is exact and the old values are checked for what every serial order implies (for and,
/// each old value holds every bit of the final value; for or, none beyond it).
pub fn int_op_ok<T: Num>(op: IntOp, init: T, vals: &[T], olds: &[T], fin: T) -> bool {
    if vals.len() != olds.len() {
        return false;
    }
    let init = init.to_i();
    let ints = |v: &[T]| v.iter().map(|x| x.to_i()).collect::<Vec<i128>>();
    match op {
        IntOp::Add => chain_ok(init, vals, olds, fin, |a, b| a + b),
        IntOp::Sub => chain_ok(init, vals, olds, fin, |a, b| a - b),
        IntOp::CasIncrement => chain_ok(init, vals, olds, fin, |a, _| a + 1),
        IntOp::Max => max_order_ok(init, &ints(vals), &ints(olds), fin.to_i()),
        IntOp::Min => {
            let rev = |v: &[T]| v.iter().map(|x| std::cmp::Reverse(x.to_i())).collect::<Vec<_>>();
            max_order_ok(std::cmp::Reverse(init), &rev(vals), &rev(olds), std::cmp::Reverse(fin.to_i()))
        }
        IntOp::Exch => exch_order_ok(init, &ints(vals), &ints(olds), fin.to_i()),
        IntOp::And | IntOp::Or | IntOp::Xor => {
            let mask = if T::BITS == 32 { 0xffff_ffffi128 } else { 0xffff_ffff_ffff_ffffi128 };
            let bits = |x: i128| x & mask;
            let f = |a: i128, b: i128| match op {
                IntOp::And => a & b,
                IntOp::Or => a | b,
                _ => a ^ b,
            };
            let want = vals.iter().fold(bits(init), |a, x| f(a, bits(x.to_i())));
            let olds_ok = match op {
                IntOp::And => olds.iter().all(|x| bits(x.to_i()) & want == want),
                IntOp::Or => olds.iter().all(|x| bits(x.to_i()) | want == want),
                _ => true,
            };
            bits(fin.to_i()) == want && olds_ok
        }
        IntOp::Inc(limit) | IntOp::Dec(limit) => {
            // Every operation is the same function of the cell, so the old values are the first n
            // values of one sequence, in any order.
            let limit = limit as i128;
            let mut seq = Vec::with_capacity(vals.len());
            let mut cur = init;
            for _ in 0..vals.len() {
                seq.push(cur);
                cur = if let IntOp::Inc(_) = op {
                    if cur >= limit { 0 } else { cur + 1 }
                } else if cur == 0 || cur > limit {
                    limit
                } else {
                    cur - 1
                };
            }
            seq.sort();
            sorted(olds) == seq && fin.to_i() == cur
        }
    }
}

/// The float types with atomic add, for the models: bit patterns as keys, IEEE addition rounded to
/// nearest even (what `atom.add.f32/f64` and `add.rn` compute, and what the host computes).
pub trait ModelFloat: gpu_std::Pod + PartialEq {
    fn key(self) -> u64;
    fn from_key(k: u64) -> Self;
    fn add(self, other: Self) -> Self;
    fn as_f64(self) -> f64;
    /// `v` rounded to this type.
    fn from_f64(v: f64) -> Self;
    /// The unit roundoff, 2^-24 or 2^-53.
    const UNIT_ROUNDOFF: f64;
}
impl ModelFloat for f32 {
    fn key(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_key(k: u64) -> Self {
        f32::from_bits(k as u32)
    }
    fn add(self, other: Self) -> Self {
        self + other
    }
    fn as_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    const UNIT_ROUNDOFF: f64 = f32::EPSILON as f64 / 2.0;
}
impl ModelFloat for f64 {
    fn key(self) -> u64 {
        self.to_bits()
    }
    fn from_key(k: u64) -> Self {
        f64::from_bits(k)
    }
    fn add(self, other: Self) -> Self {
        self + other
    }
    fn as_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;
}

/// Is there a serial order of float `atomicAdd(cell, vals[i])` from `init` that returns exactly
/// `olds[i]` (bit for bit) to every operation and ends at exactly `fin`, every add rounded as IEEE
/// round-to-nearest-even does? Exact when every add changes the cell (e.g. positive operands that are
/// not absorbed), so that the old values are distinct.
pub fn float_add_order_ok<F: ModelFloat>(init: F, vals: &[F], olds: &[F], fin: F) -> bool {
    if vals.len() != olds.len() {
        return false;
    }
    let keys: Vec<u64> = olds.iter().map(|o| o.key()).collect();
    serial_chain(init.key(), &keys, fin.key(), |c, i| F::from_key(c).add(vals[i]).key())
}

/// `gamma(k) = k u / (1 - k u)`: the bound on the relative error that `k` successive roundings can
/// accumulate (Higham, *Accuracy and Stability of Numerical Algorithms*, Lemma 3.1). A sum of `m`
/// terms in any order errs by at most `gamma(m - 1) * sum |x|`; a tree of depth `d` by
/// `gamma(d) * sum |x|`.
pub fn gamma(k: usize, unit_roundoff: f64) -> f64 {
    let ku = k as f64 * unit_roundoff;
    assert!(ku < 1.0, "gamma({k}) is undefined for this precision");
    ku / (1.0 - ku)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;

    #[test]
    fn chains_accept_serial_orders_and_reject_others() {
        // Adds of 3, 5, 2 in the order 5, 2, 3 from 10: olds 10, 15, 17, final 20.
        let vals = [3u32, 5, 2];
        assert!(chain_ok(10, &vals, &[17, 10, 15], 20u32, |a, b| a + b));
        assert!(!chain_ok(10, &vals, &[17, 10, 15], 21u32, |a, b| a + b));
        assert!(!chain_ok(10, &vals, &[17, 10, 16], 20u32, |a, b| a + b));
        // A lost update: two operations saw the same old value.
        assert!(!chain_ok(10, &vals, &[10, 10, 15], 17u32, |a, b| a + b));
        // Wrapping at the type's width.
        assert!(chain_ok(u32::MAX as i128, &[2u32], &[u32::MAX], 1u32, |a, b| a + b));
    }

    #[test]
    fn max_orders_are_exact() {
        // Serial order 4, 9, 2, 7 from 0: olds 0, 4, 9, 9; final 9.
        assert!(max_order_ok(0, &[4, 9, 2, 7], &[0, 4, 9, 9], 9));
        // 7 saw 4 and 9 also saw 4: two raisers in one group.
        assert!(!max_order_ok(0, &[4, 9, 2, 7], &[0, 4, 9, 4], 9));
        // A value above the final one went unnoticed.
        assert!(!max_order_ok(0, &[4, 9, 2, 7], &[0, 4, 4, 4], 9));
        // An old value no one wrote.
        assert!(!max_order_ok(0, &[4, 9, 2, 7], &[0, 4, 9, 8], 9));
        // Nobody raised past the initial value.
        assert!(max_order_ok(10, &[4, 9], &[10, 10], 10));
        assert!(!max_order_ok(10, &[4, 9], &[10, 10], 9));
        // Min through reversed keys: order 5, 1, 3 from 8 gives olds 8, 5, 1.
        let r = |v: &[i32]| v.iter().map(|&x| Reverse(x)).collect::<Vec<_>>();
        assert!(max_order_ok(Reverse(8), &r(&[5, 1, 3]), &r(&[8, 5, 1]), Reverse(1)));
        assert!(!max_order_ok(Reverse(8), &r(&[5, 1, 3]), &r(&[8, 5, 5]), Reverse(1)));
    }

    #[test]
    fn exch_orders_need_a_connected_path() {
        // Order 3, 5 from 0: olds 0, 3; final 5.
        assert!(exch_order_ok(0, &[5, 3], &[3, 0], 5));
        // Same multisets, but the edge 5 -> 5 is not reachable from 0.
        assert!(!exch_order_ok(0, &[5, 3], &[5, 0], 3));
        assert!(!exch_order_ok(0, &[5, 3], &[3, 0], 3));
    }

    #[test]
    fn int_ops_cover_inc_dec_and_bits() {
        assert!(int_op_ok(IntOp::Inc(2), 1u32, &[0; 4], &[1, 2, 0, 1], 2));
        assert!(!int_op_ok(IntOp::Inc(2), 1u32, &[0; 4], &[1, 2, 0, 2], 1));
        assert!(int_op_ok(IntOp::Dec(2), 1u32, &[0; 3], &[1, 0, 2], 1));
        assert!(int_op_ok(IntOp::And, 0xffu32, &[0x0f, 0x3c], &[0xff, 0x0f], 0x0c));
        assert!(!int_op_ok(IntOp::And, 0xffu32, &[0x0f, 0x3c], &[0xff, 0x03], 0x0c));
        assert!(int_op_ok(IntOp::Min, 0i32, &[-3, 5], &[0, -3], -3));
        // 5 first (no change), then -3: both see 0.
        assert!(int_op_ok(IntOp::Min, 0i32, &[-3, 5], &[0, 0], -3));
        // The cell never held 5.
        assert!(!int_op_ok(IntOp::Min, 0i32, &[-3, 5], &[0, 5], -3));
    }

    #[test]
    fn float_adds_round_like_the_device() {
        // From 1: adding 2^-23 gives 1 + 2^-23; adding 2^-24 to that is a tie, rounded to even: 1 + 2^-22.
        let tiny = f32::EPSILON / 2.0;
        assert!(float_add_order_ok(
            1.0f32,
            &[f32::EPSILON, tiny],
            &[1.0, 1.0 + f32::EPSILON],
            1.0 + 2.0 * f32::EPSILON
        ));
        assert!(!float_add_order_ok(1.0f32, &[f32::EPSILON, tiny], &[1.0, 1.0 + f32::EPSILON], 1.0 + f32::EPSILON));
        assert!(float_add_order_ok(0.0f64, &[1.0, 2.0], &[2.0, 0.0], 3.0));
        assert!(!float_add_order_ok(0.0f64, &[1.0, 2.0], &[f64::NAN, 0.0], 3.0));
    }
}
