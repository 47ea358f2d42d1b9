//! `scx_sis bench`: A/B benchmarks of the fair class (EEVDF, nothing attached) against scx_sis
//! variants and other sched_ext schedulers, interleaved run by run, with an mmtests-style
//! comparison table, results.json, runs.csv and a PNG plot per suite.
//!
//! Layout: `statistics` (means, Welch's t-test), `model` (what results.json holds), `workloads`
//! (suites, parsers, the process executor), `sched` (attach/detach through sysfs, telemetry),
//! `runner` (the interleaved loop over the `Controller`/`Executor` traits), `report` (table, CSV,
//! JSON), `plot` (PNG).

pub mod fairness;
pub mod model;
pub mod plot;
pub mod report;
pub mod runner;
pub mod sched;
pub mod statistics;
pub mod workloads;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use model::{Config, HostInfo, Results, Skipped, Suite, Variant, VariantKind, BASELINE, FORMAT_VERSION};
use workloads::Scale;

/// Bad input or an unfit system: main prints `scx_sis: error: <msg>` and exits 2.
#[derive(Debug)]
pub struct BenchUsageError(pub String);

impl std::fmt::Display for BenchUsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for BenchUsageError {}

fn usage(msg: impl Into<String>) -> anyhow::Error {
    BenchUsageError(msg.into()).into()
}

/// Run workloads under the fair class (EEVDF) and sched_ext schedulers, alternating run by run,
/// and compare (mmtests style: Amean for times, Hmean for rates, *x%* = significant by Welch's
/// t-test at 95%). Needs root and a sched_ext kernel; attaches and detaches the schedulers itself.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BenchArgs {
    /// Comma-separated suites: hackbench, tbench, netperf (= netperf-udp,netperf-tcp), schbench,
    /// fairness (= fair-nice1,fair-nice8,fair-spread,fair-fork,fair-sleep).
    /// [default: hackbench,tbench,netperf,schbench; only the --cmd ones if --cmd is given]
    #[arg(long, value_name = "LIST")]
    pub suite: Option<String>,

    /// Measured runs per variant and parameter.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub runs: usize,

    /// Warm-up runs per variant and parameter (interleaved too; not in the statistics).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,

    /// Results directory [default: bench-results/<date-time>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Tiny sizes (smoke test): hackbench groups 1,2 with 20 loops, 1-2 s network runs.
    #[arg(long)]
    pub quick: bool,

    /// An scx_sis variant, NAME=OPTIONS (repeatable), e.g. "nofilter=--sis-mode linear".
    #[arg(long, value_name = "NAME=OPTIONS")]
    pub variant: Vec<String>,

    /// Another sched_ext scheduler on PATH, BINARY or NAME=BINARY [OPTIONS] (repeatable),
    /// e.g. scx_bpfland or "lowlat=scx_bpfland -m performance".
    #[arg(long, value_name = "[NAME=]BINARY")]
    pub peer: Vec<String>,

    /// Leave out the plain `scx_sis` column (default options); keep only --variant/--peer.
    #[arg(long)]
    pub no_default_variant: bool,

    /// A custom workload, NAME=COMMAND run with sh -c (repeatable); measured by --metric or
    /// by its wall time.
    #[arg(long, value_name = "NAME=COMMAND")]
    pub cmd: Vec<String>,

    /// Regex whose first capture group (or whole match) in the --cmd output is the metric.
    #[arg(long, value_name = "REGEX", requires = "cmd")]
    pub metric: Option<String>,

    /// The --metric is a rate (higher is better; Hmean) rather than a time.
    #[arg(long, requires = "metric")]
    pub higher_is_better: bool,

    /// hackbench groups, comma-separated [default: 1,2,4,.. up to the CPU count].
    #[arg(long, value_name = "LIST")]
    pub hackbench_groups: Option<String>,

    /// hackbench loops (-l) [default: 100; 20 with --quick].
    #[arg(long, value_name = "N")]
    pub hackbench_loops: Option<u32>,

    /// Seconds per tbench/netperf/schbench run [default: 5, netperf 3; 2/1 with --quick].
    #[arg(long, value_name = "SECS")]
    pub duration: Option<u32>,

    /// Seconds to wait for a scheduler to attach or detach.
    #[arg(long, default_value_t = 20, value_name = "SECS")]
    pub attach_timeout: u64,

    /// The scx_sis binary run for the scx_sis columns [default: this binary]; e.g. to compare
    /// against another build, or when the harness runs from a test binary.
    #[arg(long, value_name = "PATH")]
    pub scx_sis_bin: Option<PathBuf>,

    /// Print the plan (variants, suites, commands, number of runs) and exit; attaches nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Rebuild table.txt and the plots from DIR/results.json (no runs) and print the table.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dry_run"])]
    pub report: Option<PathBuf>,
}

