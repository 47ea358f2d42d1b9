//! The stats socket's server. It speaks scx_stats' protocol (one JSON request line, one JSON
//! reply line: `stats` and `stats_meta`, what StatsClient, scxtop and `scx_sis top` send), but
//! with bounds, because members of `--stats-group` may connect to the root loader:
//! - a request line longer than `Limits::max_line` is refused and its connection closed (it is
//!   never read whole);
//! - connections are capped overall and per uid, and root keeps `max_per_uid` of them for itself,
//!   so one user's connections cannot lock out the others; one thread per admitted connection;
//! - the run loop takes at most one sample per poll (`Hub::serve`), however many clients ask:
//!   every client waiting then gets that sample.
//!
//! Deltas are per connection, as scx_stats computes them: the first `stats` reply of a connection
//! is its baseline (zero counters), each later one the change since the one before.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use log::{debug, warn};
use scx_stats::prelude::*;
use serde_json::Value;

use crate::access::{self, Group};
use crate::rundir::{self, Access, BoundPath};
use crate::stats::Metrics;

#[derive(Clone, Debug)]
pub struct Limits {
    /// Connections served at once.
    pub max_conns: usize,
    /// Connections of one uid; non-root uids together get `max_conns - max_per_uid`.
    pub max_per_uid: usize,
    /// Longest request line, newline included.
    pub max_line: usize,
    /// How long a request waits for a sample (the run loop may be restarting).
    pub wait: Duration,
    /// A client that does not read its replies for this long is dropped.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        // requests are ~50 bytes; a few tools (top, --monitor, scxtop, bench) per user
        Limits {
            max_conns: 64,
            max_per_uid: 8,
            max_line: 4096,
            wait: Duration::from_secs(5),
            write_timeout: Duration::from_secs(10),
        }
    }
}

#[derive(Default)]
struct HubState {
    /// A client waits for a sample newer than `seq`.
    wanted: bool,
    /// The run loop is taking a sample (begun before later requests came).
    taking: bool,
    seq: u64,
    latest: Option<Arc<Metrics>>,
    closed: bool,
}

/// Samples, from the run loop (which owns the BPF maps) to the connections waiting for them.
#[derive(Default)]
pub struct Hub {
    st: Mutex<HubState>,
    cv: Condvar,
}

impl Hub {
    /// The run loop, once per poll: takes one sample if any client waits for one; Ok(true) then.
    pub fn serve<E>(&self, sample: impl FnOnce() -> std::result::Result<Metrics, E>) -> std::result::Result<bool, E> {
        {
            let mut st = self.st.lock().unwrap();
            if !st.wanted {
                return Ok(false);
            }
            st.wanted = false;
            st.taking = true;
        }
        let m = sample();
        let mut st = self.st.lock().unwrap();
        st.taking = false;
        let m = m?;
        st.seq += 1;
        st.latest = Some(Arc::new(m));
        self.cv.notify_all();
        Ok(true)
    }

    /// Samples taken so far.
    pub fn samples(&self) -> u64 {
        self.st.lock().unwrap().seq
    }

    /// A sample begun after this call; None after `timeout` or once closed.
    fn fresh(&self, timeout: Duration) -> Option<Arc<Metrics>> {
        let deadline = Instant::now() + timeout;
        let mut st = self.st.lock().unwrap();
        // one being taken now may have read the maps before this request came
        let want = st.seq + if st.taking { 2 } else { 1 };
        st.wanted = true;
        while st.seq < want && !st.closed {
            let left = deadline.checked_duration_since(Instant::now())?;
            st = self.cv.wait_timeout(st, left).unwrap().0;
            if st.seq < want && !st.taking {
                // a sample taken meanwhile was for older requests: ask again
                st.wanted = true;
            }
        }
        if st.closed {
            return None;
        }
        st.latest.clone()
    }

    fn close(&self) {
        self.st.lock().unwrap().closed = true;
        self.cv.notify_all();
    }
}

#[derive(Default)]
struct Conns {
    total: usize,
    non_root: usize,
    by_uid: HashMap<u32, usize>,
    /// Clones of the open streams, shut down when the server stops.
    streams: HashMap<u64, UnixStream>,
    next_id: u64,
}

struct Shared {
    hub: Arc<Hub>,
    limits: Limits,
    meta: Value,
    conns: Mutex<Conns>,
    exit: AtomicBool,
}

/// The served stats socket: closed, its connections ended and its path unlinked (if still ours)
/// when dropped.
pub struct Server {
    shared: Arc<Shared>,
    wake: Option<OwnedFd>,
    accept: Option<JoinHandle<()>>,
    _bound: BoundPath,
}

