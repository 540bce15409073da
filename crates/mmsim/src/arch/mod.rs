//! Architecture layer (x86): the per-CPU TLB model and TLB flush primitives.

pub mod tlb;
