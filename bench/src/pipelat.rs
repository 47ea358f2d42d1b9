//! The `pipelat` suite of `scx_sis_bench`: how soon a task woken through a pipe runs when the
//! CPU it wakes on is busy with a hog. Two threads ping-pong a byte over a pair of pipes beside
//! one nice-0 CPU hog per CPU, and each round trip is timed. A pipe write is a sync wakeup (the
//! waker says it is about to sleep), which schedulers treat apart from other wakeups: wakelat's
//! timer wakeups do not see that path. Two rows: the threads and hogs pinned one per CPU (each
//! wakeup lands beside a lone hog: whether the wakee preempts it or waits out its slice), and
//! all unpinned (where the scheduler puts them).
//!
//! Each run is `scx_sis_bench __pipelat --secs S --warmup W [--pinned]` (hidden subcommand); the
//! metric is the 99th percentile round trip, and `pipelat-p50` the median of the same runs
//! (`wakelat::derive_p50`).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use super::fairness::{allowed_cpus, Hogs};
use super::model::{Param, Parser, Scale, Suite};
use super::statistics::Direction;
use scx_sis::error::usage_err;

pub const NAME: &str = "pipelat";
/// The median of the same runs.
pub const P50_NAME: &str = "pipelat-p50";
/// The probe's summary line, read by both suites' parsers.
pub const P99_RE: &str = r"pipelat: p99 ([0-9.]+) us";
pub const P50_RE: &str = r"pipelat: p99 [0-9.]+ us, p50 ([0-9.]+) us";

#[derive(clap::Args, Debug, Clone)]
pub struct ProbeArgs {
    /// Seconds of round trips.
    #[arg(long, default_value_t = 3.0)]
    pub secs: f64,
    /// Seconds the hogs run before the round trips start.
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// Pin the two threads to the first two CPUs, one hog on each CPU.
    #[arg(long)]
    pub pinned: bool,
}

/// The suite; `exe` is the binary that runs the probe.
pub fn suite(sc: &Scale, exe: &Path) -> Suite {
    let n = sc.nproc.max(1);
    let secs = sc.duration_s.unwrap_or(if sc.quick { 1 } else { 3 });
    let warm: f64 = if sc.quick { 0.5 } else { 1.0 };
    let command = |pinned: bool| {
        let mut c = vec![
            exe.to_string_lossy().into_owned(),
            "__pipelat".into(),
            "--secs".into(),
            secs.to_string(),
            "--warmup".into(),
            warm.to_string(),
        ];
        if pinned {
            c.push("--pinned".into());
        }
        c
    };
    Suite {
        name: NAME.into(),
        title: "pipelat-pipe-round-trip-under-hogs".into(),
        metric: format!(
            "p99 round trip of a byte between two threads over pipes (two sync wakeups) beside {n} CPU hogs; \
             {secs} s after {warm} s (rows: pinned one per CPU, unpinned)"
        ),
        unit: "usec".into(),
        direction: Direction::LowerIsBetter,
        ideal: None,
        parser: Parser::Regex(P99_RE.into()),
        server: None,
        timeout_s: secs as u64 + warm.ceil() as u64 + 120,
        params: vec![
            Param { label: "pinned".into(), command: command(true) },
            Param { label: "unpinned".into(), command: command(false) },
        ],
    }
}

fn pin_self(cpu: usize) -> std::io::Result<()> {
    // SAFETY: as above; the set holds one CPU
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn pipe() -> Result<(libc::c_int, libc::c_int)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        bail!("pipe: {}", std::io::Error::last_os_error());
    }
    Ok((fds[0], fds[1]))
}

/// One byte through `fd`: false at EOF or on an error.
fn write1(fd: libc::c_int) -> bool {
    unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) == 1 }
}
fn read1(fd: libc::c_int) -> bool {
    let mut b = 0u8;
    unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) == 1 }
}

