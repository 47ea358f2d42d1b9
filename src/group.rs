//! Group balancer, the loader's side of bpf/group.bpf.h: `--partitions`,
//! `--gb-cgroup`, `--gb-parent`; every `--gb-period-ms` it reads the run time kept in BPF per
//! group and per CPU, settles each group on the partition with the minimum predicted load
//! (`settle`, with hysteresis) and writes the choice back; and it serves the gb stats.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use libbpf_rs::{MapCore, MapFlags, OpenObject};
use scx_stats_derive::{stat_doc, Stats};
use serde::{Deserialize, Serialize};

use crate::bpf_intf::{self, gb_acct, gb_cpu, gb_group, gb_part};
use crate::error::usage_err;
use crate::map_value;
use crate::topology::{cpulist, parse_cpulist_below, Topology};

pub const MAX_PARTS: usize = bpf_intf::gb_consts_GB_MAX_PARTS as usize;
const NO_PART: usize = bpf_intf::gb_consts_GB_NO_PART as usize;
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;

/// A group moves only when its predicted load elsewhere is lower by this much of a partition's
/// capacity: measured loads wobble, and a move costs caches.
pub const HYSTERESIS: f64 = 0.125;

/// Parses `--partitions` ("0-3;4-7": cpulists separated by ';', one trailing ';' allowed, as in
/// the proposal's gb_ctrl) against the online CPUs. Errors are one line, for a usage error. CPU ids
/// are checked against nr_cpu_ids as each range is read, before it is expanded.
pub fn parse_partitions(spec: &str, topo: &Topology) -> std::result::Result<Vec<Vec<usize>>, String> {
    let spec = spec.trim();
    let spec = spec.strip_suffix(';').unwrap_or(spec);
    if spec.trim().is_empty() {
        return Err("--partitions is empty".into());
    }
    let online: Vec<usize> = topo.cpus.iter().map(|c| c.id).collect();
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut owner: HashMap<usize, usize> = HashMap::new();
    let nr_parts = spec.split(';').count();
    if nr_parts > MAX_PARTS {
        return Err(format!("--partitions: {nr_parts} partitions, at most {MAX_PARTS}"));
    }
    for (i, p) in spec.split(';').enumerate() {
        let p = p.trim();
        if p.is_empty() {
            return Err(format!("--partitions {spec:?}: partition {i} is empty"));
        }
        let cpus = parse_cpulist_below(p, topo.nr_cpu_ids)
            .map_err(|e| format!("--partitions {spec:?}: partition {i} ({p}): {e:#}"))?;
        if cpus.is_empty() {
            return Err(format!("--partitions {spec:?}: partition {i} is empty"));
        }
        for &c in &cpus {
            if !online.contains(&c) {
                return Err(format!("--partitions {spec:?}: CPU {c} is not online"));
            }
            if let Some(o) = owner.insert(c, i) {
                return Err(format!("--partitions {spec:?}: CPU {c} is in partitions {o} and {i}"));
            }
        }
        parts.push(cpus);
    }
    Ok(parts)
}

/// The default partitions: one per LLC; Err (one line) on a machine with more LLCs than the
/// BPF side has partitions (GB_MAX_PARTS), where `--partitions` must say how to group them.
pub fn default_partitions(topo: &Topology) -> std::result::Result<Vec<Vec<usize>>, String> {
    if topo.llcs.len() > MAX_PARTS {
        return Err(format!(
            "group balancer: this machine has {} LLCs, more than GB_MAX_PARTS = {MAX_PARTS} partitions (one per \
             LLC by default); give --partitions",
            topo.llcs.len()
        ));
    }
    Ok(topo.llcs.iter().map(|l| l.cpus.clone()).collect())
}

/// The cgroup id of a cgroup2 directory: its inode number (the kernel's `cgrp->kn->id`).
pub fn cgroup_id(path: &Path) -> std::result::Result<u64, String> {
    let md = std::fs::metadata(path).map_err(|e| format!("cgroup {}: {e}", path.display()))?;
    if !md.is_dir() {
        return Err(format!("cgroup {}: not a directory", path.display()));
    }
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("cgroup {}: bad path", path.display()))?;
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid C string, st a valid out buffer
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 || st.f_type as i64 != CGROUP2_SUPER_MAGIC {
        return Err(format!("{} is not a cgroup2 directory", path.display()));
    }
    Ok(md.ino())
}

