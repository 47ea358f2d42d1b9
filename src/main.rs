//! scx_sis loader: CLI → preflight checks → open/load/attach → run loop → exit report.

use std::mem::MaybeUninit;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use libbpf_rs::skel::OpenSkel;
use libbpf_rs::{MapCore, MapFlags, OpenObject};
use log::{debug, info, warn};
use scx_stats::prelude::*;
use scx_utils::{compat, scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report};

use scx_sis::access::{self, Group};
use scx_sis::bpf_intf;
use scx_sis::bpf_skel::*;
use scx_sis::control::{self, Pending, Request};
use scx_sis::error::{main_with, usage_err};
use scx_sis::group;
use scx_sis::idle_filter::{self, SisMode};
use scx_sis::knobs::{self, Knob, KnobName, Knobs};
use scx_sis::layout::Layout;
use scx_sis::maps;
use scx_sis::overload::{self, StealMode, StealScope};
use scx_sis::rundir;
use scx_sis::stats::{self, Counters, Metrics, Samples};
use scx_sis::topology::{self, Topology};

const SCHEDULER_NAME: &str = "scx_sis";

/// The dump lives in one BPF array value, which the kernel caps near 4 MiB (KMALLOC_MAX_SIZE).
const MAX_EXIT_DUMP_LEN: i64 = 2 << 20;

/// `--version`: "0.1.0 (git 42b0f7f, x86_64-unknown-linux-gnu)"; the hash ends in "-dirty" when
/// built from a tree with uncommitted changes, and is "unknown" outside git (build.rs).
fn version() -> String {
    format!("{} (git {}, {})", env!("CARGO_PKG_VERSION"), env!("SCX_SIS_GIT"), env!("SCX_SIS_TARGET"))
}

/// Where ttwu may pull a wakee toward its waker's CPU (`--wake-affine`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum WakeAffine {
    Off,
    Idle,
    Load,
}

impl WakeAffine {
    fn to_bpf(self) -> u32 {
        match self {
            WakeAffine::Off => bpf_intf::wake_affine_mode_WAKE_AFFINE_OFF,
            WakeAffine::Idle => bpf_intf::wake_affine_mode_WAKE_AFFINE_IDLE,
            WakeAffine::Load => bpf_intf::wake_affine_mode_WAKE_AFFINE_LOAD,
        }
    }
}