/// Split an option string like a shell would (whitespace, '...', "...", backslash).
pub fn split_args(s: &str) -> Result<Vec<String>, String> {
    let mut out = vec![];
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err(format!("unterminated ' in {s:?}")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c) => cur.push(c),
                            None => return Err(format!("trailing \\ in {s:?}")),
                        },
                        Some(c) => cur.push(c),
                        None => return Err(format!("unterminated \" in {s:?}")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => cur.push(c),
                    None => return Err(format!("trailing \\ in {s:?}")),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

fn check_name(name: &str, what: &str, taken: &[Variant]) -> Result<()> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c)) {
        return Err(usage(format!("{what} name '{name}' must be non-empty letters, digits, - _ . +")));
    }
    if name.eq_ignore_ascii_case(BASELINE) {
        return Err(usage(format!("{what} name '{name}' is reserved for the baseline (the fair class)")));
    }
    if taken.iter().any(|v| v.name == name) {
        return Err(usage(format!("{what} name '{name}' is used twice (give each --variant/--peer its own NAME=)")));
    }
    Ok(())
}

/// The columns: EEVDF first, then scx_sis (unless --no-default-variant), --variant, --peer.
pub fn build_variants(args: &BenchArgs, peer_lookup: &dyn Fn(&str) -> Option<PathBuf>) -> Result<Vec<Variant>> {
    let mut vs = vec![Variant::fair()];
    if !args.no_default_variant {
        vs.push(Variant { name: "scx_sis".into(), kind: VariantKind::ScxSis { args: vec![] } });
    }
    for spec in &args.variant {
        let Some((name, opts)) = spec.split_once('=') else {
            return Err(usage(format!(
                "--variant '{spec}': expected NAME=OPTIONS, e.g. \"nofilter=--sis-mode linear\""
            )));
        };
        let name = name.trim();
        check_name(name, "--variant", &vs)?;
        let a = split_args(opts).map_err(|e| usage(format!("--variant '{spec}': {e}")))?;
        vs.push(Variant { name: name.into(), kind: VariantKind::ScxSis { args: a } });
    }
    for spec in &args.peer {
        let (name, rest) = match spec.split_once('=') {
            Some((n, r)) if !n.contains(char::is_whitespace) => (Some(n.trim().to_string()), r),
            _ => (None, spec.as_str()),
        };
        let words = split_args(rest).map_err(|e| usage(format!("--peer '{spec}': {e}")))?;
        let Some((bin, a)) = words.split_first() else {
            return Err(usage(format!("--peer '{spec}': no scheduler binary given")));
        };
        let path = peer_lookup(bin).ok_or_else(|| {
            usage(format!(
                "--peer {bin}: not found on PATH (install the scx schedulers, e.g. the scx package, or give its path)"
            ))
        })?;
        let name = name.unwrap_or_else(|| {
            Path::new(bin).file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or(bin.clone())
        });
        check_name(&name, "--peer", &vs)?;
        vs.push(Variant {
            name,
            kind: VariantKind::Peer { binary: path.to_string_lossy().into_owned(), args: a.to_vec() },
        });
    }
    if vs.len() < 2 {
        return Err(usage("nothing to compare: --no-default-variant needs at least one --variant or --peer"));
    }
    Ok(vs)
}

