//! The cost profile: every picosecond a virtual CPU spends is attributed to the kernel
//! function (or user-space / idle bucket) that was running, under the kernel's name. This
//! is an oprofile-like self-time profile: a function's entry in the table counts only the
//! primitives charged while it was the innermost running function.

/// Defines the `KFunc` enum and its kernel names in one table.
macro_rules! kfuncs {
    ($($variant:ident => $name:literal,)*) => {
        /// A kernel function (or pseudo-function) that costs are attributed to.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u16)]
        pub enum KFunc { $(
            #[doc = concat!("`", $name, "`")]
            $variant,
        )* }

        impl KFunc {
            /// Every function, in declaration order.
            pub const ALL: &'static [KFunc] = &[$(KFunc::$variant,)*];
            /// The kernel's name for this function.
            pub fn name(self) -> &'static str {
                match self { $(KFunc::$variant => $name,)* }
            }
        }
    };
}

kfuncs! {
    User => "[user]",
    SysEnter => "entry_SYSCALL_64",
    PageFault => "page_fault",
    Schedule => "__schedule",
    ReadZero => "read_zero",
    VfsWrite => "vfs_write",
    VfsRead => "vfs_read",
    GenericPerformWrite => "generic_perform_write",
    GrabCachePageWriteBegin => "grab_cache_page_write_begin",
    ShmemWriteBegin => "shmem_write_begin",
    ShmemWriteEnd => "shmem_write_end",
    BlockWriteEnd => "block_write_end",
    IovIterCopyFromUserAtomic => "iov_iter_copy_from_user_atomic",
    CopyPageToIter => "copy_page_to_iter",
    PagecacheGetPage => "pagecache_get_page",
    FindGetEntry => "find_get_entry",
    AddToPageCacheLru => "add_to_page_cache_lru",
    PageCacheTreeInsert => "page_cache_tree_insert",
    MarkPageAccessed => "mark_page_accessed",
    InitPageAccessed => "init_page_accessed",
    LruCacheAdd => "__lru_cache_add",
    PagevecLruAdd => "__pagevec_lru_add_fn",
    ActivatePage => "__activate_page",
    LruAddDrain => "lru_add_drain_cpu",
    AllocPages => "get_page_from_freelist",
    FreeHotColdPage => "free_hot_cold_page",
    ReleasePages => "release_pages",
    ClearPage => "clear_page",
    LockPage => "__lock_page",
    UnlockPage => "unlock_page",
    SetPageDirty => "__set_page_dirty_nobuffers",
    AccountPageDirtied => "account_page_dirtied",
    BalanceDirtyPages => "balance_dirty_pages_ratelimited",
    GenericFileReadIter => "generic_file_read_iter",
    PageCacheReadahead => "__do_page_cache_readahead",
    Readpage => "mpage_readpage",
    Writepages => "write_cache_pages",
    Writepage => "__writepage",
    SubmitBio => "submit_bio",
    EndPageWriteback => "end_page_writeback",
    EndBioRead => "mpage_end_io",
    TestClearPageWriteback => "test_clear_page_writeback",
    FileFdatawait => "filemap_fdatawait_range",
    VfsFsync => "vfs_fsync_range",
    DoUnlinkat => "do_unlinkat",
    DoSysOpen => "do_sys_open",
    Evict => "evict",
    TruncateInodePages => "truncate_inode_pages_range",
    DeleteFromPageCache => "__delete_from_page_cache",
    WbWorkfn => "wb_workfn",
    Ext4DirtyInode => "ext4_dirty_inode",
    Jbd2Commit => "jbd2_journal_commit_transaction",
    Kswapd => "kswapd",
    BalancePgdat => "balance_pgdat",
    TryToFreePages => "try_to_free_pages",
    ShrinkNode => "shrink_zone",
    ShrinkLruvec => "shrink_lruvec",
    GetScanCount => "get_scan_count",
    IsolateLruPages => "isolate_lru_pages",
    ShrinkActiveList => "shrink_active_list",
    ShrinkInactiveList => "shrink_inactive_list",
    ShrinkPageList => "shrink_page_list",
    PageReferenced => "page_referenced",
    RemoveMapping => "__remove_mapping",
    WorkingsetEviction => "workingset_eviction",
    WorkingsetRefault => "workingset_refault",
    PutbackInactivePages => "putback_inactive_pages",
    MoveActivePagesToLru => "move_active_pages_to_lru",
    Pageout => "pageout",
    AddToSwap => "add_to_swap",
    SwapReadpage => "swap_readpage",
    SwapinReadahead => "swapin_readahead",
    DoSwapPage => "do_swap_page",
    DoAnonymousPage => "do_anonymous_page",
    OomKill => "oom_kill_process",
    ScanShadowNodes => "scan_shadow_nodes",
    ShrinkSlab => "shrink_slab",
    VfsLookup => "lookup_slow",
    ShmemWritepage => "shmem_writepage",
    ShmemSwapin => "shmem_swapin_folio",
    SwapWritepage => "swap_writepage",
    FlushTlbOthers => "native_flush_tlb_others",
    FlushTlbFunc => "flush_tlb_func",
    FlushTlbPage => "flush_tlb_page",
    HandleMmFault => "handle_mm_fault",
    FilemapFault => "filemap_fault",
    ZapPteRange => "zap_pte_range",
    UnmapMappingRange => "unmap_mapping_range",
    TryToUnmapOne => "try_to_unmap_one",
    MemCgroupCharge => "try_charge_memcg",
    MemCgroupHandleOverHigh => "mem_cgroup_handle_over_high",
    TryToFreeMemCgroupPages => "try_to_free_mem_cgroup_pages",
    Idle => "[idle]",
    LruGenShrinkNode => "lru_gen_shrink_node",
    TryToShrinkLruvec => "try_to_shrink_lruvec",
    EvictFolios => "evict_folios",
    ScanFolios => "scan_folios",
    TryToIncMaxSeq => "try_to_inc_max_seq",
    WalkMm => "walk_pte_range",
    IncMinSeq => "inc_min_seq",
    LruGenLookAround => "lru_gen_look_around",
    LruGenAgeNode => "lru_gen_age_node",
    MemoryReclaim => "memory_reclaim",
    MemoryHighWrite => "memory_high_write",
    MemoryMaxWrite => "memory_max_write",
    MlockFixup => "mlock_fixup",
    MlockFolio => "mlock_folio",
    MunlockFolio => "munlock_folio",
    CopyProcess => "copy_process",
    CopyPteRange => "copy_pte_range",
    ZramWritePage => "zram_write_page",
    ZramReadPage => "zram_read_page",
    ZswapStore => "zswap_store",
    ZswapLoad => "zswap_load",
    ZswapWritebackEntry => "zswap_writeback_entry",
    ZswapShrinkWorker => "shrink_worker",
    GenericFadvise => "generic_fadvise",
    InvalidateMappingPages => "invalidate_mapping_pages",
    LruDeactivateFile => "lru_deactivate_file_fn",
    ForcePageCacheReadahead => "force_page_cache_ra",
    DoMadvise => "do_madvise",
    MadviseColdOrPageout => "madvise_cold_or_pageout_pte_range",
    ReclaimPages => "reclaim_pages",
    LruDeactivate => "lru_deactivate_fn",
    PageMkclean => "page_mkclean_one",
    SplitFolio => "__split_huge_page",
}

