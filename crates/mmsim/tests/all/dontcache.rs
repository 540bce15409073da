//! RWF_DONTCACHE (v6.14, `rwf-dontcache`): uncached buffered IO through the `read` and
//! `dd` programs' `dontcache` — pages a read brings in leave the page cache once copied,
//! pages a write creates once written back; pages already cached stay; EOPNOTSUPP before
//! 6.14 and on tmpfs.

use crate::common;

use common::{file_toml, machine_toml, run_sc, task_report};
use mmsim::kernel::KernelEra;
use mmsim::mm::page::PAGE_SIZE;
use mmsim::scenario::parse_scenario;

const P: u64 = PAGE_SIZE;

/// 64 MiB of RAM, a 16 MiB file /mnt/f, and the tasks in `tasks` (TOML).
fn scenario(tasks: &str) -> String {
    machine_toml("dontcache", 2, "64MiB", None, "1GiB", "/mnt")
        + &file_toml("/mnt/f", 16 << 20, true)
        + tasks
}

fn reader(name: &str, cpu: u32, extra: &str) -> String {
    format!(
        "\n[[tasks]]\nname = \"{name}\"\ncpu = {cpu}\nprogram = \"read\"\npath = \"/mnt/f\"\n{extra}"
    )
}

fn run(text: &str, era: KernelEra) -> mmsim::run::RunReport {
    let sc = parse_scenario(text, "dontcache", &[]).expect("the scenario parses");
    let r = run_sc(&sc, era.features("patched").unwrap(), true, 20_000_000);
    assert_eq!(r.end, mmsim::sim::RunEnd::Completed, "{:?}", r.end);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    r
}

/// An uncached read of a cold file reads every page from the device, pass after pass, and
/// leaves none of them cached (and no shadow entries: no refaults); a plain read keeps
/// them.
#[test]
fn an_uncached_read_leaves_nothing_in_the_page_cache() {
    let pages = (16 << 20) / P;
    let r = run(
        &scenario(&reader("t", 0, "passes = 2\ndontcache = true\n")),
        KernelEra::V6_18,
    );
    assert_eq!(task_report(&r, "t").cache_misses, 2 * pages);
    assert!(
        (r.vmstat["nr_file_pages"] as u64) < pages / 16,
        "nr_file_pages {}",
        r.vmstat["nr_file_pages"]
    );
    assert_eq!(r.vmstat["workingset_refault_file"], 0);
    let r = run(&scenario(&reader("t", 0, "passes = 2\n")), KernelEra::V6_18);
    assert_eq!(task_report(&r, "t").cache_misses, pages);
    assert!(r.vmstat["nr_file_pages"] as u64 >= pages);
}

/// Pages already cached stay: an uncached reader after a plain one finds them all and
/// drops none.
#[test]
fn an_uncached_read_of_cached_pages_keeps_them() {
    let pages = (16 << 20) / P;
    let text = scenario(
        &(reader("warm", 0, "") + &reader("cold", 1, "dontcache = true\nstart = \"1s\"\n")),
    );
    let r = run(&text, KernelEra::V6_18);
    assert_eq!(task_report(&r, "warm").cache_misses, pages);
    assert_eq!(task_report(&r, "cold").cache_misses, 0);
    assert!(r.vmstat["nr_file_pages"] as u64 >= pages);
}

/// An uncached dd writes everything back (its writes start the writeback) and its cgroup
/// never holds the whole file (what is written back goes; the rest is held down by the
/// dirty throttle); a plain dd's holds all of it.
#[test]
fn an_uncached_write_drops_its_pages_once_written_back() {
    let dd = |extra: &str| {
        machine_toml("dontcache-dd", 2, "256MiB", None, "1GiB", "/mnt")
            + "\n[[cgroups]]\nname = \"w\"\n"
            + "\n[[tasks]]\nname = \"dd\"\ncpu = 0\ncgroup = \"w\"\nprogram = \"dd\"\npath = \"/mnt/out\"\nsize = \"128MiB\"\nblock_size = \"1MiB\"\n"
            + extra
    };
    let pages = (128 << 20) / P;
    let peak = |r: &mmsim::run::RunReport| {
        r.cgroups
            .iter()
            .find(|c| c.name == "w")
            .expect("the cgroup")
            .peak
    };
    let r = run(&dd("dontcache = true\n"), KernelEra::V6_18);
    assert_eq!(r.vmstat["pgpgout"] as u64, pages * (P / 1024));
    let plain = run(&dd(""), KernelEra::V6_18);
    assert!(peak(&plain) >= 128 << 20, "plain peak {}", peak(&plain));
    assert!(
        peak(&r) < peak(&plain) * 3 / 4,
        "uncached peak {} against {}",
        peak(&r),
        peak(&plain)
    );
}

/// RWF_DONTCACHE is EOPNOTSUPP before 6.14 and on tmpfs: the task stops at its first IO.
/// `dontcache` with `nocache` is refused with the field named.
#[test]
fn dontcache_is_eopnotsupp_before_6_14_and_on_tmpfs() {
    let r = run(
        &scenario(&reader("t", 0, "dontcache = true\n")),
        KernelEra::V6_1,
    );
    let t = task_report(&r, "t");
    assert_eq!(t.errors.get("EOPNOTSUPP"), Some(&1), "{:?}", t.errors);
    assert_eq!(t.cache_misses, 0);
    let tmpfs = machine_toml("dontcache-tmpfs", 2, "64MiB", None, "1GiB", "/mnt")
        + "\n[[tasks]]\nname = \"dd\"\ncpu = 0\nprogram = \"dd\"\npath = \"/tmp/out\"\nsize = \"1MiB\"\ndontcache = true\n";
    let r = run(&tmpfs, KernelEra::V6_18);
    assert_eq!(
        task_report(&r, "dd").errors.get("EOPNOTSUPP"),
        Some(&1),
        "{:?}",
        task_report(&r, "dd").errors
    );
    let both = scenario(&reader("t", 0, "nocache = true\ndontcache = true\n"));
    let e = parse_scenario(&both, "s.toml", &[]).expect_err("refused");
    assert_eq!(e.field, "tasks.t.dontcache", "{e}");
}
