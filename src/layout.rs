//! The machine-dependent layout of the BPF maps, in one place: the loader and the host tests
//! alike size the topology-indexed arrays and fill the topology rodata before load, asking each
//! mechanism for its own strides.

use anyhow::Result;
use libbpf_rs::OpenObject;

use crate::topology::Topology;
use crate::{bpf_intf, idle_filter, overload};

/// The machine-dependent sizes the BPF side is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub nr_cpu_ids: u32,
    pub nr_llcs: u32,
    /// Slots per LLC in llc_cpus_map: the largest LLC.
    pub llc_stride: u32,
    pub smt_enabled: bool,
    /// u64 words per LLC in llc_filter_map.
    pub filter_stride: u32,
    /// Cache lines per LLC in ovl_map.
    pub ovl_lines: u32,
}

impl Layout {
    pub fn of(topo: &Topology) -> Self {
        Layout {
            nr_cpu_ids: topo.nr_cpu_ids as u32,
            nr_llcs: topo.llcs.len() as u32,
            llc_stride: topo.llc_stride() as u32,
            smt_enabled: topo.smt_width > 1,
            filter_stride: idle_filter::filter_stride(topo) as u32,
            ovl_lines: overload::ovl_lines(topo) as u32,
        }
    }

    /// max_entries of every array indexed by CPU or LLC, by map name.
    pub fn map_sizes(&self) -> [(&'static str, u32); 10] {
        let (cpus, llcs) = (self.nr_cpu_ids, self.nr_llcs);
        [
            ("cpu_topo_map", cpus),
            ("llc_topo_map", llcs),
            ("llc_cpus_map", llcs * self.llc_stride),
            ("cpu_ctx_map", cpus),
            ("cpu_sched_map", cpus),
            ("llc_ctx_map", llcs),
            ("llc_filter_map", llcs * self.filter_stride),
            ("ovl_map", llcs * self.ovl_lines),
            ("llc_steals", llcs),
            ("llc_stats", llcs * bpf_intf::sis_llc_stat_SIS_NR_LLC_STATS),
        ]
    }

    /// Sizes the maps of an opened (not yet loaded) object; returns the names of
    /// `map_sizes` that the object does not have.
    pub fn size_maps(&self, obj: &mut OpenObject) -> Result<Vec<&'static str>> {
        let mut missing: Vec<&'static str> = self.map_sizes().iter().map(|(n, _)| *n).collect();
        for mut map in obj.maps_mut() {
            let name = map.name().to_string_lossy().into_owned();
            if let Some(&(n, size)) = self.map_sizes().iter().find(|(n, _)| *n == name) {
                map.set_max_entries(size)?;
                missing.retain(|m| *m != n);
            }
        }
        Ok(missing)
    }
}

/// Sets the topology fields of a skeleton's rodata (scheduler and host-test objects alike,
/// whose rodata are different Rust types with these fields in common) from a `Layout`.
#[macro_export]
macro_rules! set_layout_rodata {
    ($rodata:expr, $layout:expr) => {{
        let (r, l) = ($rodata, $layout);
        r.nr_cpu_ids = l.nr_cpu_ids;
        r.nr_llcs = l.nr_llcs;
        r.llc_stride = l.llc_stride;
        r.smt_enabled = l.smt_enabled;
        r.filter_stride = l.filter_stride;
        r.ovl_lines = l.ovl_lines;
    }};
}
