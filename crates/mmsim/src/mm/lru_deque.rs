//! An LRU list of a lruvec (lruvec->lists[lru]), kept as a ring of page frame numbers.
//!
//! The kernel links the pages of an LRU list through `page->lru`; reclaim takes pages off
//! the tail one after the other, and each step reads the page the previous one pointed to:
//! a chain of dependent cache misses over the `struct page` array, which no prefetch can
//! run ahead of. The simulation keeps the same list — the same order, the same head and
//! tail, the same operations — as a ring buffer of pfns instead: the newest page at the
//! front, the oldest at the back. A page removed from the middle leaves a hole (`NIL`)
//! that the ends drop when they reach it and a compaction squeezes out once holes
//! outnumber pages. Each page on the list records its slot's position in its `prev` and
//! `next` fields (the kernel's `lru` links), so removal is O(1) and touches neither
//! neighbour. Reclaim reads the next pages to isolate from consecutive ring slots and can
//! ask the host to load their `struct page`s ahead (`prefetch_tail`). A host-side layout:
//! every operation leaves the list in the order the intrusive list had.

use crate::mm::page::{Page, Pfn, NIL};

/// The position of the first page added to an empty list: head insertions count down
/// from it, tail insertions up (2^40 insertions at the head before it could reach 0).
const ORIGIN: u64 = 1 << 40;

/// How many pages ahead of the one it takes a scan from the tail asks the host to load
/// (`prefetch_tail`): a page's work between two takes is short, so the next ones load
/// while it runs.
pub const PREFETCH_AHEAD: usize = 16;

/// Holes kept before a compaction regardless of the list's length: a short list that
/// churns does not compact on every removal.
const SLACK: usize = 64;

/// One LRU list: a ring of pfns, head (most recently added) at the front, tail (oldest)
/// at the back; `NIL` marks a hole left by a page removed from the middle.
#[derive(Clone, Debug)]
pub struct LruDeque {
    /// The ring's storage: a power-of-two number of slots (or none).
    buf: Vec<Pfn>,
    /// The index in `buf` of the front slot.
    front: usize,
    /// Slots in use, holes included. Neither end slot is ever a hole.
    slots: usize,
    /// The position of the front slot; a page's position less `base` is its slot.
    base: u64,
    /// Length, in pages: a large folio's head counts its folio's pages (lru_size counts
    /// pages, not folios).
    pub len: u64,
}

impl Default for LruDeque {
    fn default() -> Self {
        LruDeque {
            buf: Vec::new(),
            front: 0,
            slots: 0,
            base: ORIGIN,
            len: 0,
        }
    }
}

/// The position a page on an LRU list records, in its two link fields.
#[inline(always)]
fn pos_of(p: &Page) -> u64 {
    u64::from(p.prev) | (u64::from(p.next) << 32)
}

#[inline(always)]
fn set_pos(p: &mut Page, pos: u64) {
    p.prev = pos as u32;
    p.next = (pos >> 32) as u32;
}

impl LruDeque {
    /// The `buf` index of slot `i` (0 = the front).
    #[inline(always)]
    fn idx(&self, i: usize) -> usize {
        self.front.wrapping_add(i) & self.buf.len().wrapping_sub(1)
    }

    /// Slot `i`'s pfn.
    #[inline(always)]
    fn at(&self, i: usize) -> Pfn {
        self.buf[self.idx(i)]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, pfn: Pfn) {
        let j = self.idx(i);
        self.buf[j] = pfn;
    }

    /// Room for one more slot: double the storage in place (a large buffer is remapped,
    /// not copied beside itself) and move the slots that had wrapped round to the start
    /// up past the old end. The slots keep their numbers.
    #[cold]
    fn grow(&mut self) {
        let old = self.buf.len();
        self.buf.resize((old * 2).max(16), NIL);
        let wrapped = (self.front + self.slots).saturating_sub(old);
        self.buf.copy_within(0..wrapped, old);
        self.buf[..wrapped].fill(NIL);
    }

    /// The most recently added page, or NIL.
    #[inline]
    pub fn head(&self) -> Pfn {
        if self.slots == 0 {
            NIL
        } else {
            self.at(0)
        }
    }

    /// The oldest page (where reclaim isolates from), or NIL.
    #[inline]
    pub fn tail(&self) -> Pfn {
        if self.slots == 0 {
            NIL
        } else {
            self.at(self.slots - 1)
        }
    }

    /// list_add: insert at the head.
    #[inline(always)]
    pub fn add_head(&mut self, mem: &mut [Page], pfn: Pfn) {
        if self.slots == self.buf.len() {
            self.grow();
        }
        self.front = self.front.wrapping_sub(1) & (self.buf.len() - 1);
        self.buf[self.front] = pfn;
        self.slots += 1;
        self.base = self.base.wrapping_sub(1);
        let p = &mut mem[pfn as usize];
        set_pos(p, self.base);
        self.len += p.nr_pages();
    }

