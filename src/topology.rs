//! Topology discovery from sysfs: SMT siblings, cores, LLCs and NUMA nodes, turned into the
//! per-CPU shortcuts the BPF side reads (the cached domain shortcuts of "sched: Streamline
//! select_task_rq()", docs/design.md).
//!
//! Reads a sysfs tree under any root so tests can feed it fixture trees. Not scx_utils::Topology:
//! that reads one root per process (ROOT_PREFIX), needs core_id/cluster_id files, and without
//! cache info takes one LLC per node where scx_sis takes the package.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

pub mod fixture;

/// One online CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpu {
    pub id: usize,
    /// Dense core index (0..nr_cores), ordered by the core's first CPU.
    pub core: usize,
    /// Dense LLC index (0..nr_llcs), ordered by the LLC's first CPU.
    pub llc: usize,
    /// Position of the CPU in its LLC span (scan order).
    pub llc_pos: usize,
    pub node: usize,
    /// Online SMT threads of the core, this CPU included, ascending.
    pub siblings: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Llc {
    pub id: usize,
    /// Online CPUs of the LLC, ascending: index = llc_pos.
    pub cpus: Vec<usize>,
    pub nr_cores: usize,
    pub node: usize,
}

#[derive(Clone, Debug)]
pub struct Topology {
    /// Number of possible CPU ids (highest possible id + 1).
    pub nr_cpu_ids: usize,
    /// Online CPUs, ascending by id.
    pub cpus: Vec<Cpu>,
    pub llcs: Vec<Llc>,
    pub nr_cores: usize,
    pub nr_nodes: usize,
    /// Largest number of hardware threads per core.
    pub smt_width: usize,
}

/// "0-3,8": the kernel's cpulist format.
pub fn cpulist(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// Larger than any CPU id a kernel can have (NR_CPUS is at most 8192): the bound of a cpulist
/// read without a topology at hand (sysfs, the stats), so a corrupt one cannot expand to
/// billions of ids. A real machine too big for scx_sis gets Topology::check_limits's message.
pub const CPU_ID_LIMIT: usize = 1 << 20;

/// Parses the kernel's cpulist format ("0-3,8,10-11"; "" for none) into sorted, distinct ids,
/// each below CPU_ID_LIMIT.
pub fn parse_cpulist(s: &str) -> Result<Vec<usize>> {
    parse_cpulist_below(s, CPU_ID_LIMIT)
}

/// parse_cpulist with every id below `limit` (e.g. nr_cpu_ids), checked on each range's ends
/// before it is expanded: "0-4000000000" is an error, not four billion entries.
pub fn parse_cpulist_below(s: &str, limit: usize) -> Result<Vec<usize>> {
    let id = |t: &str, part: &str| -> Result<usize> {
        let t = t.trim();
        // digits only: usize's parser would take "+3"
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            bail!("bad CPU range {part:?}");
        }
        match t.parse::<usize>() {
            Ok(v) if v < limit => Ok(v),
            _ => bail!("CPU {t} is out of range (CPU ids here are 0-{})", limit.saturating_sub(1)),
        }
    };
    let mut out = Vec::new();
    for part in s.trim().trim_end_matches('\0').split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (id(a, part)?, id(b, part)?),
            None => (id(part, part)?, id(part, part)?),
        };
        if lo > hi {
            bail!("bad CPU range {part:?}");
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn read_list(path: &Path) -> Result<Vec<usize>> {
    let s = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse_cpulist(&s).with_context(|| format!("parsing {}", path.display()))
}

/// The CPU's last-level cache span: the highest-level data/unified cache.
fn llc_span(cpu_dir: &Path) -> Option<Vec<usize>> {
    let mut best: Option<(u32, Vec<usize>)> = None;
    let entries = fs::read_dir(cpu_dir.join("cache")).ok()?;
    for ent in entries.flatten() {
        let name = ent.file_name();
        if !name.to_string_lossy().starts_with("index") {
            continue;
        }
        let dir = ent.path();
        let ty = fs::read_to_string(dir.join("type")).unwrap_or_default();
        if ty.trim() == "Instruction" {
            continue;
        }
        let Ok(level) = fs::read_to_string(dir.join("level")).map(|l| l.trim().parse::<u32>()) else {
            continue;
        };
        let Ok(level) = level else { continue };
        let Ok(span) = read_list(&dir.join("shared_cpu_list")) else { continue };
        if best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, span));
        }
    }
    best.map(|(_, s)| s)
}

