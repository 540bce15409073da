//! mmsim: a deterministic, user-space simulator of the Linux kernel's memory manager.
//!
//! See `docs/architecture.md` for the layer map. Kernel concepts carry kernel names
//! (`pagecache_get_page`, `mark_page_accessed`, `lruvec`, …) so that `grep` finds them.
#![deny(missing_docs)]

pub mod api;
pub mod arch;
pub mod fs;
pub mod kernel;
pub mod machine;
pub mod mm;
pub mod progress;
pub mod psi;
pub mod report;
pub mod run;
pub mod scenario;
pub mod sched;
pub mod sim;
pub mod swarm;
pub mod trace;
pub mod workload;
