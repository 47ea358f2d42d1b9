//! The verdict across boots (`--pool DIR...`): sessions of one plan, a boot each, pooled.
//!
//! On the parallel rig the boot moves a scheduler's speed, and its speed against EEVDF's, by
//! more than its own runs' spread predicts (with the kernel's layout fixed or not), so a
//! one-boot Welch test counts runs that are not independent. Here each boot is one
//! sample: its change against EEVDF, their geometric mean, their spread, and Student's t over
//! the boots' log ratios (df = boots - 1). Beside it, how much the boot alone moves each column
//! (one-way ANOVA of the runs by boot), and the host's steal time over each boot when the
//! directory holds `host-stat.txt` (bench/run-vm.sh samples the host's /proc/stat into it):
//! the time the hypervisor under this machine took from its CPUs, which slows vCPUs unevenly.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::model::{Results, Suite};
use super::statistics::{amean, reg_inc_beta, t_two_sided_p, variance, Direction, ALPHA};
use super::usage;
use super::{report, wakelat};

/// A measured run whose host steal reached this share (percent of the host's CPU time) is
/// counted as disturbed.
pub const STEAL_RUN_PCT: f64 = 5.0;

/// The host's /proc/stat over a boot: (unix time, all jiffies, steal jiffies), in time order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostStat {
    samples: Vec<(f64, u64, u64)>,
}

impl HostStat {
    /// Lines `UNIX-TIME cpu USER NICE SYSTEM IDLE IOWAIT IRQ SOFTIRQ STEAL ...` (the first line
    /// of /proc/stat after a time stamp); other lines are skipped.
    pub fn parse(text: &str) -> Self {
        let mut samples: Vec<(f64, u64, u64)> = text
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let t: f64 = w.next()?.parse().ok()?;
                if w.next()? != "cpu" {
                    return None;
                }
                let v: Vec<u64> = w.map(|x| x.parse().ok()).collect::<Option<_>>()?;
                // user nice system idle iowait irq softirq steal (guest times are in user)
                (v.len() >= 8).then(|| (t, v[..8].iter().sum(), v[7]))
            })
            .collect();
        samples.sort_by(|a, b| a.0.total_cmp(&b.0));
        HostStat { samples }
    }

    /// Percent of the host's CPU time stolen between `from` and `to` (unix seconds, the guest's
    /// clock: set from the host's at boot, so within about a second of it), from the samples
    /// that bracket the span; None where the samples do not cover it.
    pub fn steal_pct(&self, from: f64, to: f64) -> Option<f64> {
        const SLACK_S: f64 = 2.0;
        let a = self.samples.iter().rev().find(|s| s.0 <= from).or_else(|| self.samples.first())?;
        let b = self.samples.iter().find(|s| s.0 >= to).or_else(|| self.samples.last())?;
        if a.0 > from + SLACK_S || b.0 < to - SLACK_S {
            return None;
        }
        let total = b.1.checked_sub(a.1)?;
        (total > 0).then(|| b.2.saturating_sub(a.2) as f64 * 100.0 / total as f64)
    }
}

/// One boot: its session and the host's steal over it.
pub struct Boot {
    pub name: String,
    pub res: Results,
    pub host: Option<HostStat>,
}

impl Boot {
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join("results.json");
        if !path.is_file() {
            return Err(usage(format!("--pool {}: no results.json there", dir.display())));
        }
        let mut res = report::read_json(&path)?;
        // a session from before the median was kept: from its histograms, where they are
        wakelat::derive_p50(&mut res, dir);
        let host = match std::fs::read_to_string(dir.join("host-stat.txt")) {
            Ok(t) => Some(HostStat::parse(&t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}/host-stat.txt", dir.display())),
        };
        let name = dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
        Ok(Boot { name, res, host })
    }

    /// The measured runs' span (unix seconds), start of the first to end of the last.
    fn span(&self) -> Option<(f64, f64)> {
        let runs = self.res.runs.iter().filter(|r| !r.warmup && r.started > 0.0);
        let (mut a, mut b) = (f64::INFINITY, f64::NEG_INFINITY);
        for r in runs {
            a = a.min(r.started);
            b = b.max(r.started + r.wall_s.unwrap_or(0.0));
        }
        (a < b).then_some((a, b))
    }