    /// list_add_tail: insert at the tail.
    #[inline(always)]
    pub fn add_tail(&mut self, mem: &mut [Page], pfn: Pfn) {
        if self.slots == self.buf.len() {
            self.grow();
        }
        let pos = self.base.wrapping_add(self.slots as u64);
        self.set(self.slots, pfn);
        self.slots += 1;
        let p = &mut mem[pfn as usize];
        set_pos(p, pos);
        self.len += p.nr_pages();
    }

    /// list_del: the page's slot becomes a hole; holes at either end are dropped, and the
    /// ring is compacted once it has more than twice as many slots as pages (`len`, which
    /// bounds the slots in use by twice the memory's frames, large folios or not) plus
    /// `SLACK`.
    #[inline(always)]
    pub fn del(&mut self, mem: &mut [Page], pfn: Pfn) {
        let p = &mut mem[pfn as usize];
        let slot = pos_of(p).wrapping_sub(self.base) as usize;
        debug_assert_eq!(self.at(slot), pfn, "pfn {pfn} is not where its links say");
        p.prev = NIL;
        p.next = NIL;
        self.len -= p.nr_pages();
        self.set(slot, NIL);
        if slot + 1 == self.slots {
            // The tail: drop it and the holes before it.
            self.slots -= 1;
            while self.slots > 0 && self.at(self.slots - 1) == NIL {
                self.slots -= 1;
            }
        } else if slot == 0 {
            while self.at(0) == NIL {
                self.front = self.idx(1);
                self.slots -= 1;
                self.base = self.base.wrapping_add(1);
            }
        } else if self.slots as u64 > 2 * self.len + SLACK as u64 {
            self.compact(mem);
        }
    }

    /// Squeeze the holes out, keeping the order, and give each page its new position.
    #[cold]
    fn compact(&mut self, mem: &mut [Page]) {
        let mut w = 0;
        for r in 0..self.slots {
            let pfn = self.at(r);
            if pfn != NIL {
                self.set(w, pfn);
                set_pos(&mut mem[pfn as usize], self.base.wrapping_add(w as u64));
                w += 1;
            }
        }
        self.slots = w;
        if self.buf.len() > 4 * w + SLACK {
            // Mostly empty storage: give it back.
            let cap = (2 * w + SLACK).next_power_of_two();
            let mut buf = Vec::with_capacity(cap);
            buf.extend((0..w).map(|i| self.at(i)));
            buf.resize(cap, NIL);
            self.buf = buf;
            self.front = 0;
        }
    }

    /// list_add_tail(new, &at->lru): insert `pfn` right before `at` (on its newer side),
    /// as a split folio's tails go beside their head (lru_add_split_folio). Uses the hole
    /// there if there is one; otherwise shifts the shorter side of the ring by one slot.
    pub fn add_before(&mut self, mem: &mut [Page], at: Pfn, pfn: Pfn) {
        let i = pos_of(&mem[at as usize]).wrapping_sub(self.base) as usize;
        debug_assert_eq!(self.at(i), at);
        let slot = if i > 0 && self.at(i - 1) == NIL {
            i - 1
        } else {
            if self.slots == self.buf.len() {
                self.grow();
            }
            if i <= self.slots / 2 {
                // Shift slots 0..i towards the front: each moves one slot down.
                self.front = self.front.wrapping_sub(1) & (self.buf.len() - 1);
                self.slots += 1;
                self.base = self.base.wrapping_sub(1);
                for j in 0..i {
                    let moved = self.at(j + 1);
                    self.set(j, moved);
                    if moved != NIL {
                        set_pos(&mut mem[moved as usize], self.base.wrapping_add(j as u64));
                    }
                }
            } else {
                // Shift slots i.. towards the back: `at` and what is older move one up.
                self.slots += 1;
                for j in (i + 1..self.slots).rev() {
                    let moved = self.at(j - 1);
                    self.set(j, moved);
                    if moved != NIL {
                        set_pos(&mut mem[moved as usize], self.base.wrapping_add(j as u64));
                    }
                }
            }
            i
        };
        self.set(slot, pfn);
        let p = &mut mem[pfn as usize];
        set_pos(p, self.base.wrapping_add(slot as u64));
        self.len += p.nr_pages();
    }

