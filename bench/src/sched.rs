//! The real controller: spawns a scheduler binary, watches /sys/kernel/sched_ext, stops it with
//! SIGINT, and reads scx_sis's statistics over the workload through the scx_stats socket.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use scx_stats::prelude::StatsClient;

use super::model::{Variant, VariantKind};
use super::runner::{safe, AfterRun, Controller, CtlError};

pub use scx_sis::preflight::{ops, state, SCX_SYSFS};

pub fn enable_seq() -> Option<u64> {
    std::fs::read_to_string(format!("{SCX_SYSFS}/enable_seq")).ok()?.trim().parse().ok()
}

/// The ops name a scheduler binary registers: scx_sis → "scx_sis", scx_bpfland → "bpfland"
/// (the scx schedulers drop the prefix). Matched as a substring of root/ops.
pub fn ops_stem(v: &Variant) -> String {
    match &v.kind {
        VariantKind::Fair => String::new(),
        VariantKind::ScxSis { .. } => "scx_sis".into(),
        VariantKind::Peer { binary, .. } => {
            let base = Path::new(binary).file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            base.strip_prefix("scx_").unwrap_or(&base).to_string()
        }
    }
}

/// The command that starts a scheduler, its output going to the run's log.
fn scheduler_command(bin: &Path, args: &[String], stdout: File, stderr: File) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        // plain text in the log and in error messages (simplelog/termcolor, as the scx
        // schedulers log, colour any output under `Auto` unless NO_COLOR is set)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        // Own process group: a terminal ^C reaches the harness, which detaches in order.
        .process_group(0);
    unsafe {
        // If the harness dies, the scheduler gets SIGINT and detaches.
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT);
            Ok(())
        });
    }
    cmd
}

/// New kernel log records since the last look (/dev/kmsg from its end at creation): after each
/// attach and detach the harness checks that the guest kernel is still sound. On multi-threaded
/// TCG, rarely, the text patching of a scheduler switch breaks the guest kernel (an Oops on int3);
/// nothing measured after that counts.
pub struct KmsgWatch {
    file: Option<File>,
}

/// Lines of the kernel log after which the kernel is not to be trusted.
pub fn kernel_fault(line: &str) -> bool {
    ["Oops:", "BUG:", "kernel BUG at", "general protection fault", "Kernel panic", "invalid opcode:"]
        .iter()
        .any(|p| line.contains(p))
}

impl KmsgWatch {
    pub fn new() -> Self {
        use std::os::unix::fs::OpenOptionsExt;
        let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open("/dev/kmsg").ok();
        let mut w = KmsgWatch { file };
        if let Some(f) = w.file.as_mut() {
            // /dev/kmsg's SEEK_END: the next read returns the next new record
            let _ = f.seek(SeekFrom::End(0));
        }
        w
    }

    /// The first new record that shows a kernel fault, if any.
    pub fn fault(&mut self) -> Option<String> {
        let f = self.file.as_mut()?;
        let mut buf = vec![0u8; 8192];
        let mut found = None;
        loop {
            match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    // "prio,seq,usec,flags;message"
                    let rec = String::from_utf8_lossy(&buf[..n]);
                    let msg = rec.split_once(';').map_or(&*rec, |(_, m)| m).lines().next().unwrap_or("").to_string();
                    if found.is_none() && kernel_fault(&msg) {
                        found = Some(msg);
                    }
                }
                // EPIPE: records were overwritten before we read them; go on with the next
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(_) => break,
            }
        }
        found
    }
}

impl Default for KmsgWatch {
    fn default() -> Self {
        Self::new()
    }
}

struct Running {
    child: Child,
    log: PathBuf,
    log_start: u64,
    enable_seq: Option<u64>,
    stats: Option<StatsClient>,
}

pub struct SysfsController {
    pub scx_sis: PathBuf,
    pub logs_dir: PathBuf,
    pub timeout: Duration,
    running: Option<Running>,
    /// Set when a telemetry connection failed at attach: reported by after_workload.
    telemetry_error: Option<String>,
    kmsg: KmsgWatch,
}

