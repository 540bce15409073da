//! tmpfs pages go to swap (mm/shmem.c): reclaim writes a dirty tmpfs page with
//! shmem_writepage (the page moves to the swap cache, the file keeps a swap entry), and the
//! next read, write or fault of it swaps it back in (shmem_swapin_folio); truncate frees the
//! swap entries. Without swap, tmpfs pages stay resident.

use crate::common;

use common::{complete_io_and_ipis, machine_toml, run_on, run_sc, UnitMachine};
use mmsim::kernel::KernelEra;
use mmsim::mm::page::{pg, NIL, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::vmscan::ScanControl;
use mmsim::mm::vmstat::VmItem;
use mmsim::scenario::parse_scenario;
use mmsim::sched::Wait;
use mmsim::sim::RunEnd;
use mmsim::workload::OpResult;

/// Pages of the test file.
const PAGES: u64 = 16;

/// A 64 MiB machine with `swap` (or none), a tmpfs on /tmp, and the user task `t`.
fn machine(swap: Option<&str>) -> UnitMachine {
    let text = machine_toml("shmem", 2, "64MiB", swap, "1GiB", "/mnt")
        + "\n[[tasks]]\nname = \"t\"\ncpu = 0\nprogram = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n";
    UnitMachine::new(&text, KernelEra::V6_18.features("patched").expect("preset"))
}

/// Call a restartable syscall until it stops sleeping, completing IO between the calls.
fn retry<T>(m: &mut UnitMachine, mut call: impl FnMut(&mut UnitMachine) -> Result<T, Wait>) -> T {
    for _ in 0..100 {
        match call(m) {
            Ok(r) => return r,
            Err(_) => {
                complete_io_and_ipis(&mut m.sim);
                run_on(&mut m.sim, 0, m.tid);
            }
        }
    }
    panic!("the call kept sleeping");
}

/// Create /tmp/f with `PAGES` pages written; returns its inode and an open descriptor.
fn write_file(m: &mut UnitMachine) -> (u32, u32) {
    let tid = m.tid;
    let mut progress = 0;
    let fd = match m.sim.sys_open(tid, "/tmp/f", true, false, &mut progress) {
        Ok(OpResult::Fd(fd)) => fd,
        other => panic!("open: {other:?}"),
    };
    let mut progress = 0;
    let r = retry(m, |m| {
        m.sim
            .sys_write(tid, fd, PAGES * PAGE_SIZE, Some(0), &mut progress)
    });
    assert_eq!(r, OpResult::Bytes(PAGES * PAGE_SIZE));
    let ino = m.sim.fss[0].names["/tmp/f"];
    (ino, fd)
}

/// The invariant checker and the page-table checker (check_ptes counts each swap slot's
/// references: swap PTEs and tmpfs swap entries) pass.
fn check(m: &UnitMachine) {
    m.check();
    if let Err(e) = mmsim::mm::check::check_ptes(&m.sim) {
        panic!("page tables: {e}");
    }
}

/// One reclaim pass of node 0 at priority 0 in the task's context, its IO completed.
fn reclaim_pass(m: &mut UnitMachine) {
    run_on(&mut m.sim, 0, m.tid);
    m.sim.lru_add_drain_all();
    let mut sc = ScanControl::new(1 << 20, false, Gfp::KERNEL);
    sc.priority = 0;
    m.sim.shrink_node(0, &mut sc);
    complete_io_and_ipis(&mut m.sim);
}

/// Reclaim at priority 0 until no page of the file is left in memory: the file holds swap
/// entries only and the swap cache is empty (written, then dropped as clean). Returns the
/// slots, by index.
fn swap_out_file(m: &mut UnitMachine, ino: u32) -> Vec<u32> {
    for _round in 0..400 {
        let entries: Vec<Entry> = (0..PAGES).map(|i| m.entry(ino, i)).collect();
        let cached = m.sim.swap.as_ref().unwrap().cache.iter().any(|&p| p != NIL);
        if !cached && entries.iter().all(|e| matches!(e, Entry::Shadow(_))) {
            check(m);
            return entries
                .iter()
                .map(|e| match e {
                    Entry::Shadow(off) => *off as u32,
                    _ => unreachable!(),
                })
                .collect();
        }
        reclaim_pass(m);
        check(m);
    }
    panic!("the tmpfs pages were not swapped out");
}

/// Every read saw the newest write (content oracle).
fn assert_oracle_clean(m: &UnitMachine) {
    assert!(
        m.sim.oracle_violations.is_empty(),
        "{:?}",
        m.sim.oracle_violations
    );
}

fn stat(m: &UnitMachine, item: VmItem) -> i64 {
    m.sim.vmstat.get(item)
}

fn swap_free(m: &UnitMachine) -> u64 {
    m.sim.swap.as_ref().unwrap().free_pages
}

#[test]
fn reclaim_swaps_tmpfs_pages_out_and_a_read_swaps_them_back_in() {
    let mut m = machine(Some("64MiB"));
    let total = swap_free(&m);
    let (ino, fd) = write_file(&mut m);
    assert_eq!(stat(&m, VmItem::NrShmem), PAGES as i64);
    let slots = swap_out_file(&mut m, ino);
    // Every page went through shmem_writepage: written once, then dropped from the swap
    // cache; the file's slots hold the swap entries, one reference each.
    assert_eq!(stat(&m, VmItem::Pswpout), PAGES as i64);
    assert_eq!(stat(&m, VmItem::NrShmem), 0);
    assert_eq!(m.sim.inode(ino).mapping.tree.nr_pages(), 0);
    assert_eq!(swap_free(&m), total - PAGES);
    let sw = m.sim.swap.as_ref().unwrap();
    assert!(slots.iter().all(|&s| sw.swap_map[s as usize] == 1));
    // A read swaps them in: it sleeps on the swap read (with readahead around the slot),
    // then finds every page back in the file, dirty, and the slots free.
    let tid = m.tid;
    let mut progress = 0;
    let mut slept = 0;
    let r = retry(&mut m, |m| {
        let r = m
            .sim
            .sys_read(tid, fd, PAGES * PAGE_SIZE, Some(0), &mut progress);
        slept += usize::from(r.is_err());
        r
    });
    assert_eq!(r, OpResult::Bytes(PAGES * PAGE_SIZE));
    assert!(
        slept >= 1,
        "the first read of a swapped-out page sleeps on its IO"
    );
    assert_eq!(stat(&m, VmItem::Pswpin), PAGES as i64);
    assert_eq!(stat(&m, VmItem::NrShmem), PAGES as i64);
    assert_eq!(stat(&m, VmItem::NrSwapcached), 0);
    for i in 0..PAGES {
        let p = m.page(ino, i);
        assert!(
            m.sim.mem[p as usize].test(pg::DIRTY),
            "page {i} dirty again"
        );
        assert!(!m.sim.mem[p as usize].test(pg::SWAPCACHE));
    }
    assert_eq!(swap_free(&m), total, "swap-in frees the slots");
    assert_oracle_clean(&m);
    check(&m);
}

#[test]
fn a_page_still_in_the_swap_cache_comes_back_without_io() {
    let mut m = machine(Some("64MiB"));
    let (ino, fd) = write_file(&mut m);
    // One reclaim pass at priority 0 with the IO completed: the pages are written and
    // clean in the swap cache, not yet dropped.
    reclaim_pass(&mut m);
    check(&m);
    let in_cache = (0..PAGES)
        .filter(|&i| match m.entry(ino, i) {
            Entry::Shadow(off) => m.sim.swap.as_ref().unwrap().cache[off as usize] != NIL,
            _ => false,
        })
        .count() as u64;
    assert!(in_cache > 0, "some pages wait in the swap cache");
    // A write over them: shmem_write_begin swaps them in from the swap cache, no read.
    let tid = m.tid;
    let mut progress = 0;
    let r = retry(&mut m, |m| {
        m.sim
            .sys_write(tid, fd, PAGES * PAGE_SIZE, Some(0), &mut progress)
    });
    assert_eq!(r, OpResult::Bytes(PAGES * PAGE_SIZE));
    assert_eq!(
        stat(&m, VmItem::Pswpin),
        0,
        "pages still in the swap cache are taken from it"
    );
    assert_eq!(m.sim.inode(ino).mapping.tree.nr_pages(), PAGES);
    assert_oracle_clean(&m);
    check(&m);
}

#[test]
fn truncating_a_swapped_out_tmpfs_file_frees_its_swap_slots() {
    let mut m = machine(Some("64MiB"));
    let total = swap_free(&m);
    let (ino, fd) = write_file(&mut m);
    swap_out_file(&mut m, ino);
    assert_eq!(swap_free(&m), total - PAGES);
    assert_eq!(m.sim.sys_close(m.tid, fd), Ok(OpResult::None));
    let mut progress = 0;
    let r = retry(&mut m, |m| m.sim.sys_unlink("/tmp/f", &mut progress));
    assert_eq!(r, OpResult::None);
    assert_eq!(swap_free(&m), total, "unlink frees every slot");
    assert_eq!(stat(&m, VmItem::Pswpin), 0, "nothing is read back");
    check(&m);
}

#[test]
fn a_fault_on_a_swapped_out_tmpfs_mapping_is_a_major_fault() {
    let mut m = machine(Some("64MiB"));
    let (ino, fd) = write_file(&mut m);
    swap_out_file(&mut m, ino);
    let tid = m.tid;
    let addr = common::mmap_at(
        &mut m.sim,
        tid,
        Some("/tmp/f"),
        PAGES * PAGE_SIZE,
        0,
        3, // PROT_READ | PROT_WRITE
        true,
    );
    let before = stat(&m, VmItem::Pgmajfault);
    let mut touched = None;
    for _ in 0..100 {
        match common::touch_pages(&mut m.sim, 0, tid, addr, 1, false) {
            Ok(r) => {
                touched = Some(r);
                break;
            }
            Err(_) => {
                complete_io_and_ipis(&mut m.sim);
            }
        }
    }
    assert!(
        touched.is_some(),
        "the fault completes once its read is done"
    );
    assert_eq!(stat(&m, VmItem::Pgmajfault), before + 1);
    assert!(matches!(m.entry(ino, 0), Entry::Page(_)));
    assert_oracle_clean(&m);
    let _ = fd;
    check(&m);
}

#[test]
fn without_swap_tmpfs_pages_stay_resident() {
    let mut m = machine(None);
    let (ino, _fd) = write_file(&mut m);
    for _ in 0..4 {
        reclaim_pass(&mut m);
    }
    assert_eq!(m.sim.inode(ino).mapping.tree.nr_pages(), PAGES);
    assert_eq!(stat(&m, VmItem::NrShmem), PAGES as i64);
    check(&m);
}

/// bonnie on a tmpfs in a cgroup a quarter the size of its files.
fn bonnie(swap: bool) -> String {
    let swap = if swap {
        "[swap]\nsize = \"64MiB\"\n"
    } else {
        ""
    };
    format!(
        r#"name = "shmem-bonnie"
kernel = "6.18"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "64MiB"
{swap}
[[filesystems]]
mount = "/tmp"
type = "tmpfs"
[[cgroups]]
name = "box"
memory_max = "4MiB"
[[tasks]]
name = "b"
cpu = 0
cgroup = "box"
program = "bonnie"
path = "/tmp/d"
files = 32
file_size = "512KiB"
block_size = "64KiB"
iterations = 1
"#
    )
}

#[test]
fn a_cgroup_writes_and_reads_tmpfs_files_four_times_its_limit_through_swap() {
    let sc = parse_scenario(&bonnie(true), "bonnie", &[]).expect("parses");
    let r = run_sc(
        &sc,
        KernelEra::V6_18.features("patched").unwrap(),
        true,
        2_000_000,
    );
    assert_eq!(r.end, RunEnd::Completed);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    let box_ = &r.cgroups[1];
    assert_eq!(box_.events.oom_kill, 0);
    // Each file is read back once: every page written was swapped out, most of them
    // read in again.
    let pages = 2 * 32 * 512 / 4; // SeqCreate and RandCreate
    assert!(
        r.vmstat["pswpout"] >= pages * 3 / 4,
        "{}",
        r.vmstat["pswpout"]
    );
    assert!(r.vmstat["pswpin"] >= pages / 2, "{}", r.vmstat["pswpin"]);
    assert!(box_.swap_peak >= 8 << 20, "swap peak {}", box_.swap_peak);
    assert_eq!(box_.swap_current, 0, "deleting the files frees their swap");
    // Without swap the same cgroup has nowhere to put them.
    let sc = parse_scenario(&bonnie(false), "bonnie", &[]).expect("parses");
    let r = run_sc(
        &sc,
        KernelEra::V6_18.features("patched").unwrap(),
        true,
        2_000_000,
    );
    assert!(r.cgroups[1].events.oom_kill > 0);
}

/// A machine whose tmpfs is `size` large, with 64 MiB of swap.
fn machine_with_tmpfs_size(size: &str) -> UnitMachine {
    let text = machine_toml("shmem", 2, "64MiB", Some("64MiB"), "1GiB", "/mnt").replace(
        "type = \"tmpfs\"",
        &format!("type = \"tmpfs\"\nsize = \"{size}\""),
    ) + "\n[[tasks]]\nname = \"t\"\ncpu = 0\nprogram = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n";
    UnitMachine::new(&text, KernelEra::V6_18.features("patched").expect("preset"))
}

fn open(m: &mut UnitMachine, path: &str) -> u32 {
    let mut progress = 0;
    match m.sim.sys_open(m.tid, path, true, false, &mut progress) {
        Ok(OpResult::Fd(fd)) => fd,
        other => panic!("open {path}: {other:?}"),
    }
}

#[test]
fn a_full_tmpfs_is_enospc_and_swapped_out_pages_still_count() {
    // A tmpfs of 24 pages: the 16-page file fits, a second one gets the 8 pages left.
    let mut m = machine_with_tmpfs_size("96KiB");
    let (ino, fd) = write_file(&mut m);
    swap_out_file(&mut m, ino);
    assert_eq!(
        m.sim.fss[0].shmem_used_blocks, PAGES,
        "swap entries keep their blocks"
    );
    let tid = m.tid;
    let fd2 = open(&mut m, "/tmp/g");
    let mut progress = 0;
    let r = retry(&mut m, |m| {
        m.sim
            .sys_write(tid, fd2, PAGES * PAGE_SIZE, Some(0), &mut progress)
    });
    assert_eq!(
        r,
        OpResult::Bytes(8 * PAGE_SIZE),
        "the write stops where the tmpfs is full"
    );
    let mut progress = 0;
    let r = retry(&mut m, |m| {
        m.sim
            .sys_write(tid, fd2, PAGE_SIZE, Some(8 * PAGE_SIZE), &mut progress)
    });
    assert_eq!(r, OpResult::Err(mmsim::workload::Errno::ENOSPC));
    // Rewriting a page the file has needs no block.
    let mut progress = 0;
    let r = retry(&mut m, |m| {
        m.sim.sys_write(tid, fd2, PAGE_SIZE, Some(0), &mut progress)
    });
    assert_eq!(r, OpResult::Bytes(PAGE_SIZE));
    check(&m);
    // Unlinking the swapped-out file gives its blocks back once it is closed.
    assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
    let mut progress = 0;
    let r = retry(&mut m, |m| m.sim.sys_unlink("/tmp/f", &mut progress));
    assert_eq!(r, OpResult::None);
    assert_eq!(m.sim.fss[0].shmem_used_blocks, 8);
    let mut progress = 0;
    let r = retry(&mut m, |m| {
        m.sim
            .sys_write(tid, fd2, PAGE_SIZE, Some(8 * PAGE_SIZE), &mut progress)
    });
    assert_eq!(r, OpResult::Bytes(PAGE_SIZE));
    check(&m);
}

#[test]
fn a_failed_swap_read_of_a_tmpfs_page_is_eio_and_the_entry_stays() {
    let text = machine_toml("shmem", 2, "64MiB", Some("64MiB"), "1GiB", "/mnt").replace(
        "[swap]\nsize = \"64MiB\"\npreset = \"ssd\"\n",
        "[swap]\nsize = \"64MiB\"\npreset = \"ssd\"\nread_error_rate = 1\n",
    ) + "\n[[tasks]]\nname = \"t\"\ncpu = 0\nprogram = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n";
    let mut m = UnitMachine::new(&text, KernelEra::V6_18.features("patched").expect("preset"));
    let total = swap_free(&m);
    let (ino, fd) = write_file(&mut m);
    let slots = swap_out_file(&mut m, ino);
    let tid = m.tid;
    let mut progress = 0;
    let r = retry(&mut m, |m| {
        m.sim.sys_read(tid, fd, PAGE_SIZE, Some(0), &mut progress)
    });
    assert_eq!(r, OpResult::Err(mmsim::workload::Errno::EIO));
    // The swap entry stays in the file (its copy in swap is all there is); the page that
    // failed waits in the swap cache, not uptodate.
    assert_eq!(m.entry(ino, 0), Entry::Shadow(u64::from(slots[0])));
    let p = m.sim.swap.as_ref().unwrap().cache[slots[0] as usize];
    assert_ne!(p, NIL);
    assert!(!m.sim.mem[p as usize].test(pg::UPTODATE));
    check(&m);
    // Unlinking the file frees every slot and the failed page.
    assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
    let mut progress = 0;
    let r = retry(&mut m, |m| m.sim.sys_unlink("/tmp/f", &mut progress));
    assert_eq!(r, OpResult::None);
    assert_eq!(swap_free(&m), total);
    check(&m);
}

#[test]
fn with_memory_swap_max_0_a_cgroups_tmpfs_pages_stay_and_it_is_oom_killed() {
    let text = bonnie(true).replace(
        "memory_max = \"4MiB\"",
        "memory_max = \"4MiB\"\nswap_max = \"0\"",
    );
    let sc = parse_scenario(&text, "bonnie", &[]).expect("parses");
    let r = run_sc(
        &sc,
        KernelEra::V6_18.features("patched").unwrap(),
        true,
        2_000_000,
    );
    let box_ = &r.cgroups[1];
    assert_eq!(r.vmstat["pswpout"], 0, "no slot may be charged");
    // can_reclaim_anon_pages: with no swap left to the cgroup its anon LRU (where tmpfs
    // pages are) is not even scanned, so no swap-out is tried (no swap.events).
    assert_eq!(box_.swap_events.max, 0);
    assert!(box_.events.oom_kill > 0);
}

/// The file behind the shared anonymous mapping at `addr` of the unit machine's task.
fn vma_file(m: &UnitMachine, addr: u64) -> u32 {
    let mm = m.sim.tasks[m.tid].mm.expect("an mm");
    let vma = &m.sim.mms[mm as usize].as_ref().expect("mm").vmas[&addr];
    vma.file.expect("a shared anonymous mapping has a file")
}

/// Touch `pages` pages at `addr` until the accesses complete, IO done between the tries.
fn touch(m: &mut UnitMachine, addr: u64, pages: u64, write: bool) {
    let tid = m.tid;
    for _ in 0..100 {
        match common::touch_pages(&mut m.sim, 0, tid, addr, pages, write) {
            Ok(OpResult::Bytes(b)) if b == pages * PAGE_SIZE => return,
            Ok(other) => panic!("touch: {other:?}"),
            Err(_) => {
                complete_io_and_ipis(&mut m.sim);
            }
        }
    }
    panic!("the touch kept sleeping");
}

/// mmap(MAP_SHARED|MAP_ANONYMOUS) is shmem (shmem_zero_setup): an unlinked file on the
/// internal tmpfs whose pages are swap-backed page cache (nr_shmem, nr_file_pages, not
/// nr_anon_pages), allocated by a read as by a write, swapped out by shmem_writepage
/// (the file keeps the swap entries) and back in by a fault; the last unmap frees the
/// file, its pages and its swap slots.
#[test]
fn a_shared_anonymous_mapping_is_shmem_and_its_unmap_frees_it() {
    let mut m = machine(Some("64MiB"));
    let total = swap_free(&m);
    let tid = m.tid;
    let (anon0, file0) = (stat(&m, VmItem::NrAnonPages), stat(&m, VmItem::NrFilePages));
    let addr = common::mmap_at(&mut m.sim, tid, None, PAGES * PAGE_SIZE, 0, 3, true);
    let ino = vma_file(&m, addr);
    let fs = m
        .sim
        .shm_mnt
        .expect("shm_mnt is mounted at the first shared mapping");
    {
        let inode = m.sim.inode(ino);
        assert_eq!((inode.fs, inode.nlink, inode.open), (fs, 0, 1));
        assert!(inode.mapping.swapbacked && inode.size == PAGES * PAGE_SIZE);
    }
    assert!(m.sim.fss[fs].names.is_empty(), "the file has no name");
    assert_eq!(
        m.sim.resolve_fs("/tmp/x"),
        Some(0),
        "shm_mnt resolves no path"
    );
    touch(&mut m, addr, PAGES, true);
    assert_eq!(stat(&m, VmItem::NrShmem), PAGES as i64);
    assert_eq!(stat(&m, VmItem::NrFilePages), file0 + PAGES as i64);
    assert_eq!(stat(&m, VmItem::NrAnonPages), anon0, "not anonymous pages");
    check(&m);
    // A read of a shared anonymous page allocates it too.
    let addr2 = common::mmap_at(&mut m.sim, tid, None, 4 * PAGE_SIZE, 0, 3, true);
    let ino2 = vma_file(&m, addr2);
    assert_ne!(ino2, ino, "each mapping has its own file");
    touch(&mut m, addr2, 4, false);
    assert_eq!(stat(&m, VmItem::NrShmem), PAGES as i64 + 4);
    // Reclaim unmaps the written pages and writes them to swap; the file keeps the entries.
    let slots = swap_out_file(&mut m, ino);
    assert_eq!(swap_free(&m), total - PAGES);
    assert!(slots
        .iter()
        .all(|&s| m.sim.swap.as_ref().unwrap().swap_map[s as usize] == 1));
    // A fault brings them back (major faults, pswpin), the content intact.
    let (maj, pswpin) = (stat(&m, VmItem::Pgmajfault), stat(&m, VmItem::Pswpin));
    touch(&mut m, addr, PAGES, false);
    assert!(stat(&m, VmItem::Pgmajfault) > maj);
    assert_eq!(stat(&m, VmItem::Pswpin), pswpin + PAGES as i64);
    assert!((0..PAGES).all(|i| matches!(m.entry(ino, i), Entry::Page(_))));
    assert_oracle_clean(&m);
    check(&m);
    // Swap them out again and unmap: the file, its pages and its slots are gone.
    swap_out_file(&mut m, ino);
    let r = retry(&mut m, |m| m.sim.sys_munmap(tid, addr, PAGES * PAGE_SIZE));
    assert_eq!(r, OpResult::None);
    let r = retry(&mut m, |m| m.sim.sys_munmap(tid, addr2, 4 * PAGE_SIZE));
    assert_eq!(r, OpResult::None);
    assert!(m.sim.inodes[ino as usize].is_none() && m.sim.inodes[ino2 as usize].is_none());
    assert_eq!(stat(&m, VmItem::NrShmem), 0);
    assert_eq!(swap_free(&m), total);
    check(&m);
}

/// A shared anonymous buffer twice its cgroup's memory.max (PostgreSQL's shared_buffers in
/// a container) runs through swap like private anonymous memory, and is OOM-killed
/// without swap; the checker passes on every step.
#[test]
fn a_shared_buffer_larger_than_its_cgroup_goes_to_swap() {
    let text = |swap: &str| {
        format!(
            "name = \"shared-anon\"\nkernel = \"6.18\"\n[machine]\ncpus_per_node = 2\n\
             memory_per_node = \"128MiB\"\n{swap}[[cgroups]]\nname = \"db\"\n\
             memory_max = \"16MiB\"\n[[tasks]]\nname = \"pg\"\ncgroup = \"db\"\n\
             program = \"anon\"\nsize = \"32MiB\"\npasses = 2\nshared = true\n"
        )
    };
    let f = KernelEra::V6_18.features("patched").expect("preset");
    let sc = parse_scenario(&text("[swap]\nsize = \"128MiB\"\n"), "sa.toml", &[]).expect("parses");
    let r = run_sc(&sc, f.clone(), true, 20_000_000);
    assert_eq!(r.end, RunEnd::Completed, "{:?}", r.end);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    assert_eq!(r.vmstat["oom_kill"], 0, "{:?}", r.oom);
    assert!(r.vmstat["pswpout"] >= 4096 && r.vmstat["pswpin"] > 0);
    let db = r.cgroups.iter().find(|c| c.name == "db").expect("db");
    assert!(db.peak <= 16 << 20 && db.swap_peak > 0);
    // The exit freed every page and slot: what memory.current still shows is charge the
    // CPUs' stocks hold (the tree nodes' bytes uncharged go back to a CPU's stock,
    // obj_cgroup_uncharge_pages → refill_stock: at most a batch of 64 pages a CPU).
    let stat = |k: &str| db.stat.get(k).copied().unwrap_or(0);
    assert_eq!(
        (stat("anon"), stat("file"), stat("shmem"), db.swap_current),
        (0, 0, 0, 0),
        "the exit freed everything"
    );
    assert!(db.current <= 2 * 65 * 4096, "{}", db.current);
    let sc = parse_scenario(&text(""), "sa.toml", &[]).expect("parses");
    let r = run_sc(&sc, f, true, 20_000_000);
    assert_eq!(r.vmstat["oom_kill"], 1, "without swap: {:?}", r.oom);
}