    /// (steal over the boot's measured runs, runs at or above STEAL_RUN_PCT, measured runs)
    fn steal(&self) -> Option<(f64, usize, usize)> {
        let host = self.host.as_ref()?;
        let (a, b) = self.span()?;
        let whole = host.steal_pct(a, b)?;
        // a -p50 run is its p99 run read again, not another run
        let runs: Vec<_> =
            self.res.runs.iter().filter(|r| !r.warmup && r.ok && !wakelat::is_derived(&r.suite)).collect();
        let hit = runs
            .iter()
            .filter(|r| {
                host.steal_pct(r.started, r.started + r.wall_s.unwrap_or(0.0)).is_some_and(|s| s >= STEAL_RUN_PCT)
            })
            .count();
        Some((whole, hit, runs.len()))
    }
}

/// Across boots: the geometric mean of the boots' speed ratios as a % change (> 0: better), the
/// spread of their log ratios (as %), Student's t over them and its two-sided p.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AcrossBoots {
    pub n: usize,
    pub change_pct: f64,
    pub sd_pct: f64,
    pub t: f64,
    pub p: f64,
}

/// `ratios`: each boot's speed against the baseline (> 1: better). None for fewer than 2.
pub fn across_boots(ratios: &[f64]) -> Option<AcrossBoots> {
    if ratios.len() < 2 || ratios.iter().any(|&r| r.is_nan() || r <= 0.0 || r.is_infinite()) {
        return None;
    }
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let (m, sd, n) = (amean(&logs), variance(&logs).sqrt(), logs.len() as f64);
    // the same ratio in every boot: certain, whichever it is
    let (t, p) = if sd > 0.0 {
        let t = m / (sd / n.sqrt());
        (t, t_two_sided_p(t, n - 1.0))
    } else if m == 0.0 {
        (0.0, 1.0)
    } else {
        (m.signum() * f64::INFINITY, 0.0)
    };
    Some(AcrossBoots { n: ratios.len(), change_pct: (m.exp() - 1.0) * 100.0, sd_pct: sd * 100.0, t, p })
}

/// One-way ANOVA of runs grouped by boot: F (between-boot mean square over within-boot mean
/// square) and its p. F near 1: the boot moves the column no more than its runs' spread says.
/// None with fewer than 2 boots of 2 runs or no spread within boots.
pub fn boot_effect(groups: &[Vec<f64>]) -> Option<(f64, f64)> {
    let groups: Vec<&Vec<f64>> = groups.iter().filter(|g| g.len() >= 2).collect();
    let k = groups.len();
    if k < 2 {
        return None;
    }
    let n: usize = groups.iter().map(|g| g.len()).sum();
    let all: Vec<f64> = groups.iter().flat_map(|g| g.iter().copied()).collect();
    let grand = amean(&all);
    let ssb: f64 = groups.iter().map(|g| g.len() as f64 * (amean(g) - grand).powi(2)).sum();
    let ssw: f64 = groups.iter().map(|g| variance(g) * (g.len() - 1) as f64).sum();
    let (d1, d2) = ((k - 1) as f64, (n - k) as f64);
    if ssw <= 0.0 || d2 <= 0.0 {
        return None;
    }
    let f = (ssb / d1) / (ssw / d2);
    Some((f, f_upper_p(f, d1, d2)))
}

/// P(F >= f) for Fisher's F with (d1, d2) degrees of freedom.
pub fn f_upper_p(f: f64, d1: f64, d2: f64) -> f64 {
    // F = 0 (or NaN from no spread at all): nothing between boots
    if f.is_nan() || f <= 0.0 {
        return 1.0;
    }
    reg_inc_beta(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f)).clamp(0.0, 1.0)
}

/// The speed of `new` as a multiple of `base` (> 1: better), from the direction's means.
fn speed(base: &[f64], new: &[f64], dir: Direction) -> Option<f64> {
    let (b, x) = (dir.mean(base), dir.mean(new));
    let r = match dir {
        Direction::LowerIsBetter => b / x,
        Direction::HigherIsBetter => x / b,
    };
    (r > 0.0 && r.is_finite()).then_some(r)
}

