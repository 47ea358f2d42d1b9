//! scx_sis library: everything but the scheduler's main loop, so host tests reach it.

#[cfg(feature = "bench")]
pub mod bench;
pub mod bpf_intf;
pub mod bpf_skel;
pub mod error;
pub mod idle_filter;
pub mod maps;
pub mod overload;
pub mod preflight;
pub mod stats;
pub mod sis_test_skel;
pub mod topology;