/// scx_sis: a sched_ext scheduler built from mainline proposals: the SIS_CORE idle filter,
/// fail-prone scans, overloaded-CPU stealing and streamlined wakeup paths.
///
/// Runs until interrupted (Ctrl-C / SIGTERM), then detaches and the kernel's fair scheduler
/// takes every task back. Needs root and a kernel with CONFIG_SCHED_CLASS_EXT (6.12+).
#[derive(Debug, Parser)]
#[command(name = "scx_sis", version, disable_version_flag = true)]
struct Opts {
    /// Time slice in microseconds: the longest a task runs while others wait for its CPU.
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u64).range(100..=100_000))]
    slice_us: u64,

    /// Idle-CPU search: `full` = idle filter + fail-prone scans, `filter` = idle filter only,
    /// `linear` = probe the LLC in order (no filter; CFS without SIS_CORE).
    #[arg(long, value_enum, default_value_t = SisMode::Full)]
    sis_mode: SisMode,

    /// Do not keep the kernel's built-in idle tracking: claim CPUs through scx_sis's own
    /// per-CPU idle state only, so no system-wide idle mask is written at all.
    #[arg(long)]
    no_builtin_idle: bool,

    /// Steal-on-idle from overloaded CPUs: `on`, `map-only` (keep the overloaded map, never
    /// steal), `off` (no stealing; the map is still kept for the busy-CPU balance unless
    /// --no-balance).
    #[arg(long, value_enum, default_value_t = StealMode::On)]
    steal: StealMode,

    /// Where a CPU about to idle may steal: its LLC only, or its LLC first, then the other LLCs
    /// of its NUMA node, or of any node.
    #[arg(long, value_enum, default_value_t = StealScope::Node)]
    steal_scope: StealScope,

    /// Check one failed idle scan in N against the oracle (the kernel's idle mask, or the
    /// per-CPU idle state with --no-builtin-idle) for the missed-idle / recall telemetry.
    /// The check walks the LLC, so it is sampled; N is a power of two, 0 turns it off.
    #[arg(long, value_name = "N", default_value_t = bpf_intf::sis_consts_SIS_DFL_ORACLE_EVERY, value_parser = knobs::parse_oracle_every)]
    oracle_every: u32,

    /// Do not balance busy CPUs by weighted load (stealing by idle CPUs stays): for A/B runs.
    #[arg(long)]
    no_balance: bool,

    /// A busy CPU looks for a busier one at most once every N of its slices (1..=64): like the
    /// fair class's busy_factor, a higher N trades balance speed for fewer migrations.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    balance_every: u32,

    /// Where a woken task may be pulled toward the CPU of the task that woke it: `load` = when
    /// the waker leaves its CPU free, and when nothing is idle and the waker's CPU is the less
    /// loaded (the fair class's wake_affine); `idle` = only when the waker leaves its CPU free;
    /// `off` = never (its previous CPU, or an idle one near it).
    #[arg(long, value_enum, default_value_t = WakeAffine::Load)]
    wake_affine: WakeAffine,

    /// Do not let a woken task owed time preempt a running one (it waits for the slice end).
    #[arg(long)]
    no_preempt: bool,

    /// Group balancer: partitions of CPUs, cpulists separated by ';' (e.g. "0-3;4-7").
    /// [default: one per LLC]
    #[arg(long, value_name = "SPEC")]
    partitions: Option<String>,

    /// Group balancer: the tasks of this cgroup (a cgroup2 directory, its descendants
    /// included) form a group that settles on a partition. Repeatable.
    #[arg(long, value_name = "PATH")]
    gb_cgroup: Vec<std::path::PathBuf>,

    /// Group balancer: each child cgroup of PATH is a group, ones created later included.
    /// Repeatable.
    #[arg(long, value_name = "PATH")]
    gb_parent: Vec<std::path::PathBuf>,

    /// Group balancer: how often groups are settled on partitions, in ms.
    #[arg(long, value_name = "MS", default_value_t = 200, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    gb_period_ms: u64,

    /// cgroups whose cpu.weight state scx_sis keeps (about 100 bytes each). A cgroup beyond
    /// it, or deeper than 16 levels, has no state of its own: its tasks count in its nearest
    /// ancestor that has one (`cg_untracked` in the statistics).
    #[arg(long, value_name = "N", default_value_t = bpf_intf::sis_consts_SIS_MAX_CGROUPS, value_parser = clap::value_parser!(u32).range(1..=1 << 20))]
    max_cgroups: u32,

    /// Schedule only tasks whose policy is SCHED_EXT (7); all others stay on the fair class.
    #[arg(long)]
    partial: bool,

    /// Print statistics every SECS seconds while the scheduler runs.
    #[arg(long, value_name = "SECS", value_parser = parse_interval)]
    stats: Option<f64>,

    /// Print statistics of an already running scx_sis every SECS seconds; attaches nothing.
    #[arg(long, value_name = "SECS", value_parser = parse_interval)]
    monitor: Option<f64>,

    /// On exit, write the run's cumulative statistics as JSON to FILE (for scripts and tests).
    #[arg(long, value_name = "FILE")]
    stats_out: Option<std::path::PathBuf>,

    /// Let members of GROUP read the statistics (--monitor, scx_sis top, scxtop): the stats
    /// socket gets this group and mode 0660 instead of 0600 (root only). Its directories must
    /// be searchable by the group (the default 0755 is).
    #[arg(long, value_name = "GROUP", value_parser = access::parse_group)]
    stats_group: Option<Group>,

    /// Bytes of the kernel's debug dump kept when it ejects scx_sis (watchdog, runtime error),
    /// printed with the exit reason; 0 = the kernel's default (32 KiB).
    #[arg(long, value_name = "BYTES", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=MAX_EXIT_DUMP_LEN))]
    exit_dump_len: u32,

    /// The stats socket to serve, and for --monitor to read (tests; scxtop and scx_sis top read
    /// the default).
    #[arg(long, value_name = "PATH", default_value = access::STATS_SOCKET, hide = true)]
    stats_socket: std::path::PathBuf,

    /// Describe every statistics field and exit.
    #[arg(long)]
    help_stats: bool,

    /// Log more (loader decisions, topology).
    #[arg(short, long)]
    verbose: bool,

    /// Print the version, git commit and build target, and exit.
    #[arg(short = 'V', long)]
    version: bool,

    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Debug, clap::Subcommand)]