/// The suites to run (and the ones skipped for a missing optional tool).
pub fn build_suites(args: &BenchArgs, nproc: usize) -> Result<(Vec<Suite>, Vec<Skipped>)> {
    let groups = match &args.hackbench_groups {
        None => None,
        Some(s) => Some(
            s.split(',')
                .map(|g| g.trim().parse::<u32>().ok().filter(|&g| g > 0))
                .collect::<Option<Vec<u32>>>()
                .ok_or_else(|| usage(format!("--hackbench-groups '{s}': expected positive integers like 1,2,4")))?,
        ),
    };
    let sc = Scale {
        nproc,
        quick: args.quick,
        hackbench_groups: groups,
        hackbench_loops: args.hackbench_loops,
        duration_s: args.duration,
    };
    let list = match (&args.suite, args.cmd.is_empty()) {
        (Some(s), _) => s.clone(),
        (None, true) => workloads::DEFAULT_SUITES.to_string(),
        (None, false) => String::new(),
    };
    let mut skipped = vec![];
    let mut suites = workloads::resolve(&list, &sc, &mut skipped).map_err(usage)?;
    if let Some(re) = &args.metric {
        regex::Regex::new(re).map_err(|e| usage(format!("--metric: bad regex: {e}")))?;
    }
    for spec in &args.cmd {
        let Some((name, command)) = spec.split_once('=') else {
            return Err(usage(format!("--cmd '{spec}': expected NAME=COMMAND")));
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(usage(format!("--cmd name '{name}' must be letters, digits, - _ .")));
        }
        if suites.iter().any(|s| s.name == name) || workloads::BUILTIN.contains(&name) {
            return Err(usage(format!("--cmd name '{name}' clashes with a suite name")));
        }
        if command.trim().is_empty() {
            return Err(usage(format!("--cmd '{spec}': empty command")));
        }
        suites.push(workloads::custom(name, command, args.metric.as_deref(), args.higher_is_better));
    }
    if suites.is_empty() {
        let why = skipped.iter().map(|k| format!("{}: {}", k.suite, k.reason)).collect::<Vec<_>>().join("; ");
        return Err(usage(format!("no suite can run here ({why})")));
    }
    Ok((suites, skipped))
}

fn nproc() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn host_info() -> HostInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, m)| m.trim().to_string())
        .unwrap_or_default();
    let mut llcs: Vec<String> = vec![];
    if let Ok(rd) = std::fs::read_dir("/sys/devices/system/cpu") {
        let mut v: Vec<String> = rd
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("cache/index3/shared_cpu_list")).ok())
            .map(|s| s.trim().to_string())
            .collect();
        v.sort();
        v.dedup();
        llcs = v;
    }
    HostInfo {
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string(),
        nproc: nproc(),
        cpu_model,
        llcs,
        scx_sis_version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// Local time as (YYYY-MM-DD HH:MM:SS, YYYY-MM-DD-HHMMSS).
fn local_time() -> (String, String) {
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        let (y, mo, d, h, mi, s) = (tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        (format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}"), format!("{y:04}-{mo:02}-{d:02}-{h:02}{mi:02}{s:02}"))
    }
}

fn fmt_secs(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Is the system fit to attach schedulers? BenchUsageError if not.
fn preflight() -> Result<()> {
    if !Path::new(sched::SCX_SYSFS).exists() {
        let rel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        return Err(usage(format!(
            "this kernel ({}) has no sched_ext: {} is missing; run the benchmarks in a VM on a sched_ext kernel (bench/run-vm.sh)",
            rel.trim(),
            sched::SCX_SYSFS
        )));
    }
    if unsafe { libc::geteuid() } != 0 {
        return Err(usage("scx_sis bench must run as root (it attaches and detaches sched_ext schedulers)"));
    }
    let st = sched::state();
    if st != "disabled" {
        return Err(usage(format!(
            "a sched_ext scheduler ({}) is already attached (state: {st}); stop it first: the baseline needs the fair class",
            sched::ops()
        )));
    }
    Ok(())
}

fn plan_text(variants: &[Variant], suites: &[Suite], skipped: &[Skipped], args: &BenchArgs) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "variants (columns, interleaved in this order):");
    for v in variants {
        let _ = writeln!(o, "  {:<14} {}", v.name, v.describe());
    }
    let _ = writeln!(o, "suites:");
    for s in suites {
        let _ = writeln!(o, "  {} [{}, {}; {}]", s.name, s.metric, s.unit, s.direction.mean_name());
        if let Some(srv) = &s.server {
            let _ = writeln!(o, "    server: {}", srv.command.join(" "));
        }
        for p in &s.params {
            let _ = writeln!(o, "    {:<10} {}", p.label, p.command.join(" "));
        }
    }
    for k in skipped {
        let _ = writeln!(o, "  {}: skipped: {}", k.suite, k.reason);
    }
    let plan = runner::Plan { variants, suites, runs: args.runs, warmup: args.warmup };
    let _ = writeln!(
        o,
        "runs: {} ({} measured + {} warm-up per variant and parameter)",
        plan.total(),
        args.runs,
        args.warmup
    );
    o
}

