//! Synthetic sysfs trees: a machine of a given shape written as the files `Topology::from_sysfs`
//! reads, so host tests and the host-only idle-scale bench build their topology through the
//! loader's own parsing, not a hand-made `Topology`.

use std::fs;
use std::io;
use std::path::Path;

use crate::topology::cpulist as list;

/// Shape of a fixture machine: CPUs numbered so a core's threads are adjacent (0-1, 2-3, ...).
pub struct Shape {
    pub nr_cpus: usize,
    pub smt: usize,
    pub llc_cpus: usize,
    pub nodes: usize,
    pub offline: Vec<usize>,
    /// Leave out cache/ (some VMs): the package must stand for the LLC.
    pub no_cache: bool,
}

impl Shape {
    pub fn new(nr_cpus: usize, smt: usize, llc_cpus: usize) -> Self {
        Shape { nr_cpus, smt, llc_cpus, nodes: 1, offline: vec![], no_cache: false }
    }
}

/// Writes a sysfs tree for `shape` under `root`. CPU lists use the kernel's ranges ("0-3,8"):
/// parsing hundreds of single ids per CPU was what made the big fixtures slow.
pub fn write_sysfs(root: &Path, shape: &Shape) -> io::Result<()> {
    let cpu_dir = root.join("sys/devices/system/cpu");
    fs::create_dir_all(&cpu_dir)?;
    let all: Vec<usize> = (0..shape.nr_cpus).collect();
    let online: Vec<usize> = all.iter().copied().filter(|c| !shape.offline.contains(c)).collect();
    fs::write(cpu_dir.join("possible"), format!("0-{}\n", shape.nr_cpus - 1))?;
    fs::write(cpu_dir.join("online"), format!("{}\n", list(&online)))?;
    let per_node = shape.nr_cpus / shape.nodes;
    for n in 0..shape.nodes {
        let d = root.join(format!("sys/devices/system/node/node{n}"));
        fs::create_dir_all(&d)?;
        let cpus: Vec<usize> = (n * per_node..(n + 1) * per_node).collect();
        fs::write(d.join("cpulist"), list(&cpus))?;
    }
    for &c in &online {
        let d = cpu_dir.join(format!("cpu{c}"));
        let core0 = c / shape.smt * shape.smt;
        let sib: Vec<usize> = (core0..core0 + shape.smt).collect();
        let l0 = c / shape.llc_cpus * shape.llc_cpus;
        let llc: Vec<usize> = (l0..l0 + shape.llc_cpus).collect();
        fs::create_dir_all(d.join("topology"))?;
        fs::write(d.join("topology/thread_siblings_list"), list(&sib))?;
        fs::write(d.join("topology/package_cpus_list"), list(&llc))?;
        if shape.no_cache {
            continue;
        }
        for (idx, level, ty, span) in [
            (0, 1, "Data", sib.clone()),
            (1, 1, "Instruction", sib.clone()),
            (2, 2, "Unified", sib.clone()),
            (3, 3, "Unified", llc.clone()),
        ] {
            let cd = d.join(format!("cache/index{idx}"));
            fs::create_dir_all(&cd)?;
            fs::write(cd.join("level"), format!("{level}\n"))?;
            fs::write(cd.join("type"), format!("{ty}\n"))?;
            fs::write(cd.join("shared_cpu_list"), list(&span))?;
        }
    }
    Ok(())
}
