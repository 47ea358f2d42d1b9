//! The interleaved run loop: for each suite, each parameter, each round (warm-ups first), every
//! variant in turn (A B C A B C ...), so drift over time hits every variant alike.
//!
//! Or in blocks (`Plan::block` rounds each): every variant attached once per block runs every
//! suite and parameter of those rounds before the next one attaches, and each block starts with
//! the next variant (A B C, B C A, C A B, ...). Few attach/detach transitions, for a rig where
//! each one risks the guest (multi-threaded TCG), at the price of coarser interleaving.
//!
//! The scheduler side is the `Controller` trait (real: `sched::SysfsController`; tests: a fake),
//! the workload side the `Executor` trait, so the order, failure marking and grouping are
//! testable without sched_ext.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::host::SystemMark;
use super::model::{RunRecord, Suite, Variant};
use super::workloads::Executor;

/// A controller error: `Run` fails this run only; `Fatal` stops the session (e.g. the system
/// is left with a scheduler attached that we cannot remove).
#[derive(Debug)]
pub enum CtlError {
    Run(String),
    Fatal(anyhow::Error),
}

/// What the controller learned after the workload.
#[derive(Debug, Default)]
pub struct AfterRun {
    /// Set if the run must not count (scheduler died, detached, re-attached, ...).
    pub failure: Option<String>,
    pub telemetry: Option<serde_json::Value>,
    pub telemetry_error: Option<String>,
}

/// Attaches and detaches the variants.
pub trait Controller {
    /// Make `v` the running scheduler (for the fair class: check none is attached).
    /// Returns the seconds it took to attach (None for the fair class).
    fn attach(&mut self, v: &Variant, tag: &str) -> Result<Option<f64>, CtlError>;
    /// Right after the workload: is `v` still the one running, unchanged since attach?
    fn after_workload(&mut self, v: &Variant) -> AfterRun;
    /// Remove `v` (SIGINT, wait for `disabled`). Ok(Some(problem)) fails the run but not the session.
    fn detach(&mut self, v: &Variant) -> Result<Option<String>, CtlError>;
}

/// What to run.
pub struct Plan<'a> {
    pub variants: &'a [Variant],
    pub suites: &'a [Suite],
    pub runs: usize,
    pub warmup: usize,
    /// Rounds per block; 0: no blocks, every run attaches its own scheduler.
    pub block: usize,
}

impl Plan<'_> {
    pub fn total(&self) -> usize {
        self.suites.iter().map(|s| s.params.len()).sum::<usize>() * (self.runs + self.warmup) * self.variants.len()
    }
}

/// Consecutive attach failures after which a variant's remaining runs are marked failed
/// without trying (each try can take the whole attach timeout).
pub const MAX_ATTACH_FAILURES: usize = 3;

/// File-name-safe form of a label.
pub fn safe(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' }).collect()
}

/// Where a run's workload output goes, relative to the results dir.
pub fn raw_rel_path(r: &RunRecord) -> PathBuf {
    PathBuf::from("raw").join(safe(&r.suite)).join(format!(
        "{}-{}-r{}{}.txt",
        safe(&r.param),
        safe(&r.variant),
        r.round,
        if r.warmup { "w" } else { "" }
    ))
}

fn now_unix() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// The record of the next run, before it runs.
fn new_record(
    records: &[RunRecord],
    plan: &Plan,
    suite: &Suite,
    param: &super::model::Param,
    v: &Variant,
    round: usize,
) -> RunRecord {
    RunRecord {
        seq: records.len() + 1,
        suite: suite.name.clone(),
        param: param.label.clone(),
        variant: v.name.clone(),
        round,
        warmup: round < plan.warmup,
        started: now_unix(),
        ..Default::default()
    }
}

/// Progress report after each run: (done, total, the record, seconds per run so far).
pub type Progress<'a> = dyn FnMut(usize, usize, &RunRecord, f64) + 'a;

