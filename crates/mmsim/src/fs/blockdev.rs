//! The block-device model: one request queue served in order; each request costs a latency
//! (skipped when it starts where the previous one ended — sequential streaming) plus its
//! transfer time at the device bandwidth. Presets for HDD, SATA SSD and NVMe live in the
//! cost table.
//!
//! Fault injection (`FaultSpec`): each page of a completed request may fail, drawn from the
//! device's own PCG stream (seeded from the scenario seed and the device index) at the
//! configured read / write rate, or because it is a configured bad page (`fail` points,
//! which fail every time). The completion path (`io_complete`) applies the kernel's error
//! handling; every error is recorded here for the run report.

use std::collections::BTreeSet;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg32;

use crate::machine::cost::{CostTable, DeviceTiming};
use crate::machine::{CpuId, Ps};
use crate::mm::page::{Pfn, PAGE_SIZE};
use crate::scenario::{DevicePreset, DeviceSpec, FaultSpec};
use crate::sched::TaskId;

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoKind {
    /// Page-cache read (readpage / readahead).
    Read,
    /// Writeback.
    Write,
    /// A journal commit's write of this many blocks to the log (`fs/jbd2.rs`): no page
    /// of the page cache is written, none fails.
    Journal(u32),
}

/// A block request in flight (a bio of contiguous pages of one inode).
#[derive(Clone, Debug)]
pub struct IoRequest {
    /// Device.
    pub dev: usize,
    /// Read or write.
    pub kind: IoKind,
    /// Inode.
    pub ino: u32,
    /// Pages, in index order.
    pub pages: Vec<Pfn>,
    /// CPU that submitted it (takes the completion interrupt).
    pub cpu: CpuId,
}

/// A block device.
#[derive(Clone, Debug)]
pub struct BlockDevice {
    /// Name.
    pub name: String,
    /// The model's preset (its default timing).
    pub preset: DevicePreset,
    /// Timing.
    pub timing: DeviceTiming,
    /// A synchronous device (zram, `mm/zram.rs`): requests complete in `submit_bio`.
    pub synchronous: bool,
    /// Capacity in pages.
    pub capacity_pages: u64,
    /// The bdi's readahead ceiling in pages (queue/read_ahead_kb / 4).
    pub ra_pages: u64,
    /// bdi->io_pages: the largest request in pages (queue/max_sectors_kb / 4).
    pub io_pages: u64,
    /// When the queue is free (with a `queue_depth`: when the last request in service
    /// ends).
    pub busy_until_ps: Ps,
    /// A flash device's requests served at once (`queue_depth`; each pays the latency).
    /// None: one request after the other, the latency paid on a seek only.
    pub queue_depth: Option<usize>,
    /// With a `queue_depth`: the completion times of the requests in service.
    in_service: Vec<Ps>,
    /// With a `queue_depth`: when the transfer path is free.
    transfer_free_ps: Ps,
    /// Sector (in pages) after the last request, for sequential detection.
    pub next_sector: u64,
    /// The flusher kthread of this device's bdi.
    pub flusher: Option<TaskId>,
    /// b_dirty: dirty inodes in the order they were dirtied.
    pub dirty_inodes: Vec<u32>,
    /// When the flusher's periodic timer is due.
    pub timer_at_ps: Option<Ps>,
    /// A start-all work is pending (WB_start_all, wakeup_flusher_threads): every inode
    /// dirtied at or before this time is to be written, whatever its age.
    pub start_all_before: Option<Ps>,
    /// Requests served.
    pub nr_reads: u64,
    /// Requests served.
    pub nr_writes: u64,
    /// Pages read.
    pub pages_read: u64,
    /// Pages written.
    pub pages_written: u64,
    /// Requests that did not continue the previous one and paid the positioning latency
    /// (seeks on a disk).
    pub seeks: u64,
    /// Time the device spent serving requests, ps (/proc/diskstats' io_ticks).
    pub busy_ps: Ps,
    /// Fault injection configuration.
    pub faults: FaultSpec,
    /// The stream fault decisions are drawn from.
    pub fault_rng: Pcg32,
    /// IO errors injected on this device (the first `MAX_ERROR_RECORDS`).
    pub io_errors: Vec<IoErrorRecord>,
    /// IO errors injected, all of them.
    pub nr_io_errors: u64,
    /// Content versions whose writeback failed (reported losses: AS_EIO was set).
    pub lost_versions: BTreeSet<u32>,
    /// Reads that saw the older data of a page whose writeback failed (reported losses).
    pub lost_reads: u64,
}