enum Cmd {
    /// Live terminal UI of a running scx_sis (reads its stats socket; works over ssh).
    Top(scx_sis::tui::TopArgs),
    /// Change knobs of the running scx_sis live, e.g. `scx_sis set steal=off` (root only).
    /// Keys: sis-mode=full|filter|linear, steal=on|map-only|off, steal-scope=llc|node|all,
    /// oracle-every=N (0 or a power of two), slice-us=N (100..100000). No key: print them all.
    Set {
        /// KEY=VALUE pairs, applied in order.
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
    },
}

fn parse_interval(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.1..=3600.0).contains(&v) {
        return Err(format!("{v} is out of range 0.1..=3600"));
    }
    Ok(v)
}

/// The kernel can re-enqueue a CPU's local DSQ from any context (v6.19's
/// scx_bpf_reenqueue_local v2, or v7.1's scx_bpf_dsq_reenq): what the sched_switch tracepoint
/// needs to replace ops.cpu_release (bpf/main.bpf.c, scx's compat.bpf.h).
fn reenqueue_from_anywhere() -> bool {
    ["scx_bpf_reenqueue_local___v2", "scx_bpf_dsq_reenq"].iter().any(|k| compat::ksym_exists(k).unwrap_or(false))
}

/// What must hold before anything is loaded.
fn preflight() -> Result<()> {
    scx_sis::preflight::check(&scx_sis::preflight::Hints {
        no_sched_ext: "boot a 6.12+ kernel with sched_ext, or try scx_sis in a VM with scripts/run.sh",
        not_root: "must run as root (loading a BPF scheduler needs CAP_SYS_ADMIN)",
        attached: "",
    })
}

struct Scheduler<'a> {
    skel: BpfSkel<'a>,
    struct_ops: Option<libbpf_rs::Link>,
    topo: Topology,
    stats_server: scx_sis::stats_server::Server,
    stats_out: Option<std::path::PathBuf>,
    knobs: Knobs,
    gb: Option<group::Balancer>,
}