    /// Ask the host to start loading the `struct page` of the page `k` places from the
    /// tail (the one reclaim isolates `k` steps from now), if there is one. A host hint:
    /// no simulated effect.
    #[inline]
    pub fn prefetch_tail(&self, mem: &[Page], k: usize) {
        #[cfg(target_arch = "x86_64")]
        if k < self.slots {
            let pfn = self.at(self.slots - 1 - k);
            if let Some(p) = mem.get(pfn as usize) {
                use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                let p: *const Page = p;
                // SAFETY: a prefetch never faults, and `p` points into `mem`.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (mem, k);
    }

    /// Before a scan that takes up to `n` pages from the tail: ask the host to load the
    /// first `PREFETCH_AHEAD` of them together (the scan then asks for the page
    /// `PREFETCH_AHEAD` ahead of each one it takes).
    #[inline]
    pub fn prefetch_tail_batch(&self, mem: &[Page], n: usize) {
        for k in 0..PREFETCH_AHEAD.min(n) {
            self.prefetch_tail(mem, k);
        }
    }

    /// Walk from head to tail (for the checker and dumps).
    pub fn iter(&self) -> impl Iterator<Item = Pfn> + '_ {
        (0..self.slots).map(|i| self.at(i)).filter(|&p| p != NIL)
    }

    /// The ring's own consistency (for the invariant checker): no hole at either end, and
    /// each page's recorded position naming its slot.
    pub fn check(&self, mem: &[Page]) -> Result<(), String> {
        if self.slots > 0 && (self.head() == NIL || self.tail() == NIL) {
            return Err("an LRU ring ends in a hole".into());
        }
        for i in 0..self.slots {
            let pfn = self.at(i);
            if pfn == NIL {
                continue;
            }
            let pos = pos_of(&mem[pfn as usize]);
            let want = self.base.wrapping_add(i as u64);
            if pos != want {
                return Err(format!(
                    "pfn {pfn} in LRU slot {i} records position {pos}, not {want}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frames(n: usize) -> Vec<Page> {
        (0..n).map(|_| Page::new_free(0)).collect()
    }

    /// `n` frames and a list of `pfns`, each added at the head in turn.
    fn list_of(n: usize, pfns: impl IntoIterator<Item = Pfn>) -> (Vec<Page>, LruDeque) {
        let mut mem = frames(n);
        let mut d = LruDeque::default();
        for p in pfns {
            d.add_head(&mut mem, p);
        }
        (mem, d)
    }

    /// The reference: a plain vector, head first.
    fn apply(model: &mut Vec<Pfn>, d: &mut LruDeque, mem: &mut [Page], op: (u8, usize)) {
        let (kind, x) = op;
        let free: Vec<Pfn> = (0..mem.len() as Pfn)
            .filter(|p| !model.contains(p))
            .collect();
        match kind % 4 {
            0 if !free.is_empty() => {
                let pfn = free[x % free.len()];
                d.add_head(mem, pfn);
                model.insert(0, pfn);
            }
            1 if !free.is_empty() => {
                let pfn = free[x % free.len()];
                d.add_tail(mem, pfn);
                model.push(pfn);
            }
            2 if !model.is_empty() => {
                let pfn = model.remove(x % model.len());
                d.del(mem, pfn);
            }
            3 if !model.is_empty() && !free.is_empty() => {
                let at = x % model.len();
                let pfn = free[(x / 7) % free.len()];
                d.add_before(mem, model[at], pfn);
                model.insert(at, pfn);
            }
            _ => {}
        }
    }

    #[test]
    fn removing_the_tail_exposes_the_next_oldest_and_a_middle_hole_is_skipped() {
        let (mut mem, mut d) = list_of(8, 0..5);
        // Head first: 4 3 2 1 0.
        d.del(&mut mem, 1);
        assert_eq!(d.tail(), 0);
        d.del(&mut mem, 0);
        assert_eq!(d.tail(), 2, "the hole of 1 is dropped with the tail");
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![4, 3, 2]);
        assert_eq!(d.len, 3);
        assert_eq!((mem[0].prev, mem[0].next), (NIL, NIL));
        d.check(&mem).unwrap();
    }

    #[test]
    fn a_split_folio_tail_goes_on_the_newer_side_of_its_head() {
        let (mut mem, mut d) = list_of(8, 0..4);
        // 3 2 1 0; tails 5 then 6 before 1 (newer side), one near each end.
        d.add_before(&mut mem, 1, 5);
        d.add_before(&mut mem, 1, 6);
        d.add_before(&mut mem, 3, 7);
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![7, 3, 2, 5, 6, 1, 0]);
        d.check(&mem).unwrap();
    }

    #[test]
    fn holes_are_compacted_away_once_they_outnumber_pages() {
        let (mut mem, mut d) = list_of(400, 0..400);
        // Remove every page but the two ends: holes only in the middle.
        for p in 1..399 {
            d.del(&mut mem, p);
        }
        assert!(
            d.slots as u64 <= 2 * d.len + SLACK as u64,
            "ring of {}",
            d.slots
        );
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![399, 0]);
        d.check(&mem).unwrap();
    }

    proptest! {
        /// Any sequence of list operations leaves the ring in the order a plain list has,
        /// with consistent positions and counts.
        #[test]
        fn the_ring_keeps_list_order(ops in proptest::collection::vec((0u8..4, 0usize..1000), 0..400)) {
            let mut mem = frames(40);
            let mut d = LruDeque::default();
            let mut model = Vec::new();
            for op in ops {
                apply(&mut model, &mut d, &mut mem, op);
                prop_assert_eq!(d.iter().collect::<Vec<_>>(), model.clone());
                prop_assert_eq!(d.head(), model.first().copied().unwrap_or(NIL));
                prop_assert_eq!(d.tail(), model.last().copied().unwrap_or(NIL));
                prop_assert_eq!(d.len, model.len() as u64);
                prop_assert!(d.check(&mem).is_ok(), "{:?}", d.check(&mem));
            }
        }
    }
}
