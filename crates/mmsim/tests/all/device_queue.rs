//! The flash device model (`[[devices]] queue_depth`, `fs/blockdev.rs`): every request
//! pays the latency, up to `queue_depth` requests overlap theirs, the transfers share the
//! bandwidth one after the other; without it a device serves one request at a time and
//! only a seek pays the latency. The device alone, then whole runs, then the scenario
//! errors.

use crate::common;

use common::{file_toml, machine_toml, run_sc};
use mmsim::fs::blockdev::{BlockDevice, IoKind};
use mmsim::kernel::KernelEra;
use mmsim::machine::cost::{CostTable, DeviceTiming};
use mmsim::scenario::{parse_scenario, DevicePreset, DeviceSpec, FaultSpec};

const PS_PER_NS: u64 = 1_000;

fn device(queue_depth: Option<u64>) -> BlockDevice {
    let spec = DeviceSpec {
        name: "sda".into(),
        preset: DevicePreset::Ssd,
        size_bytes: 1 << 30,
        latency_ns: None,
        bandwidth_bytes_per_s: None,
        read_ahead_kb: None,
        max_sectors_kb: None,
        queue_depth,
        faults: FaultSpec::default(),
    };
    BlockDevice::new(&spec, &CostTable::default_profile())
}

/// The SSD preset's latency and one page's transfer time, ps.
fn ssd_l_t() -> (u64, u64) {
    let ssd = DeviceTiming::SSD;
    (ssd.latency_ps, ssd.transfer_ps(4096))
}

#[test]
fn flash_requests_overlap_their_latency_and_share_the_transfer() {
    let (l, t) = ssd_l_t();
    assert!(
        l > 3 * t,
        "the preset's latency dominates a page's transfer"
    );
    let mut d = device(Some(4));
    // Four one-page requests at once, far apart on the device: all start at 0, their
    // latencies overlap, their transfers follow one another.
    let done: Vec<u64> = (0..4)
        .map(|i| d.submit(0, IoKind::Read, i * 1000, 1))
        .collect();
    assert_eq!(done, [l + t, l + 2 * t, l + 3 * t, l + 4 * t]);
    // A fifth waits for the first to end, then pays its own latency; the transfer path
    // is free by then.
    let fifth = d.submit(0, IoKind::Read, 5000, 1);
    assert_eq!(fifth, (l + t) + l + t);
    // Busy time is the union of the requests' service: [0, l + 4t] and [l + t, 2l + 2t].
    assert_eq!(d.busy_ps, 2 * l + 2 * t);
    assert_eq!(d.nr_reads, 5);
    // A sequential request pays the latency too (no seek on flash).
    let next = d.submit(fifth, IoKind::Read, 5001, 1);
    assert_eq!(next, fifth + l + t);
    // Depth 1: one request after the other, each with its latency.
    let mut one = device(Some(1));
    let a = one.submit(0, IoKind::Write, 0, 2);
    let b = one.submit(0, IoKind::Write, 2, 2);
    assert_eq!((a, b), (l + 2 * t, 2 * (l + 2 * t)));
}

#[test]
fn without_a_queue_depth_only_a_seek_pays_the_latency() {
    let (l, t) = ssd_l_t();
    let mut d = device(None);
    let a = d.submit(0, IoKind::Read, 100, 1);
    let b = d.submit(0, IoKind::Read, 101, 1);
    let c = d.submit(0, IoKind::Read, 500, 1);
    assert_eq!((a, b, c), (l + t, l + 2 * t, 2 * l + 3 * t));
    assert_eq!(d.seeks, 2);
    assert_eq!(d.busy_ps, c);
}

/// A machine whose disk has `queue_depth` (none: the seek model) and readahead off, with
/// two 8 MiB files.
fn machine(queue_depth: Option<u64>) -> String {
    let mut text = machine_toml("flash", 2, "256MiB", None, "1GiB", "/mnt")
        .replace("size = \"1GiB\"\n", "size = \"1GiB\"\nread_ahead_kb = 0\n");
    if let Some(q) = queue_depth {
        text = text.replace(
            "read_ahead_kb = 0\n",
            &format!("read_ahead_kb = 0\nqueue_depth = {q}\n"),
        );
    }
    text + &file_toml("/mnt/a", 8 << 20, true) + &file_toml("/mnt/b", 8 << 20, true)
}