impl<'a> Scheduler<'a> {
    fn init(opts: &Opts, knobs: Knobs, open_object: &'a mut MaybeUninit<OpenObject>) -> Result<Self> {
        // each (re)start costs seconds under emulation: -v says where they go
        let t_init = std::time::Instant::now();
        let topo = Topology::discover().context("discovering the CPU topology")?;
        // a machine beyond what the BPF side is built for: refused, not truncated
        topo.check_limits().map_err(usage_err)?;
        // bad group balancer options fail here, before anything is loaded or logged
        let gb_cfg =
            group::Config::new(opts.partitions.as_deref(), &opts.gb_cgroup, &opts.gb_parent, opts.gb_period_ms, &topo)?;
        info!("{SCHEDULER_NAME}: {}", topo.summary());
        debug!("{} possible CPU ids, {} online", topo.nr_cpu_ids, scx_sis::topology::cpulist(&topo.cpu_ids()));
        for l in &topo.llcs {
            debug!(
                "LLC {}: CPUs {} ({} cores), node {}",
                l.id,
                scx_sis::topology::cpulist(&l.cpus),
                l.nr_cores,
                l.node
            );
        }
        if gb_cfg.is_none() && opts.partitions.is_some() {
            warn!("{SCHEDULER_NAME}: --partitions without --gb-cgroup / --gb-parent: no group balancer");
        }

        let skel_builder = BpfSkelBuilder::default();
        let mut skel =
            scx_ops_open!(skel_builder, open_object, sis_ops, None::<libbpf_rs::libbpf_sys::bpf_object_open_opts>)?;

        debug!("topology read and BPF object opened in {} ms", t_init.elapsed().as_millis());
        let layout = Layout::of(&topo);
        debug!("BPF layout: {layout:?}; map sizes {:?}", layout.map_sizes());
        let rodata = skel.maps.rodata_data.as_mut().unwrap();
        scx_sis::set_layout_rodata!(&mut *rodata, layout);
        rodata.builtin_idle = !opts.no_builtin_idle;
        rodata.balance_on = !opts.no_balance;
        rodata.balance_every = opts.balance_every;
        rodata.wakeup_preempt = !opts.no_preempt;
        rodata.wake_affine = opts.wake_affine.to_bpf();
        rodata.gb_enabled = gb_cfg.is_some();
        rodata.switch_partial = opts.partial;
        rodata.cg_nr_slots = opts.max_cgroups;
        knobs.write_bpf(skel.maps.data_data.as_mut().unwrap());

        // Size the arrays from the machine.
        let missing = layout.size_maps(skel.open_object_mut())?;
        anyhow::ensure!(missing.is_empty(), "the BPF object has no map {missing:?}");
        group::size_maps(skel.open_object_mut(), &topo)?;
        // cgroup state slots and the id -> slot map that finds them, one size (cg_nr_slots)
        skel.maps.cg_sched_map.set_max_entries(opts.max_cgroups)?;
        skel.maps.cg_slot_map.set_max_entries(opts.max_cgroups)?;

        let ops = skel.struct_ops.sis_ops_mut();
        // 0: the kernel's default; scx_ops_load! sizes the dump buffer from it (uei_set_size!)
        ops.exit_dump_len = opts.exit_dump_len;
        ops.flags = 0;
        if !opts.no_builtin_idle {
            ops.flags |= *compat::SCX_OPS_KEEP_BUILTIN_IDLE;
        }
        if opts.partial {
            ops.flags |= *compat::SCX_OPS_SWITCH_PARTIAL;
        }
        // cpu.weight is honoured (ops.cgroup_*). The flag exists only up to 7.0 (a no-op since
        // 6.15, -EINVAL from 7.1): set it only where this kernel's BTF has it.
        let cg_weight = compat::read_enum("scx_ops_flags", "SCX_OPS_HAS_CGROUP_WEIGHT").ok();
        ops.flags |= cg_weight.unwrap_or(0);
        // a task alone on a CPU outside its group's partition gives way at its slice end and
        // must reach ops.enqueue to move (group.bpf.h)
        if gb_cfg.is_some() {
            ops.flags |= *compat::SCX_OPS_ENQ_LAST;
        }
        // A wakeup to a CPU in another LLC, or to an idle one, is enqueued there by IPI, as the fair
        // class does (ttwu_queue): the waker takes no remote rq lock and the wakee runs sooner.
        // ops.enqueue may then run without ops.select_cpu before it: it places by task_cpu alone.
        // 0 where the kernel lacks the flag (6.12).
        let queued_wakeup = *compat::SCX_OPS_ALLOW_QUEUED_WAKEUP;
        ops.flags |= queued_wakeup;
        // RT/DL taking a CPU: 7.x deprecates ops.cpu_release/acquire (a warning at every attach)
        // for the sched_switch tracepoint, once its re-enqueue works from anywhere (main.bpf.c)
        let switch_tp = reenqueue_from_anywhere();
        if switch_tp {
            ops.cpu_release = std::ptr::null_mut();
            ops.cpu_acquire = std::ptr::null_mut();
        }
        debug!(
            "ops.flags {:#x}: KEEP_BUILTIN_IDLE {}, SWITCH_PARTIAL {}, HAS_CGROUP_WEIGHT {}, ENQ_LAST {}, \
             ALLOW_QUEUED_WAKEUP {}; exit_dump_len {}",
            ops.flags,
            !opts.no_builtin_idle,
            opts.partial,
            match cg_weight {
                Some(_) => "set (in this kernel's BTF)",
                None => "not in this kernel's BTF (6.15+ honours cpu.weight without it)",
            },
            gb_cfg.is_some(),
            if queued_wakeup != 0 { "set" } else { "not in this kernel's BTF" },
            if opts.exit_dump_len == 0 { "kernel default".to_string() } else { opts.exit_dump_len.to_string() }
        );
        debug!(
            "CPUs taken by RT/DL: {}",
            if switch_tp { "sched_switch tracepoint" } else { "ops.cpu_release/acquire" }
        );
        skel.progs.sis_sched_switch.set_autoload(switch_tp);
        skel.progs.sis_cpu_release.set_autoload(!switch_tp);
        skel.progs.sis_cpu_acquire.set_autoload(!switch_tp);
        debug!(
            "rodata: builtin_idle {}, balance_on {}, balance_every {}, wakeup_preempt {}, wake_affine {}, gb_enabled {}",
            !opts.no_builtin_idle,
            !opts.no_balance,
            opts.balance_every,
            !opts.no_preempt,
            opts.wake_affine.name(),
            gb_cfg.is_some()
        );

        // SCX_SIS_VERIFIER_STATS=1: print each program's verifier statistics (load cost);
        // =log: the verifier's whole log too (every instruction it walks, by index: where the
        // cost is, to map on `llvm-objdump -d` of the object; megabytes)
        if let Some(v) = std::env::var_os("SCX_SIS_VERIFIER_STATS") {
            let full = v == "log";
            for mut prog in skel.open_object_mut().progs_mut() {
                prog.set_log_level(if full { 2 | 4 } else { 4 });
            }
            if full {
                libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Debug, |_, msg: String| eprint!("{msg}"))));
            } else {
                libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Debug, |_, msg: String| {
                    if msg.contains("processed") || msg.contains("BEGIN PROG LOAD LOG") {
                        eprint!("{msg}");
                    }
                })));
            }
        }
        // the verifier's cost dominates start-up (seconds under emulation): say what it took
        let t_load = std::time::Instant::now();
        let mut skel = scx_ops_load!(skel, sis_ops, uei)?;
        debug!("BPF programs loaded (verified) in {} ms", t_load.elapsed().as_millis());
        topology::write_maps(&topo, &skel.maps.cpu_topo_map, &skel.maps.llc_topo_map, &skel.maps.llc_cpus_map)?;
        if let Some(cfg) = &gb_cfg {
            let m = &skel.maps;
            group::write_maps(cfg, &topo, &m.gb_cpu_map, &m.gb_part_map, &m.gb_part_cpus, &m.gb_optin)?;
            info!(
                "{SCHEDULER_NAME}: group balancer: {} partitions ({}), {} opted-in cgroups, period {} ms",
                cfg.parts.len(),
                cfg.parts.iter().map(|p| scx_sis::topology::cpulist(p)).collect::<Vec<_>>().join(";"),
                cfg.optin.len(),
                cfg.period.as_millis()
            );
        }

        let t_attach = std::time::Instant::now();
        let struct_ops = Some(scx_ops_attach!(skel, sis_ops).map_err(|e| {
            if compat::is_sched_ext_enabled().unwrap_or(false) {
                usage_err("another sched_ext scheduler was attached meanwhile; stop it first")
            } else {
                e
            }
        })?);
        debug!(
            "struct_ops attached (every task switched) in {} ms; {} ms since start-up began",
            t_attach.elapsed().as_millis(),
            t_init.elapsed().as_millis()
        );
        let stats_server = scx_sis::stats_server::launch_server(&opts.stats_socket, opts.stats_group.as_ref())?;
        info!(
            "{SCHEDULER_NAME} attached: {}, balance {}, wake-affine {}, {} idle tracking{}",
            knobs.summary(),
            if opts.no_balance { "off" } else { "on" },
            opts.wake_affine.name(),
            if opts.no_builtin_idle { "own" } else { "built-in + own" },
            if opts.partial { ", partial: SCHED_EXT tasks only" } else { "" }
        );

        let gb = gb_cfg.map(|cfg| group::Balancer::new(cfg, &topo));
        Ok(Self { skel, struct_ops, topo, stats_server, stats_out: opts.stats_out.clone(), knobs, gb })
    }

    fn counters(&self) -> Result<Counters> {
        let mut sum: Counters = [0; bpf_intf::sis_stat_SIS_NR_STATS as usize];
        for (i, s) in sum.iter_mut().enumerate() {
            *s = maps::percpu_sum(&self.skel.maps.stats, i as u32)?;
        }
        Ok(sum)
    }

    fn metrics(&self) -> Result<Metrics> {
        let m = &self.skel.maps;
        let (llcs, cpu_state) =
            scx_sis::llc_stats::sample(&self.topo, &m.cpu_ctx_map, &m.llc_filter_map, &m.ovl_map, &m.llc_stats)?;
        let (filter_weight, true_idle) =
            idle_filter::sample(&self.topo, &self.skel.maps.cpu_ctx_map, &self.skel.maps.llc_filter_map)?;
        let samples = Samples {
            nr_cpus: self.topo.cpus.len() as u64,
            filter_weight,
            true_idle,
            overloaded: overload::sample_weight(&self.topo, &self.skel.maps.ovl_map)?,
            llc_steals: overload::llc_steals(&self.topo, &self.skel.maps.llc_steals)?,
            llcs,
            cpu_state,
            nr_runnable: scx_sis::llc_stats::nr_runnable(&self.topo, &m.cpu_sched_map)?,
            knobs: self.knobs.clone(),
            gb: match &self.gb {
                Some(gb) => gb.metrics(&self.skel.maps.gb_stats)?,
                None => Default::default(),
            },
            cg: {
                let b = self.skel.maps.bss_data.as_ref().unwrap();
                stats::CgSample {
                    untracked: b.cg_nr_untracked.max(0) as u64,
                    map_full: b.cg_nr_map_full,
                    weight_lost: b.cg_nr_weight_lost,
                }
            },
        };
        Ok(Metrics::from_counters(&self.counters()?, samples))
    }

    /// Applies a live knob change; the reply text for the control client. A change that fails
    /// leaves the old value (Knobs::apply).
    fn set_knob(&mut self, k: Knob) -> Result<String> {
        let old = self.knobs.get(&k);
        if old == k {
            return Ok(format!("{k} (unchanged)"));
        }
        let topo = &self.topo;
        let write = |kn: &Knobs, skel: &mut BpfSkel| kn.write_bpf(skel.maps.data_data.as_mut().unwrap());
        self.knobs.apply(k, &mut self.skel, write, |old, skel| -> Result<()> {
            match k {
                // linear mode kept no filter: rebuild them from the state of record
                Knob::SisMode(m) if m != SisMode::Linear && old == Knob::SisMode(SisMode::Linear) => {
                    let input = libbpf_rs::ProgramInput::default();
                    skel.progs.sis_filter_rebuild.test_run(input).context("rebuilding the idle filters")?;
                }
                // off keeps no overloaded map unless the balance reads it (bpf/overload.bpf.h):
                // drop what it showed, it would go stale
                Knob::Steal(StealMode::Off) if !skel.maps.rodata_data.as_ref().unwrap().balance_on => {
                    let zero = vec![0u8; skel.maps.ovl_map.value_size() as usize];
                    for i in 0..topo.llcs.len() * overload::ovl_lines(topo) {
                        skel.maps.ovl_map.update(&(i as u32).to_ne_bytes(), &zero, MapFlags::ANY)?;
                    }
                }
                _ => {}
            }
            Ok(())
        })?;
        info!("{SCHEDULER_NAME}: set {k} (was {old})");
        Ok(format!("{k} (was {old})"))
    }

    fn serve_control(&mut self, p: Pending) {
        // its client gave up waiting and was told nothing changed: it must stay so
        if !p.take() {
            info!("{SCHEDULER_NAME}: dropped a control request its client no longer waits for");
            return;
        }
        let res = match p.req {
            Request::Get => Ok(self.knobs.summary()),
            Request::Set(k) => self.set_knob(k).map_err(|e| format!("{e:#}")),
        };
        p.answer(res);
    }

    fn run(
        &mut self,
        shutdown: Arc<AtomicBool>,
        ctl: &crossbeam::channel::Receiver<Pending>,
    ) -> Result<scx_utils::UserExitInfo> {
        let stats = self.stats_server.hub();
        let poll = self.gb.as_ref().map_or(Duration::from_millis(100), |g| g.period().min(Duration::from_millis(100)));
        let mut gb_next = std::time::Instant::now();
        // A plain sleep between polls: crossbeam's recv_timeout spins and yields before it
        // parks, and under load the loader then took a whole CPU from the workload (seen in the
        // test VM: a spinner sharing its CPU got half of it). Always a sleep, also while stats
        // clients wait: they cannot make the loop spin.
        while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&self.skel, uei) {
            while let Ok(p) = ctl.try_recv() {
                self.serve_control(p);
            }
            if let Some(gb) = &mut self.gb {
                if std::time::Instant::now() >= gb_next {
                    let m = &self.skel.maps;
                    gb.step(&m.gb_cpu_map, &m.gb_group_map, &m.gb_acct_map)?;
                    gb_next += gb.period();
                }
            }
            // one sample per poll for every client waiting, however many ask
            stats.serve(|| self.metrics())?;
            std::thread::sleep(poll);
        }
        let _ = self.struct_ops.take();
        // the exit reason and the kernel's dump first, whole: nothing after may hide them
        let uei = uei_report!(&self.skel, uei);
        let written = self.write_stats_out();
        match uei {
            Ok(u) => written.map(|_| u),
            // the ejection is the error to report; a failed --stats-out only beside it
            Err(e) => {
                if let Err(w) = written {
                    warn!("{w:#}");
                }
                Err(e)
            }
        }
    }

    /// --stats-out: the maps outlive the detach, so the totals are final now.
    fn write_stats_out(&self) -> Result<()> {
        if let Some(path) = &self.stats_out {
            let json = serde_json::to_string_pretty(&self.metrics()?)? + "\n";
            // a new file renamed into place: never written through a symlink someone left there
            rundir::write_replace(path, json.as_bytes())
                .with_context(|| format!("writing --stats-out {}", path.display()))?;
        }
        Ok(())
    }
}

