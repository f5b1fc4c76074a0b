//! The host runner: launches the chapter's kernels on a CUDA GPU or on the CPU SIMT emulator,
//! checks them against CPU references, and reports.
pub mod examples;
pub mod models;
pub mod mutate;
pub mod open;
pub mod report;
pub mod run;
pub mod sanitize;
pub mod verify;
