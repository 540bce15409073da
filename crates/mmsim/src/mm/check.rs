//! The invariant checker (DEBUG_VM-style), run after every step with `--check`.
//!
//! It observes from outside: the kernel paths carry no checking logic. Checked:
//! - every page on an LRU list has PG_lru, its PG_active / swap-backed / unevictable flags
//!   agree with the list, its node is the list's node, and it is on exactly one list;
//! - list lengths equal the list heads' counts and the nr_* vmstat gauges;
//! - mlock: nr_mlock equals the PG_mlocked pages, and an mlocked page on a list is on the
//!   unevictable list;
//! - refcounts are ≥ 0; a free page (PG_buddy) has refcount 0, no mapping, no LRU, is on its
//!   node's free list and in no page-cache tree; nr_free_pages equals the free lists;
//! - every page-cache entry points back: the page's mapping and index equal the slot's;
//!   nrpages of each tree is the number of pages whose mapping is that inode;
//! - the radix trees' own invariants; the dirty and writeback gauges match the page flags;
//! - swap: every PG_swapcache page is swap-backed, has no file mapping (its owner may be
//!   unknown: a swap-in nobody has mapped yet has none), is uptodate unless its read is in
//!   flight (locked) or failed, and its slot points back; every swap-cache slot holds such a
//!   page; the free-slot count equals the slots with no PTE reference and no cached page;
//!   each swap cluster's count equals its slots in use; zram's stored slots are in use
//!   and its pool is the pages they need (`mm::zram::check_zram`); zswap's entries sit on
//!   slots in use and on their LRUs, its pool and memcg charges match them
//!   (`mm::zswap::check_zswap`).
//!
//! [`check_ptes`] checks the page-table side — every PTE against its VMA, its page and the
//! rmap; mapcounts, rss counters, nr_mapped and nr_anon_pages recomputed from the PTEs;
//! nothing mapped at or beyond the end of a file. It walks every page table, so it is not
//! part of `check_all` (not run by `--check`); tests call it.

use crate::mm::node::LruList;
use crate::mm::page::{pg, Pfn, NO_MAPPING};
use crate::mm::radix_tree::Entry;
use crate::mm::swap_cluster::SWAPFILE_CLUSTER;
use crate::mm::vmstat::VmItem;
use crate::sched::TaskState;
use crate::sim::Sim;

