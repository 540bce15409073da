//! Counters under their /proc/vmstat names: gauges (nr_*) and events (pg*, allocstall, …).
//!
//! In the kernel these are per-zone/per-node per-CPU deltas folded into global counters;
//! the simulation is single-threaded on the host, so one global array is exact.

/// Defines `VmItem` and the /proc/vmstat names in one table.
macro_rules! vm_items {
    ($($variant:ident => $name:literal,)*) => {
        /// A /proc/vmstat counter.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum VmItem { $(
            #[doc = $name]
            $variant,
        )* }
        impl VmItem {
            /// Every counter, in /proc/vmstat order.
            pub const ALL: &'static [VmItem] = &[$(VmItem::$variant,)*];
            /// The /proc/vmstat name.
            pub fn name(self) -> &'static str {
                match self { $(VmItem::$variant => $name,)* }
            }
        }
    };
}

vm_items! {
    NrFreePages => "nr_free_pages",
    NrInactiveAnon => "nr_inactive_anon",
    NrActiveAnon => "nr_active_anon",
    NrInactiveFile => "nr_inactive_file",
    NrActiveFile => "nr_active_file",
    NrUnevictable => "nr_unevictable",
    NrMlock => "nr_mlock",
    NrAnonPages => "nr_anon_pages",
    NrMapped => "nr_mapped",
    NrFilePages => "nr_file_pages",
    NrPageTablePages => "nr_page_table_pages",
    NrSlabReclaimable => "nr_slab_reclaimable",
    NrSlabUnreclaimable => "nr_slab_unreclaimable",
    NrDirty => "nr_dirty",
    NrWriteback => "nr_writeback",
    NrShmem => "nr_shmem",
    NrSwapcached => "nr_swapcached",
    NrIsolatedAnon => "nr_isolated_anon",
    NrIsolatedFile => "nr_isolated_file",
    NrDirtied => "nr_dirtied",
    NrWritten => "nr_written",
    NrThrottledWritten => "nr_throttled_written",
    NrVmscanWrite => "nr_vmscan_write",
    NrDirtyThreshold => "nr_dirty_threshold",
    NrDirtyBackgroundThreshold => "nr_dirty_background_threshold",
    Pgpgin => "pgpgin",
    Pgpgout => "pgpgout",
    Pswpin => "pswpin",
    Pswpout => "pswpout",
    PgallocNormal => "pgalloc_normal",
    Pgfree => "pgfree",
    Pgactivate => "pgactivate",
    Pgdeactivate => "pgdeactivate",
    Pgfault => "pgfault",
    Pgmajfault => "pgmajfault",
    Pgrefill => "pgrefill",
    PgstealKswapd => "pgsteal_kswapd",
    PgstealDirect => "pgsteal_direct",
    PgscanKswapd => "pgscan_kswapd",
    PgscanDirect => "pgscan_direct",
    PgstealProactive => "pgsteal_proactive",
    PgscanProactive => "pgscan_proactive",
    PgscanAnon => "pgscan_anon",
    PgscanFile => "pgscan_file",
    PgstealAnon => "pgsteal_anon",
    PgstealFile => "pgsteal_file",
    NrVmscanImmediateReclaim => "nr_vmscan_immediate_reclaim",
    Pginodesteal => "pginodesteal",
    KswapdInodesteal => "kswapd_inodesteal",
    SlabsScanned => "slabs_scanned",
    WorkingsetRefault => "workingset_refault",
    WorkingsetActivate => "workingset_activate",
    WorkingsetRestore => "workingset_restore",
    WorkingsetRefaultAnon => "workingset_refault_anon",
    WorkingsetRefaultFile => "workingset_refault_file",
    WorkingsetActivateAnon => "workingset_activate_anon",
    WorkingsetActivateFile => "workingset_activate_file",
    WorkingsetRestoreAnon => "workingset_restore_anon",
    WorkingsetRestoreFile => "workingset_restore_file",
    WorkingsetNodereclaim => "workingset_nodereclaim",
    Pageoutrun => "pageoutrun",
    KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly",
    KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly",
    Allocstall => "allocstall",
    Pgrotated => "pgrotated",
    Pglazyfree => "pglazyfree",
    Pglazyfreed => "pglazyfreed",
    OomKill => "oom_kill",
    UnevictablePgsCulled => "unevictable_pgs_culled",
    UnevictablePgsRescued => "unevictable_pgs_rescued",
    UnevictablePgsMlocked => "unevictable_pgs_mlocked",
    UnevictablePgsMunlocked => "unevictable_pgs_munlocked",
    UnevictablePgsCleared => "unevictable_pgs_cleared",
    UnevictablePgsStranded => "unevictable_pgs_stranded",
    NrTlbRemoteFlush => "nr_tlb_remote_flush",
    NrTlbRemoteFlushReceived => "nr_tlb_remote_flush_received",
    NrTlbLocalFlushAll => "nr_tlb_local_flush_all",
    NrTlbLocalFlushOne => "nr_tlb_local_flush_one",
    SwapRa => "swap_ra",
    SwapRaHit => "swap_ra_hit",
    Zswpin => "zswpin",
    Zswpout => "zswpout",
    Zswpwb => "zswpwb",
}

