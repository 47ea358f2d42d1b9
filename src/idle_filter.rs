//! User-space side of the SIS_CORE idle filter (bpf/idle_filter.bpf.h): modes, sizing, and
//! sampling the filter's weight against the true idle count for the stats.

use anyhow::Result;
use libbpf_rs::{MapCore, MapFlags};

use crate::bpf_intf;
use crate::maps::word_weight;
use crate::topology::Topology;

/// How select_cpu searches an LLC for an idle CPU (for A/B runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SisMode {
    /// No filter: probe the LLC's CPUs in order (CFS without SIS_CORE).
    Linear,
    /// Idle filter, no fail-prone handling.
    Filter,
    /// Idle filter with fail-prone scans ("sched/fair: Deal with SIS scan failures").
    Full,
}

impl SisMode {
    pub fn to_bpf(self) -> u32 {
        match self {
            SisMode::Linear => bpf_intf::sis_mode_SIS_MODE_LINEAR,
            SisMode::Filter => bpf_intf::sis_mode_SIS_MODE_FILTER,
            SisMode::Full => bpf_intf::sis_mode_SIS_MODE_FULL,
        }
    }
}

/// u64 words per LLC filter, rounded up to whole cache lines so LLCs never share one.
pub fn filter_stride(topo: &Topology) -> usize {
    let words = topo.llc_stride().div_ceil(64);
    let line = bpf_intf::sis_consts_SIS_WORDS_PER_LINE as usize;
    words.div_ceil(line) * line
}

/// Filter bits set over all LLCs, and CPUs idle by the state of record.
pub fn sample(topo: &Topology, cpu_ctx: &impl MapCore, llc_filter: &impl MapCore) -> Result<(u64, u64)> {
    let stride = filter_stride(topo);
    let mut weight = 0u64;
    for llc in 0..topo.llcs.len() {
        for w in 0..stride {
            weight += word_weight(llc_filter, (llc * stride + w) as u32)?;
        }
    }
    let mut idle = 0u64;
    for cpu in &topo.cpus {
        if let Some(v) = cpu_ctx.lookup(&(cpu.id as u32).to_ne_bytes(), MapFlags::ANY)? {
            idle += (crate::map_value::<crate::bpf_intf::cpu_ctx>(&v).idle != 0) as u64;
        }
    }
    Ok((weight, idle))
}