/// Check every invariant; the first violation is returned as a readable message.
pub fn check_all(sim: &Sim) -> Result<(), String> {
    check_memcgs(sim)?;
    check_shadow_lists(sim)?;
    crate::mm::slab::check_vfs(sim)?;
    crate::fs::jbd2::check_journals(sim)?;
    crate::mm::zram::check_zram(sim)?;
    crate::mm::zswap::check_zswap(sim)?;
    check_psi_flags(sim)?;
    check_mm_users(sim)?;
    if let Some(check) = sim.ops.check {
        check(sim)?;
    }
    let n = sim.mem.len();
    let mut on_list = vec![false; n];
    let mut lru_totals = [0i64; 5];
    for node in &sim.nodes {
        for memcg in 0..sim.nr_memcgs() as crate::mm::memcontrol::MemcgId {
            for lru in LruList::ALL {
                let head = &sim.lruvec(memcg, node.id).lists[lru as usize];
                head.check(&sim.mem).map_err(|e| {
                    format!("node {} memcg {} list {:?}: {}", node.id, memcg, lru, e)
                })?;
                let mut count = 0u64;
                for pfn in head.iter() {
                    let p = &sim.mem[pfn as usize];
                    // A large folio's head counts its pages.
                    count += p.nr_pages();
                    if count > head.len {
                        return Err(format!(
                            "node {} list {:?} longer than its count {}",
                            node.id, lru, head.len
                        ));
                    }
                    if on_list[pfn as usize] {
                        return Err(format!("pfn {} is on two lists", pfn));
                    }
                    on_list[pfn as usize] = true;
                    if !p.test(pg::LRU) {
                        return Err(format!(
                            "pfn {} on {:?} without PG_lru (flags {})",
                            pfn,
                            lru,
                            p.flag_names()
                        ));
                    }
                    if sim.page_lru(pfn) != lru {
                        return Err(format!(
                            "pfn {} on {:?} but its flags say {:?} ({})",
                            pfn,
                            lru,
                            sim.page_lru(pfn),
                            p.flag_names()
                        ));
                    }
                    if p.node as usize != node.id {
                        return Err(format!(
                            "pfn {} of node {} on node {}'s list",
                            pfn, p.node, node.id
                        ));
                    }
                    // An uncharged page (tests that allocate directly) lives on the root's.
                    let owner = if p.memcg == crate::mm::memcontrol::NO_MEMCG {
                        crate::mm::memcontrol::ROOT_MEM_CGROUP
                    } else {
                        p.memcg
                    };
                    if owner != memcg {
                        return Err(format!(
                            "pfn {} charged to memcg {} on memcg {}'s lruvec",
                            pfn, p.memcg, memcg
                        ));
                    }
                }
                if count != head.len {
                    return Err(format!(
                        "node {} list {:?} has {} pages, count says {}",
                        node.id, lru, count, head.len
                    ));
                }
                lru_totals[lru as usize] += count as i64;
            }
            let g = &sim.lruvec(memcg, node.id).lrugen;
            for (i, n) in g.lru_size.iter().enumerate() {
                lru_totals[i] += *n as i64;
            }
            for lists in &g.folios {
                for head in lists {
                    for pfn in head.iter() {
                        if on_list[pfn as usize] {
                            return Err(format!("pfn {} is on two lists", pfn));
                        }
                        on_list[pfn as usize] = true;
                    }
                }
            }
        }
        let mut free = 0u64;
        for pfn in node.free_list.iter() {
            free += 1;
            if free > node.free_list.len {
                return Err(format!("node {} free list longer than its count", node.id));
            }
            let p = &sim.mem[pfn as usize];
            if !p.test(pg::BUDDY) || p.refcount != 0 || p.mapping != NO_MAPPING || p.test(pg::LRU) {
                return Err(format!(
                    "free pfn {} is busy: flags {} count {} mapping {}",
                    pfn,
                    p.flag_names(),
                    p.refcount,
                    p.mapping
                ));
            }
            if on_list[pfn as usize] {
                return Err(format!("free pfn {} is also on an LRU list", pfn));
            }
            on_list[pfn as usize] = true;
        }
    }
    for lru in LruList::ALL {
        let v = sim.vmstat.get(lru.vmstat_item());
        if v != lru_totals[lru as usize] {
            return Err(format!(
                "{} = {} but the lists hold {}",
                lru.vmstat_item().name(),
                v,
                lru_totals[lru as usize]
            ));
        }
    }
    let free_total: u64 = sim.nodes.iter().map(|n| n.free_list.len).sum();
    if sim.vmstat.get(VmItem::NrFreePages) != free_total as i64 {
        return Err(format!(
            "nr_free_pages = {} but the free lists hold {}",
            sim.vmstat.get(VmItem::NrFreePages),
            free_total
        ));
    }
    let mut dirty = 0i64;
    let mut writeback = 0i64;
    let mut file_writeback = 0i64;
    let mut table_frames = 0i64;
    let mut mlocked = 0i64;
    // NR_FILE_DIRTY + NR_WRITEBACK per node (node_dirty_ok's count).
    let mut node_dirty_writeback = vec![0i64; sim.nodes.len()];
    for (pfn, p) in sim.mem.iter().enumerate() {
        if p.refcount < 0 {
            return Err(format!("pfn {} has refcount {}", pfn, p.refcount));
        }
        if p.test(pg::BUDDY) {
            if p.refcount != 0 || p.mapping != NO_MAPPING {
                return Err(format!(
                    "free pfn {} has refcount {} mapping {}",
                    pfn, p.refcount, p.mapping
                ));
            }
            continue;
        }
        if p.test(pg::HEAD) || p.test(pg::TAIL) {
            check_folio(sim, pfn as Pfn)?;
            if p.test(pg::TAIL) {
                continue; // no reference or list of its own
            }
        }
        if p.refcount == 0 {
            return Err(format!(
                "pfn {} is neither free nor referenced (flags {})",
                pfn,
                p.flag_names()
            ));
        }
        if p.test(pg::WRITEBACK) {
            writeback += p.nr_pages() as i64; // a folio's writeback counts its pages
            node_dirty_writeback[p.node as usize] += p.nr_pages() as i64;
        }
        if p.test(pg::TABLE) {
            table_frames += 1;
        }
        if p.test(pg::LRU) && !on_list[pfn] {
            return Err(format!("pfn {} has PG_lru but is on no list", pfn));
        }
        if p.test(pg::MLOCKED) {
            mlocked += 1;
            if p.test(pg::LRU) && !p.test(pg::UNEVICTABLE) {
                return Err(format!(
                    "mlocked pfn {} is on an evictable list ({})",
                    pfn,
                    p.flag_names()
                ));
            }
        }
        if p.test(pg::SWAPCACHE) {
            let ok = sim
                .swap
                .as_ref()
                .is_some_and(|s| s.cache.get(p.private as usize) == Some(&(pfn as u32)));
            if !ok {
                return Err(format!(
                    "pfn {} has PG_swapcache but slot {} does not point back",
                    pfn, p.private
                ));
            }
            let anon_or_none =
                p.mapping == NO_MAPPING || p.mapping & crate::mm::rmap::ANON_MAPPING != 0;
            if !p.test(pg::SWAPBACKED) || !anon_or_none {
                return Err(format!(
                    "swap-cache pfn {} is not an anonymous page: flags {} mapping {:#x}",
                    pfn,
                    p.flag_names(),
                    p.mapping
                ));
            }
            if !p.test(pg::UPTODATE) && !p.test(pg::LOCKED) && !p.test(pg::ERROR) {
                return Err(format!(
                    "swap-cache pfn {} (slot {}) is not uptodate and no read is in flight ({})",
                    pfn,
                    p.private,
                    p.flag_names()
                ));
            }
        }
        if p.mapping & crate::mm::rmap::ANON_MAPPING != 0 {
            let av = p.mapping & !crate::mm::rmap::ANON_MAPPING;
            // A mapped anonymous page is mapped at its index by a member of its anon_vma.
            let found = || {
                sim.anon_vma_members(av).any(|mm| {
                    sim.mms
                        .get(mm as usize)
                        .and_then(|m| m.as_ref())
                        .is_some_and(|m| {
                            let pte = m.pgtable.get(p.index);
                            pte & crate::mm::memory::pte::PRESENT != 0
                                && crate::mm::memory::pte::pfn(pte) == pfn as u32
                        })
                })
            };
            if p.mapped() && !found() {
                let members: Vec<u32> = sim.anon_vma_members(av).collect();
                return Err(format!(
                    "anon pfn {} (anon_vma {}, members {:?}) is mapped but no member maps \
                     it at vpn {:#x}",
                    pfn, av, members, p.index
                ));
            }
        } else if p.mapping != NO_MAPPING {
            let Some(inode) = sim.inodes.get(p.mapping as usize).and_then(|i| i.as_ref()) else {
                return Err(format!(
                    "pfn {} points at a dead mapping {}",
                    pfn, p.mapping
                ));
            };
            if inode.mapping.tree.lookup(p.index) != Entry::Page(pfn as u32) {
                return Err(format!(
                    "pfn {} says inode {} index {} but the tree slot disagrees",
                    pfn, p.mapping, p.index
                ));
            }
            if inode.mapping.account_dirty && p.test(pg::DIRTY) {
                dirty += p.nr_pages() as i64;
                node_dirty_writeback[p.node as usize] += p.nr_pages() as i64;
            }
            if inode.mapping.account_dirty
                && p.test(pg::WRITEBACK)
                && sim.fss[inode.fs].device.is_some()
            {
                file_writeback += p.nr_pages() as i64;
            }
        }
    }
    // Page-table pages: each live mm's tables are frames of the PG_table type, referenced
    // once, on no LRU and of no mapping, each under a VMA (munmap frees the others);
    // nr_page_table_pages counts them all.
    let mut tables = 0i64;
    for m in sim.mms.iter().flatten() {
        for (pmd, pfn) in m.pgtable.tables() {
            if !m.vma_under_pmd(pmd) {
                return Err(format!(
                    "the page table of PMD {pmd:#x} (pfn {pfn}) is under no VMA"
                ));
            }
            tables += 1;
            let p = &sim.mem[pfn as usize];
            if !p.test(pg::TABLE)
                || p.refcount != 1
                || p.mapping != NO_MAPPING
                || p.test(pg::LRU)
                || p.test(pg::BUDDY)
            {
                return Err(format!(
                    "page-table pfn {} is not a page-table page: flags {} count {} mapping {}",
                    pfn,
                    p.flag_names(),
                    p.refcount,
                    p.mapping
                ));
            }
        }
    }
    if tables != table_frames || tables != sim.vmstat.get(VmItem::NrPageTablePages) {
        return Err(format!(
            "nr_page_table_pages = {} but the mms hold {} tables and {} frames are PG_table",
            sim.vmstat.get(VmItem::NrPageTablePages),
            tables,
            table_frames
        ));
    }
    if mlocked != sim.vmstat.get(VmItem::NrMlock) {
        return Err(format!(
            "nr_mlock = {} but {} pages are PG_mlocked",
            sim.vmstat.get(VmItem::NrMlock),
            mlocked
        ));
    }
    if dirty != sim.vmstat.get(VmItem::NrDirty) {
        return Err(format!(
            "nr_dirty = {} but {} accounted pages are dirty",
            sim.vmstat.get(VmItem::NrDirty),
            dirty
        ));
    }
    if writeback != sim.vmstat.get(VmItem::NrWriteback) {
        return Err(format!(
            "nr_writeback = {} but {} pages are under writeback",
            sim.vmstat.get(VmItem::NrWriteback),
            writeback
        ));
    }
    for (n, &want) in node_dirty_writeback.iter().enumerate() {
        if sim.nodes[n].nr_dirty_writeback as i64 != want {
            return Err(format!(
                "node {n} counts {} dirty and writeback pages, but {want} of its pages are",
                sim.nodes[n].nr_dirty_writeback
            ));
        }
    }
    // The bdi_writebacks' counts (`fs/dirty_throttle.rs`) sum to the machine's.
    let (wb_reclaimable, wb_writeback) = sim.dirty_throttle.totals();
    if wb_reclaimable != dirty || wb_writeback != file_writeback {
        return Err(format!(
            "the wbs count {wb_reclaimable} dirty and {wb_writeback} writeback pages, but \
             {dirty} accounted pages are dirty and {file_writeback} file pages under writeback"
        ));
    }
    let mut shmem_blocks = vec![0u64; sim.fss.len()];
    for inode in sim.inodes.iter().flatten() {
        if inode.mapping.swapbacked {
            shmem_blocks[inode.fs] +=
                inode.mapping.tree.nr_pages() + inode.mapping.tree.nr_shadows();
        }
    }
    for (fs, f) in sim.fss.iter().enumerate() {
        if f.shmem_max_blocks.is_some() && f.shmem_used_blocks != shmem_blocks[fs] {
            return Err(format!(
                "tmpfs {}: used_blocks {} but its files hold {} pages in memory and swap",
                f.mount, f.shmem_used_blocks, shmem_blocks[fs]
            ));
        }
    }
    let mut file_pages = 0u64;
    for inode in sim.inodes.iter().flatten() {
        inode
            .mapping
            .tree
            .check()
            .map_err(|e| format!("inode {} tree: {}", inode.ino, e))?;
        for_each_entry(&inode.mapping.tree, |i, e| {
            if let Entry::Page(pfn) = e {
                let p = &sim.mem[pfn as usize];
                if p.mapping != inode.ino || p.index != i || p.test(pg::BUDDY) {
                    return Err(format!(
                        "inode {} slot {} holds pfn {} whose mapping/index is {}/{} (flags {})",
                        inode.ino,
                        i,
                        pfn,
                        p.mapping,
                        p.index,
                        p.flag_names()
                    ));
                }
            }
            Ok(())
        })?;
        file_pages += inode.mapping.tree.nr_pages();
    }
    // Swap-cache pages count as file pages too.
    if let Some(sw) = &sim.swap {
        let mut free_slots = 0u64;
        for (off, (&pfn, &count)) in sw.cache.iter().zip(&sw.swap_map).enumerate() {
            if pfn == crate::mm::page::NIL {
                if count == 0 && !sw.reserved[off] {
                    free_slots += 1;
                }
                continue;
            }
            file_pages += 1;
            let p = &sim.mem[pfn as usize];
            if p.test(pg::BUDDY) || !p.test(pg::SWAPCACHE) || p.private as usize != off {
                return Err(format!(
                    "swap slot {} caches pfn {} whose slot is {} (flags {})",
                    off,
                    pfn,
                    p.private,
                    p.flag_names()
                ));
            }
        }
        if free_slots != sw.free_pages {
            return Err(format!(
                "swap free_pages = {} but {} slots are free",
                sw.free_pages, free_slots
            ));
        }
        // The slots the swap slots caches hold are exactly those marked reserved, each
        // held once, with no PTE or page; the ones not handed out yet charged to no memcg.
        let mut held = vec![false; sw.reserved.len()];
        if let Some(c) = &sw.slots_cache {
            for off in c.held() {
                let o = off as usize;
                if held[o] || sw.swap_map[o] != 0 || sw.cache[o] != crate::mm::page::NIL {
                    return Err(format!(
                        "swap slot {off} is in a swap slots cache twice or while in use"
                    ));
                }
                held[o] = true;
            }
            if let Some(off) = c.to_hand_out().find(|&o| {
                sim.swap_cgroup
                    .get(o as usize)
                    .copied()
                    .unwrap_or(crate::mm::memcontrol::NO_MEMCG)
                    != crate::mm::memcontrol::NO_MEMCG
            }) {
                return Err(format!(
                    "swap slot {off}, not handed out yet, is charged to a memcg"
                ));
            }
            for cpu in 0..sim.cpus.len() {
                if c.returned(cpu).len() > crate::mm::swap_slots::SWAP_SLOTS_CACHE_SIZE {
                    return Err(format!(
                        "CPU {cpu}'s swap slots cache holds {} freed slots",
                        c.returned(cpu).len()
                    ));
                }
            }
        }
        if let Some(off) = (0..held.len()).find(|&o| held[o] != sw.reserved[o]) {
            return Err(format!(
                "swap slot {off} reserved = {} but a swap slots cache holds it: {}",
                sw.reserved[off], held[off]
            ));
        }
        // Each swap cluster counts its slots in use (and the padding past the device's end).
        if let Some(c) = &sw.clusters {
            for ci in 0..c.len() as u32 {
                let lo = (ci * SWAPFILE_CLUSTER) as usize;
                let hi = (lo + SWAPFILE_CLUSTER as usize).min(sw.swap_map.len());
                let used = (lo..hi)
                    .filter(|&o| {
                        sw.swap_map[o] != 0 || sw.cache[o] != crate::mm::page::NIL || sw.reserved[o]
                    })
                    .count() as u32;
                if c.count(ci) != used + c.padding(ci) {
                    return Err(format!(
                        "swap cluster {ci} counts {} slots in use but {used} are",
                        c.count(ci) - c.padding(ci)
                    ));
                }
            }
        }
    }
    let swapcached = sim.swap.as_ref().map_or(0, |sw| {
        sw.cache
            .iter()
            .filter(|&&p| p != crate::mm::page::NIL)
            .count()
    });
    if swapcached as i64 != sim.vmstat.get(VmItem::NrSwapcached) {
        return Err(format!(
            "nr_swapcached = {} but the swap cache holds {swapcached}",
            sim.vmstat.get(VmItem::NrSwapcached)
        ));
    }
    if file_pages as i64 != sim.vmstat.get(VmItem::NrFilePages) {
        return Err(format!(
            "nr_file_pages = {} but the trees hold {}",
            sim.vmstat.get(VmItem::NrFilePages),
            file_pages
        ));
    }
    Ok(())
}

