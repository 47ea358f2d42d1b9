//! scx_sis library: everything but the scheduler's main loop, so host tests reach it.

pub mod bench;
pub mod bpf_intf;
pub mod bpf_skel;
pub mod control;
pub mod idle_filter;
pub mod knobs;
pub mod llc_stats;
pub mod overload;
pub mod stats;
pub mod sis_test_skel;
pub mod topology;
pub mod tui;
