//! Vector work of the optimiser and the random start over fixed blocks of items, in parallel
//! (issue 32: on 100 000 water the L-BFGS vector updates, run on one thread, were a tenth of the
//! run and kept two threads from doubling its speed).
//!
//! Determinism: a block is always [`LEN`] items (the last one shorter), whatever the number of
//! threads; each block is worked through in item order and block results are combined in block
//! order. So a sum has the same bits on one thread, on many, and in the single-threaded wasm build
//! ([`crate::par`]'s sequential iterators). A vector of at most one block is worked on this thread
//! without the pool, with the bits of the plain sequential loop. The work is passed as `&dyn Fn`:
//! one copy of the block loop per item type in the package, not one per caller.

use std::ops::Range;

use crate::par::*;

/// Items per block.
pub const LEN: usize = 8192;

/// The item range of block `b` of a vector of `len` items.
fn block(b: usize, len: usize) -> Range<usize> {
    b * LEN..((b + 1) * LEN).min(len)
}

/// Σ of `part(range)` over the blocks of `0..len`, added in block order (`part` sums its range in
/// order). One block: `part(0..len)` itself.
pub fn sum(len: usize, part: &(dyn Fn(Range<usize>) -> f64 + Sync)) -> f64 {
    if len <= LEN {
        return part(0..len);
    }
    let parts: Vec<f64> = (0..len.div_ceil(LEN))
        .into_par_iter()
        .map(|b| part(block(b, len)))
        .collect();
    parts.into_iter().fold(0.0, |a, p| a + p)
}

/// Runs `work(start, chunk)` on every block of `items` (`start`: the index of the chunk's first item).
pub fn update<T: Send>(items: &mut [T], work: &(dyn Fn(usize, &mut [T]) + Sync)) {
    if items.len() <= LEN {
        work(0, items);
        return;
    }
    items
        .par_chunks_mut(LEN)
        .enumerate()
        .for_each(|(b, chunk)| work(b * LEN, chunk));
}

/// Runs `work(start, chunk)` on every block of `items` and returns the blocks' results in block
/// order.
pub fn update_map<T: Send, R: Send>(
    items: &mut [T],
    work: &(dyn Fn(usize, &mut [T]) -> R + Sync),
) -> Vec<R> {
    if items.len() <= LEN {
        return vec![work(0, items)];
    }
    items
        .par_chunks_mut(LEN)
        .enumerate()
        .map(|(b, chunk)| work(b * LEN, chunk))
        .collect()
}

/// `part(range)` of every block of `0..len`, in block order.
pub fn map<R: Send>(len: usize, part: &(dyn Fn(Range<usize>) -> R + Sync)) -> Vec<R> {
    if len <= LEN {
        return vec![part(0..len)];
    }
    (0..len.div_ceil(LEN))
        .into_par_iter()
        .map(|b| part(block(b, len)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_have_the_same_bits_on_any_number_of_threads_and_one_block_is_the_plain_sum() {
        let v: Vec<f64> = (0..3 * LEN + 17)
            .map(|i| ((i * 7919) % 1013) as f64 * 1e-3 - 0.4)
            .collect();
        let sum_on = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| sum(v.len(), &|r| v[r].iter().sum()))
        };
        let one = sum_on(1);
        assert_eq!(one.to_bits(), sum_on(2).to_bits());
        assert_eq!(one.to_bits(), sum_on(5).to_bits());
        let by_block: f64 = v.chunks(LEN).fold(0.0, |a, c| a + c.iter().sum::<f64>());
        assert_eq!(one.to_bits(), by_block.to_bits());
        let small = &v[..LEN];
        let plain: f64 = small.iter().sum();
        assert_eq!(
            sum(LEN, &|r| small[r].iter().sum()).to_bits(),
            plain.to_bits()
        );
    }

    #[test]
    fn updates_see_each_item_once_with_its_index() {
        let mut v = vec![0usize; 2 * LEN + 5];
        let starts = update_map(&mut v, &|start, chunk| {
            for (k, x) in chunk.iter_mut().enumerate() {
                *x += start + k;
            }
            start
        });
        assert_eq!(starts, vec![0, LEN, 2 * LEN]);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i));
        update(&mut v, &|start, chunk| {
            for (k, x) in chunk.iter_mut().enumerate() {
                *x -= start + k;
            }
        });
        assert!(v.iter().all(|&x| x == 0));
        assert_eq!(map(10, &|r| r.len()), vec![10]);
    }
}