/// The shadow-node lists (workingset_shadow_nodes): each lruvec's count is the number of
/// shadow-only leaves listed on it, and each listed leaf has its entry in the lruvec's
/// queue (the shrinker finds it).
pub fn check_shadow_lists(sim: &Sim) -> Result<(), String> {
    let mut counts = vec![0u64; sim.lruvecs.len()];
    let mut queued: std::collections::HashSet<(usize, u32, u32, u32)> = Default::default();
    for (lv, l) in sim.lruvecs.iter().enumerate() {
        for &(ino, id, seq) in &l.shadow_nodes {
            queued.insert((lv, ino, id.0, seq));
        }
    }
    for (ino, inode) in sim.inodes.iter().enumerate() {
        let Some(inode) = inode else { continue };
        for (id, list, seq) in inode.mapping.tree.listed_leaves() {
            let lv = list as usize;
            let Some(c) = counts.get_mut(lv) else {
                return Err(format!(
                    "inode {ino} leaf {} on shadow list {lv}, no such lruvec",
                    id.0
                ));
            };
            *c += 1;
            if !queued.contains(&(lv, ino as u32, id.0, seq)) {
                return Err(format!(
                    "inode {ino} leaf {} on shadow list {lv} (seq {seq}) but not in its queue",
                    id.0
                ));
            }
        }
    }
    for (lv, l) in sim.lruvecs.iter().enumerate() {
        if l.nr_shadow_nodes != counts[lv] {
            return Err(format!(
                "lruvec {lv}: nr_shadow_nodes {} but {} listed leaves",
                l.nr_shadow_nodes, counts[lv]
            ));
        }
    }
    Ok(())
}