/// What the group balancer was asked for.
#[derive(Clone, Debug)]
pub struct Config {
    pub parts: Vec<Vec<usize>>,
    /// (cgroup id, GB_OPT_* bits, path)
    pub optin: Vec<(u64, u32, PathBuf)>,
    pub period: Duration,
}

impl Config {
    /// None when no group was given (the balancer stays off; `--partitions` is still checked).
    pub fn new(
        partitions: Option<&str>,
        cgroups: &[PathBuf],
        parents: &[PathBuf],
        period_ms: u64,
        topo: &Topology,
    ) -> Result<Option<Config>> {
        // checked even when no group is given
        let given = partitions.map(|s| parse_partitions(s, topo).map_err(usage_err)).transpose()?;
        let mut optin: Vec<(u64, u32, PathBuf)> = Vec::new();
        for (paths, opt) in [(cgroups, bpf_intf::gb_consts_GB_OPT_CGROUP), (parents, bpf_intf::gb_consts_GB_OPT_PARENT)]
        {
            for p in paths {
                let id = cgroup_id(p).map_err(usage_err)?;
                // sched_ext sees cgroups through the cpu controller: a group without it would
                // never see its tasks (they stay in the nearest ancestor's cpu cgroup)
                let ctl = if opt == bpf_intf::gb_consts_GB_OPT_PARENT { p.clone() } else { p.join("..") };
                let on = std::fs::read_to_string(ctl.join("cgroup.subtree_control")).unwrap_or_default();
                if !on.split_whitespace().any(|c| c == "cpu") {
                    return Err(usage_err(format!(
                        "cgroup {}: the cpu controller is off there (echo +cpu > {}/cgroup.subtree_control)",
                        p.display(),
                        ctl.display()
                    )));
                }
                match optin.iter_mut().find(|o| o.0 == id) {
                    Some(o) => o.1 |= opt,
                    None => optin.push((id, opt, p.clone())),
                }
            }
        }
        if optin.is_empty() {
            return Ok(None);
        }
        let parts = match given {
            Some(p) => p,
            None => default_partitions(topo).map_err(usage_err)?,
        };
        Ok(Some(Config { parts, optin, period: Duration::from_millis(period_ms) }))
    }

    fn part_of(&self) -> HashMap<usize, usize> {
        self.parts.iter().enumerate().flat_map(|(i, p)| p.iter().map(move |&c| (c, i))).collect()
    }
}

/// Sizes the CPU-indexed group maps of an opened object.
pub fn size_maps(obj: &mut OpenObject, topo: &Topology) -> Result<()> {
    for mut map in obj.maps_mut() {
        let name = map.name().to_string_lossy().into_owned();
        if name == "gb_cpu_map" || name == "gb_part_cpus" {
            map.set_max_entries(topo.nr_cpu_ids.max(1) as u32)?;
        }
    }
    Ok(())
}

fn bytes<T: Copy>(v: &T) -> &[u8] {
    // SAFETY: T is a plain-data C struct (bindgen'd)
    unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) }
}

