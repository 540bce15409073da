//! Large folios in the page cache (`large-folios`, `mm::folio`): the readahead order ramp,
//! one access mark per folio and read, whole-folio reclaim and refault, mapped large
//! folios (`map-entire-folio`, folio_referenced once a mapping, whole-folio unmap, the
//! split of a written one), splitting for every other path, large folios under MGLRU
//! (one list entry counted in pages), and the invariants over random operation sequences
//! under both policies.

use crate::common;
use common::{complete_io, mmap_at, touch_pages, unit_machine_toml, UnitMachine as M};
use mmsim::fs::writeback::SyncMode;
use mmsim::fs::IoKind;
use mmsim::kernel::KernelEra;
use mmsim::mm::lru_gen::folio_lru_gen;
use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
use mmsim::mm::memory::pte;
use mmsim::mm::node::LruList;
use mmsim::mm::page::{pg, Pfn, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::policy::ReclaimPolicy;
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::vmscan::ScanControl;
use mmsim::mm::vmstat::VmItem;
use mmsim::sim::Features;
use mmsim::workload::{Fadvice, OpResult};
use proptest::prelude::*;

/// 6.18's rules, with or without large folios.
fn features(large: bool) -> Features {
    let mut f = KernelEra::V6_18.features("patched").unwrap();
    f.large_folios = large;
    f
}

/// A 64 MiB machine (128 KiB readahead) with `/mnt/data`, a 1 MiB file with data.
fn machine(large: bool) -> (M, u32, u32) {
    machine_under(large, false)
}

/// `machine`, reclaimed by MGLRU when `mglru`.
fn machine_under(large: bool, mglru: bool) -> (M, u32, u32) {
    let mut m = machine_with_file("/mnt/data", 256, large, mglru);
    let (fd, ino) = open(&mut m, "/mnt/data");
    (m, fd, ino)
}

/// A 64 MiB machine (128 KiB readahead) with a file of `pages` pages of data at `path`,
/// reclaimed by MGLRU when `mglru`.
fn machine_with_file(path: &str, pages: u64, large: bool, mglru: bool) -> M {
    // Root keys precede the tables.
    let policy = if mglru { "policy = \"mglru\"\n" } else { "" };
    let text = policy.to_string()
        + &unit_machine_toml(
            "lf",
            "64MiB",
            "program = \"dd\"\npath = \"/tmp/dd\"\nsize = \"4KiB\"\n",
        )
        + &common::file_toml(path, pages * PAGE_SIZE, true);
    let mut f = features(large);
    if mglru {
        f.policy = Some(ReclaimPolicy::Mglru);
    }
    let m = M::new(&text, f);
    assert_eq!(m.sim.policy == ReclaimPolicy::Mglru, mglru);
    m
}

fn open(m: &mut M, path: &str) -> (u32, u32) {
    let mut progress = 0;
    let mut r = m.sim.sys_open(m.tid, path, false, false, &mut progress);
    if r.is_err() {
        complete_io(&mut m.sim);
        r = m.sim.sys_open(m.tid, path, false, false, &mut progress);
    }
    let Ok(OpResult::Fd(fd)) = r else {
        panic!("open {path}: {r:?}");
    };
    (fd, m.sim.tasks[m.tid].fds[fd as usize].unwrap().ino)
}

/// pread, completing IO until it returns.
fn pread(m: &mut M, fd: u32, pages: u64, index: u64) -> u64 {
    let mut progress = 0;
    for _ in 0..100 {
        match m.sim.sys_read(
            m.tid,
            fd,
            pages * PAGE_SIZE,
            Some(index * PAGE_SIZE),
            &mut progress,
        ) {
            Ok(OpResult::Bytes(n)) => return n,
            Ok(other) => panic!("pread {index}: {other:?}"),
            Err(_) => {
                complete_io(&mut m.sim);
            }
        }
    }
    panic!("pread {index} never finished");
}

/// A new folio of `order` in the page cache of `ino` at `index` (locked, not yet read;
/// refaulting if the range held shadows).
fn add_folio(m: &mut M, ino: u32, index: u64, order: u32) -> Pfn {
    let head = m
        .sim
        .alloc_folio_charged(order, Gfp::KERNEL, ROOT_MEM_CGROUP)
        .ok()
        .flatten()
        .expect("memory");
    m.sim
        .add_folio_to_page_cache_lru(head, ino, index)
        .expect("a range holding no page");
    head
}

/// One-page reads of `pages`: each sees the file's newest content (the content oracle
/// reports no violation).
fn reads_see_the_newest_content(m: &mut M, fd: u32, pages: std::ops::Range<u64>) {
    for i in pages {
        pread(m, fd, 1, i);
    }
    assert!(
        m.sim.oracle_violations.is_empty(),
        "{:?}",
        m.sim.oracle_violations
    );
}

/// One-page reads of pages [0, n) in order: a stream up the order ramp.
fn stream(m: &mut M, fd: u32, n: u64) {
    for i in 0..n {
        assert_eq!(pread(m, fd, 1, i), PAGE_SIZE);
    }
}

/// (index, order) of every folio head cached in [0, end).
fn folios(m: &M, ino: u32, end: u64) -> Vec<(u64, u32)> {
    (0..end)
        .filter_map(|i| match m.entry(ino, i) {
            Entry::Page(p) if m.sim.mem[p as usize].flags & pg::TAIL == 0 => {
                Some((i, m.sim.mem[p as usize].nr_pages().trailing_zeros()))
            }
            _ => None,
        })
        .collect()
}

/// Hand-derived from v6.17's mm/readahead.c with a 32-page window: the first read's sync
/// window (4 pages, async size 3) is order 0; each marker hit adds 2 to the order, which
/// page_cache_ra_order caps at ilog2 of the window, and page_cache_async_ra ends the
/// window on a boundary of the new order (1 << min(order, 5)):
/// hit at 1 → [4,12) order 2; at 4 → size 16 cut to [12,16), order 2; at 12 → [16,24)
/// order 3; at 16 → 16 cut to [24,32) order 3; at 24 → [32,48) order 4; at 32 → 32 cut to
/// [48,64) order 4; at 48 → [64,96) order 5; at 64 → [96,128) order 5; at 96 → [128,160).
#[test]
fn sequential_reads_build_folios_along_the_v6_17_order_ramp() {
    let (mut m, fd, ino) = machine(true);
    stream(&mut m, fd, 100);
    let want = [
        (0, 0),
        (1, 0),
        (2, 0),
        (3, 0),
        (4, 2),
        (8, 2),
        (12, 2),
        (16, 3),
        (24, 3),
        (32, 4),
        (48, 4),
        (64, 5),
        (96, 5),
        (128, 5),
    ];
    assert_eq!(folios(&m, ino, 256), want);
    m.check();
    // Without the feature the same reads cache order-0 pages only.
    let (mut o, fd, ino) = machine(false);
    stream(&mut o, fd, 100);
    let plain = folios(&o, ino, 256);
    assert!(plain.len() >= 100 && plain.iter().all(|&(_, order)| order == 0));
}

/// filemap_read marks a folio accessed once per read, not when the read begins in the
/// folio where the previous read ended. Two 64 KiB reads of the halves of a 128 KiB folio
/// with another read between them mark it twice: activated, its 32 pages counted in
/// pgactivate. Back to back, the second read continues the folio: no activation. With
/// order-0 pages each page is marked once either way: nothing is activated.
#[test]
fn a_folio_read_in_two_halves_is_activated_when_a_read_came_between() {
    for (large, between, want) in [(true, true, 32), (true, false, 0), (false, true, 0)] {
        let (mut m, fd, ino) = machine(large);
        // Up to index 64: the folio [96, 128) is read ahead, not yet read.
        stream(&mut m, fd, 65);
        m.sim.lru_add_drain();
        let before = m.sim.vmstat.get(VmItem::Pgactivate);
        assert_eq!(pread(&mut m, fd, 16, 96), 16 * PAGE_SIZE);
        if between {
            pread(&mut m, fd, 1, 200); // a page not read before (no activation of its own)
        }
        assert_eq!(pread(&mut m, fd, 16, 112), 16 * PAGE_SIZE);
        m.sim.lru_add_drain();
        let activated = m.sim.vmstat.get(VmItem::Pgactivate) - before;
        assert_eq!(activated, want, "large {large}, read between {between}");
        let head = m.page(ino, 96);
        assert_eq!(m.sim.mem[head as usize].test(pg::ACTIVE), want > 0);
        m.check();
    }
}

/// Reclaim isolates a folio as its pages (pgscan), evicts it whole with the same shadow
/// entry at each of its indices (pgsteal counts its pages), and a folio added over those
/// shadows refaults all of its pages at once.
#[test]
fn reclaim_evicts_a_folio_whole_and_a_refault_counts_its_pages() {
    let (mut m, fd, ino) = machine(true);
    stream(&mut m, fd, 100);
    m.sim.lru_add_drain();
    let cached = |m: &M| {
        (0..256)
            .filter(|&i| matches!(m.entry(ino, i), Entry::Page(_)))
            .count() as i64
    };
    let (pages, steal) = (cached(&m), m.sim.vmstat.get(VmItem::PgstealFile));
    let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
    m.sim
        .shrink_inactive_list(0, ROOT_MEM_CGROUP, 64, LruList::InactiveFile, &mut sc);
    let gone = pages - cached(&m);
    assert!(gone > 0, "nothing reclaimed");
    assert_eq!(m.sim.vmstat.get(VmItem::PgstealFile) - steal, gone);
    // Every folio went whole: each index of a head's range holds the head's shadow.
    let mut shadows = 0;
    for (head, order) in [(4u64, 2u32), (8, 2), (12, 2), (16, 3), (24, 3), (32, 4)] {
        let es: Vec<Entry> = (head..head + (1 << order))
            .map(|i| m.entry(ino, i))
            .collect();
        match es[0] {
            Entry::Shadow(s) => {
                assert!(es.iter().all(|&e| e == Entry::Shadow(s)), "{head}: {es:?}");
                shadows += 1 << order;
            }
            Entry::Page(_) => assert!(es.iter().all(|e| matches!(e, Entry::Page(_)))),
            Entry::Empty => panic!("{head}: a hole"),
        }
    }
    assert!(shadows > 0, "no folio was evicted");
    m.check();
    // An order-2 folio over the shadows of [4, 8): one refault of 4 pages.
    if let Entry::Shadow(_) = m.entry(ino, 4) {
        let refaults = m.sim.vmstat.get(VmItem::WorkingsetRefaultFile);
        let head = add_folio(&mut m, ino, 4, 2);
        assert_eq!(
            m.sim.vmstat.get(VmItem::WorkingsetRefaultFile) - refaults,
            4
        );
        m.sim.readpage_locked(ino, head);
        complete_io(&mut m.sim);
        m.sim.put_page(head);
        m.check();
        // The folio was read whole: each of its pages holds the file's content.
        reads_see_the_newest_content(&mut m, fd, 4..8);
    }
}

/// Under MGLRU (6.18) the readahead's large folios are one entry each on their
/// generation's list, counted in pages: the generation's size, pgsteal, the tiers'
/// evictions; reclaim evicts a folio whole (one shadow over its indices) and a refault
/// counts the refaulting folio's pages in the workingset counters and in its tier.
#[test]
fn under_mglru_a_large_folio_is_one_list_entry_counted_in_pages() {
    let (mut m, fd, ino) = machine_under(true, true);
    stream(&mut m, fd, 100);
    m.sim.lru_add_drain();
    let heads = folios(&m, ino, 256);
    assert!(
        heads.iter().any(|&(_, order)| order >= 3),
        "large folios under MGLRU: {heads:?}"
    );
    for &(i, order) in &heads {
        let head: Pfn = m.page(ino, i);
        assert!(
            folio_lru_gen(m.sim.mem[head as usize].flags).is_some(),
            "head {i} on a generation's list"
        );
        for k in 1..(1u64 << order) {
            let t: Pfn = m.page(ino, i + k);
            let f = m.sim.mem[t as usize].flags;
            assert!(f & pg::TAIL != 0 && f & pg::LRU == 0 && folio_lru_gen(f).is_none());
        }
    }
    // The checker sums the lists' entries in pages against nr_pages of every generation.
    m.check();
    let cached = |m: &M| {
        (0..256)
            .filter(|&i| matches!(m.entry(ino, i), Entry::Page(_)))
            .count() as i64
    };
    let evicted_file =
        |m: &M| -> u64 { m.sim.lru_gen_view()[0].tiers.iter().map(|t| t[1][1]).sum() };
    let refaulted_file =
        |m: &M| -> u64 { m.sim.lru_gen_view()[0].tiers.iter().map(|t| t[1][0]).sum() };
    let (pages, steal, evicted) = (
        cached(&m),
        m.sim.vmstat.get(VmItem::PgstealFile),
        evicted_file(&m),
    );
    let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
    sc.priority = 0;
    sc.may_swap = false;
    m.sim.try_to_shrink_lruvec(0, ROOT_MEM_CGROUP, &mut sc);
    let gone = pages - cached(&m);
    assert!(gone > 0, "nothing reclaimed");
    assert_eq!(sc.nr_reclaimed as i64, gone);
    assert_eq!(m.sim.vmstat.get(VmItem::PgstealFile) - steal, gone);
    assert_eq!(
        (evicted_file(&m) - evicted) as i64,
        gone,
        "tier evictions in pages"
    );
    // Every evicted folio went whole: its indices hold one shadow.
    let mut refault_at = None;
    for &(i, order) in &heads {
        let es: Vec<Entry> = (i..i + (1 << order)).map(|k| m.entry(ino, k)).collect();
        match es[0] {
            Entry::Shadow(s) => {
                assert!(es.iter().all(|&e| e == Entry::Shadow(s)), "{i}: {es:?}");
                if order >= 2 && refault_at.is_none() {
                    refault_at = Some((i, order));
                }
            }
            Entry::Page(_) => assert!(es.iter().all(|e| matches!(e, Entry::Page(_)))),
            Entry::Empty => panic!("{i}: a hole"),
        }
    }
    m.check();
    let (i, order) = refault_at.expect("a large folio was evicted");
    let (refaults, tier_refaults) = (
        m.sim.vmstat.get(VmItem::WorkingsetRefaultFile),
        refaulted_file(&m),
    );
    let head = add_folio(&mut m, ino, i, order);
    let nr = 1i64 << order;
    assert_eq!(
        m.sim.vmstat.get(VmItem::WorkingsetRefaultFile) - refaults,
        nr
    );
    assert_eq!(
        (refaulted_file(&m) - tier_refaults) as i64,
        nr,
        "a recent refault, in its tier"
    );
    m.sim.readpage_locked(ino, head);
    complete_io(&mut m.sim);
    m.sim.put_page(head);
    m.sim.lru_add_drain();
    m.check();
    reads_see_the_newest_content(&mut m, fd, i..i + (1 << order));
}

/// Under MGLRU a split (DONTNEED over part of a folio) puts the tails beside the head on
/// its generation's list, with its generation; the generation's size does not change.
#[test]
fn under_mglru_a_split_keeps_the_pages_in_the_folios_generation() {
    let (mut m, fd, ino) = machine_under(true, true);
    stream(&mut m, fd, 100);
    m.sim.lru_add_drain();
    let (i, order) = *folios(&m, ino, 256)
        .iter()
        .find(|&&(_, o)| o >= 3)
        .expect("a folio of 8 pages or more");
    let head: Pfn = m.page(ino, i);
    let gen = folio_lru_gen(m.sim.mem[head as usize].flags).expect("on a list");
    let sizes = m.sim.lrugen(ROOT_MEM_CGROUP, 0).nr_pages;
    // Drop its last page: the folio splits, the rest stays cached.
    let last = i + (1 << order) - 1;
    m.sim
        .sys_fadvise(m.tid, fd, last * PAGE_SIZE, PAGE_SIZE, Fadvice::Dontneed);
    assert_eq!(
        m.sim.mem[head as usize].nr_pages(),
        1,
        "the folio was split"
    );
    for k in i..last {
        let p: Pfn = m.page(ino, k);
        assert_eq!(
            folio_lru_gen(m.sim.mem[p as usize].flags),
            Some(gen),
            "page {k} in the folio's generation"
        );
    }
    let after = m.sim.lrugen(ROOT_MEM_CGROUP, 0).nr_pages;
    assert_eq!(
        after[gen][1],
        sizes[gen][1] - 1,
        "only the dropped page left"
    );
    m.check();
}

/// A folio of a leaf's size or more (order 6: 64 pages, aligned) leaves its shadow above
/// the leaves in the kernel (one multi-index entry; the leaf is freed), so no shadow node
/// is left for the shadow shrinker; a smaller folio's leaf of shadows is a shadow node.
/// (Linux 6.18 reading a 256 MiB file twice with 8 MiB readahead reclaimed no shadow node
/// and refaulted every page of the second pass: docs/replay.md.)
#[test]
fn a_folio_of_a_leafs_size_leaves_no_shadow_node() {
    let (mut m, _fd, ino) = machine(true);
    for (index, order) in [(64u64, 5u32), (128, 6)] {
        let head = add_folio(&mut m, ino, index, order);
        m.sim.readpage_locked(ino, head);
        complete_io(&mut m.sim);
        m.sim.put_page(head);
    }
    m.sim.lru_add_drain();
    let mut sc = ScanControl::new(512, false, Gfp::KERNEL);
    m.sim
        .shrink_inactive_list(0, ROOT_MEM_CGROUP, 512, LruList::InactiveFile, &mut sc);
    let tree = &m.sim.inode(ino).mapping.tree;
    let listed = |index: u64| {
        let (id, count, shadows) = tree.leaf(index).expect("the leaf holds shadows");
        assert_eq!((count, shadows), (count, count), "only shadows at {index}");
        tree.leaf_listing(id).is_some()
    };
    assert!(matches!(m.entry(ino, 64), Entry::Shadow(_)));
    assert!(matches!(m.entry(ino, 191), Entry::Shadow(_)));
    assert!(listed(64), "the order-5 folio's leaf is a shadow node");
    assert!(
        !listed(128),
        "the order-6 folio's shadow is above the leaves"
    );
    m.check();
}

/// A write into a folio, a fault-free invalidation (POSIX_FADV_DONTNEED) over part of
/// one, and a truncation each handle order-0 pages: the folio is split first, its pages
/// keep their content and their place, and unlinking the file frees every frame.
/// pwrite of `len` bytes at byte `pos`, completing IO and waits until it is done.
fn pwrite(m: &mut M, fd: u32, pos: u64, len: u64) {
    let mut progress = 0;
    for _ in 0..100 {
        match m.sim.sys_write(m.tid, fd, len, Some(pos), &mut progress) {
            Ok(OpResult::Bytes(n)) => {
                assert_eq!(n, len);
                return;
            }
            Ok(other) => panic!("pwrite {pos}: {other:?}"),
            Err(_) => {
                complete_io(&mut m.sim);
            }
        }
    }
    panic!("pwrite {pos} never finished");
}

/// A write into a cached large folio keeps it whole and dirties it whole (v6.16 ext4:
/// NR_DIRTIED and NR_FILE_DIRTY count its 16 pages), and writeback writes only the blocks
/// the writes covered (ext4_bio_write_folio: `pgpgout` counts them) while NR_WRITTEN
/// counts the folio's pages; the data reaches the disk.
#[test]
fn a_write_dirties_a_large_folio_whole_and_writeback_writes_its_dirty_blocks() {
    let (mut m, fd, ino) = machine(true);
    stream(&mut m, fd, 100);
    let head = m.page(ino, 32);
    assert_eq!(m.sim.mem[head as usize].nr_pages(), 16);
    let (wfd, _) = open(&mut m, "/mnt/data");
    let dirtied = m.sim.vmstat.get(VmItem::NrDirtied);
    let dirty = m.sim.vmstat.get(VmItem::NrDirty); // metadata (the inode table's block)
    pwrite(&mut m, wfd, 40 * PAGE_SIZE, PAGE_SIZE);
    // Blocks 34, 35 and 36: 100 bytes into 34 to 50 bytes into 36.
    pwrite(&mut m, wfd, 34 * PAGE_SIZE + 100, 2 * PAGE_SIZE - 50);
    assert_eq!(
        m.sim.mem[head as usize].nr_pages(),
        16,
        "the folio stays whole"
    );
    assert!(m.sim.mem[head as usize].test(pg::DIRTY));
    assert_eq!(m.sim.vmstat.get(VmItem::NrDirtied) - dirtied, 16);
    assert_eq!(m.sim.vmstat.get(VmItem::NrDirty) - dirty, 16);
    assert_eq!(m.sim.inode(ino).nr_dirty, 16);
    m.check();
    let (out, written) = (
        m.sim.vmstat.get(VmItem::Pgpgout),
        m.sim.vmstat.get(VmItem::NrWritten),
    );
    let n = m
        .sim
        .write_cache_pages(ino, u64::MAX, mmsim::fs::writeback::SyncMode::None)
        .unwrap();
    assert_eq!(n, 16, "writeback counts the folio's pages");
    assert!(m.sim.mem[head as usize].test(pg::WRITEBACK));
    assert_eq!(m.sim.vmstat.get(VmItem::NrWriteback), 16);
    assert_eq!(
        m.sim.vmstat.get(VmItem::Pgpgout) - out,
        4 * 4,
        "four blocks, in KiB"
    );
    m.check();
    complete_io(&mut m.sim);
    assert!(!m.sim.mem[head as usize].test(pg::WRITEBACK | pg::DIRTY));
    assert_eq!(m.sim.vmstat.get(VmItem::NrWritten) - written, 16);
    assert_eq!(m.sim.vmstat.get(VmItem::NrWriteback), 0);
    m.check();
    let want = m.sim.inode(ino).expected_at(40);
    assert_ne!(want, m.sim.inode(ino).expected_at(41));
    assert_eq!(
        m.sim.inode(ino).disk_at(40),
        want,
        "the block is on the disk"
    );
    m.sim
        .sys_fadvise(m.tid, fd, 32 * PAGE_SIZE, 16 * PAGE_SIZE, Fadvice::Dontneed);
    reads_see_the_newest_content(&mut m, fd, 32..48);
}

/// The machine after a stream of 100 pages (pages 32..48 one 16-page folio) and a
/// one-page write at page 40 through a second descriptor: (machine, the reading
/// descriptor, the writing one, inode, the folio's head).
fn folio_at_32_written_at_40() -> (M, u32, u32, u32, Pfn) {
    let (mut m, fd, ino) = machine(true);
    stream(&mut m, fd, 100);
    let head = m.page(ino, 32);
    assert_eq!(m.sim.mem[head as usize].nr_pages(), 16);
    let (wfd, _) = open(&mut m, "/mnt/data");
    pwrite(&mut m, wfd, 40 * PAGE_SIZE, PAGE_SIZE);
    (m, fd, wfd, ino, head)
}

/// A large folio reclaim tagged (PG_reclaim) whose writeback ends rotates to the inactive
/// tail whole, and pgrotated counts its pages (lru_move_tail: folio_nr_pages).
#[test]
fn a_tagged_large_folio_rotates_whole_at_its_writeback_end_and_counts_its_pages() {
    let (mut m, _, _, ino, head) = folio_at_32_written_at_40();
    m.sim.lru_add_drain_all();
    let n = m
        .sim
        .write_cache_pages(ino, u64::MAX, mmsim::fs::writeback::SyncMode::None)
        .unwrap();
    assert_eq!(n, 16);
    // What shrink_folio_list does to a folio it finds under writeback (or dirty).
    m.sim.SetPageReclaim(head);
    let rotated = m.sim.vmstat.get(VmItem::Pgrotated);
    complete_io(&mut m.sim);
    m.sim.lru_add_drain_all();
    assert!(!m.sim.mem[head as usize].test(pg::RECLAIM | pg::WRITEBACK));
    assert_eq!(m.sim.vmstat.get(VmItem::Pgrotated) - rotated, 16);
    let list = &m.sim.lruvecs[0].lists[LruList::InactiveFile as usize];
    assert_eq!(list.iter().last(), Some(head), "at the inactive tail");
    m.check();
}

/// write_begin makes a folio for the copy where nothing is cached (v6.17+ ext4:
/// fgf_set_order of the length the copy has left), of the index's alignment at most.
/// Measured on Linux 6.18.44 (ext4; /proc/kpageflags of a mapping of the file after
/// the writes): 64 KiB at page 0 is one order-4 folio, 8 KiB at page 64 an order-1 one,
/// and 64 KiB at page 193 is pages 193 (order 0), 194 (1), 196 (2), 200 (3) and 208 (0,
/// the last 4 KiB) — here at 192, 160 and 209 (the same alignments).
#[test]
fn a_write_into_an_uncached_range_makes_folios_of_its_length() {
    let (mut m, _fd, ino) = machine(true);
    let (wfd, _) = open(&mut m, "/mnt/data");
    pwrite(&mut m, wfd, 192 * PAGE_SIZE, 16 * PAGE_SIZE);
    pwrite(&mut m, wfd, 209 * PAGE_SIZE, 16 * PAGE_SIZE);
    pwrite(&mut m, wfd, 160 * PAGE_SIZE, 2 * PAGE_SIZE);
    assert_eq!(
        folios(&m, ino, 256),
        vec![
            (160, 1),
            (192, 4),
            (209, 0),
            (210, 1),
            (212, 2),
            (216, 3),
            (224, 0)
        ]
    );
    assert_eq!(
        m.sim.inode(ino).nr_dirty,
        34,
        "every page of the file's folios"
    );
    m.check();
    // Without large folios every page is order 0.
    let (mut m, _fd, ino) = machine(false);
    let (wfd, _) = open(&mut m, "/mnt/data");
    pwrite(&mut m, wfd, 192 * PAGE_SIZE, 16 * PAGE_SIZE);
    assert!(folios(&m, ino, 256).iter().all(|&(_, o)| o == 0));
}

/// A large folio is never left in a per-CPU LRU batch (folio_may_be_lru_cached; the
/// PageCompound test of 4.x): added to the page cache, it is on its LRU list at once, and
/// moves the order-0 pages queued before it there too, where reclaim sees them. (Kept in
/// the batch, folios of hundreds of pages were out of reclaim's sight: a small cgroup
/// written with 1 MiB writes went OOM with nothing on its lists.)
#[test]
fn a_large_folio_goes_to_the_lru_at_once() {
    let (mut m, _fd, ino) = machine(true);
    let (wfd, _) = open(&mut m, "/mnt/data");
    // An order-0 page first: it waits in the batch.
    pwrite(&mut m, wfd, 160 * PAGE_SIZE, PAGE_SIZE);
    let on_lru = |m: &M, pfn: Pfn| m.sim.mem[pfn as usize].test(pg::LRU);
    let small = m.page(ino, 160);
    assert!(!on_lru(&m, small), "an order-0 page waits in the batch");
    // A 64 KiB folio: on the inactive list at once, and the page before it too.
    pwrite(&mut m, wfd, 192 * PAGE_SIZE, 16 * PAGE_SIZE);
    assert_eq!(folios(&m, ino, 256), vec![(160, 0), (192, 4)]);
    let head = m.page(ino, 192);
    assert!(common::on_lru_list(&m.sim, head, LruList::InactiveFile));
    assert!(on_lru(&m, small), "the batch moved with it");
    assert_eq!(m.sim.vmstat.get(VmItem::NrInactiveFile), 17);
    m.check();
}

/// A writeback bio holds BIO_MAX_VECS (256) vectors and a large folio's blocks are one
/// of them (bio_add_folio): 512 pages written as 32 folios of 16 go in one bio, which the
/// device takes as requests of at most max_sectors_kb (1280 KiB: 320 and 192 pages) and
/// whose pages end writeback together; as order-0 pages they go in two bios of 256.
#[test]
fn a_writeback_bio_holds_256_vectors_and_a_large_folio_is_one() {
    for large in [false, true] {
        let mut m = machine_with_file("/mnt/big", 1024, large, false);
        let (fd, ino) = open(&mut m, "/mnt/big");
        for k in 0..32 {
            pwrite(&mut m, fd, k * 16 * PAGE_SIZE, 16 * PAGE_SIZE);
        }
        complete_io(&mut m.sim);
        assert_eq!(
            folios(&m, ino, 512).len(),
            if large { 32 } else { 512 },
            "large {large}"
        );
        let dev = m.sim.fss[m.sim.inode(ino).fs]
            .device
            .expect("a block device");
        let requests = m.sim.devices[dev].nr_writes;
        let r = m.sim.write_cache_pages(ino, 1024, SyncMode::None);
        assert_eq!(r, Ok(512));
        let bios: Vec<usize> = m
            .sim
            .io
            .iter()
            .flatten()
            .filter(|r| r.kind == IoKind::Write)
            .map(|r| r.pages.len())
            .collect();
        assert_eq!(bios, if large { vec![512] } else { vec![256, 256] });
        assert_eq!(m.sim.devices[dev].nr_writes - requests, 2);
        assert_eq!(m.sim.vmstat.get(VmItem::NrWriteback), 512);
        complete_io(&mut m.sim);
        assert_eq!(m.sim.vmstat.get(VmItem::NrWriteback), 0);
        m.check();
        reads_see_the_newest_content(&mut m, fd, 0..512);
    }
}

/// Invalidation and truncation split folios (a written one keeps its dirty state page by
/// page) and free every frame.
#[test]
fn writes_invalidation_and_truncation_split_folios_and_free_every_frame() {
    let (mut m, fd, wfd, ino, head) = folio_at_32_written_at_40();
    // DONTNEED over part of it starts the folio's writeback (its one dirty block), then
    // splits it to drop the pages: only page 40 stays under writeback, 44..48 go.
    m.sim
        .sys_fadvise(m.tid, fd, 44 * PAGE_SIZE, 4 * PAGE_SIZE, Fadvice::Dontneed);
    assert_eq!(
        m.sim.mem[head as usize].nr_pages(),
        1,
        "the folio was split"
    );
    for i in 32..44 {
        let p: Pfn = m.page(ino, i);
        let f = m.sim.mem[p as usize].flags;
        assert_eq!(f & (pg::HEAD | pg::TAIL | pg::DIRTY), 0);
        assert_eq!(f & pg::WRITEBACK != 0, i == 40, "page {i}");
    }
    for i in 44..48 {
        assert!(
            !matches!(m.entry(ino, i), Entry::Page(_)),
            "page {i} stayed"
        );
    }
    assert_eq!(m.sim.vmstat.get(VmItem::NrWriteback), 1);
    m.check();
    complete_io(&mut m.sim);
    assert_eq!(m.sim.vmstat.get(VmItem::NrWriteback), 0);
    m.check();
    m.sim
        .sys_fadvise(m.tid, fd, 70 * PAGE_SIZE, 4 * PAGE_SIZE, Fadvice::Dontneed);
    m.check();
    // Every read sees the newest content (the content oracle).
    reads_see_the_newest_content(&mut m, fd, 0..160);
    let file_pages = m.sim.vmstat.get(VmItem::NrFilePages);
    assert!(file_pages >= 150, "{file_pages}");
    assert_eq!(m.sim.sys_close(m.tid, fd), Ok(OpResult::None));
    assert_eq!(m.sim.sys_close(m.tid, wfd), Ok(OpResult::None));
    let mut progress = 0;
    let mut r = m.sim.sys_unlink("/mnt/data", &mut progress);
    for _ in 0..100 {
        if r.is_ok() {
            break;
        }
        complete_io(&mut m.sim);
        r = m.sim.sys_unlink("/mnt/data", &mut progress);
    }
    assert_eq!(r, Ok(OpResult::None));
    m.sim.lru_add_drain();
    complete_io(&mut m.sim);
    m.check();
    // The file's frames are free again (the checker matched nr_free_pages to the free
    // lists; a leaked tail would be neither free nor referenced).
    assert!(m.sim.vmstat.get(VmItem::NrFilePages) < file_pages - 150);
}

/// A shared read-write mapping of the whole file (256 pages); its first virtual page.
fn map(m: &mut M) -> u64 {
    mmap_at(
        &mut m.sim,
        m.tid,
        Some("/mnt/data"),
        256 * PAGE_SIZE,
        0,
        3,
        true,
    ) / PAGE_SIZE
}

/// Touch `pages` pages from virtual page `vpn`, completing the IO the faults wait for.
fn touch(m: &mut M, vpn: u64, pages: u64, write: bool) {
    for _ in 0..1000 {
        if touch_pages(&mut m.sim, 0, m.tid, vpn * PAGE_SIZE, pages, write).is_ok() {
            return;
        }
        complete_io(&mut m.sim);
    }
    panic!("the touch did not finish");
}

/// The PTE of virtual page `vpn` of the test task.
fn pte_of(m: &M, vpn: u64) -> u64 {
    m.sim.mm(m.sim.tasks[m.tid].mm.unwrap()).pgtable.get(vpn)
}

/// The virtual pages in [from, to) whose PTE is present.
fn mapped(m: &M, from: u64, to: u64) -> Vec<u64> {
    (from..to)
        .filter(|&v| pte_of(m, v) & pte::PRESENT != 0)
        .collect()
}

/// 6.18 maps a large folio whole (`map-entire-folio`): a read fault in the middle of the
/// order-5 folio [64, 96) maps its 32 pages — fault-around meets the folio in its 16-page
/// window [64, 80) and maps the rest of it too — without splitting it; each PTE holds a
/// reference of the folio (its head) and each page's mapcount is its own. Without the
/// rule fault-around maps the window's 16 pages of the folio, still unsplit.
#[test]
fn a_fault_maps_a_large_folio_whole_on_6_18_and_its_window_before() {
    for (whole, want) in [(true, 64u64..96), (false, 64..80)] {
        let n = want.end - want.start;
        let mut f = features(true);
        f.map_entire_folio = whole;
        let text = unit_machine_toml(
            "lf",
            "64MiB",
            "program = \"dd\"\npath = \"/tmp/dd\"\nsize = \"4KiB\"\n",
        ) + &common::file_toml("/mnt/data", 256 * PAGE_SIZE, true);
        let mut m = M::new(&text, f);
        let (fd, ino) = open(&mut m, "/mnt/data");
        stream(&mut m, fd, 65);
        complete_io(&mut m.sim);
        let head = m.page(ino, 64);
        assert_eq!(folios(&m, ino, 96).last(), Some(&(64, 5)));
        let base = map(&mut m);
        // The folio lies within one page table (the rule's condition).
        assert_eq!((base + 64) / 512, (base + 95) / 512, "base {base:#x}");
        let refs = m.sim.mem[head as usize].refcount;
        let faults = m.sim.vmstat.get(VmItem::Pgfault);
        touch(&mut m, base + 70, 1, false);
        assert_eq!(m.sim.vmstat.get(VmItem::Pgfault) - faults, 1);
        let got = mapped(&m, base, base + 256);
        let want_v: Vec<u64> = want.clone().map(|i| base + i).collect();
        assert_eq!(got, want_v, "map-entire-folio {whole}");
        for i in want.clone() {
            let p = m.page(ino, i);
            assert_eq!(pte::pfn(pte_of(&m, base + i)), p);
            assert_eq!(m.sim.mem[p as usize].mapcount, 0, "page {i}");
        }
        assert!(m.sim.mem[head as usize].test(pg::HEAD), "not split");
        assert_eq!(
            m.sim.mem[head as usize].refcount - refs,
            n as i32,
            "a reference per PTE"
        );
        assert_eq!(m.sim.vmstat.get(VmItem::NrMapped), n as i64);
        m.check();
    }
}

/// folio_referenced counts the mappings with a young PTE of the folio, not the PTEs: 32
/// young PTEs in one mapping are one reference (the folio is kept, not activated, on
/// reclaim's first look), and two mappings of it are two.
#[test]
fn folio_referenced_counts_each_mapping_once() {
    let (mut m, fd, ino) = machine(true);
    stream(&mut m, fd, 65);
    complete_io(&mut m.sim);
    let head = m.page(ino, 64);
    let a = map(&mut m);
    touch(&mut m, a + 64, 1, false);
    assert_eq!(mapped(&m, a + 64, a + 96).len(), 32);
    let (refs, _) = m.sim.page_referenced(head, ROOT_MEM_CGROUP);
    assert_eq!(refs, 1);
    assert!(
        (64..96).all(|i| pte_of(&m, a + i) & pte::YOUNG == 0),
        "young bits cleared"
    );
    assert_eq!(m.sim.page_referenced(head, ROOT_MEM_CGROUP).0, 0);
    // A second mapping, and the first one young again (fresh PTEs after a munmap).
    let b = map(&mut m);
    touch(&mut m, b + 90, 1, false);
    assert_eq!(
        m.sim.sys_munmap(m.tid, a * PAGE_SIZE, 256 * PAGE_SIZE),
        Ok(OpResult::None)
    );
    complete_io(&mut m.sim);
    let a = map(&mut m);
    touch(&mut m, a + 64, 1, false);
    assert_eq!(m.sim.page_referenced(head, ROOT_MEM_CGROUP).0, 2);
    m.check();
}

/// The order-5 folio [96, 128), read ahead and never read, mapped whole by a read fault
/// in a shared mapping of the file: (machine, fd, inode, the mapping's first page).
fn mapped_folio_at_96() -> (M, u32, u32, u64) {
    let (mut m, fd, ino) = machine(true);
    stream(&mut m, fd, 65);
    complete_io(&mut m.sim);
    let base = map(&mut m);
    touch(&mut m, base + 100, 1, false);
    complete_io(&mut m.sim);
    (m, fd, ino, base)
}

/// Reclaim of a mapped large folio: the first look finds its PTEs young (one mapping:
/// kept, PG_referenced), the second unmaps every page and evicts the folio whole, a
/// shadow at each index. The folio [96, 128) was read ahead and never read.
#[test]
fn reclaim_unmaps_a_mapped_folio_whole() {
    let (mut m, _, ino, base) = mapped_folio_at_96();
    let head = m.page(ino, 96);
    assert_eq!(mapped(&m, base + 96, base + 128).len(), 32);
    assert!(!m.sim.mem[head as usize].test(pg::REFERENCED));
    let reclaim = |m: &mut M| {
        m.sim.lru_add_drain();
        let mut sc = ScanControl::new(4096, false, Gfp::KERNEL);
        m.sim
            .shrink_inactive_list(0, ROOT_MEM_CGROUP, 4096, LruList::InactiveFile, &mut sc);
        complete_io(&mut m.sim);
    };
    reclaim(&mut m);
    assert_eq!(m.page(ino, 96), head, "kept on the first look");
    assert!(m.sim.mem[head as usize].test(pg::REFERENCED));
    assert!(!m.sim.mem[head as usize].test(pg::ACTIVE));
    assert_eq!(mapped(&m, base + 96, base + 128).len(), 32);
    m.check();
    reclaim(&mut m);
    assert!(mapped(&m, base + 96, base + 128).is_empty());
    for i in 96..128 {
        assert!(matches!(m.entry(ino, i), Entry::Shadow(_)), "index {i}");
    }
    assert_eq!(m.sim.vmstat.get(VmItem::NrMapped), 0);
    m.check();
}

/// A write through a shared mapping to a page of a mapped large folio: 6.18
/// (`map-entire-folio`) keeps the folio — page_mkwrite dirties it whole (every block
/// dirty, NR_FILE_DIRTY counts its 32 pages) and wp_page_reuse makes only the written
/// page's PTE writable and dirty. Without the rule the folio is split (do_wp_page wants
/// an order-0 page to dirty): each page keeps its PTE, takes the cache's reference and
/// its PTE's, and only the written page is dirty.
#[test]
fn a_write_fault_dirties_a_mapped_folio_whole_on_6_18_and_splits_it_before() {
    for whole in [true, false] {
        // The folio mapped whole by a read fault; then the write under the rule or not.
        let (mut m, fd, ino, base) = mapped_folio_at_96();
        m.sim.features.map_entire_folio = whole;
        let head = m.page(ino, 96);
        let dirty = m.sim.vmstat.get(VmItem::NrDirty);
        touch(&mut m, base + 105, 1, true);
        m.sim.lru_add_drain(); // the tails of a folio off the LRU wait in the CPU's batch
        if whole {
            assert!(m.sim.mem[head as usize].test(pg::HEAD), "not split");
            assert!(m.sim.mem[head as usize].test(pg::DIRTY));
            assert_eq!(m.sim.vmstat.get(VmItem::NrDirty) - dirty, 32);
            for i in 96..128 {
                let p = pte_of(&m, base + i);
                assert_eq!(pte::pfn(p), m.page(ino, i), "page {i}");
                let w = p & (pte::WRITE | pte::DIRTY) == pte::WRITE | pte::DIRTY;
                assert_eq!(w, i == 105, "page {i}: only the written PTE");
            }
        } else {
            for i in 96..128 {
                let p = m.page(ino, i);
                let page = &m.sim.mem[p as usize];
                assert_eq!(page.flags & (pg::HEAD | pg::TAIL), 0, "page {i} split");
                assert_eq!(pte::pfn(pte_of(&m, base + i)), p);
                assert_eq!(page.refcount, 2, "page {i}: the cache's and its PTE's");
                assert_eq!(page.test(pg::DIRTY), i == 105, "page {i}");
            }
        }
        m.check();
        unmap_and_read_back(&mut m, fd, base);
    }
}

/// munmap of the test's 256-page mapping at `base` (the zap moves the PTEs' dirty bits to
/// the folios), its writeback completed; then reads of pages [90, 130) find the newest
/// content (the oracle).
fn unmap_and_read_back(m: &mut M, fd: u32, base: u64) {
    assert_eq!(
        m.sim.sys_munmap(m.tid, base * PAGE_SIZE, 256 * PAGE_SIZE),
        Ok(OpResult::None)
    );
    complete_io(&mut m.sim);
    m.check();
    reads_see_the_newest_content(m, fd, 90..130);
}

/// 6.18's write fault on a cached large folio no PTE maps (do_shared_fault): one fault
/// maps the whole folio writable and dirty (finish_fault's set_pte_range with the write)
/// and dirties it whole; its writeback write-protects and cleans every page's PTE
/// (folio_mkclean), so the next store to any of its pages faults again, and maps only
/// that page writable (wp_page_reuse).
#[test]
fn a_write_fault_maps_a_cached_folio_whole_writable_and_writeback_cleans_every_pte() {
    let (mut m, fd, ino) = machine(true);
    stream(&mut m, fd, 65);
    complete_io(&mut m.sim);
    let base = map(&mut m);
    let head = m.page(ino, 96);
    assert_eq!(folios(&m, ino, 128).last(), Some(&(96, 5)));
    let faults = m.sim.vmstat.get(VmItem::Pgfault);
    touch(&mut m, base + 100, 4, true);
    assert_eq!(m.sim.vmstat.get(VmItem::Pgfault) - faults, 1, "one fault");
    assert!(m.sim.mem[head as usize].test(pg::HEAD | pg::DIRTY));
    let writable =
        |m: &M, v: u64| pte_of(m, v) & (pte::WRITE | pte::DIRTY) == pte::WRITE | pte::DIRTY;
    for i in 96..128 {
        assert!(writable(&m, base + i), "page {i} mapped writable and dirty");
    }
    m.check();
    // Writeback cleans the folio's every PTE.
    assert_eq!(
        m.sim.write_cache_pages(ino, u64::MAX, SyncMode::None),
        Ok(32)
    );
    complete_io(&mut m.sim);
    for i in 96..128 {
        let p = pte_of(&m, base + i);
        assert_ne!(p & pte::PRESENT, 0, "page {i} stays mapped");
        assert_eq!(p & (pte::WRITE | pte::DIRTY), 0, "page {i} cleaned");
    }
    assert!(!m.sim.mem[head as usize].test(pg::DIRTY));
    m.check();
    let faults = m.sim.vmstat.get(VmItem::Pgfault);
    touch(&mut m, base + 120, 1, true);
    assert_eq!(
        m.sim.vmstat.get(VmItem::Pgfault) - faults,
        1,
        "the rewrite faults"
    );
    assert!(m.sim.mem[head as usize].test(pg::DIRTY));
    for i in 96..128 {
        assert_eq!(writable(&m, base + i), i == 120, "page {i}");
    }
    m.check();
    unmap_and_read_back(&mut m, fd, base);
}

/// munmap of a mapped large folio whose 32 PTEs are young marks it accessed once (the
/// zap batches a folio's PTEs, folio_pte_batch): PG_referenced, not activated.
#[test]
fn munmap_marks_a_young_folio_accessed_once() {
    let (mut m, _, ino, base) = mapped_folio_at_96();
    let head = m.page(ino, 96);
    m.sim.lru_add_drain();
    let before = m.sim.vmstat.get(VmItem::Pgactivate);
    assert_eq!(
        m.sim.sys_munmap(m.tid, base * PAGE_SIZE, 256 * PAGE_SIZE),
        Ok(OpResult::None)
    );
    complete_io(&mut m.sim);
    m.sim.lru_add_drain();
    assert!(m.sim.mem[head as usize].test(pg::REFERENCED));
    assert!(!m.sim.mem[head as usize].test(pg::ACTIVE));
    assert_eq!(m.sim.vmstat.get(VmItem::Pgactivate), before);
    m.check();
}

/// Async readahead of a stream interleaved with random reads through one mapping, as
/// Linux 6.18.44 did it (tracefs `mm_filemap_fault` / `mm_filemap_add_to_page_cache` on the
/// VM, ext4, 128 KiB readahead: a 64 KiB scan with one random read between its requests).
/// The scan's first fault reads around it, order 0 ([240, 272)); the marker at 264 pushes
/// the window to [272, 304) in order-2 folios. A random read elsewhere reads around it and
/// leaves the file's readahead state (start, size, order 0) there, so the next marker hit
/// (272) is an "interleaved" one: page_cache_next_miss from 273 starts inside the order-2
/// folio, its xarray walk trails the indices it reports by one, finds the 32 cached slots
/// [272, 304) and reports none before 305 — one more than the window — and no readahead
/// is started. The scan then misses at 304 (read around: order 0, [304, 320)), whose
/// marker (312) starts the ramp again: [320, 352) in order-2 folios, and the hit at 320
/// reads [352, 384) in order-4 ones (the VM: the same folios at the same offsets).
#[test]
fn an_interleaved_marker_hit_inside_a_large_folio_reads_nothing_ahead() {
    let mut m = machine_with_file("/mnt/data", 512, true, false);
    let (_, ino) = open(&mut m, "/mnt/data");
    let base = mmap_at(
        &mut m.sim,
        m.tid,
        Some("/mnt/data"),
        512 * PAGE_SIZE,
        0,
        1,
        true,
    ) / PAGE_SIZE;
    assert_eq!(base % 512, 0, "the mapping starts a page table");
    touch(&mut m, base + 256, 16, false);
    touch(&mut m, base + 20, 1, false); // the random read elsewhere
    for i in [272, 288, 304, 320] {
        touch(&mut m, base + i, 16, false);
    }
    complete_io(&mut m.sim);
    let mut want: Vec<(u64, u32)> = (240..272).map(|i| (i, 0)).collect();
    want.extend((272..304).step_by(4).map(|i| (i, 2)));
    want.extend((304..320).map(|i| (i, 0)));
    want.extend((320..352).step_by(4).map(|i| (i, 2)));
    want.extend([(352, 4), (368, 4)]); // the last request's marker hit at 320
    let got: Vec<(u64, u32)> = folios(&m, ino, 512)
        .into_iter()
        .filter(|&(i, _)| i >= 240)
        .collect();
    assert_eq!(got, want);
    m.check();
}

/// One operation of the random sequences.
#[derive(Clone, Debug)]
enum Op {
    /// pread of `pages` at `index` (sequential streams come from runs of these).
    Read(u64, u64),
    /// A run of one-page reads from `index`: the order ramp.
    Stream(u64, u64),
    /// pwrite of `len` bytes at byte `pos`.
    Write(u64, u64),
    /// Writeback of up to `n` pages (WB_SYNC_NONE), its IO left in flight until the next
    /// operation's end.
    Writeback(u64),
    /// POSIX_FADV_DONTNEED over `pages` from `index`.
    DontNeed(u64, u64),
    /// Reclaim of `n` pages from the inactive file list (MGLRU: of the lruvec).
    Reclaim(u64),
    /// Deactivation of `n` pages of the active file list (MGLRU: the node's aging).
    Deactivate(u64),
    /// Touch `n` pages from `index` through the shared mapping (mapped on first use).
    Touch(u64, u64, bool),
    /// munmap of the mapping.
    Unmap,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u64..256, 1u64..40).prop_map(|(i, n)| Op::Read(i, n)),
        (0u64..256, 1u64..120).prop_map(|(i, n)| Op::Stream(i, n)),
        (0u64..256 * 4096, 1u64..80_000).prop_map(|(p, n)| Op::Write(p, n.min(256 * 4096 - p))),
        (1u64..64).prop_map(Op::Writeback),
        (0u64..256, 1u64..64).prop_map(|(i, n)| Op::DontNeed(i, n)),
        (1u64..128).prop_map(Op::Reclaim),
        (1u64..128).prop_map(Op::Deactivate),
        (0u64..256, 1u64..40, any::<bool>()).prop_map(|(i, n, w)| Op::Touch(i, n, w)),
        Just(Op::Unmap),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    /// Any sequence of reads, streams, writes, invalidations, reclaim and accesses through
    /// a shared mapping keeps every invariant (folio chains, LRU sizes in pages,
    /// references of mapped folios, mapcounts, free lists, memcg charges) and the content
    /// every read sees.
    #[test]
    fn random_operations_keep_the_invariants_with_large_folios(
        ops in proptest::collection::vec(op(), 1..24),
        mglru in any::<bool>(),
    ) {
        let (mut m, fd, ino) = machine_under(true, mglru);
        let (wfd, _) = open(&mut m, "/mnt/data");
        let mut base = None;
        for o in ops {
            match o {
                Op::Read(i, n) => {
                    pread(&mut m, fd, n.min(256 - i), i);
                }
                Op::Stream(i, n) => {
                    for k in i..(i + n).min(256) {
                        pread(&mut m, fd, 1, k);
                    }
                }
                Op::Write(p, n) => {
                    pwrite(&mut m, wfd, p, n);
                }
                Op::Writeback(n) => {
                    let r = m.sim.write_cache_pages(ino, n, mmsim::fs::writeback::SyncMode::None);
                    prop_assert!(r.is_ok(), "{r:?}");
                }
                Op::DontNeed(i, n) => {
                    m.sim.sys_fadvise(m.tid, fd, i * PAGE_SIZE, n * PAGE_SIZE, Fadvice::Dontneed);
                }
                Op::Reclaim(n) => {
                    let mut sc = ScanControl::new(n, false, Gfp::KERNEL);
                    m.sim.lru_add_drain();
                    if mglru {
                        sc.may_swap = false;
                        m.sim.try_to_shrink_lruvec(0, ROOT_MEM_CGROUP, &mut sc);
                    } else {
                        m.sim.shrink_inactive_list(0, ROOT_MEM_CGROUP, n, LruList::InactiveFile, &mut sc);
                    }
                }
                Op::Deactivate(n) => {
                    let mut sc = ScanControl::new(n, false, Gfp::KERNEL);
                    if mglru {
                        // The aging: a new generation (the walk of the mapping's PTEs).
                        m.sim.lru_gen_age_node(0, &mut sc);
                    } else {
                        m.sim.shrink_active_list(0, ROOT_MEM_CGROUP, n, LruList::ActiveFile, &mut sc);
                    }
                }
                Op::Touch(i, n, write) => {
                    let b = *base.get_or_insert_with(|| map(&mut m));
                    touch(&mut m, b + i, n.min(256 - i), write);
                }
                Op::Unmap => {
                    if let Some(b) = base.take() {
                        let r = m.sim.sys_munmap(m.tid, b * PAGE_SIZE, 256 * PAGE_SIZE);
                        prop_assert_eq!(r, Ok(OpResult::None));
                    }
                }
            }
            if let Err(e) = mmsim::mm::check::check_all(&m.sim) {
                prop_assert!(false, "after {o:?}: {e}");
            }
            if !matches!(o, Op::Writeback(_)) {
                complete_io(&mut m.sim);
            }
        }
        for i in 0..256 {
            pread(&mut m, fd, 1, i);
        }
        prop_assert!(m.sim.oracle_violations.is_empty(), "{:?}", m.sim.oracle_violations);
    }
}