/// Runs the plan, appending every run (ok or failed) to `records` as it finishes and calling
/// `progress` after each. Stops early with Err on a fatal controller error or when `abort` is
/// set; `records` then holds what was done.
pub fn run_plan(
    plan: &Plan,
    ctl: &mut dyn Controller,
    exec: &mut dyn Executor,
    out_dir: &Path,
    abort: &AtomicBool,
    records: &mut Vec<RunRecord>,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    if plan.block > 0 {
        return run_blocks(plan, ctl, exec, out_dir, abort, records, progress);
    }
    let total = plan.total();
    let t0 = Instant::now();
    let mut done = 0usize;
    let mut attach_failures = vec![0usize; plan.variants.len()];
    for suite in plan.suites {
        for param in &suite.params {
            for round in 0..plan.warmup + plan.runs {
                for (vi, v) in plan.variants.iter().enumerate() {
                    if abort.load(Ordering::Relaxed) {
                        anyhow::bail!("interrupted");
                    }
                    let mut rec = new_record(records, plan, suite, param, v, round);
                    let fatal = run_one(suite, param, v, &mut rec, ctl, exec, out_dir, &mut attach_failures[vi]);
                    records.push(rec);
                    done += 1;
                    let per_run = t0.elapsed().as_secs_f64() / done as f64;
                    progress(done, total, records.last().unwrap(), per_run);
                    if let Some(e) = fatal {
                        return Err(e);
                    }
                }
            }
        }
    }
    Ok(())
}

/// `run_plan` in blocks: per block, per variant (rotating), one attach, then the block's rounds of
/// every suite and parameter, then one detach.
fn run_blocks(
    plan: &Plan,
    ctl: &mut dyn Controller,
    exec: &mut dyn Executor,
    out_dir: &Path,
    abort: &AtomicBool,
    records: &mut Vec<RunRecord>,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let total = plan.total();
    let t0 = Instant::now();
    let rounds = plan.warmup + plan.runs;
    let nv = plan.variants.len();
    let mut attach_failures = vec![0usize; nv];
    for (b, first) in (0..rounds).step_by(plan.block).enumerate() {
        let block_rounds = first..(first + plan.block).min(rounds);
        for k in 0..nv {
            let vi = (b + k) % nv;
            let v = &plan.variants[vi];
            if abort.load(Ordering::Relaxed) {
                anyhow::bail!("interrupted");
            }
            let runs: Vec<(&Suite, &super::model::Param, usize)> = block_rounds
                .clone()
                .flat_map(|round| plan.suites.iter().flat_map(move |s| s.params.iter().map(move |p| (s, p, round))))
                .collect();
            let new_rec = |records: &Vec<RunRecord>, s: &Suite, p: &super::model::Param, round: usize| {
                new_record(records, plan, s, p, v, round)
            };
            let mut finish = |records: &mut Vec<RunRecord>, rec: RunRecord| {
                records.push(rec);
                let done = records.len();
                progress(done, total, records.last().unwrap(), t0.elapsed().as_secs_f64() / done as f64);
            };
            // attach once for the whole block; if that fails, every run of it is marked
            let attach = if attach_failures[vi] >= MAX_ATTACH_FAILURES {
                Err(format!("not run: {} failed to attach {MAX_ATTACH_FAILURES} times in a row", v.name))
            } else {
                match ctl.attach(v, &format!("block {b}")) {
                    Ok(secs) => {
                        attach_failures[vi] = 0;
                        Ok(secs)
                    }
                    Err(CtlError::Run(msg)) => {
                        attach_failures[vi] += 1;
                        Err(format!("attach failed: {msg}"))
                    }
                    Err(CtlError::Fatal(e)) => {
                        let (s, p, round) = runs[0];
                        let mut rec = new_rec(records, s, p, round);
                        fail(&mut rec, format!("{e:#}"));
                        finish(records, rec);
                        return Err(e);
                    }
                }
            };
            let attach_s = match attach {
                Ok(secs) => secs,
                Err(msg) => {
                    for &(s, p, round) in &runs {
                        let mut rec = new_rec(records, s, p, round);
                        fail(&mut rec, msg.clone());
                        finish(records, rec);
                    }
                    continue;
                }
            };
            let mut gone: Option<String> = None;
            for (i, &(s, p, round)) in runs.iter().enumerate() {
                let mut rec = new_rec(records, s, p, round);
                if i == 0 {
                    rec.attach_s = attach_s;
                }
                if abort.load(Ordering::Relaxed) {
                    break;
                }
                // a scheduler that died mid-block is not measured again: its runs are marked
                if let Some(why) = &gone {
                    fail(&mut rec, format!("not run: {why}"));
                    finish(records, rec);
                    continue;
                }
                gone = measure(s, p, v, &mut rec, ctl, exec, out_dir);
                finish(records, rec);
            }
            match ctl.detach(v) {
                Ok(None) => {}
                Ok(Some(msg)) | Err(CtlError::Run(msg)) => {
                    if let Some(last) = records.last_mut() {
                        fail(last, msg);
                    }
                }
                Err(CtlError::Fatal(e)) => {
                    if let Some(last) = records.last_mut() {
                        fail(last, format!("{e:#}"));
                    }
                    return Err(e);
                }
            }
            if abort.load(Ordering::Relaxed) {
                anyhow::bail!("interrupted");
            }
        }
    }
    Ok(())
}

