//! The stats socket under a flood from a member of --stats-group: 200 connections and a 10 MB
//! request line. The server (stats_server.rs, as the loader launches it, without BPF) must stay
//! bounded in threads, memory and CPU time, take one sample per poll of the run loop, and keep
//! serving the other clients. One test in this file: it measures its whole process.

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use scx_sis::rundir::Access;
use scx_sis::stats::Metrics;
use scx_sis::stats_server::{Limits, Server};
use scx_stats::prelude::StatsClient;

const NOBODY: u32 = 65534;
const FLOOD_CONNS: usize = 200;
const BIG_LINE: usize = 10 << 20;

fn status(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let l = s.lines().find(|l| l.starts_with(key)).unwrap();
    l.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn cpu_time() -> Duration {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The flooder process: ended (its connections closed) when dropped, also when an assert fails.
struct Flooder {
    pid: libc::pid_t,
    hold: libc::c_int,
}

impl Flooder {
    /// Lets it exit and waits for it; its exit code.
    fn finish(&mut self) -> i32 {
        let mut status = 0;
        unsafe {
            libc::close(self.hold);
            assert_eq!(libc::waitpid(self.pid, &mut status, 0), self.pid);
        }
        self.pid = 0;
        libc::WEXITSTATUS(status)
    }
}

impl Drop for Flooder {
    fn drop(&mut self) {
        if self.pid > 0 {
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
            self.finish();
        }
    }
}

/// Forks the flooder: as nobody when we are root (another user than the clients served after),
/// it opens `FLOOD_CONNS` connections, sends a `BIG_LINE` line on the first, tells `ready` and
/// holds them until `hold` closes. Only syscalls after the fork (this process has threads).
fn flood(path: &std::path::Path, as_nobody: bool) -> (Flooder, libc::c_int) {
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let b = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str());
    assert!(b.len() < addr.sun_path.len());
    for (d, s) in addr.sun_path.iter_mut().zip(b) {
        *d = *s as libc::c_char;
    }
    let mut big = vec![b'x'; BIG_LINE];
    big.push(b'\n');
    let (mut ready, mut hold) = ([0; 2], [0; 2]);
    unsafe {
        assert_eq!(libc::pipe(ready.as_mut_ptr()), 0);
        assert_eq!(libc::pipe(hold.as_mut_ptr()), 0);
    }
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        unsafe {
            if as_nobody
                && (libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(NOBODY) != 0 || libc::setuid(NOBODY) != 0)
            {
                libc::_exit(3);
            }
            let mut fds = [-1; FLOOD_CONNS];
            for fd in fds.iter_mut() {
                *fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
                if libc::connect(*fd, &addr as *const _ as *const libc::sockaddr, len) != 0 {
                    libc::_exit(4);
                }
            }
            let mut off = 0;
            while off < big.len() {
                let n = libc::send(fds[0], big.as_ptr().add(off) as *const _, big.len() - off, libc::MSG_NOSIGNAL);
                if n <= 0 {
                    break; // the server closed it: as it should
                }
                off += n as usize;
            }
            libc::write(ready[1], b"r".as_ptr() as *const _, 1);
            let mut c = 0u8;
            libc::close(hold[1]);
            libc::read(hold[0], &mut c as *mut u8 as *mut _, 1);
            libc::_exit(0);
        }
    }
    unsafe {
        libc::close(ready[1]);
        libc::close(hold[0]);
    }
    (Flooder { pid, hold: hold[1] }, ready[0])
}

#[test]
fn a_flood_stays_bounded_and_others_are_served() {
    let root = unsafe { libc::geteuid() } == 0;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("stats");
    let limits = Limits::default();
    // as --stats-group opens it, to everyone here: the flooder is nobody
    let access = Access { mode: 0o666, gid: None };
    let server = Server::launch(&path, access, limits.clone(), Default::default()).unwrap();

    // the run loop's part, as main.rs runs it: serve, then sleep a poll
    let poll = Duration::from_millis(100);
    let (hub, stop, polls) = (server.hub(), Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
    let (st, pl) = (stop.clone(), polls.clone());
    let run_loop = std::thread::spawn(move || {
        while !st.load(Ordering::Relaxed) {
            hub.serve(|| Ok::<_, ()>(Metrics { nr_cpus: 3, ..Default::default() })).unwrap();
            pl.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(poll);
        }
    });
    std::thread::sleep(Duration::from_millis(200));

    let (threads0, rss0, cpu0) = (status("Threads:"), status("VmRSS:"), cpu_time());
    let (mut flooder, ready) = flood(&path, root);
    let mut c = 0u8;
    assert_eq!(unsafe { libc::read(ready, &mut c as *mut u8 as *mut _, 1) }, 1, "the flooder failed");
    std::thread::sleep(Duration::from_millis(500));
    let (threads1, rss1, cpu1) = (status("Threads:"), status("VmRSS:"), cpu_time());
    let conns = server.connections();
    eprintln!(
        "flood of {FLOOD_CONNS} connections + a {} MB line: threads {threads0} -> {threads1}, RSS {rss0} -> {rss1} kB, \
         CPU {:?}, connections served {conns}",
        BIG_LINE >> 20,
        cpu1 - cpu0
    );
    // admitted: one uid's share (the slot of the long line's, closed, goes to the next in line)
    assert!(conns <= limits.max_per_uid, "{conns} connections of one uid served");
    assert!(threads1 <= threads0 + limits.max_per_uid as u64, "threads {threads0} -> {threads1}");
    assert!(rss1 < rss0 + 4096, "RSS {rss0} -> {rss1} kB: the long line was held");
    assert!(cpu1 - cpu0 < Duration::from_millis(500), "CPU {:?}", cpu1 - cpu0);

    // the others: 8 clients asking as fast as they can for 1 s, while the flood holds its connections
    if root {
        let (samples0, polls0) = (server.hub().samples(), polls.load(Ordering::Relaxed));
        let t = Instant::now();
        let clients: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut c = StatsClient::new().set_path(&path).connect(Some(5000)).unwrap();
                    let mut n = 0;
                    while t.elapsed() < Duration::from_secs(1) {
                        let m: Metrics = c.request("stats", vec![]).unwrap();
                        assert_eq!(m.nr_cpus, 3);
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let answered: u64 = clients.into_iter().map(|c| c.join().unwrap()).sum();
        let (samples, polls) = (server.hub().samples() - samples0, polls.load(Ordering::Relaxed) - polls0);
        eprintln!("8 other clients: {answered} requests answered in 1 s from {samples} samples in {polls} polls");
        assert!(answered >= 8 * 5, "{answered} answered");
        // once per poll, not once per request
        assert!(samples <= polls + 1, "{samples} samples in {polls} polls");
    } else {
        eprintln!("SKIP other clients served during the flood: needs root to flood as another user");
    }

    assert_eq!(flooder.finish(), 0, "the flooder failed");
    let t = Instant::now();
    while server.connections() > 0 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.connections(), 0, "connections left after the flooder exited");
    stop.store(true, Ordering::Relaxed);
    run_loop.join().unwrap();
    drop(server);
    assert!(!path.exists(), "the socket outlived its server");
}