fn errno_reply(errno: i32, msg: &str) -> String {
    let r = StatsResponse { errno, args: [("resp".to_string(), Value::String(msg.into()))].into_iter().collect() };
    serde_json::to_string(&r).unwrap_or_default() + "\n"
}

fn ok_reply(v: Value) -> String {
    let r = StatsResponse { errno: 0, args: [("resp".to_string(), v)].into_iter().collect() };
    serde_json::to_string(&r).unwrap_or_default() + "\n"
}

/// The next line of `r`, at most `max` bytes with its newline; Ok(None) at the end of the stream.
fn read_line_bounded(r: &mut impl BufRead, max: usize) -> std::io::Result<Option<Result<Vec<u8>, ()>>> {
    let mut buf = Vec::new();
    let n = r.take(max as u64).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') {
        // max bytes and no newline: too long (or the stream ended mid-line)
        return Ok(Some(Err(())));
    }
    Ok(Some(Ok(buf)))
}

impl Shared {
    /// The reply to one request line; `prev` is the connection's last sample.
    fn reply(&self, line: &[u8], prev: &mut Option<Arc<Metrics>>) -> String {
        let req: StatsRequest = match serde_json::from_slice(line) {
            Ok(r) => r,
            Err(e) => return errno_reply(libc::EINVAL, &format!("bad request: {e}")),
        };
        match req.req.as_str() {
            "stats" => {
                let target = req.args.get("target").map_or("top", |t| t.as_str());
                if target != "top" {
                    return errno_reply(libc::EINVAL, &format!("unknown stat target {target:?}"));
                }
                let Some(cur) = self.hub.fresh(self.limits.wait) else {
                    return errno_reply(libc::EAGAIN, "no sample from the scheduler (restarting or exiting)");
                };
                let base = prev.replace(cur.clone()).unwrap_or_else(|| cur.clone());
                match cur.delta(&base).to_json() {
                    Ok(v) => ok_reply(v),
                    Err(e) => errno_reply(libc::EINVAL, &format!("{e:#}")),
                }
            }
            "stats_meta" => ok_reply(self.meta.clone()),
            other => errno_reply(libc::EINVAL, &format!("unknown command {other:?}")),
        }
    }

    fn serve_conn(&self, s: UnixStream) -> std::io::Result<()> {
        s.set_write_timeout(Some(self.limits.write_timeout))?;
        let mut out = s.try_clone()?;
        let mut r = BufReader::with_capacity(self.limits.max_line.min(64 << 10), s);
        let mut prev = None;
        while let Some(line) = read_line_bounded(&mut r, self.limits.max_line)? {
            if self.exit.load(Ordering::Relaxed) {
                break;
            }
            let Ok(line) = line else {
                let msg = format!("request longer than {} bytes", self.limits.max_line);
                out.write_all(errno_reply(libc::E2BIG, &msg).as_bytes())?;
                break;
            };
            out.write_all(self.reply(&line, &mut prev).as_bytes())?;
        }
        Ok(())
    }

    /// Admits `s` within the limits (a thread of its own) or tells it why not and closes it.
    fn admit(self: &Arc<Self>, s: UnixStream) {
        let uid = match rundir::peer_uid(&s) {
            Ok(u) => u,
            Err(e) => return warn!("stats socket: SO_PEERCRED: {e}"),
        };
        let lim = &self.limits;
        let id = {
            let mut c = self.conns.lock().unwrap();
            let mine = c.by_uid.get(&uid).copied().unwrap_or(0);
            let full = c.total >= lim.max_conns
                || mine >= lim.max_per_uid
                || (uid != 0 && c.non_root >= lim.max_conns.saturating_sub(lim.max_per_uid));
            if full {
                drop(c);
                debug!("stats socket: refused a connection of uid {uid} (at the connection limit)");
                let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
                let _ = (&s).write_all(errno_reply(libc::EBUSY, "too many connections").as_bytes());
                return;
            }
            let Ok(clone) = s.try_clone() else { return };
            c.total += 1;
            c.non_root += usize::from(uid != 0);
            *c.by_uid.entry(uid).or_default() += 1;
            let id = c.next_id;
            c.next_id += 1;
            c.streams.insert(id, clone);
            id
        };
        let me = self.clone();
        let spawned = std::thread::Builder::new().name("stats-conn".into()).spawn(move || {
            if let Err(e) = me.serve_conn(s) {
                debug!("stats connection: {e}");
            }
            me.release(id, uid);
        });
        if let Err(e) = spawned {
            warn!("stats socket: no thread for a connection: {e}");
            self.release(id, uid);
        }
    }

    fn release(&self, id: u64, uid: u32) {
        let mut c = self.conns.lock().unwrap();
        c.streams.remove(&id);
        c.total -= 1;
        c.non_root -= usize::from(uid != 0);
        if let Some(n) = c.by_uid.get_mut(&uid) {
            *n -= 1;
            if *n == 0 {
                c.by_uid.remove(&uid);
            }
        }
    }