/// mm_users: each live mm's `users` is the number of live tasks using it plus the forks
/// in progress copying into it; a live task's mm is live; the threads of a process share
/// their leader's mm.
pub fn check_mm_users(sim: &Sim) -> Result<(), String> {
    let mut users = vec![0u32; sim.mms.len()];
    for t in sim.tasks.iter().filter(|t| t.state != TaskState::Exited) {
        if let Some(m) = t.mm {
            if sim.mms.get(m as usize).is_none_or(|x| x.is_none()) {
                return Err(format!("task {} uses mm {m}, which is gone", t.name));
            }
            users[m as usize] += 1;
        }
        let leader = &sim.tasks[t.tgid];
        if t.tgid != t.id && leader.state != TaskState::Exited && t.mm != leader.mm {
            return Err(format!(
                "task {} (a thread of {}) has mm {:?}, its leader {:?}",
                t.name, sim.tasks[t.tgid].name, t.mm, sim.tasks[t.tgid].mm
            ));
        }
        // A fork that slept holds the child's half-copied mm (progress − 1).
        if let Some(crate::sched::OpInProgress {
            op: crate::workload::Op::Fork(_),
            progress,
            ..
        }) = t.cur_op
        {
            if progress > 0 {
                if let Some(u) = users.get_mut((progress - 1) as usize) {
                    *u += 1;
                }
            }
        }
    }
    for m in sim.mms.iter().flatten() {
        if m.users != users[m.id as usize] {
            return Err(format!(
                "mm {} has users {} but {} live tasks and forks use it",
                m.id, m.users, users[m.id as usize]
            ));
        }
    }
    Ok(())
}