impl Topology {
    /// Reads the running machine's topology.
    pub fn discover() -> Result<Self> {
        Self::from_sysfs(Path::new("/"))
    }

    /// Reads the topology from a sysfs tree rooted at `root` (`root/sys/devices/system/...`).
    pub fn from_sysfs(root: &Path) -> Result<Self> {
        let sys_cpu: PathBuf = root.join("sys/devices/system/cpu");
        let possible = read_list(&sys_cpu.join("possible"))?;
        let online = read_list(&sys_cpu.join("online"))?;
        let Some(&max_possible) = possible.last() else { bail!("no possible CPUs") };
        if online.is_empty() {
            bail!("no online CPUs");
        }
        let nr_cpu_ids = max_possible + 1;

        // NUMA nodes: CPUs not named by any node are on node 0.
        let mut node_of: BTreeMap<usize, usize> = BTreeMap::new();
        let mut nr_nodes = 1;
        if let Ok(entries) = fs::read_dir(root.join("sys/devices/system/node")) {
            for ent in entries.flatten() {
                let name = ent.file_name().to_string_lossy().into_owned();
                let Some(id) = name.strip_prefix("node").and_then(|n| n.parse::<usize>().ok()) else {
                    continue;
                };
                if let Ok(cpus) = read_list(&ent.path().join("cpulist")) {
                    for c in cpus {
                        node_of.insert(c, id);
                    }
                    nr_nodes = nr_nodes.max(id + 1);
                }
            }
        }

        // Raw per-CPU facts; spans are restricted to online CPUs.
        struct Raw {
            siblings: Vec<usize>,
            llc_span: Vec<usize>,
        }
        let mut raw: BTreeMap<usize, Raw> = BTreeMap::new();
        for &cpu in &online {
            let dir = sys_cpu.join(format!("cpu{cpu}"));
            let topo = dir.join("topology");
            let siblings = read_list(&topo.join("thread_siblings_list"))
                .or_else(|_| read_list(&topo.join("core_cpus_list")))
                .unwrap_or_else(|_| vec![cpu]);
            let llc_span = match llc_span(&dir) {
                Some(s) => s,
                // No cache info (some VMs): the package stands for the LLC.
                None => read_list(&topo.join("package_cpus_list"))
                    .or_else(|_| read_list(&topo.join("core_siblings_list")))
                    .unwrap_or_else(|_| online.clone()),
            };
            let keep = |v: Vec<usize>| -> Vec<usize> {
                let mut v: Vec<usize> = v.into_iter().filter(|c| online.contains(c)).collect();
                if !v.contains(&cpu) {
                    v.push(cpu);
                    v.sort_unstable();
                }
                v
            };
            raw.insert(cpu, Raw { siblings: keep(siblings), llc_span: keep(llc_span) });
        }

        // Dense ids in order of first CPU.
        let mut llc_ids: BTreeMap<usize, usize> = BTreeMap::new(); // first cpu -> id
        let mut core_ids: BTreeMap<usize, usize> = BTreeMap::new();
        for r in raw.values() {
            let n = llc_ids.len();
            llc_ids.entry(r.llc_span[0]).or_insert(n);
            let n = core_ids.len();
            core_ids.entry(r.siblings[0]).or_insert(n);
        }
        // BTreeMap insertion above is in CPU order, so ids already follow first-CPU order.

        let mut llcs: Vec<Llc> = Vec::new();
        for (&first, &id) in &llc_ids {
            let cpus = raw[&first].llc_span.clone();
            let mut cores: Vec<usize> = cpus.iter().map(|c| raw[c].siblings[0]).collect();
            cores.sort_unstable();
            cores.dedup();
            let node = *node_of.get(&first).unwrap_or(&0);
            llcs.push(Llc { id, cpus, nr_cores: cores.len(), node });
        }
        llcs.sort_by_key(|l| l.id);

        let mut cpus = Vec::new();
        for (&id, r) in &raw {
            let llc = llc_ids[&r.llc_span[0]];
            let llc_pos = llcs[llc].cpus.iter().position(|&c| c == id).unwrap();
            cpus.push(Cpu {
                id,
                core: core_ids[&r.siblings[0]],
                llc,
                llc_pos,
                node: *node_of.get(&id).unwrap_or(&0),
                siblings: r.siblings.clone(),
            });
        }
        let smt_width = cpus.iter().map(|c| c.siblings.len()).max().unwrap_or(1);

        Ok(Topology { nr_cpu_ids, cpus, llcs, nr_cores: core_ids.len(), nr_nodes, smt_width })
    }