fn libbpf_to_log(level: libbpf_rs::PrintLevel, msg: String) {
    let msg = msg.trim_end();
    match level {
        libbpf_rs::PrintLevel::Warn => warn!("{msg}"),
        _ => debug!("{msg}"),
    }
}

fn init_log(verbose: bool) -> Result<()> {
    let mut cfg = simplelog::ConfigBuilder::new();
    cfg.set_time_level(simplelog::LevelFilter::Off)
        .set_location_level(simplelog::LevelFilter::Off)
        .set_target_level(simplelog::LevelFilter::Off)
        .set_thread_level(simplelog::LevelFilter::Off);
    // libbpf's own output through the logger: its warnings always, the rest (info, debug) with -v
    libbpf_rs::set_print(Some((
        if verbose { libbpf_rs::PrintLevel::Debug } else { libbpf_rs::PrintLevel::Warn },
        libbpf_to_log,
    )));
    simplelog::TermLogger::init(
        if verbose { simplelog::LevelFilter::Debug } else { simplelog::LevelFilter::Info },
        cfg.build(),
        simplelog::TerminalMode::Stderr,
        // colour only for a terminal: a log file gets plain text (termcolor's Auto would not)
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            simplelog::ColorChoice::Auto
        } else {
            simplelog::ColorChoice::Never
        },
    )?;
    Ok(())
}

