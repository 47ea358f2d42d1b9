//! Control channel of a running scx_sis: a unix socket (`CTL_PATH`, mode 0600) over which
//! `scx_sis set` and `scx_sis top --control` change knobs. Root only: besides the mode, the
//! peer's uid is checked (SO_PEERCRED) on every connection, and the client checks the server's.
//!
//! Protocol: one request line (at most `MAX_LINE` bytes), one reply line.
//!   `set KEY=VALUE`  ->  `ok KEY=VALUE (was OLD)` | `error: WHY` | `failed: WHY` | `unknown: WHY`
//!   `get`            ->  `ok KEY=VALUE KEY=VALUE ...`
//! `error:` is a refusal (bad request, not root): nothing changed. `failed:` means nothing changed
//! either: the scheduler did not take the request in time (it is dropped, never applied later), or
//! applying it failed and the old value stayed. `unknown:` means the scheduler took the request
//! but no answer came in time: it may have been applied.
//!
//! The socket thread only parses; the loader's run loop applies the change (it owns the
//! skeleton) and answers within its poll period.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use crossbeam::channel::{bounded, Receiver, RecvTimeoutError, Sender};
use log::warn;

use crate::knobs::Knob;
use crate::rundir::{self, Access, BoundPath};

pub const CTL_PATH: &str = "/var/run/scx/scx_sis.ctl";

/// Longest request line, newline included (requests are ~30 bytes).
pub const MAX_LINE: usize = 256;

/// What the run loop is asked to do; it answers on `reply` with the reply line's text.
pub enum Request {
    Set(Knob),
    Get,
}

const WAITING: u8 = 0;
const TAKEN: u8 = 1;
const DROPPED: u8 = 2;

pub struct Pending {
    pub req: Request,
    reply: Sender<std::result::Result<String, String>>,
    /// WAITING until the run loop takes it or its connection gives up on it, whichever is first.
    state: Arc<AtomicU8>,
}

impl Pending {
    /// The run loop's claim on the request: false if its client was already told it was dropped
    /// (then it must not be applied).
    pub fn take(&self) -> bool {
        self.state.compare_exchange(WAITING, TAKEN, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// The answer to a taken request.
    pub fn answer(self, res: std::result::Result<String, String>) {
        let _ = self.reply.send(res);
    }
}

/// How the socket is served; the defaults are the real ones, tests shorten them.
#[derive(Clone, Debug)]
pub struct Config {
    /// Only this uid may send requests (root).
    pub client_uid: u32,
    /// A client must send its request line within this.
    pub read_timeout: Duration,
    /// The run loop must take a request within this, or it is dropped.
    pub take_timeout: Duration,
    /// A taken request must be answered within this, or its outcome is unknown.
    pub answer_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            client_uid: 0,
            read_timeout: Duration::from_secs(2),
            take_timeout: Duration::from_secs(5),
            answer_timeout: Duration::from_secs(5),
        }
    }
}

/// The served socket; its path is unlinked when dropped, if it is still the one bound.
pub struct Server {
    _bound: BoundPath,
}

/// The reply line to the request on `stream`, from a client already checked.
fn reply(stream: &UnixStream, tx: &Sender<Pending>, cfg: &Config) -> String {
    let mut line = Vec::new();
    match BufReader::new(stream).take(MAX_LINE as u64).read_until(b'\n', &mut line) {
        Ok(_) if line.last() == Some(&b'\n') => {}
        Ok(n) if n >= MAX_LINE => return format!("error: request longer than {MAX_LINE} bytes"),
        Ok(_) => return "error: no request (want 'set KEY=VALUE' or 'get', ending in a newline)".into(),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
            return format!("error: no request within {} s", cfg.read_timeout.as_secs_f64())
        }
        Err(e) => return format!("error: reading the request: {e}"),
    }
    let Ok(line) = std::str::from_utf8(&line) else { return "error: the request is not UTF-8".into() };
    let line = line.trim();
    let req = match line.split_once(' ') {
        None if line == "get" => Request::Get,
        Some(("set", kv)) => match kv.parse::<Knob>() {
            Ok(k) => Request::Set(k),
            Err(e) => return format!("error: {e}"),
        },
        _ => return format!("error: unknown request {line:?}: want 'set KEY=VALUE' or 'get'"),
    };
    let state = Arc::new(AtomicU8::new(WAITING));
    let (rtx, rrx) = bounded(1);
    if tx.try_send(Pending { req, reply: rtx, state: state.clone() }).is_err() {
        return "failed: the scheduler has too many requests waiting; nothing changed".into();
    }
    let answer = |r: std::result::Result<String, String>| match r {
        Ok(msg) => format!("ok {msg}"),
        Err(e) => format!("failed: {e}"),
    };
    match rrx.recv_timeout(cfg.take_timeout) {
        Ok(r) => return answer(r),
        // not answered yet: drop it unless the run loop has taken it meanwhile
        Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
            if state.compare_exchange(WAITING, DROPPED, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return format!(
                    "failed: the scheduler did not take the request within {} s (restarting?); it is dropped, nothing changed",
                    cfg.take_timeout.as_secs_f64()
                );
            }
        }
    }
    match rrx.recv_timeout(cfg.answer_timeout) {
        Ok(r) => answer(r),
        Err(_) => "unknown: the scheduler took the request but did not answer; it may have been applied".into(),
    }
}