    /// Slots per LLC in the flattened LLC-span array: the largest LLC.
    pub fn llc_stride(&self) -> usize {
        self.llcs.iter().map(|l| l.cpus.len()).max().unwrap_or(1)
    }

    /// Online CPU ids, ascending.
    pub fn cpu_ids(&self) -> Vec<usize> {
        self.cpus.iter().map(|c| c.id).collect()
    }

    /// Err(why, one line) when the machine exceeds a bound the BPF side is compiled with
    /// (bpf/intf.h): its LLC scans stop at SIS_MAX_LLC_CPUS and a core's siblings array holds
    /// SIS_MAX_SMT, so a bigger machine would be scheduled wrongly, not refused, without this.
    pub fn check_limits(&self) -> std::result::Result<(), String> {
        use crate::bpf_intf::{
            sis_consts_SIS_MAX_CPUS as MAX_CPUS, sis_consts_SIS_MAX_LLC_CPUS as MAX_LLC_CPUS,
            sis_consts_SIS_MAX_SMT as MAX_SMT,
        };
        let built = "scx_sis is built for at most";
        if self.nr_cpu_ids > MAX_CPUS as usize {
            return Err(format!(
                "this machine has {} possible CPU ids; {built} SIS_MAX_CPUS = {MAX_CPUS} (bpf/intf.h)",
                self.nr_cpu_ids
            ));
        }
        if let Some(l) = self.llcs.iter().find(|l| l.cpus.len() > MAX_LLC_CPUS as usize) {
            return Err(format!(
                "this machine has an LLC of {} CPUs (LLC {}: CPUs {}); {built} SIS_MAX_LLC_CPUS = {MAX_LLC_CPUS} \
                 per LLC (bpf/intf.h)",
                l.cpus.len(),
                l.id,
                cpulist(&l.cpus)
            ));
        }
        if let Some(c) = self.cpus.iter().find(|c| c.siblings.len() > MAX_SMT as usize) {
            return Err(format!(
                "this machine has a core of {} hardware threads (CPUs {}); {built} SIS_MAX_SMT = {MAX_SMT} \
                 (bpf/intf.h)",
                c.siblings.len(),
                cpulist(&c.siblings)
            ));
        }
        Ok(())
    }

    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.id == id)
    }

    /// One-line description, e.g. "8 CPUs, 4 cores, 2 LLCs, 1 node, SMT2".
    pub fn summary(&self) -> String {
        format!(
            "{} CPUs, {} cores, {} LLCs, {} node{}, SMT{}",
            self.cpus.len(),
            self.nr_cores,
            self.llcs.len(),
            self.nr_nodes,
            if self.nr_nodes == 1 { "" } else { "s" },
            self.smt_width
        )
    }
}