/// Fills the partitions and the opted-in cgroups (before attach: cgroup_init reads gb_optin).
pub fn write_maps(
    cfg: &Config,
    topo: &Topology,
    cpu_map: &impl MapCore,
    part_map: &impl MapCore,
    part_cpus: &impl MapCore,
    optin: &impl MapCore,
) -> Result<()> {
    let part_of = cfg.part_of();
    for cpu in 0..topo.nr_cpu_ids {
        let mut c: gb_cpu = unsafe { std::mem::zeroed() };
        c.part = part_of.get(&cpu).map_or(-1, |&p| p as i32);
        c.curr_want = -1;
        cpu_map.update(&(cpu as u32).to_ne_bytes(), bytes(&c), MapFlags::ANY)?;
    }
    let mut idx = 0u32;
    for (i, p) in cfg.parts.iter().enumerate() {
        let gp = gb_part { first: idx, nr_cpus: p.len() as u32 };
        part_map.update(&(i as u32).to_ne_bytes(), bytes(&gp), MapFlags::ANY)?;
        for &c in p {
            part_cpus.update(&idx.to_ne_bytes(), &(c as u32).to_ne_bytes(), MapFlags::ANY)?;
            idx += 1;
        }
    }
    for (id, opt, _) in &cfg.optin {
        optin.update(&id.to_ne_bytes(), &opt.to_ne_bytes(), MapFlags::ANY)?;
    }
    Ok(())
}

/// A partition as `settle` sees it.
#[derive(Clone, Debug)]
pub struct PartLoad {
    /// CPUs in it.
    pub capacity: f64,
    /// Measured load, in CPUs (run time of every task on its CPUs per second).
    pub load: f64,
}

/// A group as `settle` sees it.
#[derive(Clone, Debug)]
pub struct GroupLoad {
    /// Its load, in CPUs.
    pub load: f64,
    /// Of which on the CPUs of each partition.
    pub by_part: Vec<f64>,
    pub current: Option<usize>,
}

/// Below this load (CPUs) a settled group stays where it is: moving it would gain nothing.
pub const MIN_LOAD: f64 = 0.1;

/// The partition of each group, as the proposal settles them: groups, heaviest first, each look
/// at the predicted load of every partition (the load that is no group's there, plus the groups
/// there now, plus this one if it came, per CPU) and move to the minimum when it beats where
/// they are by more than `hysteresis` (a new group just takes the minimum). A nearly idle
/// group stays. So groups end as exclusive as their load allows, and stay put: a group's
/// partner in its partition is counted where it is, so even loads give no reason to move.
pub fn settle(parts: &[PartLoad], groups: &[GroupLoad], hysteresis: f64) -> Vec<usize> {
    if parts.is_empty() {
        return vec![0; groups.len()];
    }
    let cap = |p: usize| parts[p].capacity.max(1.0);
    // what runs there that is no group's, then the settled groups where they are
    let mut placed: Vec<f64> = parts
        .iter()
        .enumerate()
        .map(|(p, pl)| {
            (pl.load - groups.iter().map(|g| g.by_part.get(p).copied().unwrap_or(0.0)).sum::<f64>()).max(0.0)
        })
        .collect();
    let mut out: Vec<Option<usize>> = groups.iter().map(|g| g.current.filter(|&c| c < parts.len())).collect();
    for (g, o) in groups.iter().zip(&out) {
        if let Some(c) = o {
            placed[*c] += g.load;
        }
    }
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by(|&a, &b| groups[b].load.total_cmp(&groups[a].load).then(a.cmp(&b)));
    for g in order {
        let gl = &groups[g];
        let pred = |p: usize, placed: &[f64]| (placed[p] + gl.load) / cap(p);
        if let Some(c) = out[g] {
            if gl.load < MIN_LOAD {
                continue;
            }
            // where it is, its own load is already counted
            placed[c] -= gl.load;
        }
        let mut best = 0;
        for p in 1..parts.len() {
            if pred(p, &placed) < pred(best, &placed) {
                best = p;
            }
        }
        let choice = match out[g] {
            Some(c) if pred(c, &placed) - pred(best, &placed) <= hysteresis => c,
            _ => best,
        };
        placed[choice] += gl.load;
        out[g] = Some(choice);
    }
    out.into_iter().map(|o| o.unwrap_or(0)).collect()
}

/// One group (nested in its preferred partition's `groups`, by rank of its cgroup id).
#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[serde(default)]
pub struct GbGroupMetrics {
    #[stat(desc = "cgroup path of the group")]
    pub path: String,
    #[stat(desc = "cgroup id (inode number)")]
    pub cgid: u64,
    #[stat(desc = "Preferred partition")]
    pub part: u64,
    #[stat(desc = "Load: its run time per second, in CPUs (last period)")]
    pub load: f64,
    #[stat(desc = "Share of its run time spent inside its partition, % (last period)")]
    pub in_part_pct: f64,
    #[stat(desc = "Its load on each partition's CPUs, in milli-CPUs (last period)")]
    pub by_part_mcpu: BTreeMap<u32, u64>,
    #[stat(desc = "Times the balancer moved it to another partition")]
    pub moves: u64,
}

