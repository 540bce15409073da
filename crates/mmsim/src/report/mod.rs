//! Report layer: statistics, tables, JSON. Never mutates the simulation.

pub mod compare;
pub mod stats;