/// BLK_DEF_MAX_SECTORS (2560 sectors): the max_sectors_kb of a device that reports no
/// smaller limit, KiB.
pub const BLK_DEF_MAX_SECTORS_KB: u64 = 1280;

/// IO errors recorded per device in detail (more are only counted).
pub const MAX_ERROR_RECORDS: usize = 1000;

/// One injected IO error and how the kernel reports it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct IoErrorRecord {
    /// Virtual time of the completion, ns.
    pub t_ns: u64,
    /// Device name.
    pub device: String,
    /// `read`, `write` (file writeback) or `swap-out`.
    pub op: String,
    /// The file (path, or `inode N` once unlinked), or `swap slot N`.
    pub file: String,
    /// Page index in the file (or the swap slot).
    pub index: u64,
    /// How the error reaches user space.
    pub reported_as: String,
}

/// Seed of a device's fault stream: the root seed and the device's index.
pub fn fault_rng(seed: u64, dev: usize) -> Pcg32 {
    Pcg32::new(
        seed ^ 0x6d6d_7369_6d5f_666c,
        0xda3e_39cb_94b9_5bdb ^ dev as u64,
    )
}

impl BlockDevice {
    /// A device as the scenario says.
    pub fn new(spec: &DeviceSpec, costs: &CostTable) -> BlockDevice {
        let mut timing = match spec.preset {
            DevicePreset::Hdd => costs.hdd,
            DevicePreset::Ssd => costs.ssd,
            // zram has no queue nor transfer time: its IO is the CPU's (de)compression.
            DevicePreset::Nvme | DevicePreset::Zram => costs.nvme,
        };
        if let Some(l) = spec.latency_ns {
            timing.latency_ps = l * 1_000;
        }
        if let Some(b) = spec.bandwidth_bytes_per_s {
            timing.bandwidth_bytes_per_s = b;
        }
        BlockDevice {
            name: spec.name.clone(),
            preset: spec.preset,
            timing,
            synchronous: spec.preset == DevicePreset::Zram,
            capacity_pages: spec.size_bytes / PAGE_SIZE,
            ra_pages: spec
                .read_ahead_kb
                .map_or(crate::mm::readahead::RA_PAGES, |kb| kb * 1024 / PAGE_SIZE),
            io_pages: spec.max_sectors_kb.unwrap_or(BLK_DEF_MAX_SECTORS_KB) * 1024 / PAGE_SIZE,
            busy_until_ps: 0,
            queue_depth: spec.queue_depth.map(|q| q as usize),
            in_service: Vec::new(),
            transfer_free_ps: 0,
            next_sector: u64::MAX,
            flusher: None,
            dirty_inodes: Vec::new(),
            timer_at_ps: None,
            start_all_before: None,
            seeks: 0,
            busy_ps: 0,
            nr_reads: 0,
            nr_writes: 0,
            pages_read: 0,
            pages_written: 0,
            faults: spec.faults.clone(),
            fault_rng: Pcg32::seed_from_u64(spec.name.bytes().map(u64::from).sum()),
            io_errors: Vec::new(),
            nr_io_errors: 0,
            lost_versions: BTreeSet::new(),
            lost_reads: 0,
        }
    }

    /// Draw whether one page of `kind` fails at the configured rate.
    pub fn draw_error(&mut self, kind: IoKind) -> bool {
        let ppb = match kind {
            IoKind::Read => self.faults.read_error_ppb,
            IoKind::Write => self.faults.write_error_ppb,
            IoKind::Journal(_) => 0,
        };
        ppb > 0 && self.fault_rng.gen_range(0..1_000_000_000u32) < ppb
    }

    /// Device address (in pages) of a file page: each inode gets its own 2^28-page region,
    /// so a file's pages are contiguous on the device.
    pub fn sector_of(ino: u32, index: u64) -> u64 {
        (u64::from(ino) << 28) + index
    }