/// One partition (nested in `Metrics::gb_parts`): the proposal's gb_stat line, and its groups.
#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[serde(default)]
pub struct GbPartMetrics {
    #[stat(desc = "CPUs of the partition (cpulist)")]
    pub cpus: String,
    #[stat(desc = "CPUs in the partition")]
    pub nr_cpus: u64,
    #[stat(desc = "Partition load: run time of every task on its CPUs, in CPUs (last period)")]
    pub load: f64,
    #[stat(desc = "Group load: the loads of the groups that prefer it, in CPUs")]
    pub group_load: f64,
    #[stat(desc = "Groups that prefer it")]
    pub nr_groups: u64,
    #[stat(desc = "The groups that prefer it, by rank of cgroup id")]
    pub groups: BTreeMap<u32, GbGroupMetrics>,
}

/// What the loader samples for the stats (`Metrics::gb_*`).
#[derive(Clone, Debug, Default)]
pub struct GbSample {
    pub enabled: bool,
    /// `gb_stats`, indexed by `enum gb_stat`.
    pub counters: [u64; bpf_intf::gb_stat_GB_NR_STATS as usize],
    pub parts: BTreeMap<u32, GbPartMetrics>,
}

#[derive(Default)]
struct GroupState {
    /// Cumulative run time by partition slot at the last period.
    prev: Vec<u64>,
    load: f64,
    by_part: Vec<f64>,
    part: Option<usize>,
    moves: u64,
    /// The move `settle` proposed for a settled group, and in how many periods in a row.
    pending: Option<(usize, u32)>,
}

/// A settled group moves only when `settle` proposes the same partition this many periods in a
/// row: one period's loads can be off (a spinner that did not run for a period under a busy
/// VM), and a move on them alone was seen undone a few periods later (ping-pong).
pub const SETTLE_CONFIRM: u32 = 3;

/// Whether a settled group at `current` moves to `proposed` now, given what was pending.
fn confirm_move(pending: &mut Option<(usize, u32)>, current: Option<usize>, proposed: usize) -> bool {
    if current.is_none() || current == Some(proposed) {
        *pending = None;
        return current.is_none();
    }
    let n = match *pending {
        Some((p, n)) if p == proposed => n + 1,
        _ => 1,
    };
    *pending = Some((proposed, n));
    if n >= SETTLE_CONFIRM {
        *pending = None;
        return true;
    }
    false
}

/// The loader's side at run time.
pub struct Balancer {
    cfg: Config,
    nr_cpu_ids: usize,
    groups: BTreeMap<u64, GroupState>,
    prev_busy: Vec<u64>,
    part_load: Vec<f64>,
    last: Option<Instant>,
    names: HashMap<u64, String>,
}

fn read_acct(map: &impl MapCore, key: &[u8]) -> Result<Option<Vec<u64>>> {
    let Some(vals) = map.lookup_percpu(key, MapFlags::ANY)? else { return Ok(None) };
    let mut sum = vec![0u64; NO_PART + 1];
    for v in vals {
        let a: gb_acct = map_value(&v);
        for (s, x) in sum.iter_mut().zip(a.part_ns.iter()) {
            *s = s.wrapping_add(*x);
        }
    }
    Ok(Some(sum))
}

impl Balancer {
    pub fn new(cfg: Config, topo: &Topology) -> Self {
        let n = cfg.parts.len();
        Balancer {
            cfg,
            nr_cpu_ids: topo.nr_cpu_ids,
            groups: BTreeMap::new(),
            prev_busy: vec![0; topo.nr_cpu_ids],
            part_load: vec![0.0; n],
            last: None,
            names: HashMap::new(),
        }
    }

