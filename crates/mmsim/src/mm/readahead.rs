//! Readahead (mm/readahead.c): the on-demand window (ondemand_readahead), initial and ramp-up
//! sizes, the PG_readahead marker that triggers asynchronous readahead, and read_pages /
//! readpage submitting the IO.
//!
//! Window rules (ra_pages = 32 pages, 128 KiB): init(r) = roundup_pow2(r) × 4 if ≤ max/32,
//! × 2 if ≤ max/4, else max; next(s) = 4s if s < max/16 else 2s, capped at max. Sequential
//! hits on the marker move the window forward; a miss next to the previous read starts a new
//! window; anything else reads just the request.
//!
//! The window's ceiling is the file's `ra_pages` (file_ra_state.ra_pages), initialised at
//! open or mmap from its device's bdi (`read_ahead_kb` of `[[devices]]`, default 128 KiB).
//! `read_ahead_kb = 0` turns readahead off as in the kernel: page_cache_sync_ra reads the
//! one page asked for (force_page_cache_ra of 1 page), page_cache_async_ra and the mmap
//! read-around do nothing.
//!
//! A readahead allocation whose memcg charge must wait (its reclaim throttled on
//! writeback) sleeps in the charge as in the kernel, where __GFP_NORETRY gives up only
//! after the reclaim — sleeps included — has run: a read's readahead stops there, keeps
//! where it was in [`RaState::resume`] and the reader sleeps; the restarted read first
//! continues the window from the folio whose charge slept, which then gives up if it
//! would have to sleep again. The folios allocated before the sleep are read at once
//! (the kernel submits them with the rest of the window after the sleep). The fault
//! path's readahead and the other callers' do not sleep: a charge that would ends them.

use crate::fs::{BlockDevice, IoKind, IoRequest};
use crate::machine::profile::KFunc;
use crate::mm::page::{pg, Pfn, PAGE_SHIFT, PAGE_SIZE};
use crate::mm::page_alloc::Gfp;
use crate::mm::radix_tree::Entry;
use crate::mm::vmstat::VmItem;
use crate::sched::Wait;
use crate::sim::Sim;

/// VM_MAX_READAHEAD: 128 KiB = 32 pages.
pub const RA_PAGES: u64 = 32;

/// The 2 MiB chunks of force_page_cache_ra (and MAX_READAHEAD of v3.15–v4.9), in pages.
pub const FORCE_RA_CHUNK_PAGES: u64 = 512;

/// struct file_ra_state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaState {
    /// Where the window starts.
    pub start: u64,
    /// Window size, pages.
    pub size: u64,
    /// Pages left when async readahead starts.
    pub async_size: u64,
    /// Byte position of the previous read's end (prev_pos); u64::MAX = none.
    pub prev_pos: u64,
    /// Largest window, pages (ra_pages; 0 = readahead off).
    pub ra_pages: u64,
    /// FMODE_RANDOM of the file (POSIX_FADV_RANDOM, v2.6.33): a miss reads just what the
    /// read asks for. The kernel keeps it in f_mode; it lives here, beside the file's
    /// readahead state, which every reader of the file passes.
    pub random: bool,
    /// The folio order the next async readahead builds on (file_ra_state.order, v6.10;
    /// `large-folios`): a sync readahead resets it to 0, each async one adds 2.
    pub order: u32,
    /// Where a read's readahead stopped when a folio's charge had to sleep: the reader
    /// continues it after the sleep (`Sim::ra_resume`). A new window drops it.
    pub resume: Option<RaResume>,
}

/// The rest of a readahead window whose allocation slept in its memcg charge: folios of
/// `order` (0: single pages, skipping cached ones) from `next` to `limit`, the one
/// holding `mark` given PG_readahead (u64::MAX: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaResume {
    /// The first index not allocated yet (the one whose charge slept).
    pub next: u64,
    /// The window's last index.
    pub limit: u64,
    /// The async marker's index (u64::MAX: none).
    pub mark: u64,
    /// Folio order (page_cache_ra_order's), 0 for do_page_cache_ra's pages.
    pub order: u32,
}

/// Whether a readahead allocation may sleep in its charge (the reclaim it runs may
/// throttle: reclaim_throttle, or wait on a page's writeback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaSleep {
    /// A charge that would sleep ends the readahead (fadvise, the inode table's
    /// readahead).
    Never,
    /// A read's readahead: the reader sleeps and continues the window after.
    Read,
    /// A page fault's readahead (do_sync_mmap_readahead, do_async_mmap_readahead): the
    /// faulting task sleeps, and the fault, resumed, continues the window first.
    Fault,
}

