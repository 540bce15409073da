//! The VFS caches (`mm::slab`): dentries and inodes take slab memory charged to the
//! creating task's cgroup, go back on unlink, and the superblock shrinker prunes unused
//! dentries and evicts unused inodes without page cache, which the next lookup reads from
//! the inode table again.

use crate::common;

use common::{unit_machine_toml, UnitMachine};
use mmsim::kernel::KernelEra;
use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
use mmsim::mm::page::Pfn;
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::slab::{KmemCache, VfsState, CACHES};
use mmsim::mm::vmstat::VmItem;
use mmsim::run::RunReport;
use mmsim::sched::Wait;
use mmsim::workload::OpResult;

/// Slab pages `n` objects of `cache` take, packed (whole slabs).
fn slab_pages(cache: KmemCache, n: u64) -> i64 {
    let g = CACHES[cache as usize];
    (n.div_ceil(g.objs_per_slab) * g.pages_per_slab) as i64
}

fn machine(era: KernelEra) -> UnitMachine {
    let text = unit_machine_toml(
        "vfs",
        "64MiB",
        "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n",
    );
    UnitMachine::new(&text, era.features("patched").expect("preset"))
}

fn create(m: &mut UnitMachine, path: &str) -> u32 {
    let mut progress = 0;
    let tid = m.tid;
    let fd = match m.sim.sys_open(tid, path, true, false, &mut progress) {
        Ok(OpResult::Fd(fd)) => fd,
        other => panic!("open {path}: {other:?}"),
    };
    let ino = m.sim.fss[1].names[path];
    assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
    ino
}

fn slab(m: &UnitMachine) -> i64 {
    m.sim.vmstat.get(VmItem::NrSlabReclaimable)
}

#[test]
fn created_files_take_packed_slab_pages_and_unlink_gives_them_back() {
    let mut m = machine(KernelEra::V6_18);
    assert_eq!(slab(&m), 0, "the scenario's files start on disk only");
    let n = 100u64;
    let inos: Vec<u32> = (0..n)
        .map(|i| create(&mut m, &format!("/mnt/f{i}")))
        .collect();
    assert_eq!(
        slab(&m),
        slab_pages(KmemCache::Dentry, n) + slab_pages(KmemCache::BlockfsInode, n)
    );
    // Closed, every dentry is unused: on its superblock's dentry list; no inode is (each
    // is held by its dentry).
    let sb = m
        .sim
        .lruvec(ROOT_MEM_CGROUP, 0)
        .vfs
        .sb(1)
        .expect("lists of /mnt")
        .clone();
    assert_eq!((sb.nr_dentries, sb.nr_inodes), (n, 0));
    assert!(inos
        .iter()
        .all(|&i| m.sim.inode(i).vfs.state == VfsState::Cached));
    m.check();
    for i in 0..n {
        let mut progress = 0;
        assert_eq!(
            m.sim.sys_unlink(&format!("/mnt/f{i}"), &mut progress),
            Ok(OpResult::None)
        );
    }
    // One empty slab of each cache stays (SLUB's min_partial).
    assert_eq!(
        slab(&m),
        slab_pages(KmemCache::Dentry, 1) + slab_pages(KmemCache::BlockfsInode, 1)
    );
    let sb = m
        .sim
        .lruvec(ROOT_MEM_CGROUP, 0)
        .vfs
        .sb(1)
        .expect("lists")
        .clone();
    assert_eq!((sb.nr_dentries, sb.nr_inodes), (0, 0));
    m.check();
}

#[test]
fn the_shrinker_prunes_dentries_and_evicts_only_inodes_without_page_cache() {
    let mut m = machine(KernelEra::V6_18);
    let n = 40u64;
    let tid = m.tid;
    let inos: Vec<u32> = (0..n)
        .map(|i| create(&mut m, &format!("/mnt/f{i}")))
        .collect();
    // Half the files get a cached page.
    for i in 0..n / 2 {
        let mut progress = 0;
        let fd = match m
            .sim
            .sys_open(tid, &format!("/mnt/f{i}"), false, false, &mut progress)
        {
            Ok(OpResult::Fd(fd)) => fd,
            other => panic!("{other:?}"),
        };
        let mut progress = 0;
        m.sim
            .sys_write(tid, fd, 4096, None, &mut progress)
            .expect("write");
        assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
    }
    let before = m.sim.vmstat.get(VmItem::SlabsScanned);
    // At priority 0 do_shrink_slab scans twice the count: referenced dentries are rotated
    // once, then pruned; a few passes empty the lists.
    for _ in 0..4 {
        m.sim
            .shrink_slab_vfs(0, ROOT_MEM_CGROUP, 0, Gfp::KERNEL, false);
    }
    assert!(m.sim.vmstat.get(VmItem::SlabsScanned) > before);
    for (i, &ino) in inos.iter().enumerate() {
        let want = if (i as u64) < n / 2 {
            VfsState::InodeOnly // page cache (dirty, even): kept off the inode list
        } else {
            VfsState::Cold
        };
        assert_eq!(m.sim.inode(ino).vfs.state, want, "file {i}");
    }
    // The 20 inodes kept leave 34 free slots in the two inode slabs the 40 needed: less
    // than two slabs, so both stay; of the dentry slabs one stays, empty (min_partial).
    // The 20 written pages keep their buffer heads (`buffer-head-kmem`: no shrinker).
    assert_eq!(
        slab(&m),
        slab_pages(KmemCache::BlockfsInode, n)
            + slab_pages(KmemCache::Dentry, 1)
            + slab_pages(KmemCache::BufferHead, n / 2)
    );
    m.check();
    // A lookup of an evicted file reads its inode from the inode table (the open sleeps on
    // the read), then allocates both objects again.
    let mut progress = 0;
    let r = m.sim.sys_open(tid, "/mnt/f39", false, false, &mut progress);
    assert!(matches!(r, Err(Wait::PageLocked(_))), "{r:?}");
    assert_eq!(m.sim.inode(inos[39]).vfs.state, VfsState::Cold);
    // With the inode-table readahead of its group: blocks 0 through the last used inode's.
    let (first, window) =
        mmsim::mm::slab::inode_table_readahead(inos[39], m.sim.inodes.len() as u64);
    assert_eq!(first, 0);
    assert!(window > 1);
    assert_eq!(m.sim.tasks[tid].stats.inode_table_misses, window);
    // The blocks read are created as the buffer cache creates them (accessed, then found:
    // active; `buffer_cache_blocks_are_created_active_from_3_16`).
    let table = m.sim.fss[1]
        .inode_table
        .expect("a blockfs has an inode table");
    for block in first..first + window {
        assert!(m.sim.PageActive(m.page(table, block)), "block {block}");
    }
    common::complete_io(&mut m.sim);
    let fd = match m.sim.sys_open(tid, "/mnt/f39", false, false, &mut progress) {
        Ok(OpResult::Fd(fd)) => fd,
        other => panic!("{other:?}"),
    };
    assert_eq!(m.sim.inode(inos[39]).vfs.state, VfsState::Cached);
    assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
    m.check();
}

/// Replay `ids` (one-page objects, a file each) on a machine of `ram`, in a cgroup of
/// `memory_max` when given, on `era`.
fn replay(name: &str, ids: &[u64], ram: &str, memory_max: Option<&str>, era: &str) -> RunReport {
    replay_with(name, ids, ram, memory_max, era, &[])
}

