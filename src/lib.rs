//! scx_sis library: everything but the scheduler's main loop, so host tests reach it.

pub mod access;
pub mod bpf_intf;
pub mod bpf_skel;
pub mod control;
pub mod error;
pub mod group;
pub mod idle_filter;
pub mod knobs;
pub mod layout;
pub mod llc_stats;
pub mod maps;
pub mod overload;
pub mod preflight;
pub mod rundir;
pub mod sis_test_skel;
pub mod stats;
pub mod stats_server;
pub mod test_intf;
pub mod topology;

/// A BPF map value read as its C struct (bindgen'd from bpf/intf.h), not by byte offsets.
pub fn map_value<T: Copy>(bytes: &[u8]) -> T {
    assert!(bytes.len() >= std::mem::size_of::<T>(), "map value shorter than its struct");
    // SAFETY: T is a plain-data C struct and the slice holds at least its size
    unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const T) }
}
pub mod tui;