fn run(opts: Opts) -> Result<()> {
    if opts.version {
        println!("{SCHEDULER_NAME} {}", version());
        return Ok(());
    }
    if opts.help_stats {
        stats::server_data().describe_meta(&mut std::io::stdout(), None)?;
        return Ok(());
    }
    init_log(opts.verbose)?;
    debug!("{SCHEDULER_NAME} {}", version());

    match &opts.cmd {
        Some(Cmd::Top(args)) => return scx_sis::tui::run(args).map_err(tui_err),
        Some(Cmd::Set { pairs }) => return set(pairs),
        None => {}
    }

    let shutdown = Arc::new(AtomicBool::new(false));
    let sd = shutdown.clone();
    ctrlc::set_handler(move || sd.store(true, Ordering::Relaxed)).context("setting the signal handler")?;

    if let Some(intv) = opts.monitor {
        return stats::monitor(&opts.stats_socket, Duration::from_secs_f64(intv), &shutdown);
    }

    // bad group balancer input is refused before the system is checked, so that it is reported
    // as such on any machine (init checks it again: a restart may see other CPUs)
    if opts.partitions.is_some() || !opts.gb_cgroup.is_empty() || !opts.gb_parent.is_empty() {
        let topo = Topology::discover().context("discovering the CPU topology")?;
        group::Config::new(opts.partitions.as_deref(), &opts.gb_cgroup, &opts.gb_parent, opts.gb_period_ms, &topo)?;
    }
    preflight()?;
    debug!("preflight: sched_ext state {}, running as root", scx_sis::preflight::state());

    // the only scx_sis from here on, also while it restarts after a CPU hotplug: no second one
    // takes its sockets meanwhile
    let _lock = rundir::lock(&rundir::lock_path(std::path::Path::new(rundir::RUN_DIR)))?;
    let (_ctl_server, ctl) = control::serve(std::path::Path::new(control::CTL_PATH))?;
    let mut knobs = Knobs {
        sis_mode: opts.sis_mode,
        steal: opts.steal,
        steal_scope: opts.steal_scope,
        oracle_every: opts.oracle_every,
        slice_us: opts.slice_us,
        inject_error: false,
    };
    let mut open_object = MaybeUninit::uninit();
    let mut stats_thread = opts.stats;
    loop {
        let mut sched = Scheduler::init(&opts, knobs, &mut open_object)?;
        // started once the server is up, so it never polls an absent socket
        if let Some(intv) = stats_thread.take() {
            let (sd, path) = (shutdown.clone(), opts.stats_socket.clone());
            std::thread::spawn(move || {
                if let Err(e) = stats::monitor(&path, Duration::from_secs_f64(intv), &sd) {
                    warn!("stats monitor: {e:#}");
                }
            });
        }
        let uei = sched.run(shutdown.clone(), &ctl)?;
        // live changes survive a restart
        knobs = sched.knobs.clone();
        if !uei.should_restart() {
            break;
        }
        info!("{SCHEDULER_NAME}: restarting (CPU hotplug)");
    }
    Ok(())
}

