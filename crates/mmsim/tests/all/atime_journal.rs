//! Inode timestamps and ext4's journal (`fs/jbd2.rs`): relatime's first read of a file
//! dirties its inode and its inode-table block; without a journal the block is dirty at
//! once, with one it is held by the running transaction, logged at the commit, then dirty
//! and held on the checkpoint list until written back; the flusher makes the inode clean;
//! reclaim's start-all kick writes inodes however young.

use crate::common;

use common::{complete_io, unit_machine_toml, UnitMachine};
use mmsim::kernel::KernelEra;
use mmsim::mm::page::{pg, Pfn, PAGE_SIZE};
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::slab::INODES_PER_BLOCK;
use mmsim::mm::vmstat::VmItem;
use mmsim::workload::OpResult;

const SECOND: u64 = 1_000_000_000_000;

/// A unit machine with 64 one-page files /mnt/o0… on disk; `fs_extra` lines go into the
/// blockfs's table (e.g. `journal = false`).
fn machine(fs_extra: &str) -> UnitMachine {
    let mut text = unit_machine_toml(
        "atime",
        "256MiB",
        "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n",
    );
    text = text.replace(
        "type = \"blockfs\"\n",
        &format!("type = \"blockfs\"\n{fs_extra}\n"),
    );
    for i in 0..64 {
        text += &common::file_toml(&format!("/mnt/o{i}"), 4096, true);
    }
    UnitMachine::new(&text, KernelEra::V6_18.features("patched").unwrap())
}

fn ino_of(m: &UnitMachine, path: &str) -> u32 {
    let fs = m.sim.resolve_fs(path).unwrap();
    m.sim.fss[fs].names[path]
}

/// open, read the one page, close (as the replay program does per request).
fn read_file(m: &mut UnitMachine, path: &str) {
    let tid = m.tid;
    let fd = common::open_restarting(m, path);
    let mut progress = 0;
    loop {
        match m.sim.sys_read(tid, fd, PAGE_SIZE, Some(0), &mut progress) {
            Ok(OpResult::Bytes(_)) => break,
            Err(_) => {
                complete_io(&mut m.sim);
            }
            other => panic!("read {path}: {other:?}"),
        }
    }
    assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
}

/// The inode-table page holding the inode of `path`, and the table's inode.
fn table_page(m: &UnitMachine, path: &str) -> (u32, Pfn) {
    let ino = ino_of(m, path);
    let fs = m.sim.inode(ino).fs;
    let table = m.sim.fss[fs].inode_table.unwrap();
    let block = u64::from(ino) / INODES_PER_BLOCK;
    match m.sim.inode(table).mapping.tree.lookup(block) {
        Entry::Page(p) => (table, p),
        other => panic!("inode-table block {block} of {path} not cached: {other:?}"),
    }
}

/// Another of the 64 files whose inode is (`same`) or is not in the inode-table block of
/// `path`'s.
fn other_file(m: &UnitMachine, path: &str, same: bool) -> String {
    let block = |p: &str| u64::from(ino_of(m, p)) / INODES_PER_BLOCK;
    (0..64)
        .map(|i| format!("/mnt/o{i}"))
        .find(|p| p != path && (block(p) == block(path)) == same)
        .expect("such a file among the 64")
}

fn flags(m: &UnitMachine, p: Pfn) -> u32 {
    m.sim.mem[p as usize].flags
}

fn advance_to(m: &mut UnitMachine, t: u64) {
    m.sim.cpu_idle_until(0, t);
}

