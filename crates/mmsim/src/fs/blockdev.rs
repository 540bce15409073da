//! The block-device model: one request queue served in order; each request costs a latency
//! (skipped when it starts where the previous one ended — sequential streaming) plus its
//! transfer time at the device bandwidth. Presets for HDD, SATA SSD and NVMe live in the
//! cost table.

use crate::machine::cost::{CostTable, DeviceTiming};
use crate::machine::{CpuId, Ps};
use crate::mm::page::{Pfn, PAGE_SIZE};
use crate::scenario::{DevicePreset, DeviceSpec};
use crate::sched::TaskId;

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoKind {
    /// Page-cache read (readpage / readahead).
    Read,
    /// Writeback.
    Write,
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
    /// Timing.
    pub timing: DeviceTiming,
    /// Capacity in pages.
    pub capacity_pages: u64,
    /// When the queue is free.
    pub busy_until_ps: Ps,
    /// Sector (in pages) after the last request, for sequential detection.
    pub next_sector: u64,
    /// The flusher kthread of this device's bdi.
    pub flusher: Option<TaskId>,
    /// dirty_writeback_centisecs (5 s).
    pub writeback_interval_ps: Ps,
    /// dirty_expire_centisecs (30 s).
    pub dirty_expire_ps: Ps,
    /// b_dirty: dirty inodes in the order they were dirtied.
    pub dirty_inodes: Vec<u32>,
    /// When the flusher's periodic timer is due.
    pub timer_at_ps: Option<Ps>,
    /// Requests served.
    pub nr_reads: u64,
    /// Requests served.
    pub nr_writes: u64,
    /// Pages read.
    pub pages_read: u64,
    /// Pages written.
    pub pages_written: u64,
}

impl BlockDevice {
    /// A device as the scenario says.
    pub fn new(spec: &DeviceSpec, costs: &CostTable) -> BlockDevice {
        let mut timing = match spec.preset {
            DevicePreset::Hdd => costs.hdd,
            DevicePreset::Ssd => costs.ssd,
            DevicePreset::Nvme => costs.nvme,
        };
        if let Some(l) = spec.latency_ns {
            timing.latency_ps = l * 1_000;
        }
        if let Some(b) = spec.bandwidth_bytes_per_s {
            timing.bandwidth_bytes_per_s = b;
        }
        BlockDevice {
            name: spec.name.clone(),
            timing,
            capacity_pages: spec.size_bytes / PAGE_SIZE,
            busy_until_ps: 0,
            next_sector: u64::MAX,
            flusher: None,
            writeback_interval_ps: 5_000_000_000_000,
            dirty_expire_ps: 30_000_000_000_000,
            dirty_inodes: Vec::new(),
            timer_at_ps: None,
            nr_reads: 0,
            nr_writes: 0,
            pages_read: 0,
            pages_written: 0,
        }
    }

    /// Device address (in pages) of a file page: each inode gets its own 2^28-page region,
    /// so a file's pages are contiguous on the device.
    pub fn sector_of(ino: u32, index: u64) -> u64 {
        (u64::from(ino) << 28) + index
    }

    /// Queue a request of `nr_pages` starting at `sector`, submitted at `now`; returns its
    /// completion time.
    pub fn submit(&mut self, now: Ps, kind: IoKind, sector: u64, nr_pages: u64) -> Ps {
        let start = now.max(self.busy_until_ps);
        let seek = if sector == self.next_sector {
            0
        } else {
            self.timing.latency_ps
        };
        let done = start + seek + self.timing.transfer_ps(nr_pages * PAGE_SIZE);
        self.busy_until_ps = done;
        self.next_sector = sector + nr_pages;
        match kind {
            IoKind::Read => {
                self.nr_reads += 1;
                self.pages_read += nr_pages;
            }
            IoKind::Write => {
                self.nr_writes += 1;
                self.pages_written += nr_pages;
            }
        }
        done
    }
}