fn fail(rec: &mut RunRecord, msg: String) {
    rec.ok = false;
    rec.error = Some(match rec.error.take() {
        Some(prev) => format!("{prev}; {msg}"),
        None => msg,
    });
}

/// The workload of one run under the attached `v`, and the controller's check after it; returns
/// that check's failure (the scheduler died, detached, ...).
fn measure(
    suite: &Suite,
    param: &super::model::Param,
    v: &Variant,
    rec: &mut RunRecord,
    ctl: &mut dyn Controller,
    exec: &mut dyn Executor,
    out_dir: &Path,
) -> Option<String> {
    let raw = raw_rel_path(rec);
    rec.raw = Some(raw.to_string_lossy().into_owned());
    let before = SystemMark::now();
    let measured = exec.run(suite, param, &out_dir.join(&raw));
    rec.system = before.delta(SystemMark::now());
    let after = ctl.after_workload(v);
    rec.telemetry = after.telemetry;
    rec.telemetry_error = after.telemetry_error;
    match measured {
        Ok(m) => {
            rec.ok = true;
            rec.value = Some(m.value);
            rec.wall_s = Some(m.wall_s);
            rec.work = m.work;
            rec.window = m.window;
        }
        Err(msg) => fail(rec, format!("workload: {msg}")),
    }
    if let Some(msg) = &after.failure {
        fail(rec, msg.clone());
    }
    after.failure
}