fn pct(r: f64) -> String {
    format!("{:+.1}%", (r - 1.0) * 100.0)
}

fn format_suite(o: &mut String, boots: &[Boot], suite: &Suite) {
    let base = boots[0].res.variants[0].name.as_str();
    let _ = writeln!(
        o,
        "\n{}  [{}, {}; {}; each boot: its change against {base}, > 0 better]",
        suite.title,
        suite.metric,
        suite.unit,
        match suite.direction {
            Direction::LowerIsBetter => "lower is better",
            Direction::HigherIsBetter => "higher is better",
        }
    );
    let mut head = format!("  {:<10} {:>6}", "column", "param");
    for i in 1..=boots.len() {
        let _ = write!(head, " {:>8}", format!("boot {i}"));
    }
    let _ = writeln!(o, "{head}   {:>12} {:>8} {:>7}   boot effect (F, p)", "across boots", "sd", "t");
    for v in &boots[0].res.variants {
        for p in &suite.params {
            let values = |name: &str| -> Vec<Vec<f64>> {
                boots.iter().map(|b| b.res.values(&suite.name, &p.label, name)).collect()
            };
            let (groups, base_groups) = (values(&v.name), values(base));
            let effect = boot_effect(&groups).map_or_else(|| "-".to_string(), |(f, pv)| format!("F {f:.2}, p {pv:.3}"));
            let mut line = format!("  {:<10} {:>6}", v.name, p.label);
            if v.name == base {
                for g in &groups {
                    let m = suite.direction.mean(g);
                    let _ = write!(line, " {:>8}", if m.is_finite() { format!("{m:.4}") } else { "-".into() });
                }
                let _ = writeln!(o, "{line}   {:>12} {:>8} {:>7}   {effect}", "(its means)", "", "");
                continue;
            }
            let mut ratios = vec![];
            for (b, g) in base_groups.iter().zip(&groups) {
                let r = speed(b, g, suite.direction);
                let _ = write!(line, " {:>8}", r.map_or_else(|| "-".to_string(), pct));
                ratios.extend(r);
            }
            let (across, sd, t) = match across_boots(&ratios) {
                Some(a) => {
                    let c = format!("{:+.1}%", a.change_pct);
                    (if a.p < ALPHA { format!("*{c}*") } else { c }, format!("{:.1}%", a.sd_pct), format!("{:.2}", a.t))
                }
                None => ("-".into(), "-".into(), "-".into()),
            };
            let _ = writeln!(o, "{line}   {across:>12} {sd:>8} {t:>7}   {effect}");
        }
    }
}

/// The pooled report of `boots` (the first boot's suites and columns; a row a boot lacks is `-`).
pub fn format_pool(boots: &[Boot]) -> Result<String> {
    let first = boots.first().ok_or_else(|| usage("--pool needs at least one directory"))?;
    if first.res.variants.is_empty() {
        return Err(usage(format!("--pool: {} has no columns", first.name)));
    }
    let base = &first.res.variants[0].name;
    for b in &boots[1..] {
        if b.res.host.kernel != first.res.host.kernel {
            return Err(usage(format!(
                "--pool: {} ran {} and {} ran {}: pool boots of one kernel",
                first.name, first.res.host.kernel, b.name, b.res.host.kernel
            )));
        }
        if b.res.variants.first().map(|v| &v.name) != Some(base) {
            return Err(usage(format!("--pool: {} has another baseline than {}", b.name, first.name)));
        }
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# scx_sis bench, pooled: {} boots on {} ({} CPUs{}), {} runs a column each",
        boots.len(),
        first.res.host.kernel,
        first.res.host.nproc,
        if first.res.host.rig.is_empty() { String::new() } else { format!(", rig {}", first.res.host.rig) },
        first.res.config.runs
    );
    let _ = writeln!(
        o,
        "# a boot is one sample: across boots = the geometric mean of the boots' speed against {base}, sd = \
         the spread of their log ratios, t = Student's t over them (df = boots - 1); *x%* = significant at 95%"
    );
    let _ = writeln!(
        o,
        "# boot effect: one-way ANOVA of the runs by boot (F near 1: the boot moves the column no more than \
         its runs' spread predicts; a small p: a one-boot verdict is that boot's)"
    );
    for (i, b) in boots.iter().enumerate() {
        let steal = match b.steal() {
            Some((s, hit, n)) => {
                format!("host steal {s:.1}% of the host's CPU time, {hit} of {n} runs at {STEAL_RUN_PCT:.0}% or more")
            }
            None => "host steal not recorded".into(),
        };
        let _ = writeln!(o, "# boot {}: {} ({}; {})", i + 1, b.name, b.res.created, steal);
    }
    for suite in &first.res.suites {
        format_suite(&mut o, boots, suite);
    }
    Ok(o)
}