    /// Queue a request of `nr_pages` starting at `sector`, submitted at `now`; returns its
    /// completion time.
    pub fn submit(&mut self, now: Ps, kind: IoKind, sector: u64, nr_pages: u64) -> Ps {
        let done = if let Some(depth) = self.queue_depth {
            self.submit_flash(now, nr_pages, depth)
        } else {
            let start = now.max(self.busy_until_ps);
            let seek = if sector == self.next_sector {
                0
            } else {
                self.timing.latency_ps
            };
            let done = start + seek + self.timing.transfer_ps(nr_pages * PAGE_SIZE);
            self.busy_until_ps = done;
            self.seeks += u64::from(seek > 0);
            self.busy_ps += done - start;
            done
        };
        self.next_sector = sector + nr_pages;
        match kind {
            IoKind::Read => {
                self.nr_reads += 1;
                self.pages_read += nr_pages;
            }
            IoKind::Write | IoKind::Journal(_) => {
                self.nr_writes += 1;
                self.pages_written += nr_pages;
            }
        }
        done
    }

    /// A request on a flash device of queue depth `depth`: it starts at once, or when the
    /// first of `depth` requests in service ends; it pays the latency (the flash access,
    /// whatever the sector: no seek), overlapping with the other requests', then transfers
    /// once the transfer path is free (the requests' transfers share the bandwidth one
    /// after the other). Busy time is the union of the requests' service.
    fn submit_flash(&mut self, now: Ps, nr_pages: u64, depth: usize) -> Ps {
        self.in_service.retain(|&d| d > now);
        let start = if self.in_service.len() >= depth {
            let (i, first) = self
                .in_service
                .iter()
                .enumerate()
                .min_by_key(|&(_, d)| *d)
                .map(|(i, d)| (i, *d))
                .expect("a full queue");
            self.in_service.swap_remove(i);
            first.max(now)
        } else {
            now
        };
        let ready = start + self.timing.latency_ps;
        let done = ready.max(self.transfer_free_ps) + self.timing.transfer_ps(nr_pages * PAGE_SIZE);
        self.transfer_free_ps = done;
        self.in_service.push(done);
        self.busy_ps += done - start.max(self.busy_until_ps.min(done));
        self.busy_until_ps = self.busy_until_ps.max(done);
        self.seeks += 1;
        done
    }
}

impl crate::sim::Sim {
    /// Reseed every device's fault stream from the root seed (run start).
    pub fn seed_faults(&mut self, seed: u64) {
        for (i, d) in self.devices.iter_mut().enumerate() {
            d.fault_rng = fault_rng(seed, i);
        }
    }

    /// Does the IO of `kind` on page `index` of `ino` (or swap slot `index`) on `dev` fail?
    /// A `fail` point always fails; otherwise the rate decides.
    pub fn io_fault(&mut self, dev: usize, kind: IoKind, ino: u32, index: u64) -> bool {
        if self.devices[dev].faults.is_none() {
            return false;
        }
        let write = kind == IoKind::Write;
        let hit = ino != crate::mm::swapfile::SWAP_INO
            && self.devices[dev].faults.fail.iter().any(|pt| {
                pt.write == write
                    && pt.offset_bytes / PAGE_SIZE == index
                    && self
                        .resolve_fs(&pt.file)
                        .is_some_and(|fs| self.fss[fs].names.get(pt.file.as_str()) == Some(&ino))
            });
        hit || self.devices[dev].draw_error(kind)
    }

    /// Record an injected error for the report.
    pub fn record_io_error(&mut self, dev: usize, op: &str, ino: u32, index: u64, how: &str) {
        let file = if ino == crate::mm::swapfile::SWAP_INO {
            "swap".to_string()
        } else {
            self.inodes[ino as usize]
                .as_ref()
                .and_then(|i| {
                    self.fss[i.fs]
                        .names
                        .iter()
                        .find(|(_, n)| **n == ino)
                        .map(|(p, _)| p.to_string())
                })
                .unwrap_or_else(|| format!("inode {ino}"))
        };
        let t_ns = self.now() / 1_000;
        let d = &mut self.devices[dev];
        d.nr_io_errors += 1;
        if d.io_errors.len() < MAX_ERROR_RECORDS {
            d.io_errors.push(IoErrorRecord {
                t_ns,
                device: d.name.clone(),
                op: op.to_string(),
                file,
                index,
                reported_as: how.to_string(),
            });
        }
    }
}