impl RaState {
    /// file_ra_state_init with the default bdi (VM_READAHEAD_PAGES).
    pub fn new() -> RaState {
        RaState::with_pages(RA_PAGES)
    }

    /// file_ra_state_init: a file whose bdi's ra_pages is `ra_pages`.
    pub fn with_pages(ra_pages: u64) -> RaState {
        RaState {
            prev_pos: u64::MAX,
            ra_pages,
            ..Default::default()
        }
    }
}

/// get_init_ra_size.
pub fn get_init_ra_size(size: u64, max: u64) -> u64 {
    let newsize = size.max(1).next_power_of_two();
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// get_next_ra_size.
pub fn get_next_ra_size(cur: u64, max: u64) -> u64 {
    let n = if cur < max / 16 { 4 * cur } else { 2 * cur };
    n.min(max)
}

/// The window of __do_page_cache_readahead(offset, nr, lookahead): pages `offset` to
/// `offset + nr − 1`, the marker at `nr − lookahead` (none when the lookahead is 0 or
/// longer than the window).
fn ra_pages_window(offset: u64, nr: u64, lookahead: u64) -> RaResume {
    if nr == 0 {
        // Nothing to read: an empty window (next past limit).
        return RaResume {
            next: 1,
            limit: 0,
            mark: u64::MAX,
            order: 0,
        };
    }
    RaResume {
        next: offset,
        limit: offset + nr - 1,
        mark: match nr.checked_sub(lookahead) {
            Some(i) if lookahead > 0 => offset + i,
            _ => u64::MAX,
        },
        order: 0,
    }
}

impl Sim {
    /// file_ra_state_init for inode `ino`: the window ceiling of its device's bdi
    /// (`read_ahead_kb`); files without a device (tmpfs, ramfs) get the default.
    #[inline]
    pub fn file_ra_state_init(&self, ino: u32) -> RaState {
        let fs = self.inode(ino).fs;
        match self.fss[fs].device {
            Some(dev) => RaState::with_pages(self.devices[dev].ra_pages),
            None => RaState::new(),
        }
    }

    /// bdi->io_pages of the inode's device (0 without one: tmpfs).
    fn inode_io_pages(&self, ino: u32) -> u64 {
        let fs = self.inode(ino).fs;
        self.fss[fs]
            .device
            .map_or(0, |dev| self.devices[dev].io_pages)
    }

    /// ondemand_readahead: decide the window and submit it. Returns pages submitted.
    pub fn ondemand_readahead(
        &mut self,
        ino: u32,
        ra: &mut RaState,
        hit_marker: bool,
        offset: u64,
        req: u64,
        sleep: RaSleep,
    ) -> Result<u64, Wait> {
        ra.resume = None;
        let mut max = ra.ra_pages;
        if max == 0 {
            // Readahead off (page_cache_sync_ra with !ra_pages): force_page_cache_ra of the
            // one page asked for; page_cache_async_ra returns at once.
            if hit_marker {
                return Ok(0);
            }
            return self.do_page_cache_ra(ino, ra, offset, 1, 0, sleep);
        }
        if self.features.io_pages_readahead && req > max {
            // v4.10: a request larger than the window may be read ahead up to the
            // device's largest request (ractl_max_pages).
            let io_pages = self.inode_io_pages(ino);
            if io_pages > max {
                max = req.min(io_pages);
            }
        }
        let mut expected = ra.start + ra.size - ra.async_size;
        if hit_marker && self.features.large_folios {
            // page_cache_async_ra: the marker's index rounded down to its folio's size.
            if let Entry::Page(p) = self.inode(ino).mapping.tree.lookup(offset) {
                let nr = self.folio_nr_pages(self.folio_head(p));
                expected &= !(nr - 1);
            }
        }
        let sequential_hit = if self.features.sync_readahead_needed_page {
            // v6.11 (page_cache_async_ra): only a marker hit at the expected index pushes
            // the window forward; a miss needs its own page read.
            hit_marker && offset == expected
        } else {
            // ondemand_readahead before v6.11: a miss at the expected index or at the
            // window's end counts too, and the window moves past the page it needs (read
            // on its own by the caller's no_cached_page path).
            offset != 0 && (offset == expected || offset == ra.start + ra.size)
        };
        if sequential_hit && ra.size > 0 {
            ra.start += ra.size;
            ra.size = get_next_ra_size(ra.size, max);
            ra.async_size = ra.size;
        } else if offset != 0 && hit_marker {
            // Interleaved or context readahead: restart after the next hole.
            let start = self.page_cache_next_miss(ino, offset + 1, max);
            if start - offset > max {
                return Ok(0);
            }
            ra.start = start;
            ra.size = get_next_ra_size(start - offset + req, max);
            ra.async_size = ra.size;
        } else {
            let prev_index = if ra.prev_pos == u64::MAX {
                u64::MAX
            } else {
                ra.prev_pos >> PAGE_SHIFT
            };
            let sequential_miss = offset == 0
                || req > max
                || (prev_index != u64::MAX && offset.wrapping_sub(prev_index) <= 1);
            if sequential_miss {
                ra.start = offset;
                ra.size = get_init_ra_size(req, max);
                ra.async_size = if ra.size > req {
                    ra.size - req
                } else if self.features.sync_readahead_needed_page {
                    // v6.11 ("readahead: drop dead code in ondemand_readahead()"): what
                    // the merge below made of it under `io-pages-readahead`.
                    ra.size >> 1
                } else {
                    ra.size
                };
            } else if !(self.features.context_readahead
                && self.try_context_readahead(ino, ra, offset, req, max))
            {
                // A standalone, small random read: just the request, the readahead state
                // left alone.
                return self.do_page_cache_ra(ino, ra, offset, req, 0, sleep);
            }
        }
        let large = self.mapping_large_folio_support(ino);
        if large {
            // page_cache_async_ra raises the order by 2; page_cache_sync_ra starts at 0.
            ra.order = if hit_marker { ra.order + 2 } else { 0 };
        }
        if hit_marker && self.features.readahead_natural_boundary {
            // v6.17 (page_cache_async_ra): the window ends on a boundary of the folio order
            // it will be read with, the previous order + 2 (with order-0 folios, a
            // multiple of 4 pages), at most the largest power of two dividing the
            // ceiling, unless that would leave nothing.
            let order = if large { ra.order } else { 2 };
            let align = 1u64 << order.min(max.trailing_zeros());
            let end = ra.start + ra.size;
            let aligned_end = end & !(align - 1);
            if aligned_end > ra.start {
                ra.size -= end - aligned_end;
            }
            ra.async_size = ra.size;
        }
        if !self.features.sync_readahead_needed_page
            && offset == ra.start
            && ra.size == ra.async_size
        {
            // The read would hit its own marker: merge the next window into this one;
            // from v4.10 (`io-pages-readahead`) never past the maximum.
            let add = get_next_ra_size(ra.size, max);
            if !self.features.io_pages_readahead || ra.size + add <= max {
                ra.async_size = add;
                ra.size += add;
            } else {
                ra.size = max;
                ra.async_size = max >> 1;
            }
        }
        if large {
            return self.page_cache_ra_order(ino, ra, sleep);
        }
        self.do_page_cache_ra(ino, ra, ra.start, ra.size, ra.async_size, sleep)
    }

    /// page_cache_ra_order (v6.17's): read the window [start, start + size) into folios of
    /// the file's readahead order, capped by the window (ilog2 of its size) and
    /// MAX_PAGECACHE_ORDER; a folio is aligned to its size (a lower order where the index
    /// is not) and ends at the window or EOF (lower orders there); the folio holding the
    /// window's async mark gets PG_readahead. A folio whose range holds a cached page, or
    /// that cannot be allocated or charged, ends the loop, and the rest of the window is
    /// read with order-0 pages (do_page_cache_ra). Returns pages submitted.
    fn page_cache_ra_order(
        &mut self,
        ino: u32,
        ra: &mut RaState,
        sleep: RaSleep,
    ) -> Result<u64, Wait> {
        let size = self.inode(ino).size;
        if size == 0 || ra.size == 0 {
            return Ok(0);
        }
        let start = ra.start;
        let new_order = ra
            .order
            .min(crate::mm::folio::MAX_PAGECACHE_ORDER)
            .min(ra.size.ilog2());
        ra.order = new_order;
        if new_order == 0 {
            // Order-0 folios: what do_page_cache_ra reads.
            return self.do_page_cache_ra(ino, ra, start, ra.size, ra.async_size, sleep);
        }
        let end_index = (size - 1) >> PAGE_SHIFT;
        let (limit, mark) = if end_index > start + ra.size - 1 {
            (start + ra.size - 1, start + ra.size - ra.async_size)
        } else {
            (end_index, u64::MAX) // the window reaches EOF: no marker
        };
        let w = RaResume {
            next: start,
            limit,
            mark,
            order: new_order,
        };
        self.ra_alloc_folios(ino, ra, w, false, sleep)
    }

    /// page_cache_ra_order's loop from `w.next`: allocate, charge and add the folios up
    /// to `w.limit`, then read them. `retried`: the first folio's charge already slept
    /// once (its __GFP_NORETRY charge gives up rather than sleep again). A charge that
    /// must sleep under [`RaSleep::Read`] or [`RaSleep::Fault`] (not the retried one)
    /// stops the loop, leaves `ra.resume` and returns the wait.
    fn ra_alloc_folios(
        &mut self,
        ino: u32,
        ra: &mut RaState,
        w: RaResume,
        retried: bool,
        sleep: RaSleep,
    ) -> Result<u64, Wait> {
        let size = self.inode(ino).size;
        if size == 0 {
            return Ok(0);
        }
        let (new_order, mark) = (w.order, w.mark);
        let limit = w.limit.min((size - 1) >> PAGE_SHIFT);
        let prev = self.enter(KFunc::PageCacheReadahead);
        let gfp = Gfp {
            noretry: true,
            fs: !self.features.readahead_nofs,
            ..Gfp::KERNEL
        };
        let memcg = self.current_memcg();
        let mut folios = self.take_ra_list();
        let mut index = w.next;
        let mut failed = false;
        let mut slept = None;
        while index <= limit {
            let mut order = new_order;
            if index & ((1 << order) - 1) != 0 {
                order = index.trailing_zeros();
            }
            while order > 0 && index + (1 << order) - 1 > limit {
                order -= 1;
            }
            let nr = 1u64 << order;
            self.charge_tree_walk(ino);
            // filemap_add_folio's -EEXIST, checked before the allocation here.
            let tree = &self.inode(ino).mapping.tree;
            if (index..index + nr).any(|i| matches!(tree.lookup(i), Entry::Page(_))) {
                failed = true;
                break;
            }
            let head = match self.alloc_folio_charged(order, gfp, memcg) {
                Ok(Some(head)) => head,
                Err(wait) if sleep != RaSleep::Never && !(retried && index == w.next) => {
                    ra.resume = Some(RaResume { next: index, ..w });
                    slept = Some(wait);
                    break;
                }
                // Not allocated or charged (or a charge that would sleep where this
                // readahead may not): the rest of the window in order-0 pages.
                _ => {
                    failed = true;
                    break;
                }
            };
            if mark != u64::MAX && index == mark & !(nr - 1) {
                self.__SetPageReadahead(head);
            }
            folios.push((index, head));
            index += nr;
        }
        let n = self.read_pages(ino, &folios);
        self.count_cache_misses(n);
        self.give_ra_list(folios);
        self.leave(prev);
        if let Some(wait) = slept {
            return Err(wait);
        }
        let mut total = n;
        let start = ra.start;
        if failed && index >= start && ra.size > index - start {
            total += self.do_page_cache_ra(
                ino,
                ra,
                index,
                ra.size - (index - start),
                ra.async_size,
                sleep,
            )?;
        }
        Ok(total)
    }

    /// Continue the readahead a read or a fault left when a charge slept
    /// (`RaState::resume`), the folio whose charge slept first.
    pub fn ra_resume(&mut self, ino: u32, ra: &mut RaState) -> Result<u64, Wait> {
        let Some(w) = ra.resume.take() else {
            return Ok(0);
        };
        if w.order == 0 {
            self.ra_alloc_pages(ino, Some(ra), w, true, RaSleep::Read)
        } else {
            self.ra_alloc_folios(ino, ra, w, true, RaSleep::Read)
        }
    }

    /// count_history_pages: how many pages right before `offset` are cached, scanning back
    /// at most `max` (page_cache_prev_hole: a shadow entry is a hole); all of 0..offset when
    /// the file is cached from its start. As the kernel's walk (page_cache_prev_miss,
    /// xas_prev) counts them: its first step (xas_load) lands on the first slot of a large
    /// folio holding `offset − 1`, and each later step looks at the slot that far behind
    /// the index it reports, so the hole is met early; at the first slot of a node it goes
    /// to the previous node at the reported index's offset there (the same slot again when
    /// that offset is 0), or ends (no previous node: NULL) at the tree's first node.
    fn count_history_pages(&self, ino: u32, offset: u64, max: u64) -> u64 {
        const NODE: u64 = crate::mm::radix_tree::RADIX_TREE_MAP_SIZE as u64;
        if offset == 0 || max == 0 {
            return 0;
        }
        let tree = &self.inode(ino).mapping.tree;
        let present = |i: u64| matches!(tree.lookup(i), Entry::Page(_));
        let i0 = offset - 1;
        let Some(mut slot) = self.xas_load_slot(ino, i0) else {
            return 0;
        };
        let mut n = 1;
        while n < max && n < offset {
            let i = i0 - n;
            if !slot.is_multiple_of(NODE) {
                slot -= 1;
            } else if !i.is_multiple_of(NODE) {
                if slot < NODE {
                    break;
                }
                slot = slot - NODE + i % NODE;
            }
            if !present(slot) {
                break;
            }
            n += 1;
        }
        n
    }

    /// try_context_readahead (v2.6.31, "readahead: introduce context readahead"): a miss
    /// that is not sequential for this file's state but follows more cached pages than it
    /// asks for is taken for a stream another reader (or another stream through the same
    /// file) left behind: a window of the history's size plus the request, doubled history
    /// when the file is cached from its start, with an async marker on its last page.
    fn try_context_readahead(
        &mut self,
        ino: u32,
        ra: &mut RaState,
        offset: u64,
        req: u64,
        max: u64,
    ) -> bool {
        let mut size = self.count_history_pages(ino, offset, max);
        // One radix_tree_lookup per page looked at (the last one finds the hole).
        let lookups = size + u64::from(size < max && size < offset);
        for _ in 0..lookups {
            self.charge_tree_walk(ino);
        }
        if size <= req {
            return false;
        }
        if size >= offset {
            size *= 2;
        }
        ra.start = offset;
        ra.size = (size + req).min(max);
        ra.async_size = 1;
        true
    }

    /// Charge `n` pages read into the cache to the running task's `cache_misses`.
    pub fn count_cache_misses(&mut self, n: u64) {
        if let Some(t) = self.cur.task {
            self.tasks[t].stats.cache_misses += n;
        }
    }

    /// page_cache_sync_readahead: on a file in random mode (FMODE_RANDOM) with readahead
    /// on, just the pages asked for (force_page_cache_ra, "be dumb"); else the window.
    pub fn page_cache_sync_readahead(
        &mut self,
        ino: u32,
        ra: &mut RaState,
        offset: u64,
        req: u64,
        sleep: RaSleep,
    ) -> Result<(), Wait> {
        if ra.random && ra.ra_pages > 0 {
            self.force_page_cache_readahead(ino, ra, offset, req);
            return Ok(());
        }
        self.ondemand_readahead(ino, ra, false, offset, req, sleep)
            .map(|_| ())
    }

    /// force_page_cache_ra: read `nr` pages from `offset` without a window or a marker,
    /// at most the device's largest request or the window, whichever is larger, from
    /// v4.10 (`io-pages-readahead`; before, at most MAX_READAHEAD, 2 MiB), in 2 MiB
    /// chunks. Returns pages submitted.
    pub fn force_page_cache_readahead(
        &mut self,
        ino: u32,
        ra: &RaState,
        offset: u64,
        nr: u64,
    ) -> u64 {
        let prev = self.enter(KFunc::ForcePageCacheReadahead);
        let max_pages = if self.features.io_pages_readahead {
            self.inode_io_pages(ino).max(ra.ra_pages)
        } else {
            FORCE_RA_CHUNK_PAGES
        };
        let mut left = nr.min(max_pages);
        let mut at = offset;
        let mut n = 0;
        while left > 0 {
            let chunk = left.min(FORCE_RA_CHUNK_PAGES);
            n += self.__do_page_cache_readahead(ino, at, chunk, 0);
            at += chunk;
            left -= chunk;
        }
        self.leave(prev);
        n
    }

    /// page_cache_async_readahead: the reader hit a PG_readahead page.
    pub fn page_cache_async_readahead(
        &mut self,
        ino: u32,
        ra: &mut RaState,
        pfn: Pfn,
        offset: u64,
        req: u64,
        sleep: RaSleep,
    ) -> Result<(), Wait> {
        if self.PageWriteback(pfn) {
            return Ok(());
        }
        self.ClearPageReadahead(pfn);
        self.ondemand_readahead(ino, ra, true, offset, req, sleep)
            .map(|_| ())
    }

    /// The slot an xarray walk's first step (xas_load) lands on for `index` of `ino`'s
    /// cache: the first slot of a large folio (smaller than a node's 64 slots) holding it —
    /// xas_descend follows the sibling entry —, else `index`; None for a hole or a shadow
    /// entry.
    fn xas_load_slot(&self, ino: u32, index: u64) -> Option<u64> {
        match self.inode(ino).mapping.tree.lookup(index) {
            Entry::Page(p) => {
                let head = self.folio_head(p);
                Some(
                    if self.folio_nr_pages(head) < crate::mm::radix_tree::RADIX_TREE_MAP_SIZE as u64
                    {
                        self.mem[head as usize].index
                    } else {
                        index
                    },
                )
            }
            _ => None,
        }
    }

    /// page_cache_next_miss: the first index from `index` whose slot holds no page (a hole
    /// or a shadow entry), looking at `max_scan` slots; `index + max_scan` if none. The
    /// kernel walks the xarray with xas_next, whose first step (xas_load) lands on the
    /// first slot of a large folio holding `index`: each later step then looks at the slot
    /// that far behind the index it reports, until the walk crosses into the next node of
    /// 64 slots, which puts it back in step (the slots it skips there are not looked at).
    /// So from inside a large folio a run of `max_scan` cached pages is found one short of
    /// a miss at its end, and async readahead of interleaved streams gives up. (A folio of
    /// order 6 or more, stored above the leaves, is looked at in step.)
    pub(crate) fn page_cache_next_miss(&self, ino: u32, index: u64, max_scan: u64) -> u64 {
        let tree = &self.inode(ino).mapping.tree;
        let present = |i: u64| matches!(tree.lookup(i), Entry::Page(_));
        let Some(mut slot) = self.xas_load_slot(ino, index) else {
            return index;
        };
        for n in 1..max_scan {
            let i = index + n;
            slot = if slot % 64 == 63 { i } else { slot + 1 };
            if !present(slot) {
                return i;
            }
        }
        index + max_scan
    }

    /// __do_page_cache_readahead: allocate the missing pages of [offset, offset+nr) within
    /// i_size, mark the one at nr − lookahead with PG_readahead, and read them; a charge
    /// that would sleep ends it. Returns pages submitted.
    pub fn __do_page_cache_readahead(
        &mut self,
        ino: u32,
        offset: u64,
        nr: u64,
        lookahead: u64,
    ) -> u64 {
        let w = ra_pages_window(offset, nr, lookahead);
        self.ra_alloc_pages(ino, None, w, false, RaSleep::Never)
            .unwrap_or_default()
    }

    /// __ext4_get_inode_loc's reads of an inode-table window from 6.7
    /// (`itable-readahead-nowait`, "ext4: use bdev_getblk() to avoid memory reclaim in
    /// readahead path"): sb_getblk creates the block the lookup needs first (the buffer
    /// cache's allocation, without __GFP_FS; its charge may reclaim), then the window loop's
    /// ext4_sb_breadahead_unmovable creates each other missing block of `(first, nr)` with
    /// bdev_getblk(GFP_NOWAIT): a block whose page or memcg charge would need reclaim is
    /// skipped (a cgroup at its limit reads only what its charge stock and counter have room
    /// for), and the loop goes on to the next. The blocks created are read under one plug,
    /// contiguous ones in one request. Returns the pages submitted.
    pub(crate) fn itable_readahead(&mut self, table: u32, block: u64, first: u64, nr: u64) -> u64 {
        let prev = self.enter(KFunc::PageCacheReadahead);
        let mut pages = self.take_ra_list();
        let memcg = self.current_memcg();
        // The needed block: as the window's blocks were before 6.7 (a failed charge leaves
        // it to meta_bread's read path, which allocates it as __GFP_NOFAIL must).
        let needed = Gfp {
            noretry: true,
            fs: false,
            ..Gfp::KERNEL
        };
        if !matches!(self.tree_walk_lookup(table, block), Entry::Page(_)) {
            if let Ok(p) = self.alloc_page_charged(needed, memcg) {
                pages.push((block, p));
            }
        }
        for idx in first..first + nr {
            if idx == block {
                continue;
            }
            if let Entry::Page(_) = self.tree_walk_lookup(table, idx) {
                continue;
            }
            if let Ok(p) = self.alloc_page_charged(Gfp::NOWAIT, memcg) {
                pages.push((idx, p));
            }
        }
        pages.sort_unstable_by_key(|&(idx, _)| idx);
        let n = pages.len() as u64;
        self.count_cache_misses(n);
        self.read_pages(table, &pages);
        self.give_ra_list(pages);
        self.leave(prev);
        n
    }

    /// do_page_cache_ra for a file's readahead state `ra`: [`Sim::__do_page_cache_readahead`]
    /// whose charge may sleep under [`RaSleep::Read`] or [`RaSleep::Fault`] (leaving
    /// `ra.resume`).
    pub(crate) fn do_page_cache_ra(
        &mut self,
        ino: u32,
        ra: &mut RaState,
        offset: u64,
        nr: u64,
        lookahead: u64,
        sleep: RaSleep,
    ) -> Result<u64, Wait> {
        let w = ra_pages_window(offset, nr, lookahead);
        self.ra_alloc_pages(ino, Some(ra), w, false, sleep)
    }

    /// The loop of __do_page_cache_readahead from `w.next` to `w.limit` (within i_size):
    /// allocate each missing page, mark the one at `w.mark`, read them. `retried`: the
    /// first allocation's charge already slept once (it gives up rather than sleep
    /// again). A charge that must sleep under [`RaSleep::Read`] or [`RaSleep::Fault`]
    /// (not the retried one) stops the loop, leaves `ra.resume` and returns the wait.
    fn ra_alloc_pages(
        &mut self,
        ino: u32,
        ra: Option<&mut RaState>,
        w: RaResume,
        retried: bool,
        sleep: RaSleep,
    ) -> Result<u64, Wait> {
        debug_assert!(
            !self.inode(ino).mapping.swapbacked,
            "tmpfs has no readahead (its value entries are swap entries)"
        );
        let prev = self.enter(KFunc::PageCacheReadahead);
        let size = self.inode(ino).size;
        // A scratch list of the simulation's (a readahead nested in this one, from a step
        // run while reclaim waits for IPIs, takes another).
        let mut pages = self.take_ra_list();
        let mut slept = None;
        if size > 0 {
            let end_index = (size - 1) >> PAGE_SHIFT;
            // readahead_gfp_mask; from 5.8 under memalloc_nofs_save
            // (page_cache_ra_unbounded, `readahead-nofs`); the inode table's blocks are the
            // buffer cache's, allocated without __GFP_FS in every era.
            let gfp = Gfp {
                noretry: true,
                fs: !self.features.readahead_nofs && !self.is_inode_table(ino),
                ..Gfp::KERNEL
            };
            let may_sleep = sleep != RaSleep::Never && ra.is_some();
            let mut first = true;
            for idx in w.next..=w.limit {
                if idx > end_index {
                    break;
                }
                if let Entry::Page(_) = self.tree_walk_lookup(ino, idx) {
                    continue;
                }
                let memcg = self.current_memcg();
                let p = match self.alloc_page_charged(gfp, memcg) {
                    Ok(p) => p,
                    Err(crate::mm::page_alloc::AllocError::Wait(wait))
                        if may_sleep && !(retried && first) =>
                    {
                        slept = Some((idx, wait));
                        break;
                    }
                    Err(_) => break,
                };
                first = false;
                // (No marker when the lookahead is longer than the read: page_cache_ra_order's
                // fallback after a partial window.)
                if idx == w.mark {
                    self.__SetPageReadahead(p);
                }
                pages.push((idx, p));
            }
        }
        let n = pages.len() as u64;
        self.count_cache_misses(n);
        self.read_pages(ino, &pages);
        self.give_ra_list(pages);
        self.leave(prev);
        if let Some((next, wait)) = slept {
            if let Some(ra) = ra {
                ra.resume = Some(RaResume { next, ..w });
            }
            return Err(wait);
        }
        Ok(n)
    }

    /// read_pages: add each page — or large folio (`large-folios`), given by its head — to
    /// the cache (locked) and read it; contiguous pages with data on the device share one
    /// request; holes (a folio all holes) are zero-filled without IO. Submitting the reads
    /// of a batch holding a refaulted workingset page is a memory stall
    /// (rac->_workingset: psi_memstall_enter around ->readahead), from the first request
    /// after such a page was added. Returns the pages added.
    fn read_pages(&mut self, ino: u32, pages: &[(u64, Pfn)]) -> u64 {
        let mut run = self.take_pfn_buf();
        let mut run_next = u64::MAX;
        let mut workingset = false;
        let mut stalled: Option<bool> = None;
        let mut added = 0;
        // The block device's pages (the filesystem's hidden metadata file) are created one
        // at a time by __getblk_slow, each looked up before the next is added.
        let getblk = self.is_inode_table(ino);
        for &(idx, p) in pages {
            let nr = self.folio_nr_pages(p);
            let r = if nr == 1 {
                self.add_to_page_cache_lru(p, ino, idx)
            } else {
                self.add_folio_to_page_cache_lru(p, ino, idx)
            };
            if r.is_err() {
                self.put_page(p);
                continue;
            }
            added += nr;
            if getblk {
                self.getblk_created(p);
            }
            workingset |= self.mem[p as usize].test(pg::WORKINGSET);
            self.set_dropbehind_if_uncached(p); // ractl->dropbehind
                                                // The allocation reference is dropped after insertion (the cache holds one).
            self.put_page(p);
            let hole = if nr == 1 {
                self.inode(ino).disk_at(idx) == 0
            } else {
                (idx..idx + nr).all(|i| self.inode(ino).disk_at(i) == 0)
            };
            if hole {
                self.readpage_hole(p);
                continue;
            }
            if idx != run_next && !run.is_empty() {
                if workingset && stalled.is_none() {
                    stalled = Some(self.psi_memstall_enter());
                }
                let r = std::mem::replace(&mut run, self.take_pfn_buf());
                self.submit_read(ino, r);
            }
            run.push(p);
            self.folio_tails(p, &mut run);
            run_next = idx + nr;
        }
        if run.is_empty() {
            self.give_pfn_buf(run);
        } else {
            if workingset && stalled.is_none() {
                stalled = Some(self.psi_memstall_enter());
            }
            self.submit_read(ino, run);
        }
        if let Some(was) = stalled {
            self.psi_memstall_leave(was);
        }
        added
    }

    /// A hole (or a tmpfs page never written): zero-fill (each page of a large folio),
    /// uptodate, unlock — no IO.
    fn readpage_hole(&mut self, pfn: Pfn) {
        self.charge_bulk_store(self.costs.page_zero_ps, PAGE_SIZE);
        self.mem[pfn as usize].version = 0;
        if self.mem[pfn as usize].test(pg::HEAD) {
            let mut tails = self.take_pfn_buf();
            self.folio_tails(pfn, &mut tails);
            for &t in &tails {
                self.charge_bulk_store(self.costs.page_zero_ps, PAGE_SIZE);
                self.mem[t as usize].version = 0;
            }
            self.give_pfn_buf(tails);
        }
        self.SetPageUptodate(pfn);
        self.unlock_page(pfn);
    }

    /// ->readpage on a locked page in the cache: start the read (or zero a hole). Starting
    /// the read of a refaulted workingset page is a memory stall (filemap_read_folio).
    pub fn readpage_locked(&mut self, ino: u32, pfn: Pfn) {
        let prev = self.enter(KFunc::Readpage);
        if self.PageError(pfn) {
            self.ClearPageError(pfn); // the caller retries a read that failed
        }
        let idx = self.mem[pfn as usize].index;
        if self.inode(ino).disk_at(idx) == 0 {
            self.readpage_hole(pfn);
        } else {
            let workingset = self.mem[pfn as usize].test(pg::WORKINGSET);
            let stalled = workingset.then(|| self.psi_memstall_enter());
            // A large folio is read whole (its head first: the completion of the head
            // marks it uptodate).
            let mut pages = self.pfn_buf_of(pfn);
            self.folio_tails(pfn, &mut pages);
            self.submit_read(ino, pages);
            if let Some(was) = stalled {
                self.psi_memstall_leave(was);
            }
        }
        self.leave(prev);
    }

    /// submit_bio for a read of contiguous pages of one inode.
    pub fn submit_read(&mut self, ino: u32, pages: Vec<Pfn>) {
        let fs = self.inode(ino).fs;
        let Some(dev) = self.fss[fs].device else {
            // No device (tmpfs): nothing to read; zero-fill.
            for p in pages {
                self.readpage_hole(p);
            }
            return;
        };
        let first = self.mem[pages[0] as usize].index;
        self.vmstat.add(
            VmItem::Pgpgin,
            (pages.len() as u64 * PAGE_SIZE / 1024) as i64,
        );
        self.submit_bio(
            IoRequest {
                dev,
                kind: IoKind::Read,
                ino,
                pages,
                cpu: self.cur.cpu,
            },
            BlockDevice::sector_of(ino, first),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pages_window_spans_its_pages_and_marks_nr_minus_lookahead() {
        let w = ra_pages_window(100, 8, 3);
        assert_eq!((w.next, w.limit, w.mark, w.order), (100, 107, 105, 0));
        // The whole window asynchronous: the marker on its first page.
        assert_eq!(ra_pages_window(100, 8, 8).mark, 100);
        // No lookahead, or one longer than the window: no marker.
        assert_eq!(ra_pages_window(100, 8, 0).mark, u64::MAX);
        assert_eq!(ra_pages_window(100, 8, 9).mark, u64::MAX);
        // Nothing to read: no page at all, wherever it starts.
        for offset in [0, 5] {
            let w = ra_pages_window(offset, 0, 0);
            assert!((w.next..=w.limit).next().is_none(), "{w:?}");
        }
    }
}
