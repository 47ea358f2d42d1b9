//! A benchmark session, start to end: `scx_sis_bench` parses into a plan, checks the host,
//! runs the plan while keeping results.json current, and renders table.txt, runs.csv and plots;
//! or (--report) only renders an earlier session's results.json again, or (--pool) pools
//! sessions of one plan, a boot each.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use super::cgroups::CgTree;
use super::cli::{build_suites, build_variants, BenchArgs};
use super::host::{host_info, init_counters, local_time, nproc, preflight};
use super::model::{self, Config, Results, FORMAT_VERSION};
use super::plan::plan_text;
use super::{cg_scale, idle_scale, plot, pool, report, runner, sched, usage, wakelat, workloads};

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

/// The scx_sis binary of the scx_sis columns without --scx-sis-bin: the one beside this binary
/// (cargo builds both into one directory, meson installs both into bindir), else scx_sis on PATH.
fn scheduler_beside_us() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the scx_sis_bench binary")?;
    let beside = exe.with_file_name("scx_sis");
    if beside.is_file() {
        return Ok(beside);
    }
    workloads::which("scx_sis")
        .and_then(|p| p.canonicalize().ok())
        .ok_or_else(|| usage(format!("no scx_sis beside {} nor on PATH (give --scx-sis-bin)", exe.display())))
}

/// Entry of `scx_sis_bench`.
pub fn run(args: &BenchArgs) -> Result<()> {
    if !args.pool.is_empty() {
        return pool::run(&args.pool);
    }
    if let Some(dir) = &args.report {
        let path = dir.join("results.json");
        if !path.is_file() {
            return Err(usage(format!("--report {}: no results.json there", dir.display())));
        }
        let mut res = report::read_json(&path)?;
        // a session from before the median was kept: from its histograms (results.json untouched)
        wakelat::derive_p50(&mut res, dir);
        let table = render(&res, dir)?;
        print!("{table}");
        return Ok(());
    }
    // host-only: no sched_ext preflight, nothing attached
    if idle_scale::requested(args)? {
        return idle_scale::run(args);
    }
    if cg_scale::requested(args)? {
        return cg_scale::run(args);
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
        None => scheduler_beside_us()?,
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
            block: args.block,
            bpf_time: args.bpf_time,
            lock_time: args.lock_time,
            cgroup_depth: args.cgroup_depth,
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

    for n in init_counters(args.bpf_time, args.lock_time) {
        eprintln!("scx_sis bench: note: {n}");
    }
    let mut ctl = sched::SysfsController::new(scx_sis, out.join("logs"), Duration::from_secs(args.attach_timeout));
    // --cgroup-depth: the chain stays until the session ends (its workloads gone by then)
    let deep = match args.cgroup_depth {
        0 => None,
        d => Some(CgTree::chain("scx_sis_bench_depth", d).context("--cgroup-depth")?),
    };
    let mut exec = workloads::ProcessExecutor { abort: abort.clone(), cgroup: deep.as_ref().map(|(_, d)| d.clone()) };
    let plan =
        runner::Plan { variants: &variants, suites: &suites, runs: args.runs, warmup: args.warmup, block: args.block };
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
    drop(deep); // the chain, empty now
    res.runs = records;
    wakelat::derive_p50(&mut res, &out);
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
    use crate::cli::tests::{args, is_usage};

    #[test]
    fn usage_errors_downcast_through_context() {
        let e: anyhow::Error = usage("bad");
        let e = e.context("while doing x");
        assert_eq!(scx_sis::error::as_usage(&e).unwrap().0, "bad");
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
    }
}