fn elapsed_ns(text: &str, task: &str) -> u64 {
    let sc = parse_scenario(text, "flash.toml", &[]).expect("scenario");
    let r = run_sc(
        &sc,
        KernelEra::V6_18.features("patched").expect("preset"),
        true,
        u64::MAX,
    );
    assert!(r.complete, "{:?}", r.end);
    common::task_report(&r, task).elapsed_ns
}

#[test]
fn a_sequential_read_pays_the_latency_per_request_on_flash_only() {
    // 2,048 one-page reads in file order, readahead off: one request each. The seek model
    // pays the latency once; flash pays it on each.
    let reader = "\n[[tasks]]\nname = \"r\"\ncpu = 0\nprogram = \"read\"\npath = \"/mnt/a\"\nblock_size = \"4KiB\"\n";
    let (l, t) = ssd_l_t();
    let per_request_ns = (l + t) / PS_PER_NS;
    let seek = elapsed_ns(&(machine(None) + reader), "r");
    let flash = elapsed_ns(&(machine(Some(1)) + reader), "r");
    assert!(flash >= 2048 * per_request_ns, "{flash} ns");
    assert!(seek < 2048 * per_request_ns / 2, "{seek} ns");
}

#[test]
fn two_random_readers_overlap_on_a_flash_queue() {
    // Two tasks, each 500 one-page reads three pages apart (every request a seek) of its
    // own file: the seek model and a queue of one serve the 1,000 requests one after the
    // other; a queue of two overlaps the two tasks' latencies.
    let readers: String = ["a", "b"]
        .iter()
        .enumerate()
        .map(|(cpu, f)| {
            format!(
                "\n[[tasks]]\nname = \"{f}\"\ncpu = {cpu}\nprogram = \"pread-stride\"\npath = \"/mnt/{f}\"\n\
                 count = 500\nread_pages = 1\nstep_pages = 3\n"
            )
        })
        .collect();
    let (l, t) = ssd_l_t();
    let per_request_ns = (l + t) / PS_PER_NS;
    let seek = elapsed_ns(&(machine(None) + &readers), "b");
    let one = elapsed_ns(&(machine(Some(1)) + &readers), "b");
    let two = elapsed_ns(&(machine(Some(2)) + &readers), "b");
    assert!(
        seek >= 1000 * per_request_ns && one >= 1000 * per_request_ns,
        "{seek} {one}"
    );
    assert!(
        two >= 500 * per_request_ns,
        "each task's requests follow one another: {two}"
    );
    assert!(
        two * 10 < one * 6,
        "the two tasks' requests overlap: {two} ns against {one} ns"
    );
}

#[test]
fn queue_depth_errors_name_the_file_line_and_field() {
    let base = machine(None);
    for (bad, why) in [
        ("0", "1 ..= 1024"),
        ("2000", "1 ..= 1024"),
        ("\"four\"", ""),
        ("-1", ""),
    ] {
        let text = base.replace(
            "read_ahead_kb = 0\n",
            &format!("read_ahead_kb = 0\nqueue_depth = {bad}\n"),
        );
        let line = text
            .lines()
            .position(|l| l.starts_with("queue_depth"))
            .expect("line")
            + 1;
        let e = parse_scenario(&text, "flash.toml", &[]).expect_err(bad);
        assert_eq!(
            (e.file.as_str(), e.line, e.field.as_str()),
            ("flash.toml", Some(line), "devices.sda.queue_depth"),
            "{e}"
        );
        assert!(e.message.contains(why), "{bad}: {e}");
    }
    let hdd = base
        .replace("preset = \"ssd\"", "preset = \"hdd\"")
        .replace(
            "read_ahead_kb = 0\n",
            "read_ahead_kb = 0\nqueue_depth = 4\n",
        );
    let e = parse_scenario(&hdd, "flash.toml", &[]).expect_err("hdd");
    assert_eq!(e.field, "devices.sda.queue_depth", "{e}");
    assert!(e.message.contains("hdd"), "{e}");
    // --set reaches it, validated the same way.
    let base = base + "\n[[tasks]]\nname = \"r\"\ncpu = 0\nprogram = \"read\"\npath = \"/mnt/a\"\n";
    let sc =
        parse_scenario(&base, "flash.toml", &["devices.sda.queue_depth=32".into()]).expect("valid");
    assert_eq!(sc.devices[0].queue_depth, Some(32));
    let e =
        parse_scenario(&base, "flash.toml", &["devices.sda.queue_depth=0".into()]).expect_err("0");
    assert_eq!(e.field, "devices.sda.queue_depth", "{e}");
}