/// The page-table side, recomputed from every live mm's PTEs:
/// - a PTE lies inside a VMA; a present PTE maps a page in use (not free); an anonymous
///   page's owner is this mm at this virtual page; a file page is the page of the VMA's
///   file at the VMA's offset for this address, and the VMA is on that file's i_mmap;
/// - each i_mmap entry is a live VMA of that file, with the VMA's geometry and flags;
/// - no PTE (present or swap) of a file VMA lies at or beyond the end of the file (truncate
///   unmaps them; a fault there is SIGBUS);
/// - each mm's rss_file, rss_anon and swapents equal its PTEs; a swap PTE's slot is in use;
/// - each swap slot's count (swap_map) is the number of swap PTEs and tmpfs swap entries
///   that refer to it;
/// - every page's mapcount is the number of PTEs mapping it (−1: none); nr_mapped counts
///   the mapped file pages and nr_anon_pages the mapped anonymous pages.
pub fn check_ptes(sim: &Sim) -> Result<(), String> {
    use crate::mm::memory::pte;
    use crate::mm::page::{PAGE_SHIFT, PAGE_SIZE};
    use crate::mm::rmap::ANON_MAPPING;
    for (ino, inode) in sim.inodes.iter().enumerate() {
        for v in inode.iter().flat_map(|i| &i.i_mmap) {
            let live = sim
                .mms
                .get(v.mm as usize)
                .and_then(|m| m.as_ref())
                .and_then(|m| m.vmas.get(&v.start));
            let same = live.is_some_and(|vma| {
                vma.file == Some(ino as u32)
                    && (vma.end, vma.pgoff, vma.flags) == (v.end, v.pgoff, v.flags)
            });
            if !same {
                return Err(format!(
                    "inode {ino}: i_mmap entry {v:?} is not the VMA {live:?} of mm {}",
                    v.mm
                ));
            }
        }
    }
    let mut maps = vec![0i64; sim.mem.len()];
    // References on each swap slot: swap PTEs and tmpfs files' swap entries.
    let mut slot_refs = vec![0u64; sim.swap.as_ref().map_or(0, |s| s.swap_map.len())];
    for inode in sim.inodes.iter().flatten() {
        if !inode.mapping.swapbacked || inode.mapping.tree.nr_shadows() == 0 {
            continue;
        }
        for_each_entry(&inode.mapping.tree, |i, e| {
            if let Entry::Shadow(off) = e {
                let Some(r) = slot_refs.get_mut(off as usize) else {
                    return Err(format!(
                        "tmpfs inode {} index {i}: swap entry {off} beyond the swap area",
                        inode.ino
                    ));
                };
                *r += 1;
            }
            Ok(())
        })?;
    }
    for m in sim.mms.iter().flatten() {
        let (mut file, mut anon, mut swap) = (0u64, 0u64, 0u64);
        for (vpn, p) in m.pgtable.entries() {
            let Some(vma) = m.find_vma(vpn << PAGE_SHIFT) else {
                return Err(format!(
                    "mm {} vpn {:#x}: PTE {:#x} outside any VMA",
                    m.id, vpn, p
                ));
            };
            if let Some(ino) = vma.file {
                let index = vma.pgoff_of(vpn << PAGE_SHIFT);
                let size = sim
                    .inodes
                    .get(ino as usize)
                    .and_then(|i| i.as_ref())
                    .map(|i| i.size.div_ceil(PAGE_SIZE));
                if size.is_some_and(|s| index >= s) {
                    return Err(format!(
                        "mm {} vpn {:#x}: PTE {:#x} maps index {} of inode {} at or beyond its \
                         end ({} pages)",
                        m.id,
                        vpn,
                        p,
                        index,
                        ino,
                        size.unwrap_or(0)
                    ));
                }
            }
            if p & pte::PRESENT == 0 {
                if p & pte::SWAP == 0 {
                    return Err(format!("mm {} vpn {:#x}: unknown PTE {:#x}", m.id, vpn, p));
                }
                let off = pte::pfn(p) as usize;
                let used = sim
                    .swap
                    .as_ref()
                    .is_some_and(|s| s.swap_map.get(off).is_some_and(|&c| c > 0));
                if !used {
                    return Err(format!(
                        "mm {} vpn {:#x}: swap PTE of free slot {}",
                        m.id, vpn, off
                    ));
                }
                slot_refs[off] += 1;
                swap += 1;
                continue;
            }
            let pfn = pte::pfn(p) as usize;
            let Some(page) = sim.mem.get(pfn) else {
                return Err(format!(
                    "mm {} vpn {:#x}: PTE of pfn {} out of range",
                    m.id, vpn, pfn
                ));
            };
            // A large folio's page: the folio (its head) holds the references.
            let refs = sim.mem[sim.folio_head(pfn as Pfn) as usize].refcount;
            if page.test(pg::BUDDY) || refs < 1 {
                return Err(format!(
                    "mm {} vpn {:#x} maps pfn {} which is free (count {}, flags {})",
                    m.id,
                    vpn,
                    pfn,
                    refs,
                    page.flag_names()
                ));
            }
            maps[pfn] += 1;
            if page.mapping & ANON_MAPPING != 0 {
                let av = page.mapping & !ANON_MAPPING;
                if !sim.anon_vma_members(av).any(|mm| mm == m.id) || page.index != vpn {
                    return Err(format!(
                        "mm {} vpn {:#x} maps anon pfn {} of anon_vma {} vpn {:#x}",
                        m.id,
                        vpn,
                        pfn,
                        page.mapping & !ANON_MAPPING,
                        page.index
                    ));
                }
                anon += 1;
            } else {
                let ok = vma.file == Some(page.mapping)
                    && vma.pgoff_of(vpn << PAGE_SHIFT) == page.index
                    && sim
                        .inodes
                        .get(page.mapping as usize)
                        .and_then(|i| i.as_ref())
                        .is_some_and(|i| {
                            i.i_mmap.contains(&crate::fs::MappedVma {
                                mm: m.id,
                                start: vma.start,
                                end: vma.end,
                                pgoff: vma.pgoff,
                                flags: vma.flags,
                            })
                        });
                if !ok {
                    return Err(format!(
                        "mm {} vpn {:#x} (VMA of inode {:?} at {:#x}) maps file pfn {} of \
                         mapping {} index {} (flags {})",
                        m.id,
                        vpn,
                        vma.file,
                        vma.start,
                        pfn,
                        page.mapping,
                        page.index,
                        page.flag_names()
                    ));
                }
                file += 1;
            }
        }
        if (file, anon, swap) != (m.rss_file, m.rss_anon, m.swapents) {
            return Err(format!(
                "mm {}: rss file/anon/swapents {}/{}/{} but the PTEs say {}/{}/{}",
                m.id, m.rss_file, m.rss_anon, m.swapents, file, anon, swap
            ));
        }
    }
    if let Some(sw) = &sim.swap {
        for (off, (&count, &refs)) in sw.swap_map.iter().zip(&slot_refs).enumerate() {
            if u64::from(count) != refs {
                return Err(format!(
                    "swap slot {off}: swap_map {count} but {refs} swap PTEs and tmpfs swap \
                     entries refer to it"
                ));
            }
        }
    }
    let (mut nr_mapped, mut nr_anon) = (0i64, 0i64);
    for (pfn, p) in sim.mem.iter().enumerate() {
        if i64::from(p.mapcount) + 1 != maps[pfn] {
            return Err(format!(
                "pfn {} has mapcount {} but {} PTEs map it (mapping {:#x}, flags {})",
                pfn,
                p.mapcount,
                maps[pfn],
                p.mapping,
                p.flag_names()
            ));
        }
        if p.mapped() {
            if p.mapping & ANON_MAPPING != 0 {
                nr_anon += 1;
            } else {
                nr_mapped += 1;
            }
        }
    }
    if nr_mapped != sim.vmstat.get(VmItem::NrMapped) {
        return Err(format!(
            "nr_mapped = {} but {} file pages are mapped",
            sim.vmstat.get(VmItem::NrMapped),
            nr_mapped
        ));
    }
    if nr_anon != sim.vmstat.get(VmItem::NrAnonPages) {
        return Err(format!(
            "nr_anon_pages = {} but {} anonymous pages are mapped",
            sim.vmstat.get(VmItem::NrAnonPages),
            nr_anon
        ));
    }
    Ok(())
}

