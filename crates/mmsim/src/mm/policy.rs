//! Reclaim policies: the classic two-list LRU (active/inactive, mm/vmscan.c) and the
//! multi-generational LRU (`mm::lru_gen`), behind one seam.
//!
//! A policy is a `PolicyOps` table of the hooks where the kernel branches on
//! `lru_gen_enabled()`: LRU insertion and removal (lruvec_add_folio / lruvec_del_folio),
//! folio_mark_accessed, folio_add_lru in a fault, folio_check_references, the workingset
//! shadow (eviction and refault), global reclaim of a node (shrink_node), limit reclaim of
//! one lruvec (shrink_lruvec), kswapd's per-pass aging (kswapd_age_node), and the
//! invariant checker. A hook left `None` runs the classic code. Adding a policy is one new
//! module with its `PolicyOps` and one line in `POLICIES`.

use crate::mm::memcontrol::MemcgId;
use crate::mm::page::Pfn;
use crate::mm::vmscan::{PageReferences, ScanControl};
use crate::sim::Sim;

/// The reclaim policy of a run (`policy = "classic" | "mglru"`, `--policy`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ReclaimPolicy {
    /// The active/inactive LRU lists (every kernel; the default).
    #[default]
    Classic,
    /// The multi-generational LRU (CONFIG_LRU_GEN, from 6.1).
    Mglru,
}

/// A policy's invariant checker: the first violation as a message.
pub type CheckFn = fn(&Sim) -> Result<(), String>;

/// The hooks of one policy (see the module comment). `None` = the classic code path.
pub struct PolicyOps {
    /// The policy.
    pub policy: ReclaimPolicy,
    /// Its name in scenario files and on the command line.
    pub name: &'static str,
    /// What it is, for `mmsim policies` and the docs.
    pub summary: &'static str,
    /// The first kernel release that has it.
    pub since: crate::kernel::KernelEra,
    /// lruvec_add_folio (`tail` = lruvec_add_folio_tail): true if the policy placed it.
    pub lru_add: Option<fn(&mut Sim, Pfn, bool) -> bool>,
    /// lruvec_del_folio: true if the policy took it off its lists.
    pub lru_del: Option<fn(&mut Sim, Pfn) -> bool>,
    /// folio_mark_accessed.
    pub mark_accessed: Option<fn(&mut Sim, Pfn)>,
    /// folio_add_lru: a folio added while the task is in a page fault.
    pub add_in_fault: Option<fn(&mut Sim, Pfn)>,
    /// folio_check_references.
    pub check_references:
        Option<fn(&mut Sim, Pfn, crate::mm::memcontrol::MemcgId) -> PageReferences>,
    /// workingset_eviction: the shadow entry of an evicted folio.
    pub eviction: Option<fn(&mut Sim, Pfn) -> u64>,
    /// workingset_refault: returns true to activate the folio (classic semantics).
    pub refault: Option<fn(&mut Sim, Pfn, u64) -> bool>,
    /// shrink_node for global (root) reclaim.
    pub shrink_node: Option<fn(&mut Sim, usize, &mut ScanControl)>,
    /// shrink_lruvec for memcg limit reclaim.
    pub shrink_lruvec: Option<fn(&mut Sim, usize, MemcgId, &mut ScanControl)>,
    /// kswapd_age_node before each balance_pgdat pass.
    pub age_node: Option<fn(&mut Sim, usize, &mut ScanControl)>,
    /// The policy's invariant checks.
    pub check: Option<CheckFn>,
}

/// The classic active/inactive LRU: every hook is the classic code.
pub const CLASSIC: PolicyOps = PolicyOps {
    policy: ReclaimPolicy::Classic,
    name: "classic",
    summary: "the active/inactive LRU lists of mm/vmscan.c (every kernel)",
    since: crate::kernel::KernelEra::V2_6_30,
    lru_add: None,
    lru_del: None,
    mark_accessed: None,
    add_in_fault: None,
    check_references: None,
    eviction: None,
    refault: None,
    shrink_node: None,
    shrink_lruvec: None,
    age_node: None,
    check: None,
};

/// Every policy, by name (one line per policy).
pub const POLICIES: &[&PolicyOps] = &[&CLASSIC, &crate::mm::lru_gen::MGLRU];

impl ReclaimPolicy {
    /// The policy's hooks.
    pub fn ops(self) -> &'static PolicyOps {
        POLICIES
            .iter()
            .find(|p| p.policy == self)
            .expect("every policy is registered")
    }
    /// The policy's name.
    pub fn name(self) -> &'static str {
        self.ops().name
    }
    /// A policy by name.
    pub fn parse(s: &str) -> Result<ReclaimPolicy, String> {
        POLICIES
            .iter()
            .find(|p| p.name == s)
            .map(|p| p.policy)
            .ok_or_else(|| {
                format!(
                    "unknown policy `{s}`; known: {}",
                    POLICIES
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}

impl std::fmt::Display for ReclaimPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The run's policy must exist in its kernel era (MGLRU from 6.1): the error names the
/// scenario, its era and the first era that has the policy.
pub fn check_policy_era(
    sc: &crate::scenario::Scenario,
    f: &crate::sim::Features,
) -> Result<(), String> {
    let policy = f.policy.or(sc.policy).unwrap_or_default();
    let since = policy.ops().since;
    if f.era < since {
        return Err(format!(
            "policy {policy} exists from kernel {since} on, but {} runs on kernel {} (add \
             --kernel {since} or later)",
            sc.name, f.era
        ));
    }
    Ok(())
}