/// Accumulated cost per kernel function, picoseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// One slot per `KFunc`, inline: `add` is on every charge, and an array as long as the
    /// enum needs neither a pointer load nor a bounds check.
    ps: [u64; NR_KFUNCS],
}

/// Number of `KFunc`s.
const NR_KFUNCS: usize = KFunc::ALL.len();

impl Default for Profile {
    fn default() -> Self {
        Profile { ps: [0; NR_KFUNCS] }
    }
}

impl Profile {
    /// Add `ps` picoseconds to `f`.
    #[inline(always)]
    pub fn add(&mut self, f: KFunc, ps: u64) {
        self.ps[f as usize] += ps;
    }
    /// Total attributed to `f`, ps.
    pub fn get(&self, f: KFunc) -> u64 {
        self.ps[f as usize]
    }
    /// Total of every function except idle, ps (the oprofile sample base).
    pub fn busy_total_ps(&self) -> u64 {
        KFunc::ALL
            .iter()
            .filter(|f| **f != KFunc::Idle)
            .map(|f| self.get(*f))
            .sum()
    }
    /// Non-zero entries, in a deterministic order (largest first, then by name).
    pub fn entries(&self) -> Vec<(KFunc, u64)> {
        let mut v: Vec<(KFunc, u64)> = KFunc::ALL
            .iter()
            .map(|f| (*f, self.get(*f)))
            .filter(|(_, ps)| *ps > 0)
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.name().cmp(b.0.name())));
        v
    }
}