/// Write table.txt and the plots of `res` into `dir`; returns the table text.
fn render(res: &Results, dir: &Path) -> Result<String> {
    let table = report::format_report(res);
    std::fs::write(dir.join("table.txt"), &table).with_context(|| format!("writing {}/table.txt", dir.display()))?;
    std::fs::write(dir.join("runs.csv"), report::to_csv(res))
        .with_context(|| format!("writing {}/runs.csv", dir.display()))?;
    for s in &res.suites {
        let p = dir.join(format!("{}.png", runner::safe(&s.name)));
        if let Err(e) = plot::write_png(res, s, &p) {
            eprintln!("scx_sis bench: warning: no plot for {}: {e:#}", s.name);
        }
    }
    Ok(table)
}

/// Entry of `scx_sis bench`.
pub fn run(args: &BenchArgs) -> Result<()> {
    if let Some(dir) = &args.report {
        let path = dir.join("results.json");
        if !path.is_file() {
            return Err(usage(format!("--report {}: no results.json there", dir.display())));
        }
        let res = report::read_json(&path)?;
        let table = render(&res, dir)?;
        print!("{table}");
        return Ok(());
    }
    if args.runs == 0 {
        return Err(usage("--runs must be at least 1"));
    }
    if args.runs < 2 {
        eprintln!("scx_sis bench: note: with --runs 1 no significance can be computed");
    }
    let variants = build_variants(args, &|b| workloads::which(b))?;
    let (suites, skipped) = build_suites(args, nproc())?;
    for k in &skipped {
        eprintln!("scx_sis bench: {}: skipped: {}", k.suite, k.reason);
    }
    if args.dry_run {
        print!("{}", plan_text(&variants, &suites, &skipped, args));
        return Ok(());
    }
    preflight()?;
    let scx_sis = match &args.scx_sis_bin {
        Some(p) => workloads::which(&p.to_string_lossy())
            .and_then(|p| p.canonicalize().ok())
            .ok_or_else(|| usage(format!("--scx-sis-bin {}: no such executable", p.display())))?,
        None => std::env::current_exe().context("locating the scx_sis binary")?,
    };

    let (created, stamp) = local_time();
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("bench-results").join(&stamp));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let out = out.canonicalize().unwrap_or(out);

    let abort = Arc::new(AtomicBool::new(false));
    {
        let a = abort.clone();
        if let Err(e) = ctrlc::set_handler(move || a.store(true, Ordering::Relaxed)) {
            eprintln!("scx_sis bench: warning: no ^C handler ({e}); interrupting may leave partial files");
        }
    }

    let mut res = Results {
        format: FORMAT_VERSION,
        created,
        host: host_info(),
        config: Config {
            runs: args.runs,
            warmup: args.warmup,
            quick: args.quick,
            command_line: std::env::args().collect(),
        },
        variants: variants.clone(),
        suites: suites.clone(),
        skipped,
        runs: vec![],
        aborted: None,
        complete: false,
    };
    let json_path = out.join("results.json");
    report::write_json(&res, &json_path)?;
    eprint!("{}", plan_text(&variants, &suites, &res.skipped, args));
    eprintln!("scx_sis bench: results in {}", out.display());

    let mut ctl = sched::SysfsController::new(scx_sis, out.join("logs"), Duration::from_secs(args.attach_timeout));
    let mut exec = workloads::ProcessExecutor { abort: abort.clone() };
    let plan = runner::Plan { variants: &variants, suites: &suites, runs: args.runs, warmup: args.warmup };
    let mut records = vec![];
    let outcome =
        runner::run_plan(&plan, &mut ctl, &mut exec, &out, &abort, &mut records, &mut |done, total, r, per_run| {
            let what = match (r.ok, r.value) {
                (true, Some(v)) => format!("{v}"),
                _ => format!("FAILED: {}", r.error.as_deref().unwrap_or("?")),
            };
            let eta = fmt_secs(per_run * (total - done) as f64);
            eprintln!(
                "[bench {done}/{total}] {} {} {} {}: {what} (ETA {eta})",
                r.suite,
                r.param,
                r.variant,
                if r.warmup { "warm-up".to_string() } else { format!("round {}", r.round + 1 - args.warmup) }
            );
            if let Some(e) = &r.telemetry_error {
                eprintln!("[bench] note: no scx_sis telemetry for that run: {e}");
            }
            let _ = std::io::stderr().flush();
            // keep results.json current, so a killed session still leaves its runs
            if let Err(e) = append_run(&json_path, r) {
                eprintln!("[bench] warning: updating {}: {e:#}", json_path.display());
            }
        });
    drop(ctl); // detaches anything still attached
    res.runs = records;
    match &outcome {
        Ok(()) => res.complete = true,
        Err(e) => res.aborted = Some(format!("{e:#}")),
    }
    report::write_json(&res, &json_path)?;
    let table = render(&res, &out)?;
    print!("{table}");
    eprintln!("scx_sis bench: wrote {}/{{results.json,runs.csv,table.txt,*.png}}", out.display());
    let failed = res.runs.iter().filter(|r| !r.ok).count();
    if failed > 0 {
        eprintln!("scx_sis bench: {failed} of {} runs FAILED (listed under each table)", res.runs.len());
    }
    outcome.context("benchmark session stopped early (the results so far are written)")
}

