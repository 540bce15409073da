//! Cost accounting: every picosecond a CPU's clock advances is idle time or time in one
//! mode, and the per-function profile sums to the mode times (a charge goes to the clock at
//! once and to the mode and function when they change; `Sim::sync_accounting`).

use crate::common;

use common::load_builtin;
use mmsim::machine::profile::KFunc;
use mmsim::sim::{Features, RunEnd, Sim};

/// The two identities, on every CPU and over the machine.
fn assert_accounted(sim: &Sim, ctx: &str) {
    let mut modes = 0u64;
    for (i, c) in sim.cpus.iter().enumerate() {
        let busy = c.user_ps() + c.sys_ps() + c.irq_ps();
        assert_eq!(
            c.clock_ps,
            c.idle_ps + busy,
            "{ctx}: CPU {i}: clock = idle + user + system + interrupt"
        );
        modes += busy;
    }
    let profile: u64 = KFunc::ALL.iter().map(|f| sim.profile.get(*f)).sum();
    assert_eq!(profile, modes, "{ctx}: the profile sums to the mode times");
}

/// Built-ins that exercise each way the running context changes: engine steps on many
/// CPUs, TLB-flush IPIs taken within a sender's step (vanilla, 8 CPUs), IO completion
/// interrupts (dd on a block device), kswapd and syscall entry and exit. The run stops at
/// step limits along the way, where the identities must hold too.
#[test]
fn clock_idle_modes_and_profile_agree_at_every_stop() {
    let cases: [(&str, &[&str], Features); 3] = [
        (
            "lru-file-mmap-read",
            &["machine.memory_per_node=16MiB", "machine.cpus_per_node=8"],
            Features::vanilla(),
        ),
        (
            "dd-blockfs",
            &["machine.memory_per_node=64MiB"],
            Features::patched(),
        ),
        (
            "stream-read",
            &["machine.memory_per_node=16MiB"],
            Features::patched(),
        ),
    ];
    for (name, sets, features) in cases {
        let sc = load_builtin(name, sets);
        let mut sim = Sim::new(&sc, features).expect("machine builds");
        let mut limit = 0;
        let mut ipis = 0;
        loop {
            limit += 5_000;
            let end = sim.run(limit);
            assert_accounted(&sim, &format!("{name} at step {}", sim.steps));
            ipis = ipis.max(sim.cpus.iter().map(|c| c.interrupts).sum::<u64>());
            match end {
                RunEnd::StepLimit => continue,
                RunEnd::Completed => break,
                other => panic!("{name}: {other:?}"),
            }
        }
        assert!(ipis > 0, "{name}: interrupts were taken");
    }
}

/// The report's per-device IO (/proc/diskstats): a sequential read of an 8 MiB file reads
/// its 2,048 pages in readahead windows that follow each other on the disk, so only the
/// first request seeks; ten single-page preads 100 pages apart are ten requests and ten
/// seeks (13 pages: the first, at the file's start, reads an initial window of 4). The device is busy for the requests' service time:
/// with one reader and nothing else, no longer than the run.
#[test]
fn the_report_counts_each_devices_requests_seeks_and_busy_time() {
    for (program, want_pages, want_seeks) in [
        (
            "program = \"read\"\npath = \"/data/f\"\nblock_size = \"128KiB\"",
            2048u64,
            Some(1u64),
        ),
        (
            "program = \"pread-stride\"\npath = \"/data/f\"\ncount = 10\nread_pages = 1\nstep_pages = 100",
            13,
            Some(10),
        ),
    ] {
        let text = common::machine_toml("io", 1, "64MiB", None, "1GiB", "/data")
            + &common::file_toml("/data/f", 8 << 20, true)
            + &format!("\n[[tasks]]\nname = \"t\"\n{program}\n");
        let sc = mmsim::scenario::parse_scenario(&text, "io.toml", &[]).expect("parses");
        let r = common::run_sc(&sc, Features::patched(), true, 10_000_000);
        assert_eq!(r.end, RunEnd::Completed);
        let d = r.devices.iter().find(|d| d.name == "sda").expect("sda");
        // Plus the file's inode, read from the inode table at its open (cold caches).
        assert_eq!(d.pages_read, want_pages + 1, "{program}");
        assert_eq!(d.writes, 0);
        if let Some(s) = want_seeks {
            // And one for the inode-table block, away from the file's data.
            assert_eq!(d.seeks, s + 1, "{program}: {d:?}");
        }
        assert!(d.reads >= d.seeks && d.busy_ns > 0 && d.busy_ns <= r.elapsed_ns, "{d:?}");
    }
}

/// IRQ pressure (6.1+): the TLB-flush IPIs a task's CPU takes while it runs are
/// irq.pressure `full` of its cgroup and of the machine. Batched TLB flushing (seed 002)
/// sends far fewer of them: lru-file-mmap-read on 6.18, vanilla against patched. No era
/// before PSI has the file.
#[test]
fn tlb_shootdowns_are_irq_pressure_and_batching_cuts_it() {
    use mmsim::kernel::KernelEra;
    let irq = |preset: &str, era: KernelEra| {
        let sc = load_builtin("lru-file-mmap-read", &[]);
        let f = mmsim::kernel::resolve_features(None, Some(era), preset, &Default::default(), None)
            .unwrap();
        let r = common::run_sc(&sc, f, false, u64::MAX);
        assert_eq!(r.end, RunEnd::Completed);
        r.pressure.map(|p| {
            let irq = p.irq.expect("6.18 has irq pressure").full.total_us;
            (irq, r.interrupts.iter().sum::<u64>())
        })
    };
    let (vanilla, v_irqs) = irq("vanilla", KernelEra::V6_18).expect("6.18 has PSI");
    let (patched, p_irqs) = irq("patched", KernelEra::V6_18).unwrap();
    eprintln!(
        "irq full: vanilla {vanilla} us ({v_irqs} interrupts), patched {patched} us ({p_irqs})"
    );
    assert!(
        vanilla > 0 && patched < vanilla / 4,
        "{vanilla} vs {patched} us"
    );
    assert!(irq("vanilla", KernelEra::V4_14).is_none());
}