#[test]
fn without_a_journal_by_default_a_first_read_dirties_the_inode_and_its_table_block_at_once() {
    let mut m = machine("");
    assert!(m.sim.fss.iter().all(|f| f.journal.is_none()));
    read_file(&mut m, "/mnt/o0");
    let o0 = ino_of(&m, "/mnt/o0");
    assert!(m.sim.inode(o0).dirtied_when().is_some(), "I_DIRTY_SYNC");
    let (_, p) = table_page(&m, "/mnt/o0");
    assert_ne!(flags(&m, p) & pg::DIRTY, 0, "mark_buffer_dirty at once");
    assert_eq!(
        flags(&m, p) & mmsim::fs::jbd2::JBD_HELD,
        0,
        "no journal holds it"
    );
    assert_eq!(m.sim.vmstat.get(VmItem::NrDirtied), 1);
    // relatime: the second read finds the access time newer than the modification time.
    let atime = m.sim.inode(o0).atime_ps;
    advance_to(&mut m, 2 * SECOND);
    read_file(&mut m, "/mnt/o0");
    assert_eq!(m.sim.inode(o0).atime_ps, atime);
    // Another inode of the same table block: its inode dirty, the block already is.
    let same_block = other_file(&m, "/mnt/o0", true);
    read_file(&mut m, &same_block);
    assert!(m
        .sim
        .inode(ino_of(&m, &same_block))
        .dirtied_when()
        .is_some());
    assert_eq!(m.sim.vmstat.get(VmItem::NrDirtied), 1);
    m.check();
}

#[test]
fn noatime_reads_dirty_nothing_and_strictatime_every_tick() {
    let mut m = machine("atime = \"noatime\"");
    read_file(&mut m, "/mnt/o0");
    let o0 = ino_of(&m, "/mnt/o0");
    assert!(m.sim.inode(o0).dirtied_when().is_none());
    assert_eq!(m.sim.vmstat.get(VmItem::NrDirtied), 0);

    let mut m = machine("atime = \"strictatime\"");
    read_file(&mut m, "/mnt/o0");
    let first = m.sim.inode(o0).atime_ps;
    advance_to(&mut m, SECOND);
    read_file(&mut m, "/mnt/o0");
    assert!(
        m.sim.inode(o0).atime_ps > first,
        "strictatime: a new tick, a new atime"
    );
}

#[test]
fn relatime_updates_again_after_a_write() {
    let mut m = machine("");
    read_file(&mut m, "/mnt/o3");
    let o3 = ino_of(&m, "/mnt/o3");
    let first = m.sim.inode(o3).atime_ps;
    advance_to(&mut m, SECOND);
    // A write updates the modification time (file_update_time) …
    let tid = m.tid;
    let mut progress = 0;
    let fd = match m.sim.sys_open(tid, "/mnt/o3", false, false, &mut progress) {
        Ok(OpResult::Fd(fd)) => fd,
        other => panic!("open: {other:?}"),
    };
    let mut progress = 0;
    while m
        .sim
        .sys_write(tid, fd, 100, Some(0), &mut progress)
        .is_err()
    {
        complete_io(&mut m.sim);
    }
    assert!(m.sim.inode(o3).mtime_ps > SECOND);
    assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
    // … so the next read updates the access time again.
    advance_to(&mut m, 2 * SECOND);
    read_file(&mut m, "/mnt/o3");
    assert!(m.sim.inode(o3).atime_ps > first);
    m.check();
}