/// The counter array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmStat {
    v: Vec<i64>,
}

impl Default for VmStat {
    fn default() -> Self {
        VmStat {
            v: vec![0; VmItem::ALL.len()],
        }
    }
}

impl VmStat {
    /// __count_vm_event / __inc_zone_page_state.
    #[inline]
    pub fn inc(&mut self, i: VmItem) {
        self.v[i as usize] += 1;
    }
    /// __dec_zone_page_state.
    #[inline]
    pub fn dec(&mut self, i: VmItem) {
        self.v[i as usize] -= 1;
    }
    /// __mod_zone_page_state / __count_vm_events.
    #[inline]
    pub fn add(&mut self, i: VmItem, d: i64) {
        self.v[i as usize] += d;
    }
    /// Current value.
    #[inline]
    pub fn get(&self, i: VmItem) -> i64 {
        self.v[i as usize]
    }
    /// (name, value) pairs of the counters the kernel of `features` has in /proc/vmstat
    /// ([`in_proc_vmstat`]), in its order.
    pub fn entries_of(&self, features: &crate::sim::Features) -> Vec<(&'static str, i64)> {
        VmItem::ALL
            .iter()
            .filter(|i| in_proc_vmstat(**i, features))
            .map(|i| (i.name(), self.get(*i)))
            .collect()
    }
    /// (name, value) pairs in /proc/vmstat order.
    pub fn entries(&self) -> Vec<(&'static str, i64)> {
        VmItem::ALL
            .iter()
            .map(|i| (i.name(), self.get(*i)))
            .collect()
    }
}

/// Whether /proc/vmstat of a kernel with `features` has counter `i`. The workingset
/// counters are split by LRU type from 5.9 (`anon-workingset`, "mm: workingset: age
/// nonresident information alongside anonymous pages"): then `workingset_refault_anon` and
/// `_file`, `workingset_activate_*` and `workingset_restore_*`, and no
/// `workingset_refault`, `workingset_activate` or `workingset_restore`; before, only those
/// (`workingset_restore` from 4.20, `workingset-restore`). mmsim counts both forms in every
/// era; the run report shows the era's.
pub fn in_proc_vmstat(i: VmItem, features: &crate::sim::Features) -> bool {
    use VmItem::*;
    match i {
        WorkingsetRefault | WorkingsetActivate => !features.anon_workingset,
        WorkingsetRestore => !features.anon_workingset && features.workingset_restore,
        WorkingsetRefaultAnon
        | WorkingsetRefaultFile
        | WorkingsetActivateAnon
        | WorkingsetActivateFile
        | WorkingsetRestoreAnon
        | WorkingsetRestoreFile => features.anon_workingset,
        _ => true,
    }
}