/// Memory cgroups: every page is charged to at most one memcg, only while it is not free;
/// each memcg's usage is the number of pages charged to it and its descendants; usage of
/// a non-root memcg stays within memory.max unless the OOM killer found no victim (the
/// kernel's forced charge); swap usage matches the slots charged; a memcg's own
/// memory.stat `file_mapped` and `shmem` count its mapped page-cache pages and its tmpfs
/// pages in the cache.
pub fn check_memcgs(sim: &Sim) -> Result<(), String> {
    use crate::mm::memcontrol::NO_MEMCG;
    let mut local = vec![0u64; sim.nr_memcgs()];
    let mut mapped = vec![0i64; sim.nr_memcgs()];
    let mut shmem = vec![0i64; sim.nr_memcgs()];
    let mut swapcached = vec![0i64; sim.nr_memcgs()];
    let mut pagetables = vec![0i64; sim.nr_memcgs()];
    for (pfn, p) in sim.mem.iter().enumerate() {
        if p.memcg == NO_MEMCG {
            continue;
        }
        if p.test(pg::BUDDY) {
            return Err(format!(
                "free pfn {} is still charged to memcg {}",
                pfn, p.memcg
            ));
        }
        match local.get_mut(p.memcg as usize) {
            Some(c) => *c += 1,
            None => return Err(format!("pfn {} charged to unknown memcg {}", pfn, p.memcg)),
        }
        // As nr_mapped counts them (check_ptes): a mapped page not anonymous, in the
        // cache or just taken out of it; nr_shmem: a tmpfs page in the cache.
        let file = p.mapping & crate::mm::rmap::ANON_MAPPING == 0;
        if file && p.mapped() {
            mapped[p.memcg as usize] += 1;
        }
        if file && p.mapping != crate::mm::page::NO_MAPPING && p.test(pg::SWAPBACKED) {
            shmem[p.memcg as usize] += 1;
        }
        if p.test(pg::SWAPCACHE) {
            swapcached[p.memcg as usize] += 1;
        }
        if p.test(pg::TABLE) {
            pagetables[p.memcg as usize] += 1;
        }
    }
    // Without [[cgroups]] these report-only counters are not kept (mod_memcg_page_stat).
    let kept = if sim.nr_memcgs() > 1 {
        sim.nr_memcgs()
    } else {
        0
    };
    for m in 0..kept {
        let st = &sim.memcgs[m].stat;
        for (key, item, want) in [
            ("file_mapped", VmItem::NrMapped, mapped[m]),
            ("shmem", VmItem::NrShmem, shmem[m]),
            ("swapcached", VmItem::NrSwapcached, swapcached[m]),
            ("pagetables", VmItem::NrPageTablePages, pagetables[m]),
        ] {
            if st.get(item) != want {
                return Err(format!(
                    "memcg \"{}\" memory.stat {key} is {} pages but {want} pages are",
                    sim.memcgs[m].name,
                    st.get(item)
                ));
            }
        }
    }
    // Pages charged ahead into the CPUs' stocks count in the usage of the memcgs below the
    // root (memcg_stock; the root's counter counts pages committed to it).
    let mut stocked = vec![0u64; sim.nr_memcgs()];
    let batch = sim.memcg_charge_batch();
    for st in &sim.memcg_stock {
        for &(m, pages) in &st.slots {
            if m == NO_MEMCG {
                continue;
            }
            if pages > batch {
                return Err(format!(
                    "a CPU's stock holds {pages} pages of memcg {m}, above the batch {batch}"
                ));
            }
            match stocked.get_mut(m as usize) {
                Some(c) => *c += pages,
                None => return Err(format!("a CPU's stock holds pages of unknown memcg {m}")),
            }
        }
    }
    let mut swap_local = vec![0u64; sim.nr_memcgs()];
    for &m in &sim.swap_cgroup {
        if m != NO_MEMCG {
            swap_local[m as usize] += 1;
        }
    }
    for m in 0..sim.nr_memcgs() {
        let mc = &sim.memcgs[m];
        let range = sim.memcg_subtree(m as crate::mm::memcontrol::MemcgId);
        let mut want: u64 = range.clone().map(|c| local[c as usize]).sum();
        if m != 0 {
            want += range.clone().map(|c| stocked[c as usize]).sum::<u64>();
            // Pages charged for slab objects' bytes (`memcg-kmem-objcg`).
            want += range
                .clone()
                .map(|c| sim.memcgs[c as usize].obj_pages)
                .sum::<u64>();
            if let Some(z) = sim.zswap() {
                want += range
                    .clone()
                    .map(|c| z.memcg_charged[c as usize])
                    .sum::<u64>();
            }
        }
        if mc.usage != want {
            return Err(format!(
                "memcg \"{}\" usage {} but {} pages are charged to it and below (stocks, \
                 zswap and slab objects included)",
                mc.name, mc.usage, want
            ));
        }
        if m != 0 {
            let swap: u64 = range.clone().map(|c| swap_local[c as usize]).sum();
            if mc.swap_usage != swap {
                return Err(format!(
                    "memcg \"{}\" swap usage {} but {} slots are charged to it and below",
                    mc.name, mc.swap_usage, swap
                ));
            }
            // A write of memory.swap.max below the usage reclaims nothing: the usage may
            // stay above it, never above what it was then.
            if mc.swap_usage > mc.swap_max.max(mc.swap_max_ceiling) {
                return Err(format!(
                    "memcg \"{}\" swap usage {} above swap.max {}",
                    mc.name, mc.swap_usage, mc.swap_max
                ));
            }
        }
        if mc.peak < mc.usage {
            return Err(format!("memcg \"{}\" peak below usage", mc.name));
        }
    }
    Ok(())
}

