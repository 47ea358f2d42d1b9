//! Per-LLC and per-CPU views for the nested stats (bpf/llc_stats.bpf.h): the per-LLC counters,
//! and per LLC the filter weight, truly idle and overloaded CPUs sampled from the mechanisms'
//! maps; per CPU a one-char state for `scx_sis top`'s grid, and the runnable count of the load
//! accounting (bpf/vtime.bpf.h).

use anyhow::Result;
use libbpf_rs::{MapCore, MapFlags};

use crate::bpf_intf;
use crate::idle_filter::filter_stride;
use crate::overload::ovl_index;
use crate::stats::{LlcCounters, LlcSamples};
use crate::topology::{cpulist, Topology};

const NR: usize = bpf_intf::sis_llc_stat_SIS_NR_LLC_STATS as usize;

/// Entries of the `llc_stats` map for `topo`.
pub fn map_entries(topo: &Topology) -> u32 {
    (topo.llcs.len() * NR) as u32
}

fn read_u64(v: &[u8]) -> u64 {
    u64::from_ne_bytes(v[..8].try_into().unwrap())
}

/// Per-LLC counters summed over CPUs.
pub fn counters(topo: &Topology, llc_stats: &impl MapCore) -> Result<Vec<LlcCounters>> {
    let mut out = vec![[0u64; NR]; topo.llcs.len()];
    for (llc, c) in out.iter_mut().enumerate() {
        for (i, v) in c.iter_mut().enumerate() {
            let key = ((llc * NR + i) as u32).to_ne_bytes();
            if let Some(vals) = llc_stats.lookup_percpu(&key, MapFlags::ANY)? {
                *v = vals.iter().map(|v| read_u64(v)).sum();
            }
        }
    }
    Ok(out)
}

/// Tasks the load accounting counts runnable (queued or running), summed over CPUs: it follows
/// every wakeup and sleep, so on an idle machine it is about the number of running tasks.
pub fn nr_runnable(topo: &Topology, cpu_sched: &impl MapCore) -> Result<i64> {
    let mut n = 0i64;
    for cpu in &topo.cpus {
        if let Some(v) = cpu_sched.lookup(&(cpu.id as u32).to_ne_bytes(), MapFlags::ANY)? {
            let c: bpf_intf::cpu_sched = crate::map_value(&v);
            n += c.nr_runnable as i32 as i64;
        }
    }
    Ok(n)
}

/// Per-CPU state chars of `Metrics::cpu_state`, by priority.
pub const CPU_OFFLINE: char = '-';
pub const CPU_IDLE: char = '.';
pub const CPU_BUSY: char = 'B';
pub const CPU_OVERLOADED: char = 'O';
pub const CPU_FAIL_PRONE: char = 'F';

/// Samples every LLC and CPU: (per-LLC samples with counters, per-CPU state string).
pub fn sample(
    topo: &Topology,
    cpu_ctx: &impl MapCore,
    llc_filter: &impl MapCore,
    ovl_map: &impl MapCore,
    llc_stats: &impl MapCore,
) -> Result<(Vec<LlcSamples>, String)> {
    let counters = counters(topo, llc_stats)?;
    let stride = filter_stride(topo);
    let mut llcs: Vec<LlcSamples> = Vec::with_capacity(topo.llcs.len());
    for (l, llc) in topo.llcs.iter().enumerate() {
        let mut weight = 0;
        for w in 0..stride {
            if let Some(v) = llc_filter.lookup(&((l * stride + w) as u32).to_ne_bytes(), MapFlags::ANY)? {
                weight += read_u64(&v).count_ones() as u64;
            }
        }
        llcs.push(LlcSamples {
            counters: counters[l],
            cpus: cpulist(&llc.cpus),
            nr_cpus: llc.cpus.len() as u64,
            filter_weight: weight,
            ..Default::default()
        });
    }
    let mut state = vec![CPU_OFFLINE; topo.nr_cpu_ids];
    for cpu in &topo.cpus {
        let (idle, fail_prone) = match cpu_ctx.lookup(&(cpu.id as u32).to_ne_bytes(), MapFlags::ANY)? {
            Some(v) => {
                let c: crate::bpf_intf::cpu_ctx = crate::map_value(&v);
                (c.idle != 0, c.fail_prone != 0)
            }
            None => continue,
        };
        let (line, bit) = ovl_index(topo, cpu.llc, cpu.llc_pos);
        let overloaded = match ovl_map.lookup(&(line as u32).to_ne_bytes(), MapFlags::ANY)? {
            Some(v) => read_u64(&v) & (1 << bit) != 0,
            None => false,
        };
        let s = &mut llcs[cpu.llc];
        s.true_idle += idle as u64;
        s.overloaded += overloaded as u64;
        state[cpu.id] = if overloaded {
            CPU_OVERLOADED
        } else if fail_prone {
            CPU_FAIL_PRONE
        } else if idle {
            CPU_IDLE
        } else {
            CPU_BUSY
        };
    }
    Ok((llcs, state.into_iter().collect()))
}