/// `scx_sis set KEY=VALUE...`: bad input and refusals are usage errors (exit 2).
fn set(pairs: &[String]) -> Result<()> {
    let knobs = pairs.iter().map(|p| p.parse::<Knob>().map_err(usage_err)).collect::<Result<Vec<_>>>()?;
    if unsafe { libc::geteuid() } != 0 {
        return Err(usage_err("must run as root to change a running scx_sis"));
    }
    let path = std::path::Path::new(control::CTL_PATH);
    let lines: Vec<String> =
        if knobs.is_empty() { vec!["get".into()] } else { knobs.iter().map(|k| format!("set {k}")).collect() };
    for line in lines {
        match control::request(path, &line) {
            Ok(reply) => println!("{reply}"),
            Err(control::ClientError::Refused(e)) => return Err(usage_err(e)),
            // not applied, or maybe applied: not the user's input at fault (exit 1)
            Err(e) => anyhow::bail!("{e}"),
        }
    }
    Ok(())
}

/// The TUI's refusals (bad options, a non-root --control) are usage errors too.
fn tui_err(e: anyhow::Error) -> anyhow::Error {
    match e.downcast::<scx_sis::tui::TopUsageError>() {
        Ok(u) => usage_err(u.0),
        Err(e) => e,
    }
}

fn main() -> ExitCode {
    main_with("scx_sis", run)
}
