//! posix_fadvise (mm/fadvise.c, generic_fadvise) and the invalidation it drives
//! (invalidate_mapping_pages / mapping_try_invalidate of mm/truncate.c).
//!
//! - `normal`: the file's readahead window is the device's (`read_ahead_kb`), random mode
//!   off. `sequential`: twice the device's window, random mode off. `random`: from v2.6.33
//!   (`fadvise-random-fmode`) FMODE_RANDOM — a cache miss reads just the pages the read
//!   asks for (`force_page_cache_ra`); before, the file's window became 0 (one page per
//!   miss).
//! - `willneed`: force_page_cache_ra of the range: at most max(io_pages, ra_pages) pages
//!   from v4.10 (`io-pages-readahead`), 2 MiB before, read in 2 MiB chunks, no marker.
//! - `dontneed`: start writeback of the range's dirty pages (WB_SYNC_NONE, no wait), then
//!   invalidate its whole pages — the last one too when the range ends at a page boundary
//!   or at the end of the file. Invalidation drops a page that is clean, not under
//!   writeback, not mapped and held by nobody else (remove_mapping: no shadow entry), and
//!   clears the range's shadow entries. A page it cannot drop is deactivated (v2.6.39,
//!   `invalidate-deactivate`; `lru_deactivate_file_fn`): to the inactive tail if clean, to
//!   the inactive head with PG_reclaim if dirty or under writeback, so its writeback end
//!   rotates it to the tail; a mapped page stays where it is. A locked page is passed
//!   over, and from v5.12 (`invalidate-skips-writeback`) one under writeback too. Pages
//!   held by a CPU's LRU batch cannot go: from v3.9 (`fadvise-drain-all`) the advice drains
//!   every CPU's batches and invalidates again when fewer pages went than the range holds;
//!   from v5.7 (`fadvise-local-drain`) it drains its own CPU's batches first and every
//!   CPU's only when a page failed to go.
//!
//! A tmpfs file's backing device is noop_backing_dev_info: every advice is accepted and
//! ignored (6.x; earlier kernels tried to invalidate its always-dirty pages, which fails).

use crate::machine::profile::KFunc;
use crate::mm::page::{Pfn, PAGE_SIZE};
use crate::mm::radix_tree::Entry;
use crate::sched::TaskId;
use crate::sim::Sim;
use crate::workload::{Errno, Fadvice, OpResult};

/// LLONG_MAX: the end of a range that runs to the end of the file.
const LLONG_MAX: u64 = i64::MAX as u64;

impl Sim {
    /// posix_fadvise(fd, offset, len, advice) (ksys_fadvise64_64 → generic_fadvise).
    pub fn sys_fadvise(
        &mut self,
        tid: TaskId,
        fd: u32,
        offset: u64,
        len: u64,
        advice: Fadvice,
    ) -> OpResult {
        let Some(f) = self.fd_file(tid, fd) else {
            return OpResult::Err(Errno::EBADF);
        };
        if offset > LLONG_MAX || len > LLONG_MAX {
            return OpResult::Err(Errno::EINVAL); // a negative loff_t
        }
        let ino = f.ino;
        if self.inode(ino).mapping.swapbacked {
            return OpResult::None; // noop_backing_dev_info: the advice is ignored
        }
        let prev = self.enter(KFunc::GenericFadvise);
        // Careful about overflows; len == 0 means "to the end of the file".
        let endbyte = match offset.checked_add(len) {
            Some(e) if len > 0 && e <= LLONG_MAX => e - 1,
            _ => LLONG_MAX,
        };
        let mut ra = f.ra;
        let bdi_pages = self.file_ra_state_init(ino).ra_pages;
        match advice {
            Fadvice::Normal => {
                ra.ra_pages = bdi_pages;
                ra.random = false;
            }
            Fadvice::Random => {
                if self.features.fadvise_random_fmode {
                    ra.random = true;
                } else {
                    ra.ra_pages = 0;
                }
            }
            Fadvice::Sequential => {
                ra.ra_pages = bdi_pages * 2;
                ra.random = false;
            }
            Fadvice::Willneed => {
                let start = offset / PAGE_SIZE;
                let end = endbyte / PAGE_SIZE;
                self.force_page_cache_readahead(ino, &ra, start, end - start + 1);
            }
            Fadvice::Dontneed => self.fadvise_dontneed(ino, offset, endbyte),
        }
        let files = self.tasks[tid].tgid;
        if let Some(Some(slot)) = self.tasks[files].fds.get_mut(fd as usize) {
            slot.ra = ra;
        }
        self.leave(prev);
        OpResult::None
    }