    pub fn period(&self) -> Duration {
        self.cfg.period
    }

    /// cgroup id -> path of every group the options can make (children of --gb-parent now).
    fn refresh_names(&mut self) {
        for (id, opt, path) in &self.cfg.optin {
            if opt & bpf_intf::gb_consts_GB_OPT_CGROUP != 0 {
                self.names.insert(*id, path.display().to_string());
            }
            if opt & bpf_intf::gb_consts_GB_OPT_PARENT != 0 {
                if let Ok(rd) = std::fs::read_dir(path) {
                    for e in rd.flatten() {
                        if let Ok(md) = e.metadata() {
                            if md.is_dir() {
                                self.names.insert(md.ino(), e.path().display().to_string());
                            }
                        }
                    }
                }
            }
        }
    }

    /// One period: read the run time, settle, write the groups' partitions.
    pub fn step(&mut self, cpu_map: &impl MapCore, group_map: &impl MapCore, acct_map: &impl MapCore) -> Result<()> {
        let now = Instant::now();
        let secs = self.last.map_or(0.0, |l| now.duration_since(l).as_secs_f64());
        self.last = Some(now);
        let nparts = self.cfg.parts.len();
        let part_of = self.cfg.part_of();

        // partition load: run time of every task on its CPUs
        let mut busy_part = vec![0u64; nparts];
        for cpu in 0..self.nr_cpu_ids {
            let Some(v) = cpu_map.lookup(&(cpu as u32).to_ne_bytes(), MapFlags::ANY)? else { continue };
            let c: gb_cpu = map_value(&v);
            let d = c.busy_ns.wrapping_sub(self.prev_busy[cpu]);
            self.prev_busy[cpu] = c.busy_ns;
            if let Some(&p) = part_of.get(&cpu) {
                busy_part[p] += d;
            }
        }

        // groups: created and deleted by the cgroup ops
        let mut seen: BTreeMap<u64, (Vec<u64>, i32)> = BTreeMap::new();
        for key in group_map.keys() {
            let id = u64::from_ne_bytes(key[..8].try_into()?);
            let Some(v) = group_map.lookup(&key, MapFlags::ANY)? else { continue };
            let g: gb_group = map_value(&v);
            let Some(acct) = read_acct(acct_map, &key)? else { continue };
            seen.insert(id, (acct, g.part));
        }
        self.groups.retain(|id, _| seen.contains_key(id));
        let new_names = seen.keys().any(|id| !self.names.contains_key(id));
        for (id, (acct, part)) in &seen {
            let st = self.groups.entry(*id).or_insert_with(|| GroupState {
                prev: vec![0; NO_PART + 1],
                by_part: vec![0.0; nparts],
                ..Default::default()
            });
            st.part = usize::try_from(*part).ok().filter(|&p| p < nparts);
            if secs > 0.0 {
                let d: Vec<f64> =
                    acct.iter().zip(&st.prev).map(|(a, p)| a.wrapping_sub(*p) as f64 / 1e9 / secs).collect();
                st.load = d.iter().sum();
                st.by_part = d[..nparts].to_vec();
            }
            st.prev = acct.clone();
        }
        if secs <= 0.0 {
            return Ok(());
        }
        self.part_load = busy_part.iter().map(|b| *b as f64 / 1e9 / secs).collect();
        if new_names {
            self.refresh_names();
        }

        let parts: Vec<PartLoad> = self
            .cfg
            .parts
            .iter()
            .zip(&self.part_load)
            .map(|(p, l)| PartLoad { capacity: p.len() as f64, load: *l })
            .collect();
        let ids: Vec<u64> = self.groups.keys().copied().collect();
        let loads: Vec<GroupLoad> = ids
            .iter()
            .map(|id| {
                let g = &self.groups[id];
                GroupLoad { load: g.load, by_part: g.by_part.clone(), current: g.part }
            })
            .collect();
        let choice = settle(&parts, &loads, HYSTERESIS);
        for (id, p) in ids.iter().zip(choice) {
            let g = self.groups.get_mut(id).unwrap();
            if !confirm_move(&mut g.pending, g.part, p) {
                continue;
            }
            let v = gb_group { part: p as i32, __pad: 0 };
            // EXIST: a group deleted meanwhile (cgroup removed) must not come back
            if group_map.update(&id.to_ne_bytes(), bytes(&v), MapFlags::EXIST).is_ok() {
                log::debug!(
                    "group balancer: {} ({:.2} CPUs) -> partition {p} ({}), was {}",
                    self.names.get(id).map_or_else(|| format!("cgroup {id}"), |n| n.clone()),
                    g.load,
                    cpulist(&self.cfg.parts[p]),
                    g.part.map_or_else(|| "none".to_string(), |q| q.to_string())
                );
                if g.part.is_some() {
                    g.moves += 1;
                }
                g.part = Some(p);
            }
        }
        Ok(())
    }

