//! Control channel of a running scx_sis: a unix socket (`CTL_PATH`, mode 0600) over which
//! `scx_sis set` and `scx_sis top --control` change knobs. Root only: besides the mode, the
//! peer's uid is checked (SO_PEERCRED) on every connection.
//!
//! Protocol: one request line, one reply line.
//!   `set KEY=VALUE`  ->  `ok KEY=VALUE (was OLD)` | `error: WHY`
//!   `get`            ->  `ok KEY=VALUE KEY=VALUE ...`
//! The socket thread only parses; the loader's run loop applies the change (it owns the
//! skeleton) and answers within its poll period.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use crossbeam::channel::{bounded, Receiver, Sender};
use log::warn;

use crate::knobs::Knob;

pub const CTL_PATH: &str = "/var/run/scx/scx_sis.ctl";

/// What the run loop is asked to do; it answers on `reply` with the reply line's text.
pub enum Request {
    Set(Knob),
    Get,
}

pub struct Pending {
    pub req: Request,
    pub reply: Sender<std::result::Result<String, String>>,
}

/// The served socket; removed when dropped.
pub struct Server {
    path: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// uid of the process at the other end of `s`.
fn peer_uid(s: &UnixStream) -> Result<u32> {
    use std::os::fd::AsRawFd;
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("SO_PEERCRED");
    }
    Ok(cred.uid)
}

fn handle(stream: UnixStream, tx: &Sender<Pending>) -> Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut out = stream.try_clone()?;
    if peer_uid(&stream)? != 0 {
        writeln!(out, "error: permission denied: only root may change scx_sis")?;
        return Ok(());
    }
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line)?;
    let line = line.trim();
    let req = match line.split_once(' ') {
        None if line == "get" => Request::Get,
        Some(("set", kv)) => match kv.parse::<Knob>() {
            Ok(k) => Request::Set(k),
            Err(e) => {
                writeln!(out, "error: {e}")?;
                return Ok(());
            }
        },
        _ => {
            writeln!(out, "error: unknown request {line:?}: want 'set KEY=VALUE' or 'get'")?;
            return Ok(());
        }
    };
    let (rtx, rrx) = bounded(1);
    tx.send(Pending { req, reply: rtx })?;
    match rrx.recv_timeout(Duration::from_secs(5)) {
        Ok(Ok(msg)) => writeln!(out, "ok {msg}")?,
        Ok(Err(e)) => writeln!(out, "error: {e}")?,
        Err(_) => writeln!(out, "error: the scheduler did not answer")?,
    }
    Ok(())
}

/// Serves `path` from a thread; requests come out of the returned channel.
pub fn serve(path: &Path) -> Result<(Server, Receiver<Pending>)> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // a socket left by a killed instance: nobody answers it (preflight made sure none runs)
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path).with_context(|| format!("binding {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    let (tx, rx) = bounded(16);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let res = stream.map_err(anyhow::Error::from).and_then(|s| handle(s, &tx));
            if let Err(e) = res {
                warn!("control socket: {e:#}");
            }
        }
    });
    Ok((Server { path: path.to_path_buf() }, rx))
}

/// Why a client request failed: the caller maps these to exit codes.
#[derive(Debug)]
pub enum ClientError {
    /// Not root, or the request was refused as bad input (exit 2).
    Refused(String),
    /// No scx_sis is serving the socket (exit 1).
    NotRunning(String),
    Io(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Refused(s) | ClientError::NotRunning(s) | ClientError::Io(s) => f.write_str(s),
        }
    }
}

/// Sends one request line to the scx_sis at `path`; the reply after "ok ".
pub fn request(path: &Path, line: &str) -> std::result::Result<String, ClientError> {
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
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(io)?;
    (&stream).write_all(format!("{line}\n").as_bytes()).map_err(io)?;
    let mut reply = String::new();
    BufReader::new(&stream).read_line(&mut reply).map_err(io)?;
    let reply = reply.trim();
    if let Some(ok) = reply.strip_prefix("ok ") {
        Ok(ok.to_string())
    } else if let Some(e) = reply.strip_prefix("error: ") {
        Err(ClientError::Refused(e.to_string()))
    } else {
        Err(ClientError::Io(format!("unexpected reply {reply:?}")))
    }
}