/// Writes the per-CPU and per-LLC shortcuts (bpf/topology.bpf.h) into their BPF arrays.
pub fn write_maps(
    topo: &Topology,
    cpu_topo: &impl libbpf_rs::MapCore,
    llc_topo: &impl libbpf_rs::MapCore,
    llc_cpus: &impl libbpf_rs::MapCore,
) -> Result<()> {
    use crate::bpf_intf;
    use libbpf_rs::MapFlags;

    let stride = topo.llc_stride();
    for cpu in &topo.cpus {
        let mut t: bpf_intf::cpu_topo = unsafe { std::mem::zeroed() };
        t.core = cpu.core as u32;
        t.llc = cpu.llc as u32;
        t.llc_pos = cpu.llc_pos as u32;
        t.node = cpu.node as u32;
        // check_limits refuses more siblings than the array holds; the bound keeps this safe anyway
        let n = cpu.siblings.len().min(bpf_intf::sis_consts_SIS_MAX_SMT as usize);
        t.nr_siblings = n as u32;
        for (i, s) in cpu.siblings[..n].iter().enumerate() {
            t.siblings[i] = *s as u32;
        }
        cpu_topo.update(&(cpu.id as u32).to_ne_bytes(), as_bytes(&t), MapFlags::ANY)?;
    }
    for llc in &topo.llcs {
        let t = bpf_intf::llc_topo {
            nr_cpus: llc.cpus.len() as u32,
            nr_cores: llc.nr_cores as u32,
            node: llc.node as u32,
            first_cpu: llc.cpus[0] as u32,
        };
        llc_topo.update(&(llc.id as u32).to_ne_bytes(), as_bytes(&t), MapFlags::ANY)?;
        for (pos, cpu) in llc.cpus.iter().enumerate() {
            let key = ((llc.id * stride + pos) as u32).to_ne_bytes();
            llc_cpus.update(&key, &(*cpu as u32).to_ne_bytes(), MapFlags::ANY)?;
        }
    }
    Ok(())
}

/// The bytes of a plain-old-data value, as BPF map updates take them.
pub fn as_bytes<T: Copy>(v: &T) -> &[u8] {
    unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulist_forms() {
        assert_eq!(parse_cpulist("0-3,8,10-11\n").unwrap(), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpulist("5").unwrap(), vec![5]);
        assert_eq!(parse_cpulist("").unwrap(), Vec::<usize>::new());
        assert!(parse_cpulist("3-1").is_err());
        assert!(parse_cpulist("a").is_err());
        for bad in ["1-", "-1", "1-2-3", "+3", "1,,x", "0x3"] {
            assert!(parse_cpulist(bad).is_err(), "{bad:?}");
        }
    }

    /// Ids are bounded before a range is expanded: these return at once, with one line.
    #[test]
    fn cpulist_bounded() {
        let t0 = std::time::Instant::now();
        assert_eq!(parse_cpulist_below("0-7", 8).unwrap(), (0..8).collect::<Vec<_>>());
        for (s, want) in [
            ("0-4000000000", "CPU 4000000000 is out of range (CPU ids here are 0-7)"),
            ("0-18446744073709551615", "CPU 18446744073709551615 is out of range"),
            ("18446744073709551615", "CPU 18446744073709551615 is out of range"),
            ("0-18446744073709551616", "CPU 18446744073709551616 is out of range"),
            ("8", "CPU 8 is out of range"),
        ] {
            let e = format!("{:#}", parse_cpulist_below(s, 8).unwrap_err());
            assert!(e.contains(want), "{s:?}: {e:?} lacks {want:?}");
            assert!(!e.contains('\n'), "{s:?}: one line: {e:?}");
        }
        // without a topology the bound is CPU_ID_LIMIT
        assert!(parse_cpulist("0-4000000000").is_err());
        assert!(parse_cpulist(&format!("0-{}", usize::MAX)).is_err());
        assert_eq!(parse_cpulist(&format!("{}", CPU_ID_LIMIT - 1)).unwrap(), vec![CPU_ID_LIMIT - 1]);
        assert!(t0.elapsed() < std::time::Duration::from_secs(1), "took {:?}", t0.elapsed());
    }
}