fn handle(stream: UnixStream, tx: &Sender<Pending>, cfg: &Config) -> Result<()> {
    stream.set_read_timeout(Some(cfg.read_timeout))?;
    stream.set_write_timeout(Some(cfg.read_timeout))?;
    let msg = if rundir::peer_uid(&stream)? != cfg.client_uid {
        "error: permission denied: only root may change scx_sis".to_string()
    } else {
        reply(&stream, tx, cfg)
    };
    (&stream).write_all(format!("{msg}\n").as_bytes())?;
    Ok(())
}

/// Serves `path` from a thread; requests come out of the returned channel.
pub fn serve(path: &Path) -> Result<(Server, Receiver<Pending>)> {
    serve_with(path, Config::default())
}

pub fn serve_with(path: &Path, cfg: Config) -> Result<(Server, Receiver<Pending>)> {
    // a socket left by a killed instance is replaced; a live one is another scx_sis's
    let (listener, bound) = rundir::bind(path, Access::OWNER, rundir::Live::Refuse)?;
    let (tx, rx) = bounded(16);
    std::thread::Builder::new().name("control".into()).spawn(move || accept_loop(listener, tx, cfg))?;
    Ok((Server { _bound: bound }, rx))
}

fn accept_loop(listener: UnixListener, tx: Sender<Pending>, cfg: Config) {
    for stream in listener.incoming() {
        let res = stream.map_err(anyhow::Error::from).and_then(|s| handle(s, &tx, &cfg));
        if let Err(e) = res {
            warn!("control socket: {e:#}");
        }
    }
}

/// Why a client request failed: the caller maps these to exit codes.
#[derive(Debug, PartialEq, Eq)]
pub enum ClientError {
    /// Not root, or the request was refused as bad input (exit 2). Nothing changed.
    Refused(String),
    /// Not applied: nothing changed (exit 1).
    Failed(String),
    /// It may or may not have been applied (exit 1).
    Unknown(String),
    /// No scx_sis is serving the socket (exit 1).
    NotRunning(String),
    Io(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Refused(s)
            | ClientError::Failed(s)
            | ClientError::Unknown(s)
            | ClientError::NotRunning(s)
            | ClientError::Io(s) => f.write_str(s),
        }
    }
}

/// Sends one request line to the scx_sis at `path`; the reply after "ok ".
pub fn request(path: &Path, line: &str) -> std::result::Result<String, ClientError> {
    request_with(path, line, 0, Duration::from_secs(15))
}

/// `request`, to a server that must run as `server_uid`, waiting `timeout` for its reply.
pub fn request_with(
    path: &Path,
    line: &str,
    server_uid: u32,
    timeout: Duration,
) -> std::result::Result<String, ClientError> {
    use std::io::ErrorKind;
    let stream = UnixStream::connect(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound | ErrorKind::ConnectionRefused => {
            ClientError::NotRunning(format!("no scx_sis running ({} is not served)", path.display()))
        }
        ErrorKind::PermissionDenied => ClientError::Refused(format!(
            "permission denied on {}: only root may change a running scx_sis",
            path.display()
        )),
        _ => ClientError::Io(format!("connecting to {}: {e}", path.display())),
    })?;
    let io = |e: std::io::Error| ClientError::Io(format!("{}: {e}", path.display()));
    // a knob change goes only to a server of root's: not to whoever bound the path
    let uid = rundir::peer_uid(&stream).map_err(io)?;
    if uid != server_uid {
        return Err(ClientError::Io(format!(
            "{} is served by uid {uid}, not {}: not sending to it",
            path.display(),
            if server_uid == 0 { "root".to_string() } else { format!("uid {server_uid}") }
        )));
    }
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    // a server that refuses us answers and closes before reading: its reply is still queued
    let write_err = match (&stream).write_all(format!("{line}\n").as_bytes()) {
        Ok(()) => None,
        Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => Some(e),
        Err(e) => return Err(io(e)),
    };
    let mut reply = String::new();
    let unknown = |why: String| {
        let outcome = if line.starts_with("set ") { "; the change may or may not have been applied" } else { "" };
        ClientError::Unknown(format!("{why}{outcome} (`scx_sis set` with no key shows the values)"))
    };
    match BufReader::new(&stream).take(64 << 10).read_line(&mut reply) {
        Ok(0) => {
            return Err(match write_err {
                Some(e) => io(e),
                None => unknown(format!("{} closed without a reply", path.display())),
            })
        }
        Ok(_) => {}
        Err(e) => return Err(unknown(format!("no reply from {}: {e}", path.display()))),
    }
    let reply = reply.trim();
    if let Some(ok) = reply.strip_prefix("ok ") {
        Ok(ok.to_string())
    } else if let Some(e) = reply.strip_prefix("error: ") {
        Err(ClientError::Refused(e.to_string()))
    } else if let Some(e) = reply.strip_prefix("failed: ") {
        Err(ClientError::Failed(e.to_string()))
    } else if let Some(e) = reply.strip_prefix("unknown: ") {
        Err(ClientError::Unknown(e.to_string()))
    } else {
        Err(ClientError::Io(format!("unexpected reply {reply:?}")))
    }
}