/// The PSI task flags (`crate::psi`) follow the scheduling state: a runnable task is
/// TSK_RUNNING and not in IO wait, a sleeping one is not running, an exited one has no
/// flags, a memstall that ends when the task runs again is a memstall, and TSK_ONCPU is
/// the runnable task its CPU last ran (one per CPU).
pub fn check_psi_flags(sim: &Sim) -> Result<(), String> {
    use crate::psi::flags;
    use crate::sched::TaskState;
    for t in &sim.tasks {
        let f = t.psi_flags;
        let ok = match t.state {
            TaskState::Runnable => f & flags::RUNNING != 0 && f & flags::IOWAIT == 0,
            TaskState::Sleeping => f & flags::RUNNING == 0,
            TaskState::Exited => f == 0,
        } && (!t.psi_sleep_memstall || f & flags::MEMSTALL != 0)
            && (f & flags::ONCPU == 0
                || (f & flags::RUNNING != 0 && sim.psi_oncpu[t.cpu] == Some(t.id)));
        if !ok {
            return Err(format!(
                "task {} ({:?}) has PSI flags {:#x} (sleep memstall {})",
                t.name, t.state, f, t.psi_sleep_memstall
            ));
        }
    }
    for (c, t) in sim.psi_oncpu.iter().enumerate() {
        if let Some(t) = *t {
            if sim.tasks[t].psi_flags & flags::ONCPU == 0 {
                return Err(format!(
                    "CPU {c} runs task {} for PSI, which is not TSK_ONCPU",
                    sim.tasks[t].name
                ));
            }
        }
    }
    Ok(())
}