impl SysfsController {
    pub fn new(scx_sis: PathBuf, logs_dir: PathBuf, timeout: Duration) -> Self {
        SysfsController { scx_sis, logs_dir, timeout, running: None, telemetry_error: None, kmsg: KmsgWatch::new() }
    }

    /// Fatal if the kernel logged a fault since the last check (`what`: the switch just made).
    fn check_kernel(&mut self, what: &str) -> Result<(), CtlError> {
        match self.kmsg.fault() {
            Some(line) => Err(CtlError::Fatal(anyhow!(
                "the kernel logged a fault {what}: \"{line}\": nothing measured on this kernel counts any more"
            ))),
            None => Ok(()),
        }
    }

    fn argv(&self, v: &Variant) -> (PathBuf, Vec<String>) {
        match &v.kind {
            VariantKind::Fair => unreachable!(),
            VariantKind::ScxSis { args } => (self.scx_sis.clone(), args.clone()),
            VariantKind::Peer { binary, args } => (PathBuf::from(binary), args.clone()),
        }
    }

    /// The scheduler's output since this run's spawn (last `max` lines), for error messages.
    fn log_tail(r: &Running, max: usize) -> String {
        let mut s = String::new();
        if let Ok(mut f) = File::open(&r.log) {
            let _ = f.seek(SeekFrom::Start(r.log_start));
            let _ = f.take(64 * 1024).read_to_string(&mut s);
        }
        let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(max)..].join(" | ");
        if tail.is_empty() {
            format!("no output (log: {})", r.log.display())
        } else {
            format!("its output: {tail} (log: {})", r.log.display())
        }
    }

    fn wait_state(&self, want: &str, timeout: Duration, child: Option<&mut Child>) -> Result<(), Option<ExitStatus>> {
        let t0 = Instant::now();
        let mut child = child;
        loop {
            if state() == want {
                return Ok(());
            }
            if let Some(c) = child.as_deref_mut() {
                if let Ok(Some(st)) = c.try_wait() {
                    // A dead scheduler is detached by the kernel: give it a moment.
                    if want == "disabled" {
                        child = None;
                        continue;
                    }
                    return Err(Some(st));
                }
            }
            if t0.elapsed() >= timeout {
                return Err(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Open the stats connection and make the first request, so the next one returns the
    /// counters' delta over the workload (the server computes deltas per connection).
    fn stats_connect() -> Result<StatsClient, String> {
        let t0 = Instant::now();
        let mut last = String::new();
        while t0.elapsed() < Duration::from_secs(5) {
            match StatsClient::new().connect(Some(5000)) {
                Ok(mut c) => match c.request::<serde_json::Value>("stats", vec![]) {
                    Ok(_) => return Ok(c),
                    Err(e) => last = format!("{e:#}"),
                },
                Err(e) => last = format!("{e:#}"),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("no scx_stats server at /var/run/scx/root/stats: {last}"))
    }
}

impl Controller for SysfsController {
    fn attach(&mut self, v: &Variant, tag: &str) -> Result<Option<f64>, CtlError> {
        assert!(self.running.is_none());
        self.telemetry_error = None;
        let st = state();
        if st != "disabled" {
            return Err(CtlError::Fatal(anyhow!(
                "sched_ext state is '{st}' (ops '{}') before the {} run of {tag}: something else attached a scheduler",
                ops(),
                v.name
            )));
        }
        if v.kind == VariantKind::Fair {
            return Ok(None);
        }
        let (bin, args) = self.argv(v);
        std::fs::create_dir_all(&self.logs_dir).map_err(|e| CtlError::Fatal(e.into()))?;
        let log = self.logs_dir.join(format!("{}.log", safe(&v.name)));
        let mut f = OpenOptions::new().create(true).append(true).open(&log).map_err(|e| CtlError::Fatal(e.into()))?;
        let _ = writeln!(f, "===== {tag}: {} {}", bin.display(), args.join(" "));
        let log_start = f.metadata().map(|m| m.len()).unwrap_or(0);
        let stdout = f.try_clone().map_err(|e| CtlError::Fatal(e.into()))?;
        let mut cmd = scheduler_command(&bin, &args, stdout, f);
        let seq_before = enable_seq();
        let t0 = Instant::now();
        let child = cmd.spawn().map_err(|e| CtlError::Run(format!("cannot start {}: {e}", bin.display())))?;
        let mut r = Running { child, log, log_start, enable_seq: None, stats: None };
        match self.wait_state("enabled", self.timeout, Some(&mut r.child)) {
            Ok(()) => {}
            Err(Some(st)) => {
                return Err(CtlError::Run(format!(
                    "{} exited ({st}) before attaching; {}",
                    v.name,
                    Self::log_tail(&r, 5)
                )))
            }
            Err(None) => {
                let tail = Self::log_tail(&r, 5);
                self.running = Some(r);
                let stop = self.stop();
                let mut msg =
                    format!("{} not enabled after {} s (state {}); {tail}", v.name, self.timeout.as_secs(), state());
                if let Err(e) = stop {
                    return Err(CtlError::Fatal(anyhow!("{msg}; and then: {e}")));
                }
                msg.push_str("; stopped it");
                return Err(CtlError::Run(msg));
            }
        }
        let attach_s = t0.elapsed().as_secs_f64();
        // Wait for root/ops to name it (it appears with the state).
        let stem = ops_stem(v);
        let t1 = Instant::now();
        while !ops().contains(&stem) && t1.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let o = ops();
        if !o.contains(&stem) {
            self.running = Some(r);
            let _ = self.stop();
            return Err(CtlError::Fatal(anyhow!(
                "state enabled but root/ops is '{o}', not {stem}: another scheduler attached meanwhile?"
            )));
        }
        // The kernel bumps enable_seq only after it reports `enabled` (at the very end of
        // scx_enable()): wait for the bump, or a slow guest would flag a re-attach later.
        let t2 = Instant::now();
        while seq_before.is_some() && enable_seq() <= seq_before && t2.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        r.enable_seq = enable_seq();
        if v.is_scx_sis() {
            match Self::stats_connect() {
                Ok(c) => r.stats = Some(c),
                Err(e) => self.telemetry_error = Some(e),
            }
        }
        self.running = Some(r);
        self.check_kernel(&format!("attaching {}", v.name))?;
        Ok(Some(attach_s))
    }

    fn after_workload(&mut self, v: &Variant) -> AfterRun {
        let mut a = AfterRun { telemetry_error: self.telemetry_error.take(), ..Default::default() };
        let st = state();
        let Some(r) = self.running.as_mut() else {
            if st != "disabled" {
                a.failure = Some(format!("a sched_ext scheduler ({}) was attached during the {} run", ops(), v.name));
            }
            return a;
        };
        if let Some(c) = r.stats.as_mut() {
            match c.request::<serde_json::Value>("stats", vec![]) {
                Ok(val) => a.telemetry = Some(val),
                Err(e) => a.telemetry_error = Some(format!("stats request: {e:#}")),
            }
        }
        let mut why = vec![];
        if let Ok(Some(status)) = r.child.try_wait() {
            why.push(format!("{} exited during the run ({status})", v.name));
        }
        if st != "enabled" {
            why.push(format!("sched_ext state is '{st}' after the run"));
        }
        let seq = enable_seq();
        if seq != r.enable_seq {
            why.push(format!(
                "enable_seq changed during the run ({} -> {}): the scheduler was detached and re-attached",
                r.enable_seq.map_or("?".into(), |s| s.to_string()),
                seq.map_or("?".into(), |s| s.to_string())
            ));
        }
        if !why.is_empty() {
            a.failure = Some(format!("{}; {}", why.join("; "), Self::log_tail(r, 3)));
        }
        a
    }

    fn detach(&mut self, v: &Variant) -> Result<Option<String>, CtlError> {
        if v.kind == VariantKind::Fair {
            return Ok(None);
        }
        let problem = self.stop().map_err(CtlError::Fatal)?;
        self.check_kernel(&format!("detaching {}", v.name))?;
        Ok(problem)
    }
}

impl SysfsController {
    /// SIGINT the running scheduler, wait for `disabled` and its exit; SIGKILL after the
    /// timeout. Ok(Some(problem)) if it did not go cleanly, Err if it is still attached.
    fn stop(&mut self) -> anyhow::Result<Option<String>> {
        let Some(mut r) = self.running.take() else { return Ok(None) };
        r.stats = None; // close the stats connection first
        let pid = r.child.id() as i32;
        let mut problem = None;
        if r.child.try_wait()?.is_none() {
            unsafe { libc::kill(pid, libc::SIGINT) };
        }
        let detached = self.wait_state("disabled", self.timeout, Some(&mut r.child));
        // the process should exit promptly once detached
        let t0 = Instant::now();
        let mut status = None;
        while t0.elapsed() < self.timeout {
            if let Some(st) = r.child.try_wait()? {
                status = Some(st);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if detached.is_err() || status.is_none() {
            let what = if detached.is_err() { "did not detach" } else { "did not exit" };
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let _ = r.child.wait();
            problem = Some(format!(
                "scheduler {what} within {} s of SIGINT: SIGKILLed; {}",
                self.timeout.as_secs(),
                Self::log_tail(&r, 3)
            ));
            if self.wait_state("disabled", Duration::from_secs(10), None).is_err() {
                anyhow::bail!(
                    "sched_ext still '{}' (ops '{}') after SIGKILL of the scheduler: cannot go on",
                    state(),
                    ops()
                );
            }
        } else if let Some(st) = status {
            if !st.success() {
                problem = Some(format!("scheduler exited with {st} after SIGINT; {}", Self::log_tail(&r, 3)));
            }
        }
        Ok(problem)
    }
}

impl Drop for SysfsController {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_faults_are_the_oops_kind() {
        assert!(kernel_fault("Oops: int3: 0000 PREEMPT SMP NOPTI"));
        assert!(kernel_fault("BUG: unable to handle page fault for address: ffff"));
        assert!(kernel_fault("Kernel panic - not syncing: Fatal exception"));
        assert!(!kernel_fault("sched_ext: BPF scheduler \"scx_sis\" enabled"));
        assert!(!kernel_fault("sched_ext: BPF scheduler \"scx_sis\" disabled (unregistered from user space)"));
    }

    #[test]
    fn ops_names() {
        let peer = |b: &str| Variant { name: "x".into(), kind: VariantKind::Peer { binary: b.into(), args: vec![] } };
        assert_eq!(ops_stem(&peer("scx_bpfland")), "bpfland");
        assert_eq!(ops_stem(&peer("/usr/bin/scx_cosmos")), "cosmos");
        assert_eq!(ops_stem(&peer("myscheduler")), "myscheduler");
        assert_eq!(ops_stem(&Variant { name: "a".into(), kind: VariantKind::ScxSis { args: vec![] } }), "scx_sis");
    }

    #[test]
    fn schedulers_log_without_colour() {
        let dir = tempfile::tempdir().unwrap();
        let log = || File::create(dir.path().join("log")).unwrap();
        let cmd = scheduler_command(Path::new("/bin/sh"), &["-c".into(), "true".into()], log(), log());
        let no_color: Vec<_> = cmd.get_envs().filter(|(k, _)| *k == "NO_COLOR").collect();
        assert_eq!(no_color, [(std::ffi::OsStr::new("NO_COLOR"), Some(std::ffi::OsStr::new("1")))]);
        // and a program that colours its log by termcolor's `Auto` rule sees it
        let out =
            scheduler_command(Path::new("/bin/sh"), &["-c".into(), "echo ${NO_COLOR-unset}".into()], log(), log())
                .stdout(Stdio::piped())
                .output()
                .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    }
}