    /// POSIX_FADV_DONTNEED of the bytes `[offset, endbyte]` (see the module comment).
    fn fadvise_dontneed(&mut self, ino: u32, offset: u64, endbyte: u64) {
        self.filemap_fdatawrite_range(ino, offset / PAGE_SIZE, endbyte / PAGE_SIZE);
        // First and last whole page: partial pages are kept, except a last one that ends
        // the file.
        let start = offset.div_ceil(PAGE_SIZE);
        let mut end = endbyte / PAGE_SIZE;
        let size = self.inode(ino).size;
        if endbyte % PAGE_SIZE != PAGE_SIZE - 1 && endbyte.wrapping_add(1) != size {
            if end == 0 {
                return;
            }
            end -= 1;
        }
        if end < start {
            return;
        }
        if self.features.fadvise_local_drain {
            self.lru_add_drain();
            let mut nr_failed = 0;
            self.mapping_try_invalidate(ino, start, end, Some(&mut nr_failed));
            if nr_failed > 0 {
                self.lru_add_drain_all();
                self.mapping_try_invalidate(ino, start, end, None);
            }
        } else {
            let count = self.mapping_try_invalidate(ino, start, end, None);
            if self.features.fadvise_drain_all && count < end - start + 1 {
                self.lru_add_drain_all();
                self.mapping_try_invalidate(ino, start, end, None);
            }
        }
    }

    /// invalidate_mapping_pages(mapping, start, end) (mapping_try_invalidate with
    /// `nr_failed`): drop the unused clean pages of `[start, end]` and its shadow entries;
    /// deactivate the pages that could not go, counting them in `nr_failed`. Returns the
    /// pages dropped.
    pub fn mapping_try_invalidate(
        &mut self,
        ino: u32,
        start: u64,
        end: u64,
        mut nr_failed: Option<&mut u64>,
    ) -> u64 {
        let prev = self.enter(KFunc::InvalidateMappingPages);
        let mut pvec = Vec::with_capacity(self.pagevec_size());
        let mut count = 0;
        let mut index = start;
        while index <= end
            && self.find_get_entries(ino, index, (end - index).saturating_add(1), &mut pvec) > 0
        {
            for &(idx, e) in pvec.iter() {
                index = idx;
                if idx > end {
                    break;
                }
                let pfn = match e {
                    Entry::Page(pfn) => pfn,
                    Entry::Shadow(_) => {
                        self.invalidate_exceptional_entry(ino, idx, e);
                        continue;
                    }
                    Entry::Empty => continue,
                };
                if !self.trylock_page(pfn) {
                    continue;
                }
                if self.features.invalidate_skips_writeback
                    && (self.mem[pfn as usize].mapping != ino || self.PageWriteback(pfn))
                {
                    // find_lock_entries leaves it out of the batch.
                    self.unlock_page(pfn);
                    continue;
                }
                let dropped = self.mapping_evict_page(ino, pfn);
                self.unlock_page(pfn);
                if dropped {
                    count += 1;
                } else {
                    if self.features.invalidate_deactivate {
                        self.deactivate_file_page(pfn);
                    }
                    if let Some(n) = nr_failed.as_deref_mut() {
                        *n += 1;
                    }
                }
            }
            self.pagevec_release_entries(&pvec);
            index = index.wrapping_add(1);
            if index == 0 {
                break; // past the last index
            }
        }
        self.leave(prev);
        count
    }

    /// mapping_evict_folio / invalidate_inode_page (page locked, one lookup reference
    /// held): remove a clean page that is not under writeback, not mapped and not held by
    /// anyone else from the page cache (remove_mapping: no shadow entry); its last
    /// reference, the lookup's, frees it.
    fn mapping_evict_page(&mut self, ino: u32, pfn: Pfn) -> bool {
        let p = &self.mem[pfn as usize];
        if p.mapping != ino || self.PageDirty(pfn) || self.PageWriteback(pfn) || p.mapped() {
            return false;
        }
        if p.flags & crate::fs::jbd2::JBD_HELD != 0 {
            return false; // filemap_release_folio fails: the journal holds its buffer
        }
        if !self.__remove_mapping(pfn, None) {
            return false; // another reference: an LRU batch's, or a reader's
        }
        self.mem[pfn as usize].refcount = 1; // remove_mapping's folio_ref_unfreeze(folio, 1)
        true
    }
}
