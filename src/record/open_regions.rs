//! The regions a location has entered and not yet left, innermost last, with the depth up to
//! which the fast paths may push and pop (`fast_limit`): the stack's capacity while the
//! location's fast paths only write records (it is plain, see `location.rs`), 0 otherwise. One
//! comparison on the fast path then answers both "is there room" and "may the fast path
//! record here"; a location that is not plain costs its fast paths nothing until one fails.
//! Never allocates on the fast paths.

use std::ops::Deref;

pub(crate) struct OpenRegions {
    stack: Vec<u32>,
    /// `stack.capacity()` while `fast`, else 0; never above the capacity.
    fast_limit: usize,
    fast: bool,
}

impl OpenRegions {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            stack: Vec::with_capacity(capacity),
            fast_limit: 0,
            fast: false,
        }
    }

    /// Lets the fast paths push and pop (`fast`), or sends them to their callers' other paths.
    pub(crate) fn set_fast(&mut self, fast: bool) {
        self.fast = fast;
        self.refresh_limit();
    }

    #[inline(always)]
    pub(crate) fn fast(&self) -> bool {
        self.fast
    }

    fn refresh_limit(&mut self) {
        self.fast_limit = if self.fast { self.stack.capacity() } else { 0 };
    }

    pub(crate) fn push(&mut self, region: u32) {
        let capacity = self.stack.capacity();
        self.stack.push(region);
        if self.stack.capacity() != capacity {
            self.refresh_limit();
        }
    }

    pub(crate) fn pop(&mut self) -> Option<u32> {
        self.stack.pop()
    }

    /// Frees the stack (a retired location records no more).
    pub(crate) fn free(&mut self) {
        self.stack = Vec::new();
        self.refresh_limit();
    }

    /// The depth a fast push would go to, if the fast paths may push now.
    #[inline(always)]
    pub(crate) fn fast_push_room(&self) -> Option<usize> {
        let depth = self.stack.len();
        (depth < self.fast_limit).then_some(depth)
    }

    /// The depth a push without growth would go to, if the stack has room (for paths that
    /// are not fast but must not allocate either).
    #[inline(always)]
    pub(crate) fn push_room(&self) -> Option<usize> {
        let depth = self.stack.len();
        (depth < self.stack.capacity()).then_some(depth)
    }

    /// Pushes `region` at `depth`, from `fast_push_room` or `push_room`, with nothing changed
    /// since.
    #[inline(always)]
    pub(crate) fn push_at(&mut self, depth: usize, region: u32) {
        debug_assert!(depth == self.stack.len() && depth < self.stack.capacity());
        // SAFETY: `depth` came from `fast_push_room` or `push_room`: the length, below the
        // capacity (`fast_limit` is never above it), so the slot is allocated; the stack grows
        // by that one initialised element.
        unsafe {
            self.stack.as_mut_ptr().add(depth).write(region);
            self.stack.set_len(depth + 1);
        }
    }

    /// The depth below `region`, if it is the innermost open region and the fast paths may
    /// pop now.
    #[inline(always)]
    pub(crate) fn fast_pop_room(&self, region: u32) -> Option<usize> {
        let below = self.stack.len().wrapping_sub(1);
        // `below < fast_limit` also says the stack is not empty: on an empty one `below` wraps
        // to usize::MAX, above any capacity.
        // SAFETY: checked first: then `below` is the length minus one, a valid index.
        (below < self.fast_limit && unsafe { *self.stack.get_unchecked(below) } == region)
            .then_some(below)
    }

    /// Pops the innermost region, to `below` from `fast_pop_room`, with nothing changed since.
    #[inline(always)]
    pub(crate) fn pop_to(&mut self, below: usize) {
        debug_assert!(below + 1 == self.stack.len());
        // SAFETY: shortens the stack of plain `u32`s by one; `fast_pop_room` found it holding
        // `below + 1` of them.
        unsafe { self.stack.set_len(below) };
    }
}

impl Deref for OpenRegions {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.stack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_paths_push_and_pop_only_while_fast_and_within_the_capacity() {
        let mut open = OpenRegions::with_capacity(2);
        assert_eq!(open.fast_push_room(), None);
        open.set_fast(true);
        let capacity = open.stack.capacity();
        for region in 0..capacity as u32 {
            let depth = open.fast_push_room().unwrap();
            open.push_at(depth, region);
        }
        assert_eq!(open.fast_push_room(), None, "full");
        open.push(99);
        assert!(open.fast_push_room().is_some(), "grown, so room again");
        let below = open.fast_pop_room(99).unwrap();
        open.pop_to(below);
        assert_eq!(open.fast_pop_room(99), None, "not the innermost");
        open.set_fast(false);
        assert_eq!(open.fast_pop_room(capacity as u32 - 1), None);
        assert_eq!(open.fast_push_room(), None);
        open.free();
        open.set_fast(true);
        assert_eq!(open.fast_push_room(), None, "no capacity");
        assert_eq!(open.fast_pop_room(0), None, "empty");
    }
}