    /// The gb stats: counters from `gb_stats`, partitions and their groups from the last period.
    pub fn metrics(&self, stats_map: &impl MapCore) -> Result<GbSample> {
        let mut m = GbSample { enabled: true, ..Default::default() };
        for (i, c) in m.counters.iter_mut().enumerate() {
            *c = crate::maps::percpu_sum(stats_map, i as u32)?;
        }
        for (i, p) in self.cfg.parts.iter().enumerate() {
            m.parts.insert(
                i as u32,
                GbPartMetrics {
                    cpus: cpulist(p),
                    nr_cpus: p.len() as u64,
                    load: self.part_load.get(i).copied().unwrap_or(0.0),
                    ..Default::default()
                },
            );
        }
        for (rank, (id, g)) in self.groups.iter().enumerate() {
            let Some(part) = g.part else { continue };
            let Some(pm) = m.parts.get_mut(&(part as u32)) else { continue };
            pm.group_load += g.load;
            pm.nr_groups += 1;
            let inside = g.by_part.get(part).copied().unwrap_or(0.0);
            pm.groups.insert(
                rank as u32,
                GbGroupMetrics {
                    path: self.names.get(id).cloned().unwrap_or_else(|| format!("cgroup {id}")),
                    cgid: *id,
                    part: part as u64,
                    load: g.load,
                    in_part_pct: if g.load > 0.0 { 100.0 * inside / g.load } else { 0.0 },
                    by_part_mcpu: g
                        .by_part
                        .iter()
                        .enumerate()
                        .map(|(i, l)| (i as u32, (l * 1000.0).round() as u64))
                        .collect(),
                    moves: g.moves,
                },
            );
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(cap: f64, load: f64) -> PartLoad {
        PartLoad { capacity: cap, load }
    }

    #[test]
    fn a_settled_group_moves_only_on_a_proposal_repeated() {
        let mut pending = None;
        // a new group takes the proposal at once
        assert!(confirm_move(&mut pending, None, 1));
        // a settled one: once, twice, then a period proposing to stay resets it
        assert!(!confirm_move(&mut pending, Some(0), 1));
        assert!(!confirm_move(&mut pending, Some(0), 1));
        assert!(!confirm_move(&mut pending, Some(0), 0));
        assert_eq!(pending, None);
        // another partition proposed in between starts over
        assert!(!confirm_move(&mut pending, Some(0), 1));
        assert!(!confirm_move(&mut pending, Some(0), 2));
        assert!(!confirm_move(&mut pending, Some(0), 2));
        assert!(confirm_move(&mut pending, Some(0), 2), "SETTLE_CONFIRM periods in a row");
        assert_eq!(pending, None);
    }

    #[test]
    fn groups_end_in_distinct_partitions() {
        let parts = [part(4.0, 8.0), part(4.0, 0.0)];
        // both groups in partition 0 and squeezed there
        let gs = vec![
            GroupLoad { load: 4.0, by_part: vec![4.0, 0.0], current: Some(0) },
            GroupLoad { load: 4.0, by_part: vec![4.0, 0.0], current: Some(0) },
        ];
        let c = settle(&parts, &gs, HYSTERESIS);
        assert_ne!(c[0], c[1], "{c:?}");
    }
}
