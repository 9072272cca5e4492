//! The parallel iterators the packer uses: rayon's natively and in the threaded wasm build
//! (`target_feature = "atomics"`); in the single-threaded wasm build (the page package) the same
//! calls as plain sequential iterators. Each parallel step works on disjoint blocks and combines
//! them in block order (or by `min` and integer sums), so both give the same bits; the sequential
//! one skips rayon's splitting and bridging (~5 % of a 5-water call's wasm, issue 12) and its code.

#[cfg(any(not(target_arch = "wasm32"), target_feature = "atomics"))]
pub use rayon::prelude::*;

#[cfg(not(any(not(target_arch = "wasm32"), target_feature = "atomics")))]
pub use sequential::*;

#[cfg(not(any(not(target_arch = "wasm32"), target_feature = "atomics")))]
mod sequential {
    /// A sequential iterator with the rayon methods the packer calls.
    pub struct Seq<I>(I);

    impl<I: Iterator> Seq<I> {
        /// No splitting here: the minimum block length does not matter.
        pub fn with_min_len(self, _min: usize) -> Self {
            self
        }
        /// Pairs items, up to the shorter side.
        pub fn zip<J: Iterator>(self, other: Seq<J>) -> Seq<std::iter::Zip<I, J>> {
            Seq(self.0.zip(other.0))
        }
        /// Numbers items from 0.
        pub fn enumerate(self) -> Seq<std::iter::Enumerate<I>> {
            Seq(self.0.enumerate())
        }
        /// Maps each item.
        pub fn map<B, F: FnMut(I::Item) -> B>(self, f: F) -> Seq<std::iter::Map<I, F>> {
            Seq(self.0.map(f))
        }
        /// Runs `f` on each item in order.
        pub fn for_each<F: FnMut(I::Item)>(self, f: F) {
            self.0.for_each(f)
        }
        /// Whether any item passes.
        pub fn any<F: FnMut(I::Item) -> bool>(mut self, f: F) -> bool {
            self.0.any(f)
        }
        /// Collects in order.
        pub fn collect<C: FromIterator<I::Item>>(self) -> C {
            self.0.collect()
        }
        /// rayon's `reduce(identity, op)`, folded in order.
        pub fn reduce<Id: Fn() -> I::Item, Op: Fn(I::Item, I::Item) -> I::Item>(
            self,
            identity: Id,
            op: Op,
        ) -> I::Item {
            self.0.fold(identity(), op)
        }
    }

    /// `par_iter` and `par_chunks` on slices.
    pub trait ParallelSlice<T> {
        /// The items.
        fn par_iter(&self) -> Seq<std::slice::Iter<'_, T>>;
        /// Chunks of `n` items.
        fn par_chunks(&self, n: usize) -> Seq<std::slice::Chunks<'_, T>>;
    }

    impl<T> ParallelSlice<T> for [T] {
        fn par_iter(&self) -> Seq<std::slice::Iter<'_, T>> {
            Seq(self.iter())
        }
        fn par_chunks(&self, n: usize) -> Seq<std::slice::Chunks<'_, T>> {
            Seq(self.chunks(n))
        }
    }

    /// `par_chunks_mut` on slices.
    pub trait ParallelSliceMut<T> {
        /// Chunks of `n` items.
        fn par_chunks_mut(&mut self, n: usize) -> Seq<std::slice::ChunksMut<'_, T>>;
    }

    impl<T> ParallelSliceMut<T> for [T] {
        fn par_chunks_mut(&mut self, n: usize) -> Seq<std::slice::ChunksMut<'_, T>> {
            Seq(self.chunks_mut(n))
        }
    }

    /// `into_par_iter` on anything iterable (a `Vec`, a range).
    pub trait IntoParallelIterator: IntoIterator + Sized {
        /// The items.
        fn into_par_iter(self) -> Seq<Self::IntoIter> {
            Seq(self.into_iter())
        }
    }

    impl<T: IntoIterator> IntoParallelIterator for T {}
}