/// [`replay`] with `extra` options (e.g. `--set` overrides).
fn replay_with(
    name: &str,
    ids: &[u64],
    ram: &str,
    memory_max: Option<&str>,
    era: &str,
    extra: &[&str],
) -> RunReport {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("vfs-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    let text: String = ids.iter().map(|i| format!("{i}\n")).collect();
    std::fs::write(&p, text).unwrap();
    let mut argv = vec![
        p.to_str().unwrap().to_string(),
        "--format".into(),
        "txt".into(),
        "--ram".into(),
        ram.into(),
        "--kernel".into(),
        era.into(),
    ];
    if let Some(max) = memory_max {
        argv.extend(["--memory-max".to_string(), max.to_string()]);
    }
    argv.extend(extra.iter().map(|s| s.to_string()));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let a = mmsim::api::replay_args(&argv).expect("options");
    let r = mmsim::api::replay(&a).expect("run");
    assert!(r.complete, "{:?}", r.end);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    r
}

#[test]
fn inodes_evicted_under_pressure_are_read_from_the_inode_table_again() {
    // 30,000 one-page files read twice on 32 MiB: their dentries and inodes alone
    // (30,000 × (192 + 1,176) bytes, 39 MiB packed) outgrow RAM, so the shrinker must evict
    // inodes during the first pass; the second pass reads those from disk again.
    let n = 30_000u64;
    let ids: Vec<u64> = (0..n).chain(0..n).collect();
    let r = replay("twice.txt", &ids, "32MiB", None, "6.18");
    let t = r
        .tasks
        .iter()
        .find(|t| t.name == "replay")
        .expect("the replay task");
    let blocks = n.div_ceil(mmsim::mm::slab::INODES_PER_BLOCK);
    assert!(
        t.inode_table_misses > blocks,
        "inode-table reads {} (first pass alone {blocks})",
        t.inode_table_misses
    );
    assert!(r.vmstat["slabs_scanned"] > 0);
    assert_eq!(r.vmstat["oom_kill"], 0);
    let slab = (r.vmstat["nr_slab_reclaimable"] as u64) * 4096;
    assert!(slab < 32 << 20, "slab {slab} bytes");
    assert!(slab > 0);
}

#[test]
fn a_cgroup_pays_for_its_dentries_and_inodes_from_v4_5() {
    // 20,000 files in a cgroup of 16 MiB on a 256 MiB machine: from 4.5 the objects are
    // charged to the cgroup, whose own reclaim shrinks them (no OOM: the VM's 6.18 read
    // the same 20,000 fresh files in 16 MiB three times out of three, each first read
    // dirtying its inode — relatime); memory.stat shows them. On 4.2 the cgroup pays
    // nothing for them.
    let n = 20_000u64;
    let ids: Vec<u64> = (0..n).collect();
    let r = replay("cg.txt", &ids, "256MiB", Some("16MiB"), "6.18");
    let c = r
        .cgroups
        .iter()
        .find(|c| c.name == "replay")
        .expect("cgroup");
    let slab = c.stat["slab"];
    assert!(slab > 0);
    assert_eq!(
        slab,
        c.stat["slab_reclaimable"] + c.stat["slab_unreclaimable"]
    );
    assert!(slab <= 16 << 20, "slab {slab}");
    assert_eq!(c.events.oom_kill, 0);
    assert!(
        r.vmstat["slabs_scanned"] > 0,
        "the cgroup's reclaim shrinks its objects"
    );
    let r = replay("cg42.txt", &ids, "256MiB", Some("16MiB"), "4.2");
    let c = r
        .cgroups
        .iter()
        .find(|c| c.name == "replay")
        .expect("cgroup");
    assert_eq!(c.stat["slab"], 0);
    assert!(r.vmstat["nr_slab_reclaimable"] > 0, "the root holds them");
}

/// Cgroups `a` and `b` on the features of 6.18 with `memcg-kmem-objcg` `on`; `a` creates
/// `na` files, then `b` creates `nb`. Returns the machine and the two memcgs.
fn files_in_two_cgroups(
    objcg: bool,
    na: u64,
    nb: u64,
) -> (
    UnitMachine,
    mmsim::mm::memcontrol::MemcgId,
    mmsim::mm::memcontrol::MemcgId,
) {
    let mut f = KernelEra::V6_18.features("patched").expect("preset");
    assert!(f.set("memcg-kmem-objcg", objcg));
    let text = unit_machine_toml(
        "vfs-objcg",
        "256MiB",
        "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\ncgroup = \"a\"\n",
    ) + "\n[[cgroups]]\nname = \"a\"\n[[cgroups]]\nname = \"b\"\n";
    let mut m = UnitMachine::new(&text, f);
    let a = m.sim.memcg_by_name("a").expect("a");
    let b = m.sim.memcg_by_name("b").expect("b");
    for i in 0..na {
        create(&mut m, &format!("/mnt/a{i}"));
    }
    let tid = m.tid;
    m.sim.tasks[tid].memcg = b;
    for i in 0..nb {
        create(&mut m, &format!("/mnt/b{i}"));
    }
    m.check();
    (m, a, b)
}

#[test]
fn from_5_9_cgroups_share_the_slabs_and_pay_their_objects_bytes() {
    let (na, nb) = (100u64, 50u64);
    let d = KmemCache::Dentry as usize;
    let i = KmemCache::BlockfsInode as usize;
    // An object charges its size and the obj_cgroup pointer its slab keeps for it.
    let per_file = CACHES[d].objsize + 8 + CACHES[i].objsize + 8;
    let (mut m, a, b) = files_in_two_cgroups(true, na, nb);
    // One set of caches: the 150 objects of each cache packed together, charged to no one.
    assert_eq!(
        slab(&m),
        slab_pages(KmemCache::Dentry, na + nb) + slab_pages(KmemCache::BlockfsInode, na + nb)
    );
    for (c, n) in [(a, na), (b, nb)] {
        let mc = &m.sim.memcgs[c as usize];
        assert_eq!(mc.slab_bytes, [n * per_file, 0], "memcg {c}");
        assert_eq!(
            mc.stat.get(VmItem::NrSlabReclaimable),
            0,
            "no slab page is theirs"
        );
        // Charged in whole pages: the stock a page leaves after its objects is less than
        // the next object, so the bytes rounded up.
        assert_eq!(mc.obj_pages, (n * per_file).div_ceil(4096), "memcg {c}");
        // The lruvec's slab the shadow-node shrinker counts: the objects' bytes, in pages.
        assert_eq!(m.sim.lruvec_vfs_slab_pages(c, 0), n * per_file / 4096);
    }
    assert_eq!(m.sim.lruvec_vfs_slab_pages(ROOT_MEM_CGROUP, 0), 0);
    // a's objects freed: its bytes go back, and its pages but the stock's last one.
    for k in 0..na {
        let mut progress = 0;
        assert_eq!(
            m.sim.sys_unlink(&format!("/mnt/a{k}"), &mut progress),
            Ok(OpResult::None)
        );
    }
    let mc = &m.sim.memcgs[a as usize];
    assert_eq!(mc.slab_bytes, [0, 0]);
    assert!(mc.obj_pages <= 1, "{} pages left", mc.obj_pages);
    assert_eq!(m.sim.memcgs[b as usize].slab_bytes, [nb * per_file, 0]);
    m.check();

    // Before 5.9 each cgroup has its own slabs and is charged their pages.
    let (m, a, b) = files_in_two_cgroups(false, na, nb);
    let own = |n| slab_pages(KmemCache::Dentry, n) + slab_pages(KmemCache::BlockfsInode, n);
    assert_eq!(slab(&m), own(na) + own(nb));
    for (c, n) in [(a, na), (b, nb)] {
        let mc = &m.sim.memcgs[c as usize];
        assert_eq!(mc.stat.get(VmItem::NrSlabReclaimable), own(n), "memcg {c}");
        assert_eq!((mc.slab_bytes, mc.obj_pages), ([0, 0], 0));
        // And the `filp` slab page each cgroup's creates left (`filp-kmem`: a struct file
        // per open, freed at its close; the one empty slab SLUB keeps).
        assert_eq!(m.sim.lruvec_vfs_slab_pages(c, 0), own(n) as u64 + 1);
    }
}

#[test]
fn open_files_are_filp_objects_charged_to_the_opener_from_4_15() {
    // 50 files opened and kept open by a task of cgroup a: with `filp-kmem` each is a
    // `filp` object (192 bytes and the obj_cgroup pointer, unreclaimable) charged to a
    // until its close; without, open files take nothing.
    let n = 50u64;
    let per_file = CACHES[KmemCache::Filp as usize].objsize + 8;
    for on in [true, false] {
        let (mut m, a, _) = files_in_two_cgroups(true, n, 0);
        assert!(m.sim.features.set("filp-kmem", on));
        let tid = m.tid;
        m.sim.tasks[tid].memcg = a;
        let fds: Vec<u32> = (0..n)
            .map(|i| {
                let mut progress = 0;
                match m
                    .sim
                    .sys_open(tid, &format!("/mnt/a{i}"), false, false, &mut progress)
                {
                    Ok(OpResult::Fd(fd)) => fd,
                    other => panic!("open: {other:?}"),
                }
            })
            .collect();
        m.check();
        let held = if on { n * per_file } else { 0 };
        assert_eq!(
            m.sim.memcgs[a as usize].slab_bytes[1], held,
            "filp-kmem {on}"
        );
        for fd in fds {
            assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
        }
        assert_eq!(m.sim.memcgs[a as usize].slab_bytes[1], 0);
        m.check();
    }
}

/// Open `path` (restarting after its IO), then close it.
fn open_close(m: &mut UnitMachine, path: &str) {
    let tid = m.tid;
    let fd = common::open_restarting(m, path);
    assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
}

#[test]
fn a_lookup_in_an_indexed_directory_reads_its_root_and_the_names_leaf() {
    // 2,000 files of one directory on disk: an htree of a root and 2,000 × 16 bytes of
    // entries in leaves; 10 files of another directory: one block, taken as cached.
    let mut text = unit_machine_toml(
        "dx",
        "256MiB",
        "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n",
    );
    for i in 0..2000 {
        text += &common::file_toml(&format!("/mnt/big/o{i}"), 4096, true);
    }
    for i in 0..10 {
        text += &common::file_toml(&format!("/mnt/small/o{i}"), 4096, true);
    }
    let mut m = UnitMachine::new(&text, KernelEra::V6_18.features("patched").unwrap());
    let fs = m.sim.resolve_fs("/mnt/big/o0").unwrap();
    let leaves = m.sim.fss[fs].dirs["/mnt/big"].htree.nr_blocks() - 1;
    assert!(leaves >= 8, "{leaves} leaves");
    let misses = |m: &UnitMachine| m.sim.tasks[m.tid].stats.dir_block_misses;
    open_close(&mut m, "/mnt/small/o3");
    assert_eq!(misses(&m), 0, "a directory of one block reads nothing");
    open_close(&mut m, "/mnt/big/o7");
    assert_eq!(misses(&m), 2, "the root and the leaf of o7's hash");
    // Another name: the root is cached; its leaf is read unless it is o7's.
    let leaf = |m: &UnitMachine, n: &str| {
        m.sim.fss[fs].dirs["/mnt/big"]
            .htree
            .probe(n)
            .expect("indexed")
            .leaf
    };
    let (same, other) = (1..2000)
        .map(|i| format!("o{i}"))
        .filter(|n| n != "o7")
        .fold((None, None), |(s, o), n| {
            if leaf(&m, &n) == leaf(&m, "o7") {
                (s.or(Some(n)), o)
            } else {
                (s, o.or(Some(n)))
            }
        });
    open_close(
        &mut m,
        &format!("/mnt/big/{}", same.expect("a name in o7's leaf")),
    );
    assert_eq!(misses(&m), 2);
    open_close(
        &mut m,
        &format!("/mnt/big/{}", other.expect("a name in another leaf")),
    );
    assert_eq!(misses(&m), 3);
    // The data misses do not count them (nor the inode table's pages).
    m.check();
}

/// `n` files created by the unit machine's task, closed: their dentries wait on the
/// superblock's dentry list.
fn unused_dentries(m: &mut UnitMachine, n: u64) -> usize {
    let mut fs = 0;
    for i in 0..n {
        let ino = create(m, &format!("/mnt/f{i}"));
        fs = m.sim.inode(ino).fs;
    }
    fs
}

#[test]
fn a_reclaimer_without_gfp_fs_defers_the_superblock_shrinker_to_the_next_one_with_it() {
    // 40 unused dentries. At priority 2 a GFP_KERNEL reclaimer's own share, (40 >> 2) × 4 /
    // DEFAULT_SEEKS = 20, is below the count and the batch: nothing is scanned.
    let mut fresh = machine(KernelEra::V6_18);
    let fs = unused_dentries(&mut fresh, 40);
    fresh
        .sim
        .shrink_slab_vfs(0, ROOT_MEM_CGROUP, 2, Gfp::KERNEL, false);
    assert_eq!(fresh.sim.vmstat.get(VmItem::SlabsScanned), 0);
    // A GFP_NOFS reclaimer at priority 0 (super_cache_scan: SHRINK_STOP) scans nothing and
    // defers all of its work, capped at twice the count ...
    let mut m = machine(KernelEra::V6_18);
    unused_dentries(&mut m, 40);
    m.sim
        .shrink_slab_vfs(0, ROOT_MEM_CGROUP, 0, Gfp::NOFS, false);
    assert_eq!(m.sim.vmstat.get(VmItem::SlabsScanned), 0);
    let deferred = |m: &UnitMachine| {
        m.sim
            .lruvec(ROOT_MEM_CGROUP, 0)
            .vfs
            .sb(fs)
            .map_or(0, |sb| sb.nr_deferred)
    };
    assert_eq!(deferred(&m), 80);
    for i in 0..40 {
        let ino = m.sim.fss[1].names[format!("/mnt/f{i}").as_str()];
        assert_eq!(m.sim.inode(ino).vfs.state, VfsState::Cached);
    }
    // ... which the same GFP_KERNEL reclaim at priority 2 then does: 80 >> 2 + 20 = 40.
    m.sim
        .shrink_slab_vfs(0, ROOT_MEM_CGROUP, 2, Gfp::KERNEL, false);
    assert_eq!(m.sim.vmstat.get(VmItem::SlabsScanned), 40);
    m.check();
}

/// A 6.18 machine of 256 MiB (`rule` set as given) whose task runs in cgroup `c` and has
/// created and closed 20,000 files (unused dentries on the list) and read 512 pages of
/// `/mnt/big` through `fd`; the cgroup, the superblock's index and a reader of more pages.
struct CgroupWithDentries {
    m: UnitMachine,
    c: mmsim::mm::memcontrol::MemcgId,
    fs: usize,
    fd: u32,
}

impl CgroupWithDentries {
    fn new(rule: &str, on: bool) -> Self {
        Self::on(KernelEra::V6_18, rule, on)
    }

    /// The same on `era` (a `/mnt/cold` of one page waits on disk, its inode not read).
    fn on(era: KernelEra, rule: &str, on: bool) -> Self {
        let mut f = era.features("patched").expect("preset");
        assert!(f.set(rule, on), "a rule");
        let text = unit_machine_toml(
            "vfs-nofs",
            "256MiB",
            "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\ncgroup = \"c\"\n",
        ) + "\n[[cgroups]]\nname = \"c\"\n"
            + &common::file_toml("/mnt/big", 8 << 20, true)
            + &common::file_toml("/mnt/cold", 4096, true);
        let mut m = UnitMachine::new(&text, f);
        let fs = unused_dentries(&mut m, 20_000);
        let tid = m.tid;
        let mut progress = 0;
        let fd = loop {
            match m.sim.sys_open(tid, "/mnt/big", false, false, &mut progress) {
                Ok(OpResult::Fd(fd)) => break fd,
                Err(_) => {
                    common::complete_io(&mut m.sim); // the inode-table read
                }
                other => panic!("{other:?}"),
            }
        };
        let c = m.sim.memcg_by_name("c").expect("cgroup");
        let mut w = CgroupWithDentries { m, c, fs, fd };
        w.read(512);
        w
    }

    /// Read `pages` more pages, one at a time.
    fn read(&mut self, pages: u64) {
        let tid = self.m.tid;
        for _ in 0..pages {
            let mut progress = 0;
            loop {
                match self.m.sim.sys_read(tid, self.fd, 4096, None, &mut progress) {
                    Ok(OpResult::Bytes(_)) => break,
                    Ok(other) => panic!("{other:?}"),
                    Err(_) => {
                        common::complete_io(&mut self.m.sim);
                    }
                }
            }
        }
    }
}

#[test]
fn readahead_charges_reclaim_without_gfp_fs_from_5_8() {
    // A cgroup holding 20,000 unused dentries and a page cache of 2 MiB, its limit lowered to
    // its usage: every page a read brings in is charged over the limit and reclaims. The
    // charges of readahead (a read's pages, readahead off or on) reclaim without __GFP_FS
    // from 5.8, so the superblock shrinker scans nothing and only defers; before, the same
    // reclaims scan the dentries once their priority falls low enough.
    let run = |rule: bool| {
        let mut w = CgroupWithDentries::new("readahead-nofs", rule);
        let c = w.c as usize;
        w.m.sim.memcgs[c].max = w.m.sim.memcgs[c].usage;
        let scanned = w.m.sim.vmstat.get(VmItem::SlabsScanned);
        w.read(256);
        assert!(
            w.m.sim.vmstat.get(VmItem::PgscanFile) > 0,
            "the reads reclaimed page cache"
        );
        let deferred =
            w.m.sim
                .lruvec(w.c, 0)
                .vfs
                .sb(w.fs)
                .map_or(0, |sb| sb.nr_deferred);
        w.m.check();
        (w.m.sim.vmstat.get(VmItem::SlabsScanned) - scanned, deferred)
    };
    let (scanned, deferred) = run(true);
    assert_eq!(scanned, 0, "readahead-nofs: the shrinker stops");
    assert!(deferred > 0, "its work is deferred");
    let (scanned, _) = run(false);
    assert!(
        scanned > 0,
        "with __GFP_FS the same reclaims scan the dentries"
    );
}

#[test]
fn inode_table_reads_reclaim_without_gfp_fs_in_every_era() {
    // On 4.14 (no `readahead-nofs`) the cgroup at its limit opens a file whose inode is on
    // disk: its inode-table block and the blocks read ahead with it are the buffer cache's
    // pages, allocated without __GFP_FS, so their charges' reclaim scans page cache but no
    // dentry (the lookup's dentry and inode fit in slabs the cgroup already has).
    let mut w = CgroupWithDentries::on(KernelEra::V4_14, "readahead-nofs", false);
    // /mnt/big's open read /mnt/cold's block ahead: drop the table's pages as
    // invalidate_bdev does (the CPUs' bh_lrus, then the page cache), so that the open reads
    // it again.
    let table = w.m.sim.fss[1]
        .inode_table
        .expect("a blockfs has an inode table");
    w.m.sim.invalidate_bh_lrus();
    w.m.sim.lru_add_drain_all();
    // (The reads' atime updates dirtied table blocks: the flusher's writeback first, since
    // invalidation leaves dirty pages.)
    let _ =
        w.m.sim
            .write_cache_pages(table, u64::MAX, mmsim::fs::writeback::SyncMode::None);
    common::complete_io(&mut w.m.sim);
    w.m.sim.mapping_try_invalidate(table, 0, u64::MAX / 2, None);
    let before = w.m.sim.tasks[w.m.tid].stats.inode_table_misses;
    let c = w.c as usize;
    // Below its usage: the charges cannot come from the CPU's stock of precharged pages.
    w.m.sim.memcgs[c].max = w.m.sim.memcgs[c].usage - 64;
    let (scanned, pgscan) = (
        w.m.sim.vmstat.get(VmItem::SlabsScanned),
        w.m.sim.vmstat.get(VmItem::PgscanFile),
    );
    let tid = w.m.tid;
    let mut progress = 0;
    loop {
        match w
            .m
            .sim
            .sys_open(tid, "/mnt/cold", false, false, &mut progress)
        {
            Ok(OpResult::Fd(_)) => break,
            Err(_) => {
                common::complete_io(&mut w.m.sim);
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(
        w.m.sim.tasks[tid].stats.inode_table_misses > before + 1,
        "read with its readahead"
    );
    assert!(
        w.m.sim.vmstat.get(VmItem::PgscanFile) > pgscan,
        "the charges reclaimed"
    );
    assert_eq!(w.m.sim.vmstat.get(VmItem::SlabsScanned), scanned);
    w.m.check();
}

#[test]
fn a_cgroups_reclaim_counts_the_slab_it_frees_only_before_6_4() {
    // One GFP_KERNEL limit reclaim of 64 pages from the cgroup: its falling priority reaches
    // the dentries, and the slab pages their pruning frees count toward the 64 before 6.4,
    // so it stops with fewer page-cache pages reclaimed; from 6.4 only LRU pages count.
    let run = |rule: bool| {
        let mut w = CgroupWithDentries::new("reclaim-state-root-only", rule);
        let (slab, steal) = (
            w.m.sim.vmstat.get(VmItem::NrSlabReclaimable),
            w.m.sim.vmstat.get(VmItem::PgstealFile),
        );
        let reclaimed =
            w.m.sim
                .try_to_free_mem_cgroup_pages(w.c, 64, Gfp::KERNEL, true);
        let freed = slab - w.m.sim.vmstat.get(VmItem::NrSlabReclaimable);
        let stolen = w.m.sim.vmstat.get(VmItem::PgstealFile) - steal;
        w.m.check();
        (reclaimed as i64, freed, stolen)
    };
    let (reclaimed, freed, stolen) = run(true);
    assert!(freed > 0, "the shrinker freed slab pages");
    assert_eq!(reclaimed, stolen, "6.4+: only the LRU's pages count");
    let (reclaimed_old, freed_old, stolen_old) = run(false);
    assert!(freed_old > 0);
    assert!(
        reclaimed_old > stolen_old,
        "slab pages count: {reclaimed_old} vs {stolen_old}"
    );
    assert!(
        stolen_old < stolen,
        "it stops sooner: {stolen_old} vs {stolen}"
    );
}

#[test]
fn the_inode_shrinker_reaps_lone_shadow_entries() {
    // One-page files read twice in a cgroup of 8 MiB: a file whose page was reclaimed keeps
    // a shadow entry in its xarray's head, out of the shadow-node shrinker's reach; when the
    // superblock shrinker evicts its inode, the entry goes (pginodesteal counts it, as
    // mapping_try_invalidate counts value entries) and the next read is no refault.
    // (noatime: with relatime the first pass dirties 20,000 inodes, 23 MiB of slab the
    // inode shrinker cannot evict until the flusher writes them — the VM's kernel OOM-killed
    // host_replay in one of two runs of this trace in 8 MiB —, which is not what this test
    // is about: `tests/all/atime_journal.rs`.)
    let n = 20_000u64;
    let ids: Vec<u64> = (0..n).chain(0..n).collect();
    let noatime = ["--set", "filesystems.0.atime=noatime"];
    let r = replay_with("steal.txt", &ids, "256MiB", Some("8MiB"), "6.18", &noatime);
    let steal = r.vmstat["pginodesteal"];
    assert!(steal > 0, "pginodesteal {steal}");
    assert_eq!(r.vmstat["kswapd_inodesteal"], 0, "no global pressure");
    // On a machine of 32 MiB kswapd reclaims (GFP_KERNEL: its shrinker runs) and counts its
    // own reaps.
    let r = replay("steal-kswapd.txt", &ids, "32MiB", None, "6.18");
    assert!(
        r.vmstat["kswapd_inodesteal"] > 0,
        "{:?}",
        r.vmstat.get("kswapd_inodesteal")
    );
}

#[test]
fn a_metadata_block_a_task_waited_for_stays_until_its_call_returns() {
    // 20,000 fresh one-page files read twice in 8 MiB with relatime: each first read dirties
    // its inode, which the inode shrinker cannot evict until the flusher writes it, so the
    // cgroup fills with slab and an open's inode-table read (33 blocks read ahead) reclaims
    // the cgroup's few LRU pages. Were the block it waited for not held, the restarted open
    // would find it reclaimed by its own charges and read it again, forever (this run did
    // not end). Held (get_bh until the call returns), the run ends within its step budget,
    // done or stopped by the memcg OOM killer (the VM's kernel did each in one of two
    // runs).
    let n = 20_000u64;
    let ids: Vec<u64> = (0..n).chain(0..n).collect();
    let budget = ["--max-steps", "2000000"];
    let r = replay_with("held.txt", &ids, "256MiB", Some("8MiB"), "6.18", &budget);
    let t = r
        .tasks
        .iter()
        .find(|t| t.name == "replay")
        .expect("the replay task");
    let done = r.replay.as_ref().expect("a replay report").tasks[0]
        .counters
        .requests;
    assert!(t.oom_killed || done == 2 * n, "{done} requests, not killed");
    if t.oom_killed {
        assert!(r.vmstat["oom_kill"] >= 1);
        // The summary says the run was stopped, and where.
        let mut out = Vec::new();
        mmsim::trace::cli::print_replay(&r, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.lines().next().unwrap().ends_with("OOM-KILLED"), "{out}");
        assert!(
            out.contains(&format!("OOM-KILLED         after {done} requests")),
            "{out}"
        );
    }
}

/// A 64 MiB unit machine of `era` and `preset` whose /mnt holds `n` one-page files
/// `/mnt/f0`…, on disk only (their first open reads the inode table).
fn machine_with_files(name: &str, n: usize, era: KernelEra, preset: &str) -> UnitMachine {
    let mut text = unit_machine_toml(
        name,
        "64MiB",
        "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n",
    );
    for i in 0..n {
        text += &common::file_toml(&format!("/mnt/f{i}"), 4096, true);
    }
    UnitMachine::new(&text, era.features(preset).unwrap())
}

/// The cached blocks of /mnt's metadata file (the block device's buffer cache), as
/// (block, page); every entry must be a page.
fn metadata_pages(m: &UnitMachine) -> Vec<(u64, Pfn)> {
    let table = m.sim.fss[1].inode_table.expect("an inode table");
    let mut cached = Vec::new();
    m.sim
        .inode(table)
        .mapping
        .tree
        .gang_lookup(0, usize::MAX, &mut cached);
    cached
        .into_iter()
        .map(|(block, e)| match e {
            mmsim::mm::radix_tree::Entry::Page(p) => (block, p),
            other => panic!("block {block}: {other:?}"),
        })
        .collect()
}

#[test]
fn buffer_cache_blocks_are_created_active_from_3_16() {
    // __getblk_slow: grow_dev_folio adds a block's page (find_or_create_page, FGP_ACCESSED
    // from 3.16: seed 000), then __find_get_block finds it (__find_get_block_slow,
    // FGP_ACCESSED again). With `accessed-init` every block an inode-table read creates —
    // its own and the readahead's — is active at once; without it the lookup only marks
    // it referenced. The open that waited for the read holds its block: the restarted
    // lookup does not mark it again.
    for (preset, active) in [("patched", true), ("vanilla", false)] {
        let mut m = machine_with_files("bufcache", 64, KernelEra::V6_18, preset);
        let tid = m.tid;
        let mut progress = 0;
        let target = match m.sim.sys_open(tid, "/mnt/f40", false, false, &mut progress) {
            Err(Wait::PageLocked(p)) => p,
            other => panic!("{preset}: {other:?}"),
        };
        let cached = metadata_pages(&m);
        assert!(cached.len() > 1, "{preset}: the readahead's blocks too");
        let flags = |m: &UnitMachine, p| (m.sim.PageActive(p), m.sim.PageReferenced(p));
        for &(block, p) in &cached {
            assert_eq!(flags(&m, p), (active, !active), "{preset}: block {block}");
        }
        common::complete_io(&mut m.sim);
        let fd = match m.sim.sys_open(tid, "/mnt/f40", false, false, &mut progress) {
            Ok(OpResult::Fd(fd)) => fd,
            other => panic!("{preset}: {other:?}"),
        };
        assert_eq!(
            flags(&m, target),
            (active, !active),
            "{preset}: not marked again"
        );
        assert!(
            m.sim.tasks[tid].held_pages.is_empty(),
            "{preset}: the buffer released"
        );
        assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
        m.check();
    }
}

#[test]
fn each_created_block_is_looked_up_before_the_next_so_only_a_full_batch_counts_pgactivate() {
    // __getblk_slow creates one block at a time and finds it at once: the lookup
    // activates the page in this CPU's add batch, no pgactivate counted. Only the block
    // whose add filled the batch (and put it on the LRU) is activated through the
    // activate batch, counted. A cold open's 35 blocks (a directory's root and leaf, an
    // inode-table window of 33), from an empty add batch: one full batch of 31 (6.18,
    // `folio-batch-31`), two of 15 (6.1).
    // (Adding all 33 first and looking them up after would count the 31 or 30 the full
    // batches had put on the LRU: Linux 6.18 counts a handful of pgactivate for a few
    // hundred inode-table blocks read, docs/replay.md "Files kept open".)
    for (era, batch) in [(KernelEra::V6_18, 31u64), (KernelEra::V6_1, 15)] {
        let mut m = machine_with_files("getblk", 1024, era, "patched");
        m.sim.lru_add_drain();
        let act0 = m.sim.vmstat.get(VmItem::Pgactivate);
        common::open_restarting(&mut m, "/mnt/f600");
        m.sim.lru_add_drain();
        let cached = metadata_pages(&m);
        // The window, and the directory's root and leaf the lookup read before it.
        let blocks = cached.len() as u64;
        assert_eq!(blocks, 33 + 2, "{era:?}: the blocks read");
        for &(block, p) in &cached {
            assert!(m.sim.PageActive(p), "{era:?}: block {block} active");
        }
        assert_eq!(
            (m.sim.vmstat.get(VmItem::Pgactivate) - act0) as u64,
            blocks / batch,
            "{era:?}: one pgactivate per batch the blocks filled"
        );
        m.check();
    }
}

#[test]
fn an_inode_table_readahead_marks_the_cached_blocks_of_its_window_accessed() {
    // __ext4_get_inode_loc reads its window ahead with ext4_sb_breadahead_unmovable on each
    // block: bdev_getblk creates a block not cached, and finds one cached as
    // __find_get_block does, marking it accessed. Without `accessed-init` (vanilla) the
    // first read leaves its blocks inactive and referenced; a second read in the window
    // (a cold inode whose block alone was dropped) activates each of them, counted.
    use mmsim::mm::radix_tree::Entry;
    use mmsim::mm::slab::{INODES_PER_BLOCK, INODE_TABLE_PAGES};
    let mut m = machine_with_files("ra-touch", 1024, KernelEra::V6_18, "vanilla");
    let ino_of = |m: &UnitMachine, path: &str| m.sim.fss[1].names[path];
    let first = u64::from(ino_of(&m, "/mnt/f600")) / INODES_PER_BLOCK;
    // A file whose inode is two blocks further, in the same window.
    let other = (0..1024)
        .map(|i| format!("/mnt/f{i}"))
        .find(|p| u64::from(ino_of(&m, p)) / INODES_PER_BLOCK == first + 2)
        .expect("a file two inode-table blocks on");
    let block = first + 2;
    common::open_restarting(&mut m, "/mnt/f600");
    m.sim.lru_add_drain();
    let window = metadata_pages(&m);
    assert!(window.len() > 16, "the window was read");
    for &(b, p) in &window {
        assert!(!m.sim.PageActive(p) && m.sim.PageReferenced(p), "block {b}");
    }
    // Drop the other file's block only (nothing else holds it once bh_lrus is emptied).
    m.sim.invalidate_bh_lrus();
    let table = m.sim.fss[1].inode_table.expect("an inode table");
    assert_eq!(m.sim.mapping_try_invalidate(table, block, block, None), 1);
    let act0 = m.sim.vmstat.get(VmItem::Pgactivate);
    common::open_restarting(&mut m, &other);
    m.sim.lru_add_drain();
    // The inode table's blocks of the window are found again; of the directory's blocks
    // (beyond the table) those the second lookup read.
    let (mut itable, mut dir) = (0, 0);
    for &(b, p) in &window {
        let same = m.sim.inode(table).mapping.tree.lookup(b) == Entry::Page(p);
        if b == block || !same {
            continue;
        }
        if b < INODE_TABLE_PAGES {
            assert!(m.sim.PageActive(p), "block {b}: found again, activated");
            itable += 1;
        } else if m.sim.PageActive(p) {
            dir += 1;
        }
    }
    assert!(itable > 16, "{itable} blocks found again");
    assert_eq!(
        m.sim.vmstat.get(VmItem::Pgactivate) - act0,
        itable + dir,
        "one pgactivate per block found again"
    );
    m.check();
}

#[test]
fn a_block_in_a_cpus_bh_lru_is_busy_and_reclaim_activates_it() {
    // Every metadata block a lookup finds or creates goes to the front of its CPU's
    // bh_lrus, which holds it (get_bh) until BH_LRU_SIZE later blocks push it out. Such a
    // block's buffer is busy: invalidation leaves it, and reclaim that meets it at the
    // inactive tail cannot release its buffers (filemap_release_folio) and activates it.
    use mmsim::mm::slab::BH_LRU_SIZE;
    use mmsim::mm::vmscan::ScanControl;
    let mut m = machine_with_files("bh-lru", 1024, KernelEra::V6_18, "patched");
    let table = m.sim.fss[1].inode_table.expect("an inode table");
    // A cold open reads a window of 33 inode-table blocks: the CPU's LRU keeps 16.
    common::open_restarting(&mut m, "/mnt/f600");
    let lru = m.sim.bh_lrus[0].clone();
    assert_eq!(lru.len(), BH_LRU_SIZE);
    let pages: Vec<Pfn> = metadata_pages(&m).into_iter().map(|(_, p)| p).collect();
    assert!(pages.len() > BH_LRU_SIZE, "{} blocks read", pages.len());
    m.sim.lru_add_drain();
    for &p in &pages {
        // The page cache's reference, and the bh_lrus' for the 16.
        assert_eq!(
            m.sim.mem[p as usize].refcount,
            1 + i32::from(lru.contains(&p))
        );
        assert!(
            !m.sim.buffers_busy(p),
            "only an isolated page counts as busy past 2"
        );
    }
    // Every block to the inactive list, then a reclaim pass over all of them.
    for &p in &pages {
        m.sim.deactivate_page(p);
    }
    m.sim.lru_add_drain();
    let mut sc = ScanControl::new(4096, true, Gfp::KERNEL);
    sc.priority = 0;
    m.sim.shrink_node(0, &mut sc);
    for &p in &pages {
        let still = m.sim.mem[p as usize].mapping == table;
        assert_eq!(
            still,
            lru.contains(&p),
            "pfn {p}: in the LRU {}",
            lru.contains(&p)
        );
        if still {
            assert!(m.sim.PageActive(p), "pfn {p}: activated");
        }
    }
    // A cold open in another window creates 33 blocks: they push the 16 out, whose pages
    // keep only the page cache's reference.
    common::open_restarting(&mut m, "/mnt/f0");
    assert_eq!(m.sim.bh_lrus[0].len(), BH_LRU_SIZE);
    let gone: Vec<Pfn> = lru
        .iter()
        .copied()
        .filter(|p| !m.sim.bh_lrus[0].contains(p))
        .collect();
    assert!(!gone.is_empty());
    assert!(gone.iter().all(|&p| m.sim.mem[p as usize].refcount == 1));
    m.check();
}

#[test]
fn an_inode_table_miss_reads_ahead_to_the_groups_last_used_inode() {
    use mmsim::mm::slab::{inode_table_readahead, INODES_PER_GROUP, INODE_READAHEAD_BLKS};
    // Inode 100 (block 6) of a filesystem with 10,000 inodes in use: blocks 0 through 32,
    // the kernel's inclusive window.
    assert_eq!(
        inode_table_readahead(100, 10_000),
        (0, INODE_READAHEAD_BLKS + 1)
    );
    // Block 40 starts its window at 32.
    assert_eq!(inode_table_readahead(40 * 16 + 3, 10_000), (32, 33));
    // Only 200 inodes in use (blocks 0..=12): the window stops at block 12.
    assert_eq!(inode_table_readahead(100, 200), (0, 13));
    // The second group's table starts at its own first block; inodes in use beyond the
    // group do not extend the first group's window.
    let g = INODES_PER_GROUP;
    assert_eq!(inode_table_readahead((g + 5) as u32, 3 * g), (g / 16, 33));
    assert_eq!(
        inode_table_readahead((g - 1) as u32, 3 * g),
        (g / 16 - 32, 33),
        "the last window of a group ends one block past its table (the inclusive loop)"
    );
}

/// A machine of `era` whose task runs in cgroup `a` (no limit).
fn machine_in_cgroup(era: KernelEra) -> UnitMachine {
    let text = unit_machine_toml(
        "bh",
        "64MiB",
        "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\ncgroup = \"a\"\n\n[[cgroups]]\nname = \"a\"\n",
    ) + &common::file_toml("/mnt/r", 65536, true);
    UnitMachine::new(&text, era.features("patched").expect("preset"))
}

/// `len` bytes written at `pos` of `fd` (no wait expected).
fn pwrite(m: &mut UnitMachine, fd: u32, len: u64, pos: u64) {
    let (tid, mut progress) = (m.tid, 0);
    let r = m.sim.sys_write(tid, fd, len, Some(pos), &mut progress);
    assert_eq!(r, Ok(OpResult::Bytes(len)), "pwrite {len} at {pos}");
}

/// The buffer heads of written data pages (`fs/buffer.rs`): from 4.19
/// (`buffer-head-kmem`) each page written through write(2) to a block filesystem gets one,
/// charged to the page's cgroup in bytes (slab_reclaimable) and packed 39 to a slab page;
/// a page the read path brings in gets none; truncation frees them with their pages.
/// Without the rule none are modelled.
#[test]
fn written_pages_carry_buffer_heads_charged_to_their_cgroup() {
    use mmsim::mm::slab::obj_full_size;
    let bh = KmemCache::BufferHead as usize;
    for era in [KernelEra::V4_14, KernelEra::V6_18] {
        let on = era == KernelEra::V6_18;
        let mut m = machine_in_cgroup(era);
        assert_eq!(m.sim.features.buffer_head_kmem, on, "{era:?}");
        let a = m.sim.memcg_by_name("a").expect("cgroup a");
        let tid = m.tid;
        let mut progress = 0;
        let fd = match m.sim.sys_open(tid, "/mnt/w", true, false, &mut progress) {
            Ok(OpResult::Fd(fd)) => fd,
            other => panic!("open: {other:?}"),
        };
        let slab0 = slab(&m);
        let bytes0 = m.sim.memcgs[a as usize].slab_bytes[0]; // the file's dentry and inode
        pwrite(&mut m, fd, 64 * 4096, 0);
        // (The file's page-cache tree node is charged too, `xarray-node-kmem`.)
        let bytes0 = bytes0 + xa_bytes(&m, a);
        let objs = m.sim.lruvec(a, 0).vfs.objs[bh];
        assert_eq!(
            objs,
            if on { 64 } else { 0 },
            "{era:?}: one per written page"
        );
        assert_eq!(
            m.sim.memcgs[a as usize].slab_bytes[0] - bytes0,
            if on { 64 * obj_full_size(bh) } else { 0 },
            "{era:?}: charged to the writer's cgroup in bytes"
        );
        assert_eq!(
            slab(&m) - slab0,
            if on {
                slab_pages(KmemCache::BufferHead, 64)
            } else {
                0
            },
            "{era:?}: packed in slab pages"
        );
        // Written again: the pages have their buffers already.
        pwrite(&mut m, fd, 4096, 0);
        assert_eq!(m.sim.lruvec(a, 0).vfs.objs[bh], objs, "{era:?}");
        // A file read into the cache has none.
        let rfd = common::open_restarting(&mut m, "/mnt/r");
        let mut progress = 0;
        loop {
            match m.sim.sys_read(tid, rfd, 4096, Some(0), &mut progress) {
                Ok(_) => break,
                Err(_) => {
                    common::complete_io(&mut m.sim);
                }
            }
        }
        assert_eq!(
            m.sim.lruvec(a, 0).vfs.objs[bh],
            objs,
            "{era:?}: read pages have none"
        );
        m.check();
        // Truncation frees them with the pages.
        let mut progress = 0;
        let r = m.sim.sys_ftruncate(tid, fd, 32 * 4096, &mut progress);
        assert!(r.is_ok(), "{era:?}: {r:?}");
        assert_eq!(
            m.sim.lruvec(a, 0).vfs.objs[bh],
            if on { 32 } else { 0 },
            "{era:?}: truncated"
        );
        m.check();
    }
}

/// The bytes of `memcg`'s page-cache tree nodes on node 0 (`xarray-node-kmem`).
fn xa_bytes(m: &UnitMachine, memcg: mmsim::mm::memcontrol::MemcgId) -> u64 {
    if m.sim.features.xarray_node_kmem {
        m.sim.lruvec(memcg, 0).xa_nodes * mmsim::mm::workingset::XA_NODE_FULL_SIZE
    } else {
        0
    }
}

/// Read `path` whole, 4 KiB at a time, completing its IO.
fn read_whole(m: &mut UnitMachine, path: &str, pages: u64) {
    let fd = common::open_restarting(m, path);
    let tid = m.tid;
    for i in 0..pages {
        let mut progress = 0;
        loop {
            match m.sim.sys_read(tid, fd, 4096, Some(i * 4096), &mut progress) {
                Ok(_) => break,
                Err(_) => {
                    common::complete_io(&mut m.sim);
                }
            }
        }
    }
    assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
}

/// The page cache's tree nodes (radix_tree_node / xa_node, 576 bytes) are charged to the
/// cgroup of the task whose insertion allocated them from 4.6 (`xarray-node-kmem`): a
/// 256-page file read whole takes a root node and four leaves (64 slots each), each
/// charged its object and obj_cgroup pointer in bytes (memory.stat slab_reclaimable) and
/// the pages for them in memory.current; deleting the file frees them. Before 4.6, or
/// read from the root cgroup, no cgroup pays.
#[test]
fn page_cache_tree_nodes_are_charged_to_the_inserting_cgroup_from_v4_6() {
    use mmsim::mm::workingset::XA_NODE_FULL_SIZE;
    assert_eq!(XA_NODE_FULL_SIZE, 584);
    for era in [KernelEra::V4_2, KernelEra::V4_14, KernelEra::V6_18] {
        let on = era >= KernelEra::V4_14;
        let text = unit_machine_toml(
            "xa",
            "64MiB",
            "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\ncgroup = \"a\"\n\n[[cgroups]]\nname = \"a\"\n",
        ) + &common::file_toml("/mnt/r", 256 * 4096, true);
        let mut m = UnitMachine::new(&text, era.features("patched").expect("preset"));
        assert_eq!(m.sim.features.xarray_node_kmem, on, "{era:?}");
        let a = m.sim.memcg_by_name("a").expect("cgroup a");
        let ino = m.sim.fss[1].names["/mnt/r"];
        // memory.current less the pages the CPUs' charge stocks hold for the cgroup.
        let charged = |m: &UnitMachine| {
            m.sim.memcgs[a as usize].usage - m.sim.memcg_stock_pages()[a as usize]
        };
        // Looked up first: its dentry and inode (charged from 4.5) are not in the figures.
        let fd = common::open_restarting(&mut m, "/mnt/r");
        assert_eq!(m.sim.sys_close(m.tid, fd), Ok(OpResult::None));
        // The pages charged to the cgroup one by one (the file's, and an inode table
        // block the open reads into the buffer cache if not cached).
        let frames = |m: &UnitMachine| m.sim.mem.iter().filter(|p| p.memcg == a).count() as u64;
        let (bytes0, usage0, pages0, frames0) = {
            let mc = &m.sim.memcgs[a as usize];
            (mc.slab_bytes[0], charged(&m), mc.obj_pages, frames(&m))
        };
        read_whole(&mut m, "/mnt/r", 256);
        assert_eq!(m.sim.inode(ino).mapping.tree.nr_nodes(), 5, "{era:?}");
        assert_eq!(
            m.sim.lruvec(a, 0).xa_nodes,
            5,
            "{era:?}: the reader's nodes"
        );
        let usage = charged(&m);
        let mc = &m.sim.memcgs[a as usize];
        assert_eq!(
            mc.slab_bytes[0] - bytes0,
            if on { 5 * XA_NODE_FULL_SIZE } else { 0 },
            "{era:?}: charged in bytes"
        );
        // memory.current: the pages charged one by one (the file's 256 among them), and
        // the pages charged for the objects.
        let frames = frames(&m) - frames0;
        assert!(frames >= 256, "{era:?}: {frames}");
        assert_eq!(
            usage - usage0,
            frames + (mc.obj_pages - pages0),
            "{era:?}: memory.current"
        );
        assert!(
            !on || mc.obj_pages > pages0,
            "{era:?}: a page charged for the nodes"
        );
        m.check();
        // Deleted: its pages, nodes, inode and dentry go, and the bytes with them (the
        // cgroup's only reclaimable slab, whichever of them the era charged).
        let mut progress = 0;
        let r = m.sim.sys_unlink("/mnt/r", &mut progress);
        assert!(r.is_ok(), "{era:?}: unlink {r:?}");
        assert_eq!(m.sim.lruvec(a, 0).xa_nodes, 0, "{era:?}: freed");
        assert_eq!(
            m.sim.memcgs[a as usize].slab_bytes[0], 0,
            "{era:?}: uncharged"
        );
        m.check();
        // Read from the root cgroup: counted there, charged to no cgroup.
        let root_text = unit_machine_toml(
            "xa",
            "64MiB",
            "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n",
        ) + &common::file_toml("/mnt/r", 256 * 4096, true);
        let mut m = UnitMachine::new(&root_text, era.features("patched").expect("preset"));
        read_whole(&mut m, "/mnt/r", 256);
        assert_eq!(m.sim.lruvec(ROOT_MEM_CGROUP, 0).xa_nodes, 5, "{era:?}");
        m.check();
    }
}

#[test]
fn from_6_7_the_inode_table_readahead_reads_only_what_the_cgroup_has_room_for() {
    // __ext4_get_inode_loc creates the block it needs with sb_getblk, then reads the rest of
    // its window ahead with bdev_getblk(GFP_NOWAIT) (6.7, `itable-readahead-nowait`): a
    // block whose charge would need reclaim is skipped. A cgroup with room for five more
    // pages (no per-CPU charge stock, so each page is charged on its own) reads five blocks
    // for a cold inode and reclaims nothing; before 6.7 the window's blocks were allocated
    // as readahead's pages, whose charges reclaim the cgroup's data pages to read the whole
    // window.
    use mmsim::mm::slab::{INODES_PER_BLOCK, INODE_READAHEAD_BLKS};
    for nowait in [true, false] {
        let mut f = KernelEra::V6_18.features("patched").expect("preset");
        assert!(f.set("itable-readahead-nowait", nowait));
        assert!(f.set("memcg-charge-stock", false));
        let mut text = unit_machine_toml(
            "itable-nowait",
            "64MiB",
            "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\ncgroup = \"a\"\n",
        ) + "\n[[cgroups]]\nname = \"a\"\n";
        for i in 0..1024 {
            text += &common::file_toml(&format!("/mnt/f{i}"), 4096, true);
        }
        text += &common::file_toml("/mnt/data", 1 << 20, true);
        let mut m = UnitMachine::new(&text, f);
        let a = m.sim.memcg_by_name("a").expect("a");
        let tid = m.tid;
        m.sim.tasks[tid].memcg = a;
        // 256 pages of data read once: inactive pages the cgroup's reclaim can take.
        let fd = common::open_restarting(&mut m, "/mnt/data");
        for i in 0..256 {
            let mut progress = 0;
            while m
                .sim
                .sys_read(tid, fd, 4096, Some(i * 4096), &mut progress)
                .is_err()
            {
                common::complete_io(&mut m.sim);
            }
        }
        m.sim.lru_add_drain();
        let ino_of = |m: &UnitMachine, path: &str| u64::from(m.sim.fss[1].names[path]);
        // The first open reads the directory's blocks and the first window, unlimited.
        common::open_restarting(&mut m, "/mnt/f0");
        // A file whose inode block is in the next window (the first one read its
        // window's blocks and the next block: the loop is inclusive).
        let first_window = ino_of(&m, "/mnt/f0") / INODES_PER_BLOCK / INODE_READAHEAD_BLKS;
        let next = (first_window + 1) * INODE_READAHEAD_BLKS;
        let far = (0..1024)
            .map(|i| format!("/mnt/f{i}"))
            .find(|p| ino_of(&m, p) / INODES_PER_BLOCK == next + 8)
            .expect("a file whose inode is in the next window");
        let far_block = ino_of(&m, &far) / INODES_PER_BLOCK;
        let window = far_block & !(INODE_READAHEAD_BLKS - 1);
        let before = metadata_pages(&m);
        let usage = m.sim.memcgs[a as usize].usage;
        m.sim.memcgs[a as usize].max = usage + 5;
        let scanned = m.sim.vmstat.get(VmItem::PgscanFile);
        common::open_restarting(&mut m, &far);
        // The far window's inode-table blocks the open read (nothing reclaims the pages
        // it just added: they are active, or held).
        let read = metadata_pages(&m)
            .iter()
            .filter(|&&(b, _)| b >= window && b <= window + INODE_READAHEAD_BLKS)
            .filter(|x| !before.contains(x))
            .count();
        assert!(
            metadata_pages(&m).iter().any(|&(b, _)| b == far_block),
            "the needed block"
        );
        let reclaimed = m.sim.vmstat.get(VmItem::PgscanFile) - scanned;
        if nowait {
            assert!(read <= 5, "{read} blocks read with room for 5");
            assert_eq!(reclaimed, 0, "no reclaim for the window");
        } else {
            assert!(read > 16, "{read} blocks: the whole window");
            assert!(reclaimed > 0, "the window's charges reclaimed");
        }
        m.check();
    }
}

#[test]
fn from_3_9_a_write_miss_reclaims_the_dentries_and_inodes() {
    // ext4 grabs write_begin's page before it starts the journal handle (3.9,
    // `write-begin-fs`), so a write miss's charge reclaims with __GFP_FS and the superblock
    // shrinker runs — with the work the GFP_NOFS reclaims (read misses, inodes) deferred.
    // Before, AOP_FLAG_NOFS: only the dentries' charges could shrink the caches. 20,000
    // objects of 8 KiB, 30 % sets, in a 32 MiB cgroup: the slab the cgroup ends with is
    // smaller, and the page cache larger, with the rule.
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("vfs-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("sets.csv");
    // A deterministic skewed draw (x² of a SplitMix64 uniform).
    let mut s = 3u64;
    let mut next = || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::new();
    for _ in 0..60_000 {
        let u = next();
        let obj = (20_000.0 * u * u) as u64;
        let op = if next() < 0.3 { "set" } else { "get" };
        text += &format!("{obj},8192,{op}\n");
    }
    std::fs::write(&p, text).unwrap();
    let run = |features: &str| {
        let argv = [
            p.to_str().unwrap(),
            "--format",
            "csv:obj-id-col=1,obj-size-col=2,op-col=3",
            "--memory-max",
            "32MiB",
            "--ram",
            "256MiB",
            "--kernel",
            "6.18",
            "--features",
            features,
        ];
        let a = mmsim::api::replay_args(&argv).expect("options");
        let r = mmsim::api::replay(&a).expect("run");
        assert!(r.complete, "{:?}", r.end);
        assert_eq!(r.vmstat["oom_kill"], 0);
        let c = common::cgroup_report(&r, "replay");
        (r.vmstat["slabs_scanned"], c.stat["slab"], c.stat["file"])
    };
    let (scanned_on, slab_on, file_on) = run("+write-begin-fs");
    let (scanned_off, slab_off, file_off) = run("-write-begin-fs");
    assert!(
        scanned_on > scanned_off * 11 / 10,
        "slabs_scanned {scanned_on} with the rule, {scanned_off} without"
    );
    assert!(slab_on < slab_off * 4 / 5, "slab {slab_on} vs {slab_off}");
    assert!(file_on > file_off, "page cache {file_on} vs {file_off}");
}