#[test]
fn the_journal_holds_the_block_from_the_update_until_it_is_written_back_and_checkpointed() {
    let mut m = machine("journal = true");
    let fs = m.sim.resolve_fs("/mnt/o0").unwrap();
    let jtask = m.sim.fss[fs].journal.as_ref().unwrap().task.unwrap();
    read_file(&mut m, "/mnt/o0");
    let (table, p) = table_page(&m, "/mnt/o0");
    assert_ne!(
        flags(&m, p) & pg::JBD_RUNNING,
        0,
        "in the running transaction"
    );
    assert_eq!(flags(&m, p) & pg::DIRTY, 0, "not yet exposed to the VM");
    // Before the commit interval kjournald2 does nothing.
    advance_to(&mut m, 4 * SECOND);
    m.sim.jbd2_step(jtask, fs);
    assert_ne!(flags(&m, p) & pg::JBD_RUNNING, 0);
    // 5 s after the update it commits: one block, a descriptor block and a commit block to the log.
    advance_to(&mut m, 6 * SECOND);
    let written = m.sim.devices[0].pages_written;
    m.sim.jbd2_step(jtask, fs);
    assert_ne!(flags(&m, p) & pg::JBD_COMMIT, 0);
    assert_eq!(m.sim.devices[0].pages_written - written, 3);
    complete_io(&mut m.sim);
    assert_ne!(flags(&m, p) & pg::JBD_CHECKPOINT, 0);
    assert_ne!(flags(&m, p) & pg::DIRTY, 0, "mark_buffer_dirty once logged");
    assert_eq!(m.sim.vmstat.get(VmItem::NrDirtied), 1);
    m.check();
    // Written back, it is clean but still on the checkpoint list …
    assert_eq!(
        m.sim
            .write_cache_pages(table, 1024, mmsim::fs::writeback::SyncMode::None),
        Ok(1)
    );
    complete_io(&mut m.sim);
    assert_eq!(flags(&m, p) & (pg::DIRTY | pg::WRITEBACK), 0);
    assert_ne!(flags(&m, p) & pg::JBD_CHECKPOINT, 0);
    // … until the next commit cleans the list.
    let other = other_file(&m, "/mnt/o0", false);
    read_file(&mut m, &other);
    advance_to(&mut m, 12 * SECOND);
    m.sim.jbd2_step(jtask, fs);
    assert_eq!(flags(&m, p) & mmsim::fs::jbd2::JBD_HELD, 0, "released");
    complete_io(&mut m.sim);
    m.check();
}

#[test]
fn the_flusher_makes_a_timestamp_dirty_inode_clean_when_old_or_kicked_by_reclaim() {
    let mut m = machine("");
    read_file(&mut m, "/mnt/o0");
    let o0 = ino_of(&m, "/mnt/o0");
    let flusher = m.sim.devices[0].flusher.unwrap();
    // Young: the periodic work leaves it.
    advance_to(&mut m, SECOND);
    m.sim.flusher_step(flusher, 0);
    assert!(m.sim.inode(o0).dirtied_when().is_some());
    // Reclaim's kick (wakeup_flusher_threads): a start-all work writes it however young,
    // with the table block.
    m.sim.wakeup_flusher_threads(0);
    m.sim.flusher_step(flusher, 0);
    assert!(m.sim.inode(o0).dirtied_when().is_none(), "clean");
    assert!(!m.sim.devices[0].dirty_inodes.contains(&o0));
    let (_, p) = table_page(&m, "/mnt/o0");
    assert_ne!(
        flags(&m, p) & pg::WRITEBACK,
        0,
        "the table block written too"
    );
    complete_io(&mut m.sim);
    assert_eq!(m.sim.vmstat.get(VmItem::NrWritten), 1);
    m.check();
}

#[test]
fn bad_atime_and_journal_options_are_named() {
    let text = unit_machine_toml(
        "bad",
        "256MiB",
        "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n",
    )
    .replace(
        "type = \"blockfs\"\n",
        "type = \"blockfs\"\natime = \"sometimes\"\n",
    );
    let e = mmsim::scenario::parse_scenario(&text, "t.toml", &[]).unwrap_err();
    assert!(e.field.ends_with("atime"), "{e}");
    assert!(
        e.line.is_some() && e.message.contains("relatime, noatime, strictatime"),
        "{e}"
    );
    let text = unit_machine_toml(
        "bad",
        "256MiB",
        "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n",
    )
    .replace("type = \"tmpfs\"\n", "type = \"tmpfs\"\njournal = true\n");
    let e = mmsim::scenario::parse_scenario(&text, "t.toml", &[]).unwrap_err();
    assert!(
        e.field.ends_with("journal") && e.message.contains("tmpfs"),
        "{e}"
    );
}