/// Add one run to results.json on disk (read-modify-write; the file is small).
fn append_run(path: &Path, r: &model::RunRecord) -> Result<()> {
    let mut res = report::read_json(path)?;
    res.runs.push(r.clone());
    report::write_json(&res, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn args(a: &[&str]) -> BenchArgs {
        Cli::try_parse_from(std::iter::once("bench").chain(a.iter().copied())).unwrap().bench
    }

    fn is_usage(e: &anyhow::Error) -> bool {
        e.root_cause().downcast_ref::<BenchUsageError>().is_some()
    }

    #[test]
    fn shell_split() {
        assert_eq!(split_args("--sis-mode linear").unwrap(), ["--sis-mode", "linear"]);
        assert_eq!(split_args(" -a 'b c' \"d \\\"e\" f\\ g ''").unwrap(), ["-a", "b c", "d \"e", "f g", ""]);
        assert!(split_args("'x").is_err());
        assert_eq!(split_args("").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn variants_from_args() {
        let a = args(&[
            "--variant",
            "nofilter=--sis-mode linear",
            "--variant",
            "nosteal=--steal off",
            "--peer",
            "scx_bpfland",
            "--peer",
            "lowlat=scx_bpfland -m performance",
        ]);
        let found = |b: &str| (b == "scx_bpfland").then(|| PathBuf::from("/usr/bin/scx_bpfland"));
        let vs = build_variants(&a, &found).unwrap();
        let names: Vec<&str> = vs.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["EEVDF", "scx_sis", "nofilter", "nosteal", "scx_bpfland", "lowlat"]);
        assert_eq!(vs[2].kind, VariantKind::ScxSis { args: vec!["--sis-mode".into(), "linear".into()] });
        assert_eq!(
            vs[5].kind,
            VariantKind::Peer { binary: "/usr/bin/scx_bpfland".into(), args: vec!["-m".into(), "performance".into()] }
        );
        assert_eq!(vs[5].describe(), "/usr/bin/scx_bpfland -m performance");

        let a = args(&["--no-default-variant", "--variant", "x=--slice-us 1000"]);
        let vs = build_variants(&a, &found).unwrap();
        assert_eq!(vs.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["EEVDF", "x"]);

        for bad in [
            vec!["--variant", "nofilter"],
            vec!["--variant", "EEVDF=--x"],
            vec!["--variant", "a b=--x"],
            vec!["--variant", "scx_sis=--x"],
            vec!["--peer", "scx_nonexistent"],
            vec!["--peer", "scx_bpfland", "--peer", "scx_bpfland"],
            vec!["--no-default-variant"],
        ] {
            let e = build_variants(&args(&bad), &found).unwrap_err();
            assert!(is_usage(&e), "{bad:?}: {e}");
        }
        let e = build_variants(&args(&["--peer", "scx_nonexistent"]), &found).unwrap_err();
        assert!(e.to_string().contains("scx_nonexistent: not found on PATH"), "{e}");
    }

    #[test]
    fn suites_from_args() {
        let (s, _) = build_suites(&args(&["--suite", "hackbench", "--quick"]), 8).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].params.len(), 2);
        let (s, _) =
            build_suites(&args(&["--suite", "hackbench", "--hackbench-groups", "1,3", "--hackbench-loops", "7"]), 8)
                .unwrap();
        assert_eq!(s[0].params[1].command.join(" "), "hackbench -p -g 3 -l 7");
        // --cmd alone: only the custom suite
        let (s, _) = build_suites(&args(&["--cmd", "sleepy=sleep 0.1"]), 8).unwrap();
        assert_eq!(s.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["sleepy"]);
        let (s, _) = build_suites(
            &args(&[
                "--cmd",
                "ops=echo ops: 5",
                "--metric",
                "ops: (\\d+)",
                "--higher-is-better",
                "--suite",
                "hackbench",
            ]),
            8,
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].direction, statistics::Direction::HigherIsBetter);
        for bad in [
            vec!["--suite", "nope"],
            vec!["--cmd", "noequals"],
            vec!["--cmd", "hackbench=true"],
            vec!["--cmd", "x=true", "--metric", "("],
            vec!["--suite", "hackbench", "--hackbench-groups", "1,x"],
        ] {
            let e = build_suites(&args(&bad), 8).unwrap_err();
            assert!(is_usage(&e), "{bad:?}: {e}");
        }
        // --metric needs --cmd (clap)
        assert!(Cli::try_parse_from(["bench", "--metric", "x"]).is_err());
    }

    #[test]
    fn usage_errors_downcast_through_context() {
        let e: anyhow::Error = usage("bad");
        let e = e.context("while doing x");
        assert_eq!(e.root_cause().downcast_ref::<BenchUsageError>().unwrap().0, "bad");
        // run() itself: --runs 0 and an unknown suite are usage errors before any system check
        assert!(is_usage(&run(&args(&["--runs", "0"])).unwrap_err()));
        assert!(is_usage(&run(&args(&["--suite", "bogus", "--dry-run"])).unwrap_err()));
        assert!(is_usage(&run(&args(&["--report", "/nonexistent-dir"])).unwrap_err()));
        // no sched_ext here (the dev host and CI): a one-line usage error, nothing written
        if !Path::new(sched::SCX_SYSFS).exists() {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("out");
            let e = run(&args(&["--suite", "hackbench", "--quick", "--out", out.to_str().unwrap()])).unwrap_err();
            assert!(is_usage(&e), "{e:#}");
            assert!(e.to_string().contains("has no sched_ext"), "{e}");
            assert!(!out.exists());
        }
    }

    #[test]
    fn dry_run_plans_without_attaching() {
        run(&args(&["--suite", "hackbench", "--quick", "--dry-run", "--variant", "nofilter=--sis-mode linear"]))
            .unwrap();
        let vs = build_variants(&args(&["--variant", "nofilter=--sis-mode linear"]), &|_| None).unwrap();
        let (s, k) = build_suites(&args(&["--suite", "hackbench", "--quick"]), 8).unwrap();
        let text = plan_text(&vs, &s, &k, &args(&["--runs", "2", "--warmup", "0"]));
        assert!(text.contains("hackbench -p -g 2 -l 20"), "{text}");
        assert!(text.contains("runs: 12 (2 measured + 0 warm-up"), "{text}");
    }

    #[test]
    fn report_mode_rebuilds_files() {
        let dir = tempfile::tempdir().unwrap();
        let res = report::tests::sample();
        report::write_json(&res, &dir.path().join("results.json")).unwrap();
        run(&args(&["--report", dir.path().to_str().unwrap()])).unwrap();
        let table = std::fs::read_to_string(dir.path().join("table.txt")).unwrap();
        assert_eq!(table, report::format_report(&res));
        assert!(dir.path().join("runs.csv").is_file());
        if plot::ensure_font().is_ok() {
            assert!(dir.path().join("hackbench.png").is_file());
        }
    }

    #[test]
    fn time_formats() {
        assert_eq!(fmt_secs(59.4), "59s");
        assert_eq!(fmt_secs(200.0), "3m20s");
        assert_eq!(fmt_secs(3700.0), "1h01m");
        let (a, b) = local_time();
        assert_eq!((a.len(), b.len()), (19, 17));
    }
}
