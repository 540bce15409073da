//! Report layer: statistics, tables, JSON, plots. Never mutates the simulation.

pub mod compare;
pub mod csv;
pub mod html;
pub mod load;
pub mod plot;
pub mod reproduce;
pub mod stats;
pub mod tables;