/// The `q` quantile (0..=1) of sorted `v`, nearest rank.
pub fn quantile(v: &[u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// Entry of `scx_sis_bench __pipelat`.
pub fn probe(a: &ProbeArgs) -> Result<()> {
    if !(0.0..=600.0).contains(&a.warmup) || !(0.1..=600.0).contains(&a.secs) {
        return Err(usage_err(format!(
            "__pipelat --secs {} --warmup {}: expected 0.1..=600 and 0..=600",
            a.secs, a.warmup
        )));
    }
    let cpus = allowed_cpus()?;
    if a.pinned && cpus.len() < 2 {
        return Err(usage_err("__pipelat --pinned needs two CPUs"));
    }
    let mut hogs = Hogs::default();
    for &c in &cpus {
        hogs.spawn(0, a.pinned.then_some(c))?;
    }
    std::thread::sleep(Duration::from_secs_f64(a.warmup));

    let (ping_r, ping_w) = pipe()?;
    let (pong_r, pong_w) = pipe()?;
    let (ca, cb) = (cpus[0], cpus.get(1).copied().unwrap_or(cpus[0]));
    let pinned = a.pinned;
    // the echo side: back until the pinger closes its end
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        if pinned {
            pin_self(cb)?;
        }
        while read1(ping_r) && write1(pong_w) {}
        unsafe { libc::close(pong_w) };
        Ok(())
    });
    let run = (|| -> Result<Vec<u64>> {
        if pinned {
            pin_self(ca)?;
        }
        let end = Instant::now() + Duration::from_secs_f64(a.secs);
        let mut rtt = Vec::with_capacity(1 << 16);
        while Instant::now() < end {
            let t0 = Instant::now();
            if !write1(ping_w) || !read1(pong_r) {
                bail!("the echo thread stopped: {}", std::io::Error::last_os_error());
            }
            rtt.push(t0.elapsed().as_nanos() as u64);
        }
        Ok(rtt)
    })();
    unsafe { libc::close(ping_w) };
    let echoed = echo.join();
    drop(hogs);
    unsafe {
        libc::close(ping_r);
        libc::close(pong_r);
    }
    let mut rtt = run?;
    match echoed {
        Ok(Ok(())) => {}
        Ok(Err(e)) => bail!("echo thread: {e}"),
        Err(_) => bail!("echo thread panicked"),
    }
    if rtt.is_empty() {
        bail!("no round trip in {} s", a.secs);
    }
    rtt.sort_unstable();
    let us = |ns: u64| ns as f64 / 1000.0;
    let mean = rtt.iter().sum::<u64>() as f64 / rtt.len() as f64;
    println!(
        "pipelat: p99 {:.1} us, p50 {:.1} us, mean {:.1} us, max {:.1} us; {} round trips between two threads \
         ({}) beside {} hogs",
        us(quantile(&rtt, 0.99)),
        us(quantile(&rtt, 0.50)),
        mean / 1000.0,
        us(*rtt.last().unwrap()),
        rtt.len(),
        if pinned { format!("pinned to CPUs {ca} and {cb}, a hog pinned to each CPU") } else { "unpinned".into() },
        cpus.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parsers::parse;

    fn scale(quick: bool) -> Scale {
        Scale { nproc: 2, quick, hackbench_groups: None, hackbench_loops: None, duration_s: None }
    }

    #[test]
    fn suite_commands() {
        let s = suite(&scale(false), Path::new("/x/scx_sis_bench"));
        let rows: Vec<_> = s.params.iter().map(|p| (p.label.as_str(), p.command.join(" "))).collect();
        assert_eq!(
            rows,
            [
                ("pinned", "/x/scx_sis_bench __pipelat --secs 3 --warmup 1 --pinned".to_string()),
                ("unpinned", "/x/scx_sis_bench __pipelat --secs 3 --warmup 1".to_string()),
            ]
        );
        assert_eq!(s.direction, Direction::LowerIsBetter);
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!((quantile(&v, 0.5), quantile(&v, 0.99), quantile(&v, 1.0)), (50, 99, 100));
        assert_eq!((quantile(&[7], 0.99), quantile(&[], 0.5)), (7, 0));
    }

    #[test]
    fn both_figures_read_from_the_summary() {
        let out = "pipelat: p99 1523.4 us, p50 61.0 us, mean 90.2 us, max 4000.0 us; 9 round trips ...\n";
        assert_eq!(parse(&Parser::Regex(P99_RE.into()), out, 1.0), Ok(1523.4));
        assert_eq!(parse(&Parser::Regex(P50_RE.into()), out, 1.0), Ok(61.0));
    }

    /// The real probe, briefly, on this host (no scheduler needed).
    #[test]
    fn probe_times_round_trips() {
        probe(&ProbeArgs { secs: 0.2, warmup: 0.0, pinned: false }).unwrap();
        if allowed_cpus().unwrap().len() >= 2 {
            probe(&ProbeArgs { secs: 0.2, warmup: 0.0, pinned: true }).unwrap();
        }
        let e = probe(&ProbeArgs { secs: 0.0, warmup: 0.0, pinned: false }).unwrap_err();
        assert!(e.downcast_ref::<scx_sis::error::UsageError>().is_some());
    }
}
