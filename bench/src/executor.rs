//! The executor that runs one workload: spawns it (and its server) in their own process groups,
//! enforces the suite's timeout, honours ^C, and parses the result.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::model::{Param, Suite};
use super::parsers::{parse, window_system, work_done};

/// What one workload execution measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub value: f64,
    pub wall_s: f64,
    /// Units of work done, when the workload says (see `parsers::work_done`).
    pub work: Option<f64>,
    /// The system's counters over the window the workload itself measured, when it reports it.
    pub window: Option<super::model::SystemDelta>,
}

/// Runs one parameter of a suite; the real one spawns processes, tests use a fake.
pub trait Executor {
    /// `raw`: where to keep the workload's output. Err(reason) marks the run failed.
    fn run(&mut self, suite: &Suite, param: &Param, raw: &Path) -> Result<Measurement, String>;
}

/// Spawns the workload (and its server) as child processes.
pub struct ProcessExecutor {
    pub abort: Arc<AtomicBool>,
    /// The cgroup the workloads run in (--cgroup-depth); None: the harness's own.
    pub cgroup: Option<PathBuf>,
}

/// Spawns `argv`; with `cgroup`, the child enters it before exec, so the workload and every
/// thread and process it starts run there from their first instruction.
fn spawn_group(argv: &[String], out: &File, cgroup: Option<&Path>) -> std::io::Result<Child> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdin(Stdio::null()).stdout(out.try_clone()?).stderr(out.try_clone()?).process_group(0);
    let procs = match cgroup {
        Some(dir) => Some(
            CString::new(dir.join("cgroup.procs").into_os_string().into_vec())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?,
        ),
        None => None,
    };
    // Die with the harness rather than outlive it. Between fork and exec only raw calls.
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if let Some(p) = &procs {
                let fd = libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // "0": the writer itself
                let n = libc::write(fd, b"0".as_ptr().cast(), 1);
                let err = std::io::Error::last_os_error();
                libc::close(fd);
                if n != 1 {
                    return Err(err);
                }
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// Reaps `pid` in a helper thread: its exit status arrives on the channel when it exits.
fn wait_in_thread(pid: libc::pid_t) -> std::sync::mpsc::Receiver<std::io::Result<std::process::ExitStatus>> {
    use std::os::unix::process::ExitStatusExt;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut status = 0;
        let r = loop {
            // SAFETY: waits for our own child; status is a valid out pointer
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                break r;
            }
        };
        let _ = tx.send(if r == pid {
            Ok(std::process::ExitStatus::from_raw(status))
        } else {
            Err(std::io::Error::last_os_error())
        });
    });
    rx
}

fn kill_group(child: &mut Child, sig: i32) {
    unsafe {
        libc::kill(-(child.id() as i32), sig);
    }
}

/// Stop a server: SIGTERM to its group, SIGKILL after 3 s.
fn stop_group(child: &mut Child) {
    kill_group(child, libc::SIGTERM);
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        if let Ok(Some(_)) = child.try_wait() {
            kill_group(child, libc::SIGKILL); // leftovers of the group
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_group(child, libc::SIGKILL);
    let _ = child.wait();
}

fn wait_port(port: u16, server: &mut Child, timeout: Duration) -> Result<(), String> {
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let t0 = Instant::now();
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if let Ok(Some(st)) = server.try_wait() {
            return Err(format!("server exited ({st}) before listening on port {port}"));
        }
        if t0.elapsed() > timeout {
            return Err(format!("server not listening on 127.0.0.1:{port} after {}s", timeout.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn last_line(s: &str) -> String {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().chars().take(160).collect()
}

impl Executor for ProcessExecutor {
    fn run(&mut self, suite: &Suite, param: &Param, raw: &Path) -> Result<Measurement, String> {
        if let Some(dir) = raw.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        let mut out = File::create(raw).map_err(|e| format!("creating {}: {e}", raw.display()))?;
        let _ = writeln!(out, "$ {}", param.command.join(" "));
        if let Some(dir) = &self.cgroup {
            let _ = writeln!(out, "(cgroup: {})", dir.display());
        }
        let mut server = None;
        if let Some(srv) = &suite.server {
            let _ = writeln!(out, "(server: {})", srv.command.join(" "));
            let mut child = spawn_group(&srv.command, &out, self.cgroup.as_deref())
                .map_err(|e| format!("starting {}: {e}", srv.command[0]))?;
            if let Err(e) = wait_port(srv.port, &mut child, Duration::from_secs(10)) {
                stop_group(&mut child);
                return Err(format!("{}: {e}", srv.command[0]));
            }
            server = Some(child);
        }
        let result = (|| {
            let t0 = Instant::now();
            let mut child = spawn_group(&param.command, &out, self.cgroup.as_deref())
                .map_err(|e| format!("starting {}: {e}", param.command[0]))?;
            // A helper thread blocks in wait() and the harness wakes 10 times a second only for
            // ^C and the timeout: polling every 5 ms took 0.4-3 s of CPU from a 4 s fairness
            // window in the saturated test VM, a 25th hog among 24.
            let exited = wait_in_thread(child.id() as libc::pid_t);
            let status = loop {
                match exited.recv_timeout(Duration::from_millis(100)) {
                    Ok(st) => break st.map_err(|e| e.to_string())?,
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        return Err(format!("{}: its wait failed", param.command[0]))
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                }
                let why = if self.abort.load(Ordering::Relaxed) {
                    "interrupted".to_string()
                } else if t0.elapsed() > Duration::from_secs(suite.timeout_s) {
                    format!("{} timed out after {} s: killed", param.command[0], suite.timeout_s)
                } else {
                    continue;
                };
                kill_group(&mut child, libc::SIGKILL);
                let _ = exited.recv();
                return Err(why);
            };
            let wall_s = t0.elapsed().as_secs_f64();
            let text = std::fs::read_to_string(raw).unwrap_or_default();
            if !status.success() {
                return Err(format!("{} failed ({status}): {}", param.command[0], last_line(&text)));
            }
            let value = parse(&suite.parser, &text, wall_s)?;
            Ok(Measurement {
                value,
                wall_s,
                work: work_done(&suite.parser, &text, value),
                window: window_system(&text),
            })
        })();
        if let Some(mut s) = server {
            stop_group(&mut s);
        }
        result
    }
}