/// `--pool DIR...`: print the pooled report of those sessions.
pub fn run(dirs: &[PathBuf]) -> Result<()> {
    let boots = dirs.iter().map(|d| Boot::load(d)).collect::<Result<Vec<_>>>()?;
    print!("{}", format_pool(&boots)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostInfo, Param, Parser, RunRecord, Variant, VariantKind};
    use crate::statistics::tests::close;

    #[test]
    fn across_boots_is_a_t_test_on_log_ratios() {
        // logs of 1.1, 1.2, 1.0: mean 0.09254, sd 0.09119 -> t = 0.09254 / (0.09119 / sqrt 3) = 1.7577
        let a = across_boots(&[1.1, 1.2, 1.0]).unwrap();
        close(a.change_pct, ((1.1f64 * 1.2).ln() / 3.0).exp() * 100.0 - 100.0, 1e-9);
        close(a.t, 1.7577, 1e-3);
        // Student's t, 2 df: two-sided p = 1 - t / sqrt(t^2 + 2) = 0.2209
        close(a.p, 0.2209, 1e-3);
        assert!(across_boots(&[1.1]).is_none());
        assert!(across_boots(&[1.1, 0.0]).is_none());
        // the same ratio in every boot: no spread, certain
        assert_eq!(across_boots(&[0.9, 0.9]).unwrap().p, 0.0);
    }

    #[test]
    fn boot_effect_is_one_way_anova() {
        // groups {1,2,3} {4,5,6}: grand 3.5, SSB = 3*(2-3.5)^2 + 3*(5-3.5)^2 = 13.5 (1 df),
        // SSW = 2 + 2 = 4 (4 df): F = 13.5 / 1 = 13.5 ; p(F(1,4) >= 13.5) = 0.0213
        let (f, p) = boot_effect(&[vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]]).unwrap();
        close(f, 13.5, 1e-9);
        close(p, 0.0213, 5e-4);
        // the same boots: no effect
        let (f, p) = boot_effect(&[vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 3.0]]).unwrap();
        close(f, 0.0, 1e-12);
        close(p, 1.0, 1e-12);
        assert!(boot_effect(&[vec![1.0, 2.0]]).is_none());
        assert!(boot_effect(&[vec![1.0, 1.0], vec![2.0, 2.0]]).is_none(), "no spread within boots");
    }

    #[test]
    fn f_p_matches_the_table() {
        // F(3, 28) at 2.95 is the 95% point
        close(f_upper_p(2.947, 3.0, 28.0), 0.05, 1e-3);
        close(f_upper_p(1.0, 1.0, 1e6), 0.3173, 1e-3);
    }

    #[test]
    fn host_steal_over_a_span() {
        let t = "100 cpu 10 0 0 80 0 0 0 10 0 0\n\
                 garbage\n\
                 101 cpu 110 0 0 170 0 0 0 20 0 0\n\
                 102 cpu 210 0 0 270 0 0 0 20 0 0\n";
        let h = HostStat::parse(t);
        // 100 -> 101: 200 jiffies, 10 stolen
        close(h.steal_pct(100.0, 101.0).unwrap(), 5.0, 1e-9);
        // 101 -> 102: none stolen
        close(h.steal_pct(101.0, 102.0).unwrap(), 0.0, 1e-9);
        // a span inside one second takes the samples around it
        close(h.steal_pct(100.2, 100.8).unwrap(), 5.0, 1e-9);
        assert!(HostStat::parse("").steal_pct(0.0, 1.0).is_none());
        // not covered: before the first sample, after the last
        assert!(h.steal_pct(90.0, 95.0).is_none());
        assert!(h.steal_pct(101.0, 110.0).is_none());
    }

    fn boot(kernel: &str, eevdf: &[f64], sis: &[f64], t0: f64) -> Boot {
        let mut runs = vec![];
        for (variant, vals) in [("EEVDF", eevdf), ("scx_sis", sis)] {
            for (i, &v) in vals.iter().enumerate() {
                runs.push(RunRecord {
                    suite: "hackbench".into(),
                    param: "2".into(),
                    variant: variant.into(),
                    round: i,
                    ok: true,
                    value: Some(v),
                    wall_s: Some(1.0),
                    started: t0 + runs.len() as f64 * 2.0,
                    ..Default::default()
                });
            }
        }
        let res = Results {
            host: HostInfo { kernel: kernel.into(), nproc: 2, rig: "mttcg".into(), ..Default::default() },
            variants: vec![
                Variant::fair(),
                Variant { name: "scx_sis".into(), kind: VariantKind::ScxSis { args: vec![] } },
            ],
            suites: vec![Suite {
                name: "hackbench".into(),
                title: "hackbench-process-pipes".into(),
                metric: "time".into(),
                unit: "s".into(),
                direction: Direction::LowerIsBetter,
                ideal: None,
                parser: Parser::Hackbench,
                server: None,
                timeout_s: 60,
                params: vec![Param { label: "2".into(), command: vec![] }],
            }],
            runs,
            complete: true,
            ..Default::default()
        };
        Boot { name: format!("b{t0}"), res, host: None }
    }

    #[test]
    fn pooled_table_gives_each_boot_and_the_verdict() {
        // boot 1: 1.0 s vs 0.8 s (+25%), boot 2: 1.0 vs 0.9 (+11.1%), boot 3: 1.0 vs 0.85 (+17.6%)
        let boots = vec![
            boot("6.12", &[1.0, 1.1, 0.9], &[0.8, 0.85, 0.75], 1000.0),
            boot("6.12", &[1.0, 1.05, 0.95], &[0.9, 0.95, 0.85], 2000.0),
            boot("6.12", &[1.0, 0.9, 1.1], &[0.85, 0.8, 0.9], 3000.0),
        ];
        let o = format_pool(&boots).unwrap();
        assert!(o.contains("3 boots on 6.12"), "{o}");
        let row = o.lines().find(|l| l.trim_start().starts_with("scx_sis")).unwrap();
        for want in ["+25.0%", "+11.1%", "+17.6%"] {
            assert!(row.contains(want), "{want} in {row}");
        }
        // geometric mean of 1.25, 1.1111, 1.1765 = 1.1778; significant (t = 4.81, 2 df: p = 0.041)
        assert!(row.contains("*+17.8%*"), "{row}");
        assert!(o.contains("host steal not recorded"), "{o}");
        // the boots' means differ by less than their runs' spread: no boot effect
        let eevdf = o.lines().find(|l| l.trim_start().starts_with("EEVDF")).unwrap();
        assert!(eevdf.contains("F 0.00"), "{eevdf}");
    }

    #[test]
    fn pooled_table_flags_steal_and_refuses_mixed_kernels() {
        let mut b = boot("6.12", &[1.0, 1.1], &[0.8, 0.9], 100.0);
        // every second the host loses 10% of its time from 104 on (runs 3 and 4 start at 104, 106)
        let mut t = String::new();
        for s in 95..115u64 {
            let steal = if s > 104 { (s - 104) * 20 } else { 0 };
            let _ = writeln!(t, "{s} cpu {} 0 0 0 0 0 0 {steal}", (s - 95) * 200 - steal);
        }
        b.host = Some(HostStat::parse(&t));
        let o = format_pool(&[b, boot("6.12", &[1.0, 1.0], &[0.9, 0.9], 200.0)]).unwrap();
        assert!(o.contains("2 of 4 runs at 5% or more"), "{o}");
        let e = format_pool(&[boot("6.12", &[1.0, 1.1], &[0.8, 0.9], 0.0), boot("7.3", &[1.0, 1.1], &[0.8, 0.9], 0.0)])
            .unwrap_err();
        assert!(e.to_string().contains("pool boots of one kernel"), "{e}");
    }
}
