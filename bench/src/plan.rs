//! The plan text: what a session will run (printed by --dry-run and at the start of a session).

use std::fmt::Write as _;

use super::cli::BenchArgs;
use super::model::{Skipped, Suite, Variant};
use super::runner;

pub fn plan_text(variants: &[Variant], suites: &[Suite], skipped: &[Skipped], args: &BenchArgs) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "variants (columns, interleaved in this order{}):",
        if args.block > 0 { ", rotating per block" } else { "" }
    );
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
    let plan = runner::Plan { variants, suites, runs: args.runs, warmup: args.warmup, block: args.block };
    let _ = writeln!(
        o,
        "runs: {} ({} measured + {} warm-up per variant and parameter)",
        plan.total(),
        args.runs,
        args.warmup
    );
    if args.block > 0 {
        let blocks = (args.runs + args.warmup).div_ceil(args.block);
        let _ = writeln!(o, "blocks: {blocks} of {} rounds, each variant attached once per block", args.block);
    }
    o
}