    fn accept_loop(self: Arc<Self>, listener: UnixListener, wake: OwnedFd) {
        loop {
            let mut fds = [
                libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: wake.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: two valid pollfds
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if self.exit.load(Ordering::Relaxed) || fds[1].revents != 0 {
                return;
            }
            if rc < 0 {
                continue;
            }
            match listener.accept() {
                Ok((s, _)) => self.admit(s),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => {
                    // out of fds, say: do not spin on it
                    warn!("stats socket: accept: {e}");
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }
}

/// Launches the stats server on `path`: root only, or readable by `group` (access.rs), with the
/// default limits (stats_server.rs).
pub fn launch_server(path: &Path, group: Option<&Group>) -> Result<Server> {
    let server = Server::launch(path, Access::group(group.map(|g| g.gid)), Limits::default(), Default::default())?;
    match group {
        Some(g) => {
            debug!("stats socket {}: mode 0660, group {} ({})", path.display(), g.name, g.gid);
            if let Some(d) = access::unsearchable_dir(path, g.gid) {
                warn!(
                    "--stats-group {}: {} is not searchable by the group, so it cannot reach {} (chmod o+x or g+x it)",
                    g.name,
                    d.display(),
                    path.display()
                );
            }
        }
        None => debug!("stats socket {}: mode 0600 (root only; --stats-group opens it to a group)", path.display()),
    }
    Ok(server)
}

impl Server {
    /// Serves the stats of `hub` at `path` with `access`.
    pub fn launch(path: &Path, access: Access, limits: Limits, hub: Arc<Hub>) -> Result<Server> {
        // the path is shared by the scx schedulers: one left by another is taken over, as
        // scx_stats does (this scx_sis is the one attached now)
        let (listener, bound) = rundir::bind(path, access, rundir::Live::Replace)?;
        listener.set_nonblocking(true)?;
        let mut p = [0; 2];
        // SAFETY: a two-int array
        if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error()).context("pipe2");
        }
        let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) };
        let meta: BTreeMap<String, StatsMeta> =
            crate::stats::metas().into_iter().map(|m| (m.name.clone(), m)).collect();
        let shared = Arc::new(Shared {
            hub,
            limits,
            meta: serde_json::to_value(meta)?,
            conns: Mutex::new(Conns::default()),
            exit: AtomicBool::new(false),
        });
        let sh = shared.clone();
        let accept = std::thread::Builder::new()
            .name("stats-accept".into())
            .spawn(move || sh.accept_loop(listener, rd))
            .context("starting the stats socket's thread")?;
        Ok(Server { shared, wake: Some(wr), accept: Some(accept), _bound: bound })
    }

    pub fn hub(&self) -> Arc<Hub> {
        self.shared.hub.clone()
    }

    /// Connections being served now.
    pub fn connections(&self) -> usize {
        self.shared.conns.lock().unwrap().total
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.exit.store(true, Ordering::Relaxed);
        self.shared.hub.close();
        // a byte wakes the accept loop (a forked child may hold the pipe open: no EOF to wait for)
        if let Some(w) = self.wake.take() {
            let _ = unsafe { libc::write(w.as_raw_fd(), b"x".as_ptr() as *const libc::c_void, 1) };
        }
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        for s in self.shared.conns.lock().unwrap().streams.values() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Metrics;

    #[test]
    fn server_socket_access() {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("scx/root/stats");
        let server = launch_server(&p, None).unwrap();
        let md = std::fs::metadata(&p).unwrap();
        assert!(md.file_type().is_socket());
        assert_eq!(md.mode() & 0o7777, 0o600);
        drop(server);

        // our own group: allowed without root too
        let gid = unsafe { libc::getegid() };
        let g = Group { name: "mine".into(), gid };
        let server = launch_server(&p, Some(&g)).unwrap();
        let md = std::fs::metadata(&p).unwrap();
        assert_eq!((md.mode() & 0o7777, md.gid()), (0o660, gid));
        // and it serves: a request is answered with a sample the run loop's side takes
        let hub = server.hub();
        std::thread::spawn(move || loop {
            if hub.serve(|| Ok::<_, ()>(Metrics { nr_cpus: 3, ..Default::default() })).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        });
        let mut c = StatsClient::new().set_path(&p).connect(Some(5000)).unwrap();
        let m: Metrics = c.request("stats", vec![]).unwrap();
        assert_eq!(m.nr_cpus, 3);
        let meta: BTreeMap<String, serde_json::Value> = c.request("stats_meta", vec![]).unwrap();
        assert!(meta.contains_key("Metrics") && meta.contains_key("LlcMetrics"), "{:?}", meta.keys());
    }
}