/// Every entry of a page-cache tree in index order, to `f` (the first error stops).
fn for_each_entry(
    tree: &crate::mm::radix_tree::RadixTree,
    mut f: impl FnMut(u64, Entry) -> Result<(), String>,
) -> Result<(), String> {
    let mut entries = Vec::new();
    let mut idx = 0u64;
    loop {
        entries.clear();
        if tree.gang_lookup(idx, 64, &mut entries) == 0 {
            return Ok(());
        }
        for &(i, e) in &entries {
            idx = i + 1;
            f(i, e)?;
        }
    }
}

/// A large folio's frames (`mm::folio`): a tail points at a head whose chain of tails
/// holds it, has no reference, list or page-state flag of its own, and sits at the head's
/// index plus its place in the chain, in the same mapping, memcg and node; a head has 2^order
/// - 1 tails.
fn check_folio(sim: &Sim, pfn: Pfn) -> Result<(), String> {
    let p = &sim.mem[pfn as usize];
    let head = if p.test(pg::TAIL) { p.prev } else { pfn };
    let h = sim
        .mem
        .get(head as usize)
        .ok_or(format!("tail pfn {pfn} has no head"))?;
    if !h.test(pg::HEAD) || h.test(pg::TAIL) {
        return Err(format!(
            "pfn {pfn}'s head {head} is not a folio head ({})",
            h.flag_names()
        ));
    }
    let mut tails = Vec::new();
    sim.folio_tails(head, &mut tails);
    if tails.len() as u64 + 1 != h.nr_pages() {
        return Err(format!(
            "folio {head} of order {} has {} tails",
            h.mlock_count,
            tails.len()
        ));
    }
    if p.test(pg::TAIL) {
        let Some(k) = tails.iter().position(|&t| t == pfn) else {
            return Err(format!("tail pfn {pfn} is not in its head {head}'s chain"));
        };
        let busy =
            pg::LRU | pg::ACTIVE | pg::LOCKED | pg::DIRTY | pg::WRITEBACK | pg::MLOCKED | pg::HEAD;
        if p.refcount != 0 || p.flags & busy != 0 {
            return Err(format!(
                "tail pfn {pfn} has refcount {} flags {}",
                p.refcount,
                p.flag_names()
            ));
        }
        if p.mapping != h.mapping
            || (h.mapping != NO_MAPPING && p.index != h.index + k as u64 + 1)
            || p.memcg != h.memcg
            || p.node != h.node
        {
            return Err(format!(
                "tail pfn {pfn} ({}/{}, memcg {}) does not follow its head {head} ({}/{}, memcg {})",
                p.mapping, p.index, p.memcg, h.mapping, h.index, h.memcg
            ));
        }
    } else {
        // The head holds the page cache's reference and one for each PTE mapping any of
        // its pages (mapped large folios); a large folio is never mlocked, and is dirty
        // or under writeback only as a block filesystem's folio written with write(2) or
        // through a shared mapping (6.18's page_mkwrite), whose blocks' state it has (`fs::buffer`): dirty blocks when dirty, blocks in
        // flight exactly when under writeback.
        let ptes: i64 = std::iter::once(head)
            .chain(tails.iter().copied())
            .map(|f| i64::from(sim.mem[f as usize].mapcount) + 1)
            .sum();
        let cached = i64::from(h.mapping != NO_MAPPING);
        if i64::from(h.refcount) < ptes + cached {
            return Err(format!(
                "folio {head} has refcount {} but {ptes} PTEs map its pages (cached: {cached})",
                h.refcount
            ));
        }
        if h.flags & pg::MLOCKED != 0 {
            return Err(format!("folio {head} is {}", h.flag_names()));
        }
        let blocks = sim.folio_blocks.get(&head);
        let inflight = blocks.is_some_and(|b| b.any_inflight());
        if h.test(pg::WRITEBACK) != inflight {
            return Err(format!(
                "folio {head} is {} but {} of its blocks in flight",
                h.flag_names(),
                if inflight { "some" } else { "none" }
            ));
        }
        if h.test(pg::DIRTY) && blocks.is_none() {
            return Err(format!("folio {head} is dirty but has no block state"));
        }
        if blocks.is_some_and(|b| b.charged() as u64 > h.nr_pages()) {
            return Err(format!("folio {head} has more buffer heads than blocks"));
        }
    }
    Ok(())
}
