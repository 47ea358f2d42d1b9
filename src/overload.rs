//! User-space side of the overloaded-CPU map and stealing (bpf/overload.bpf.h,
//! bpf/steal.bpf.h): modes, sparse sizing, sampling the map's weight.

use anyhow::Result;
use libbpf_rs::MapCore;

use crate::bpf_intf;
use crate::maps::{percpu_sum, word_weight};
use crate::topology::Topology;

/// Stealing, for A/B runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StealMode {
    /// No stealing; the overloaded map is kept only for the busy-CPU balance (none with
    /// --no-balance).
    Off,
    /// Maintain the overloaded map but never steal (the map's own cost).
    MapOnly,
    /// Steal on idle ("steal tasks to improve CPU utilization").
    On,
}

/// Where a CPU about to idle may steal from: its LLC first, then wider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StealScope {
    Llc,
    Node,
    All,
}

impl StealMode {
    pub fn to_bpf(self) -> u32 {
        match self {
            StealMode::Off => bpf_intf::steal_mode_STEAL_OFF,
            StealMode::MapOnly => bpf_intf::steal_mode_STEAL_MAP_ONLY,
            StealMode::On => bpf_intf::steal_mode_STEAL_ON,
        }
    }
}

impl StealScope {
    pub fn to_bpf(self) -> u32 {
        match self {
            StealScope::Llc => bpf_intf::steal_scope_STEAL_SCOPE_LLC,
            StealScope::Node => bpf_intf::steal_scope_STEAL_SCOPE_NODE,
            StealScope::All => bpf_intf::steal_scope_STEAL_SCOPE_ALL,
        }
    }
}

/// 64-byte lines per LLC in the sparse map: OVL_BITS_PER_LINE CPUs share a line.
pub fn ovl_lines(topo: &Topology) -> usize {
    topo.llc_stride().div_ceil(bpf_intf::sis_consts_OVL_BITS_PER_LINE as usize)
}

/// (line index, bit) of an LLC position: the sparse layout.
pub fn ovl_index(topo: &Topology, llc: usize, pos: usize) -> (usize, usize) {
    let per = bpf_intf::sis_consts_OVL_BITS_PER_LINE as usize;
    (llc * ovl_lines(topo) + pos / per, pos % per)
}

/// CPUs currently marked overloaded, over all LLCs.
pub fn sample_weight(topo: &Topology, ovl_map: &impl MapCore) -> Result<u64> {
    (0..topo.llcs.len() * ovl_lines(topo)).map(|i| word_weight(ovl_map, i as u32)).sum()
}

/// Tasks stolen per LLC (by the thief's LLC), summed over CPUs.
pub fn llc_steals(topo: &Topology, llc_steals: &impl MapCore) -> Result<Vec<u64>> {
    (0..topo.llcs.len()).map(|i| percpu_sum(llc_steals, i as u32)).collect()
}
