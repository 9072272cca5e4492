//! One sort of indices for every caller of the crate: the standard stable sort, instanced once.

/// Sorts indices with `cmp` (stable), every caller through one instance of the standard sort: a
/// comparator behind `dyn` instead of one copy of the sort per closure (a few KB of the page
/// package each).
pub(crate) fn sort_indices(
    v: &mut [usize],
    mut cmp: impl FnMut(usize, usize) -> std::cmp::Ordering,
) {
    let cmp: &mut dyn FnMut(&usize, &usize) -> std::cmp::Ordering = &mut |a, b| cmp(*a, *b);
    v.sort_by(cmp);
}