/// One run; fills `rec`. Returns a fatal error if the session must stop.
#[allow(clippy::too_many_arguments)]
fn run_one(
    suite: &Suite,
    param: &super::model::Param,
    v: &Variant,
    rec: &mut RunRecord,
    ctl: &mut dyn Controller,
    exec: &mut dyn Executor,
    out_dir: &Path,
    attach_failures: &mut usize,
) -> Option<anyhow::Error> {
    if *attach_failures >= MAX_ATTACH_FAILURES {
        fail(rec, format!("not run: {} failed to attach {MAX_ATTACH_FAILURES} times in a row", v.name));
        return None;
    }
    let tag = format!("{} {} round {}", suite.name, param.label, rec.round);
    match ctl.attach(v, &tag) {
        Ok(secs) => {
            *attach_failures = 0;
            rec.attach_s = secs;
        }
        Err(CtlError::Run(msg)) => {
            *attach_failures += 1;
            fail(rec, format!("attach failed: {msg}"));
            return None;
        }
        Err(CtlError::Fatal(e)) => {
            fail(rec, format!("{e:#}"));
            return Some(e);
        }
    }
    measure(suite, param, v, rec, ctl, exec, out_dir);
    match ctl.detach(v) {
        Ok(None) => {}
        Ok(Some(msg)) => fail(rec, msg),
        Err(CtlError::Run(msg)) => fail(rec, msg),
        Err(CtlError::Fatal(e)) => {
            fail(rec, format!("{e:#}"));
            return Some(e);
        }
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{Param, Parser, VariantKind};
    use crate::statistics::Direction;
    use crate::workloads::Measurement;
    use std::collections::HashMap;

    /// Fake controller: logs every call; failures injected per (variant, call number).
    #[derive(Default)]
    pub struct FakeCtl {
        pub log: Vec<String>,
        pub attached: Option<String>,
        /// variant -> attach calls (1-based) that fail
        pub fail_attach: HashMap<String, Vec<usize>>,
        /// variant -> attach call numbers during which the scheduler "dies"
        pub die_during: HashMap<String, Vec<usize>>,
        /// variant -> attach call number whose detach is fatal
        pub fatal_detach: HashMap<String, usize>,
        pub attach_calls: HashMap<String, usize>,
    }

    impl Controller for FakeCtl {
        fn attach(&mut self, v: &Variant, _tag: &str) -> Result<Option<f64>, CtlError> {
            assert!(self.attached.is_none(), "attach while {:?} attached", self.attached);
            let n = self.attach_calls.entry(v.name.clone()).or_default();
            *n += 1;
            self.log.push(format!("attach {}", v.name));
            if self.fail_attach.get(&v.name).is_some_and(|l| l.contains(n)) {
                return Err(CtlError::Run("not enabled after 20 s".into()));
            }
            self.attached = Some(v.name.clone());
            Ok(if v.kind == VariantKind::Fair { None } else { Some(0.5) })
        }
        fn after_workload(&mut self, v: &Variant) -> AfterRun {
            let n = self.attach_calls[&v.name];
            let mut a = AfterRun::default();
            if self.die_during.get(&v.name).is_some_and(|l| l.contains(&n)) {
                a.failure = Some("scheduler exited during the run (status 1)".into());
            }
            if v.is_scx_sis() {
                a.telemetry =
                    Some(serde_json::json!({"recall_pct": 90.0 + n as f64, "probes_per_scan": 1.5, "fp_pct": 2.0}));
            }
            a
        }
        fn detach(&mut self, v: &Variant) -> Result<Option<String>, CtlError> {
            assert_eq!(self.attached.as_deref(), Some(v.name.as_str()));
            self.attached = None;
            self.log.push(format!("detach {}", v.name));
            if self.fatal_detach.get(&v.name) == Some(&self.attach_calls[&v.name]) {
                return Err(CtlError::Fatal(anyhow::anyhow!("{} still attached after SIGKILL", v.name)));
            }
            Ok(None)
        }
    }

    /// Fake executor: value = 1.0 + 0.1 * (number of runs so far of that variant); logs runs.
    #[derive(Default)]
    pub struct FakeExec {
        pub log: Vec<String>,
        pub count: usize,
        pub fail_on: Vec<usize>,
    }

    impl Executor for FakeExec {
        fn run(&mut self, suite: &Suite, param: &Param, _raw: &Path) -> Result<Measurement, String> {
            self.count += 1;
            self.log.push(format!("run {} {}", suite.name, param.label));
            if self.fail_on.contains(&self.count) {
                return Err("hackbench failed (exit status: 1): Cannot fork".into());
            }
            Ok(Measurement { value: self.count as f64, wall_s: 0.1, work: None, window: None })
        }
    }

    pub fn variants() -> Vec<Variant> {
        vec![
            Variant::fair(),
            Variant { name: "scx_sis".into(), kind: VariantKind::ScxSis { args: vec![] } },
            Variant { name: "bpfland".into(), kind: VariantKind::Peer { binary: "scx_bpfland".into(), args: vec![] } },
        ]
    }

    pub fn suite(name: &str, params: &[&str]) -> Suite {
        Suite {
            name: name.into(),
            title: format!("{name}-title"),
            metric: "time".into(),
            unit: "s".into(),
            direction: Direction::LowerIsBetter,
            ideal: None,
            parser: Parser::WallTime,
            server: None,
            timeout_s: 10,
            params: params.iter().map(|p| Param { label: p.to_string(), command: vec!["true".into()] }).collect(),
        }
    }

    fn go(
        ctl: &mut FakeCtl,
        exec: &mut FakeExec,
        suites: &[Suite],
        runs: usize,
        warmup: usize,
    ) -> (anyhow::Result<()>, Vec<RunRecord>, Vec<(usize, usize)>) {
        let vs = variants();
        let plan = Plan { variants: &vs, suites, runs, warmup, block: 0 };
        let mut recs = vec![];
        let mut prog = vec![];
        let abort = AtomicBool::new(false);
        let r = run_plan(&plan, ctl, exec, Path::new("/nonexistent"), &abort, &mut recs, &mut |d, t, _, _| {
            prog.push((d, t))
        });
        (r, recs, prog)
    }

    #[test]
    fn interleaves_variants_after_warmups() {
        let (mut ctl, mut exec) = (FakeCtl::default(), FakeExec::default());
        let suites = [suite("hackbench", &["1", "4"]), suite("tbench", &["2"])];
        let (r, recs, prog) = go(&mut ctl, &mut exec, &suites, 2, 1);
        r.unwrap();
        // 3 params x 3 rounds x 3 variants
        assert_eq!(recs.len(), 27);
        assert_eq!(prog.last(), Some(&(27, 27)));
        let order: Vec<String> = recs
            .iter()
            .map(|r| format!("{}/{}/{}/{}{}", r.suite, r.param, r.round, r.variant, if r.warmup { "w" } else { "" }))
            .collect();
        assert_eq!(
            order[..9],
            [
                "hackbench/1/0/EEVDFw",
                "hackbench/1/0/scx_sisw",
                "hackbench/1/0/bpflandw",
                "hackbench/1/1/EEVDF",
                "hackbench/1/1/scx_sis",
                "hackbench/1/1/bpfland",
                "hackbench/1/2/EEVDF",
                "hackbench/1/2/scx_sis",
                "hackbench/1/2/bpfland",
            ]
        );
        assert_eq!(order[9], "hackbench/4/0/EEVDFw");
        assert_eq!(order[26], "tbench/2/2/bpfland");
        // every run is attach -> workload -> detach, never overlapping
        assert_eq!(ctl.log[..4], ["attach EEVDF", "detach EEVDF", "attach scx_sis", "detach scx_sis"]);
        assert_eq!(ctl.log.len(), 54);
        assert!(recs.iter().all(|r| r.ok));
        assert_eq!(recs.iter().map(|r| r.seq).collect::<Vec<_>>(), (1..=27).collect::<Vec<_>>());
        // telemetry only for scx_sis
        assert!(recs.iter().all(|r| r.telemetry.is_some() == (r.variant == "scx_sis")));
        assert_eq!(recs[1].raw.as_deref(), Some("raw/hackbench/1-scx_sis-r0w.txt"));
        assert_eq!(recs[0].attach_s, None);
        assert_eq!(recs[1].attach_s, Some(0.5));
    }

    fn go_blocks(ctl: &mut FakeCtl, suites: &[Suite], runs: usize, warmup: usize, block: usize) -> Vec<RunRecord> {
        let vs = variants();
        let plan = Plan { variants: &vs, suites, runs, warmup, block };
        let mut recs = vec![];
        let abort = AtomicBool::new(false);
        let mut exec = FakeExec::default();
        run_plan(&plan, ctl, &mut exec, Path::new("/x"), &abort, &mut recs, &mut |_, _, _, _| {}).unwrap();
        recs
    }

    #[test]
    fn blocks_attach_each_variant_once_per_block_in_rotating_order() {
        let mut ctl = FakeCtl::default();
        let suites = [suite("hackbench", &["1", "4"]), suite("tbench", &["2"])];
        // 1 warm-up + 3 runs in blocks of 2 rounds: 2 blocks
        let recs = go_blocks(&mut ctl, &suites, 3, 1, 2);
        assert_eq!(recs.len(), 3 * 4 * 3);
        assert!(recs.iter().all(|r| r.ok));
        let attaches: Vec<&str> = ctl.log.iter().filter_map(|l| l.strip_prefix("attach ")).collect();
        assert_eq!(attaches, ["EEVDF", "scx_sis", "bpfland", "scx_sis", "bpfland", "EEVDF"]);
        // the first block of EEVDF: rounds 0 (warm-up) and 1, every suite and parameter
        let first: Vec<String> =
            recs[..6].iter().map(|r| format!("{}/{}/{}/{}", r.variant, r.suite, r.param, r.round)).collect();
        assert_eq!(
            first,
            [
                "EEVDF/hackbench/1/0",
                "EEVDF/hackbench/4/0",
                "EEVDF/tbench/2/0",
                "EEVDF/hackbench/1/1",
                "EEVDF/hackbench/4/1",
                "EEVDF/tbench/2/1"
            ]
        );
        assert!(recs[..3].iter().all(|r| r.warmup) && recs[3..6].iter().all(|r| !r.warmup));
        // every variant got every (suite, param, round) exactly once
        for v in ["EEVDF", "scx_sis", "bpfland"] {
            let mut got: Vec<(String, usize)> =
                recs.iter().filter(|r| r.variant == v).map(|r| (format!("{}/{}", r.suite, r.param), r.round)).collect();
            got.sort();
            got.dedup();
            assert_eq!(got.len(), 12, "{v}");
        }
        // the attach time is on the first run of each attach only
        assert_eq!(recs.iter().filter(|r| r.attach_s.is_some()).count(), 4);
        assert_eq!(recs.iter().map(|r| r.seq).collect::<Vec<_>>(), (1..=36).collect::<Vec<_>>());
    }

    #[test]
    fn blocks_mark_what_a_dead_or_unattached_scheduler_did_not_run() {
        let mut ctl = FakeCtl::default();
        ctl.die_during.insert("scx_sis".into(), vec![1]);
        ctl.fail_attach.insert("bpfland".into(), vec![1]);
        let suites = [suite("hackbench", &["1", "4"])];
        let recs = go_blocks(&mut ctl, &suites, 4, 0, 2);
        let of = |v: &str| recs.iter().filter(|r| r.variant == v).collect::<Vec<_>>();
        let sis = of("scx_sis");
        // died during its first run of block 0: that run flagged, the rest of the block not run
        assert!(!sis[0].ok && sis[0].value.is_some());
        assert!(sis[1..4].iter().all(|r| !r.ok && r.error.as_deref().unwrap().starts_with("not run:")));
        assert!(sis[4..].iter().all(|r| r.ok), "block 1 attaches again");
        let bl = of("bpfland");
        assert!(bl[..4].iter().all(|r| !r.ok && r.error.as_deref().unwrap().starts_with("attach failed")));
        assert!(bl[4..].iter().all(|r| r.ok));
        assert!(of("EEVDF").iter().all(|r| r.ok));
        assert!(ctl.attached.is_none());
    }

    #[test]
    fn failures_are_marked_not_dropped() {
        let mut ctl = FakeCtl::default();
        ctl.die_during.insert("scx_sis".into(), vec![2]);
        ctl.fail_attach.insert("bpfland".into(), vec![1]);
        let mut exec = FakeExec { fail_on: vec![1], ..Default::default() };
        let suites = [suite("hackbench", &["1"])];
        let (r, recs, _) = go(&mut ctl, &mut exec, &suites, 2, 0);
        r.unwrap();
        assert_eq!(recs.len(), 6);
        // EEVDF round 0: the workload failed
        assert!(!recs[0].ok);
        assert!(recs[0].error.as_deref().unwrap().starts_with("workload: hackbench failed"));
        // scx_sis round 0 ok; round 1 (second attach) died during the run
        assert!(recs[1].ok);
        assert!(!recs[4].ok && recs[4].error.as_deref().unwrap().contains("exited during the run"));
        assert!(recs[4].value.is_some(), "the number is kept, flagged");
        // bpfland round 0: attach failed, no workload ran, no detach
        assert!(!recs[2].ok && recs[2].error.as_deref().unwrap().starts_with("attach failed"));
        assert_eq!(recs[2].value, None);
        assert!(recs[5].ok);
        assert_eq!(exec.log.len(), 5);
        assert_eq!(ctl.log.iter().filter(|l| l.starts_with("detach")).count(), 5);
    }

    #[test]
    fn repeated_attach_failures_stop_trying() {
        let mut ctl = FakeCtl::default();
        ctl.fail_attach.insert("bpfland".into(), vec![1, 2, 3, 4, 5]);
        let mut exec = FakeExec::default();
        let suites = [suite("hackbench", &["1"])];
        let (r, recs, _) = go(&mut ctl, &mut exec, &suites, 5, 0);
        r.unwrap();
        let bl: Vec<&RunRecord> = recs.iter().filter(|r| r.variant == "bpfland").collect();
        assert_eq!(bl.len(), 5);
        assert!(bl.iter().all(|r| !r.ok));
        assert_eq!(ctl.attach_calls["bpfland"], 3);
        assert!(bl[4].error.as_deref().unwrap().contains("3 times in a row"));
    }

    #[test]
    fn fatal_error_stops_and_keeps_records() {
        let mut ctl = FakeCtl::default();
        ctl.fatal_detach.insert("scx_sis".into(), 2);
        let mut exec = FakeExec::default();
        let suites = [suite("hackbench", &["1", "2"])];
        let (r, recs, _) = go(&mut ctl, &mut exec, &suites, 3, 0);
        assert!(r.unwrap_err().to_string().contains("still attached"));
        assert_eq!(recs.len(), 5);
        assert!(!recs[4].ok && recs[4].error.as_deref().unwrap().contains("still attached after SIGKILL"));
    }

    #[test]
    fn abort_flag_stops_before_the_next_run() {
        let vs = variants();
        let suites = [suite("hackbench", &["1"])];
        let plan = Plan { variants: &vs, suites: &suites, runs: 3, warmup: 0, block: 0 };
        let abort = AtomicBool::new(false);
        let mut recs = vec![];
        let (mut ctl, mut exec) = (FakeCtl::default(), FakeExec::default());
        let r = run_plan(&plan, &mut ctl, &mut exec, Path::new("/x"), &abort, &mut recs, &mut |d, _, _, _| {
            if d == 2 {
                abort.store(true, Ordering::Relaxed)
            }
        });
        assert_eq!(r.unwrap_err().to_string(), "interrupted");
        assert_eq!(recs.len(), 2);
        assert!(ctl.attached.is_none());
    }
}