/// `mmsim replay --queue-depth N`: the replay's device becomes flash. A sequential block
/// trace read with readahead off (one request a page) then pays the latency on every
/// request; bad depths and an hdd are usage errors.
#[test]
fn replay_queue_depth_option() {
    let dir = std::env::temp_dir().join(format!("mmsim-device-queue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let trace = dir.join("seq.csv");
    let lines: String = (0..512u64)
        .map(|p| format!("{},hm,0,Read,{},4096,10\n", p * 1000, p * 4096))
        .collect();
    std::fs::write(&trace, lines).expect("trace");
    let t = trace.to_str().expect("utf-8");
    let run = |extra: &[&str]| {
        let mut argv = vec![t, "--format", "msr", "--ram", "64MiB", "--readahead", "off"];
        argv.extend_from_slice(extra);
        let a = mmsim::api::replay_args(&argv).expect("options");
        let r = mmsim::api::replay(&a).expect("run");
        assert!(r.complete, "{:?}", r.end);
        // One request a page, and the file's inode-table block.
        assert_eq!(r.devices[0].reads, 513, "one request a page");
        r.elapsed_ns
    };
    let (l, t_page) = ssd_l_t();
    let seek = run(&[]);
    let flash = run(&["--queue-depth", "4"]);
    assert!(flash >= 512 * (l + t_page) / PS_PER_NS, "{flash} ns");
    assert!(seek < 512 * (l + t_page) / PS_PER_NS / 2, "{seek} ns");
    for (args, what) in [
        (
            vec!["--queue-depth", "0"],
            "--queue-depth 0: device disk: queue_depth must be 1 ..= 1024",
        ),
        (vec!["--queue-depth", "5000"], "--queue-depth 5000"),
        (
            vec!["--queue-depth", "2", "--device", "hdd"],
            "an hdd seeks",
        ),
    ] {
        let mut argv = vec!["replay", t, "--format", "msr"];
        argv.extend(args.iter());
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_mmsim"))
            .args(&argv)
            .output()
            .expect("mmsim runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(what), "{args:?} says {what}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any sequence of submissions (non-decreasing times, any sizes and sectors) to a flash
    /// device of any depth: each request takes at least its latency and transfer; the
    /// transfers follow one another, so requests complete in order, each at least its
    /// transfer after the one before; a request starts only when the one `depth` before it
    /// has ended, so it completes at least its latency and transfer after that one; busy
    /// time is at most the span from the first submission to the last completion, and at
    /// least the sum of the transfers.
    #[test]
    fn a_flash_queue_keeps_its_depth_and_its_transfer_order(
        depth in 1usize..6,
        reqs in proptest::collection::vec((0u64..200_000_000, 1u64..64, 0u64..1_000_000), 1..60),
    ) {
        let mut d = device(Some(depth as u64));
        let lat = d.timing.latency_ps;
        let mut now = 0;
        let mut first = None;
        let mut done_at: Vec<u64> = Vec::new();
        let mut transfers = 0;
        for (gap, pages, sector) in reqs {
            now += gap;
            first.get_or_insert(now);
            let xfer = d.timing.transfer_ps(pages * 4096);
            let done = d.submit(now, IoKind::Read, sector, pages);
            proptest::prop_assert!(done >= now + lat + xfer, "{done} < {now} + {lat} + {xfer}");
            if let Some(&prev) = done_at.last() {
                proptest::prop_assert!(done >= prev + xfer, "transfers overlap");
            }
            if done_at.len() >= depth {
                let slot = done_at[done_at.len() - depth];
                proptest::prop_assert!(done >= slot + lat + xfer, "more than {depth} in service");
            }
            done_at.push(done);
            transfers += xfer;
        }
        let span = done_at.last().expect("a request") - first.expect("a request");
        proptest::prop_assert!(d.busy_ps <= span, "busy {} > span {span}", d.busy_ps);
        proptest::prop_assert!(d.busy_ps >= transfers);
    }
}
