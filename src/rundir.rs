//! Owned paths of a running scx_sis: its run directory (`/var/run/scx`), the lock that makes it
//! the only scx_sis, and the unix sockets it serves there.
//!
//! The loader runs as root and others may connect to its sockets (`--stats-group`), so:
//! - directories are created with explicit modes, and no directory on the way may be writable by
//!   someone else (a sticky one owned by root, like /tmp, excepted: there nobody else can rename
//!   or remove an entry we own, and what we open there is checked to be ours);
//! - owner and mode are changed through a file descriptor opened without following symlinks;
//! - a socket is unlinked at exit only if the path still names the inode it bound, so a second
//!   instance's socket is never removed;
//! - one lock file (flock) per run directory: a second scx_sis stops before it touches any path.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::error::usage_err;

/// The scx schedulers' run directory (scx_stats' default base path).
pub const RUN_DIR: &str = "/var/run/scx";

/// The lock file of scx_sis in `run_dir`.
pub fn lock_path(run_dir: &Path) -> PathBuf {
    run_dir.join("scx_sis.lock")
}

fn cstr(p: &Path) -> Result<CString> {
    CString::new(p.as_os_str().as_bytes()).with_context(|| format!("bad path {}", p.display()))
}

fn euid() -> u32 {
    unsafe { libc::geteuid() }
}

/// Opens `p` with `flags | O_NOFOLLOW | O_CLOEXEC`.
fn open_nofollow(p: &Path, flags: libc::c_int, mode: libc::mode_t) -> std::io::Result<OwnedFd> {
    let c = CString::new(p.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: valid C string; the fd returned is ours
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC, mode as libc::c_uint) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: &OwnedFd) -> std::io::Result<libc::stat> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// Someone other than root or us could change what `mode`/`uid` guards.
fn foreign_writable(uid: u32, mode: u32) -> Option<&'static str> {
    if uid != 0 && uid != euid() {
        Some("owned by another user")
    } else if mode & 0o022 != 0 && !(mode & libc::S_ISVTX != 0 && uid == 0) {
        Some("writable by group or others")
    } else {
        None
    }
}

/// Every existing directory above `dir` (and symlinks on the way) must be root's or ours and not
/// writable by others, except sticky directories of root's.
fn check_ancestors(dir: &Path) -> Result<()> {
    let abs = if dir.is_absolute() { dir.to_path_buf() } else { std::env::current_dir()?.join(dir) };
    for a in abs.ancestors().skip(1) {
        let lmd = std::fs::symlink_metadata(a).with_context(|| format!("checking {}", a.display()))?;
        if lmd.file_type().is_symlink() && lmd.uid() != 0 && lmd.uid() != euid() {
            return Err(usage_err(format!(
                "refusing {}: {} is a symlink owned by another user",
                dir.display(),
                a.display()
            )));
        }
        let md = std::fs::metadata(a).with_context(|| format!("checking {}", a.display()))?;
        if let Some(why) = foreign_writable(md.uid(), md.mode()) {
            return Err(usage_err(format!("refusing {}: {} is {why}", dir.display(), a.display())));
        }
    }
    Ok(())
}

/// Makes sure `dir` is a directory of ours with `mode`, creating it (and missing parents, with the
/// same mode) if needed; never through a symlink. Refuses one that someone else may write to.
pub fn ensure_dir(dir: &Path, mode: u32) -> Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        if std::fs::symlink_metadata(parent).is_err() {
            ensure_dir(parent, mode)?;
        }
    }
    check_ancestors(dir)?;
    let c = cstr(dir)?;
    // SAFETY: valid C string
    let created = unsafe { libc::mkdir(c.as_ptr(), mode) } == 0;
    if !created {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(e).with_context(|| format!("creating {}", dir.display()));
        }
    }
    let fd = open_nofollow(dir, libc::O_RDONLY | libc::O_DIRECTORY, 0)
        .with_context(|| format!("opening {} (a directory, not a symlink)", dir.display()))?;
    let st = fstat(&fd)?;
    if created {
        // the umask may have taken bits away: the mode is ours to say
        if unsafe { libc::fchmod(fd.as_raw_fd(), mode) } != 0 {
            return Err(std::io::Error::last_os_error()).with_context(|| format!("chmod {}", dir.display()));
        }
    } else if let Some(why) = foreign_writable(st.st_uid, st.st_mode) {
        return Err(usage_err(format!("refusing {}: it is {why}", dir.display())));
    }
    Ok(())
}

/// The lock that makes this the only scx_sis of its run directory; released when dropped (and
/// by the kernel when the process dies, so a killed instance leaves no stale lock).
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Takes the lock file `path` (created 0600, never through a symlink). Another scx_sis holding it
/// is a usage error: it is running, or restarting after a CPU hotplug.
pub fn lock(path: &Path) -> Result<Lock> {
    if let Some(dir) = path.parent() {
        ensure_dir(dir, 0o755)?;
    }
    let fd = open_nofollow(path, libc::O_RDWR | libc::O_CREAT, 0o600)
        .with_context(|| format!("opening the lock file {}", path.display()))?;
    let st = fstat(&fd)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_uid != euid() {
        bail!("refusing the lock file {}: not a regular file of ours", path.display());
    }
    // SAFETY: our fd
    if unsafe { libc::flock(fd.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let pid = std::fs::read_to_string(path).unwrap_or_default();
            let pid = pid.trim();
            return Err(usage_err(format!(
                "another scx_sis is running{} (it holds {}); stop it first",
                if pid.is_empty() { String::new() } else { format!(" (pid {pid})") },
                path.display()
            )));
        }
        return Err(e).with_context(|| format!("locking {}", path.display()));
    }
    let mut file = File::from(fd);
    // the pid, for the message above; the lock, not the file's content, is what counts
    let _ = file.set_len(0);
    let _ = writeln!(file, "{}", std::process::id());
    Ok(Lock { _file: file })
}

/// A socket path this process bound; unlinked when dropped, but only while it still names the
/// inode bound (another instance may have replaced it).
#[derive(Debug)]
pub struct BoundPath {
    path: PathBuf,
    /// Holds the inode: while it is open its number cannot be reused for another file.
    fd: OwnedFd,
    dev: u64,
    ino: u64,
}

impl BoundPath {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path still names the socket bound.
    pub fn is_ours(&self) -> bool {
        let _ = &self.fd;
        std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.dev() == self.dev && m.ino() == self.ino)
    }
}

impl Drop for BoundPath {
    fn drop(&mut self) {
        if self.is_ours() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Who may connect to a served socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// 0o600, or 0o660 with a group.
    pub mode: u32,
    pub gid: Option<u32>,
}

impl Access {
    pub const OWNER: Access = Access { mode: 0o600, gid: None };

    pub fn group(gid: Option<u32>) -> Access {
        match gid {
            Some(g) => Access { mode: 0o660, gid: Some(g) },
            None => Access::OWNER,
        }
    }
}

/// What `bind` does with a socket someone still serves at its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Live {
    /// An error: the path is another process's.
    Refuse,
    /// Replace it: a path shared with other programs, which replace ours the same way.
    Replace,
}

/// Binds a unix socket at `path` with `access` from its first moment: its directory is made (0755,
/// see ensure_dir), a socket left there by a dead process is replaced (nothing else is: a file or
/// symlink there is an error), the mode comes from the umask at bind and the group is set through
/// an O_PATH|O_NOFOLLOW descriptor checked to be the socket bound.
pub fn bind(path: &Path, access: Access, live: Live) -> Result<(UnixListener, BoundPath)> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        ensure_dir(dir, 0o755)?;
    }
    match std::fs::symlink_metadata(path) {
        Ok(md) if md.file_type().is_socket() => {
            if live == Live::Refuse && UnixStream::connect(path).is_ok() {
                return Err(usage_err(format!("{} is served by another process; stop it first", path.display())));
            }
            std::fs::remove_file(path).with_context(|| format!("removing the stale socket {}", path.display()))?;
        }
        Ok(_) => return Err(usage_err(format!("refusing {}: it exists and is not a socket", path.display()))),
        Err(_) => {}
    }
    // umask is per process; it is only ever narrowed here, for the bind
    let old = unsafe { libc::umask(0o777 & !access.mode) };
    let listener = UnixListener::bind(path);
    unsafe { libc::umask(old) };
    let listener = listener.with_context(|| format!("binding {}", path.display()))?;
    // nobody else may write to the directory (ensure_dir): what the path names now is our socket
    let fd = open_nofollow(path, libc::O_PATH, 0).with_context(|| format!("opening {}", path.display()))?;
    let st = fstat(&fd)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        bail!("{} is not the socket bound", path.display());
    }
    set_access(&fd, access).with_context(|| format!("setting the access of {}", path.display()))?;
    Ok((listener, BoundPath { path: path.to_path_buf(), fd, dev: st.st_dev, ino: st.st_ino }))
}

/// chown (group) and chmod of the file behind an O_PATH fd: never a symlink's target.
fn set_access(fd: &OwnedFd, access: Access) -> Result<()> {
    let empty = c"";
    if let Some(gid) = access.gid {
        // SAFETY: our fd, an empty path with AT_EMPTY_PATH: the fd's own file
        if unsafe { libc::fchownat(fd.as_raw_fd(), empty.as_ptr(), u32::MAX, gid, libc::AT_EMPTY_PATH) } != 0 {
            return Err(std::io::Error::last_os_error()).context("chown");
        }
    }
    // fchmod does not take an O_PATH fd; fchmodat2 (6.6+) does with AT_EMPTY_PATH, else the fd's
    // /proc link, which names the open file, not a path to look up again
    let rc =
        unsafe { libc::syscall(libc::SYS_fchmodat2, fd.as_raw_fd(), empty.as_ptr(), access.mode, libc::AT_EMPTY_PATH) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EINVAL)) {
            return Err(e).context("chmod");
        }
        let proc_path = cstr(Path::new(&format!("/proc/self/fd/{}", fd.as_raw_fd())))?;
        if unsafe { libc::chmod(proc_path.as_ptr(), access.mode) } != 0 {
            return Err(std::io::Error::last_os_error()).context("chmod");
        }
    }
    Ok(())
}

/// Gives the file at `path` `access`, never following a symlink there (an error instead).
pub fn restrict(path: &Path, access: Access) -> Result<()> {
    let fd = open_nofollow(path, libc::O_PATH, 0).with_context(|| format!("opening {}", path.display()))?;
    if fstat(&fd)?.st_mode & libc::S_IFMT == libc::S_IFLNK {
        bail!("refusing {}: a symlink", path.display());
    }
    set_access(&fd, access)
}

/// uid of the process at the other end of `s` (SO_PEERCRED: its credentials at connect()).
pub fn peer_uid(s: &UnixStream) -> std::io::Result<u32> {
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a ucred-sized out buffer
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
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred.uid)
}

/// Writes `data` to `path` as a new file replacing what is there: written to a fresh name in the
/// same directory (O_CREAT|O_EXCL|O_NOFOLLOW: no planted file or symlink is written through),
/// then renamed over `path` (which replaces a symlink there, not its target). Readers see the old
/// content or the whole new one.
pub fn write_replace(path: &Path, data: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().with_context(|| format!("{} names no file", path.display()))?;
    let mut n = 0u32;
    let (tmp, fd) = loop {
        let mut t = name.to_os_string();
        t.push(format!(".{}.{n}.tmp", std::process::id()));
        let tmp = dir.join(t);
        match open_nofollow(&tmp, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o644) {
            Ok(fd) => break (tmp, fd),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(e).with_context(|| format!("creating {}", tmp.display())),
        }
    };
    let mut f = File::from(fd);
    let res = f.write_all(data).and_then(|_| f.sync_all()).and_then(|_| std::fs::rename(&tmp, path));
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res.with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
    }

    fn set_mode(p: &Path, m: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    }

    #[test]
    fn dirs_get_their_mode_and_writable_parents_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let run = t.path().join("run/scx/root");
        ensure_dir(&run, 0o755).unwrap();
        assert_eq!((mode(&t.path().join("run/scx")), mode(&run)), (0o755, 0o755));
        // existing and fine: kept
        ensure_dir(&run, 0o755).unwrap();

        // a parent anyone may write to: someone could swap the directory
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        set_mode(&open, 0o777);
        let e = ensure_dir(&open.join("scx"), 0o755).unwrap_err();
        assert!(e.to_string().contains("is writable by group or others"), "{e:#}");
        assert!(crate::error::as_usage(&e).is_some());
        assert!(!open.join("scx").exists());
        // the directory itself writable by others: refused too
        let e = ensure_dir(&open, 0o755).unwrap_err();
        assert!(e.to_string().contains("writable by group or others"), "{e:#}");

        // sticky and root's (like /tmp): allowed when root runs this
        set_mode(&open, 0o1777);
        let r = ensure_dir(&open.join("scx"), 0o755);
        if euid() == 0 {
            r.unwrap();
        } else {
            assert!(r.is_err(), "a sticky directory not root's was accepted");
        }

        // a symlink where the directory should be: not followed
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        set_mode(&elsewhere, 0o700);
        std::os::unix::fs::symlink(&elsewhere, t.path().join("link")).unwrap();
        let e = ensure_dir(&t.path().join("link"), 0o755).unwrap_err();
        assert!(format!("{e:#}").contains("not a symlink"), "{e:#}");
        assert_eq!(mode(&elsewhere), 0o700);
    }

    #[test]
    fn one_instance_holds_the_lock() {
        let t = tempfile::tempdir().unwrap();
        let p = lock_path(t.path());
        let held = lock(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap().trim(), std::process::id().to_string());
        // a second open file description: as a second process would
        let e = lock(&p).unwrap_err();
        let u = crate::error::as_usage(&e).expect("a usage error");
        assert!(u.0.starts_with("another scx_sis is running"), "{u}");
        assert!(u.0.contains(&p.display().to_string()), "{u}");
        drop(held);
        let _again = lock(&p).unwrap();

        // a symlink planted as the lock file is not followed
        let q = t.path().join("sub/scx_sis.lock");
        std::fs::create_dir(t.path().join("sub")).unwrap();
        let target = t.path().join("victim");
        std::fs::write(&target, "keep").unwrap();
        std::os::unix::fs::symlink(&target, &q).unwrap();
        assert!(lock(&q).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn only_the_bound_socket_is_unlinked() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("scx/ctl");
        let (l1, b1) = bind(&p, Access::OWNER, Live::Refuse).unwrap();
        assert_eq!(mode(&p), 0o600);
        assert!(b1.is_ours());
        // a live server is not taken over
        let e = bind(&p, Access::OWNER, Live::Refuse).unwrap_err();
        assert!(e.to_string().contains("is served by another process"), "{e:#}");
        // its listener gone (a killed instance): the stale socket is replaced
        drop(l1);
        let (_l2, b2) = bind(&p, Access::OWNER, Live::Refuse).unwrap();
        assert!(!b1.is_ours() && b2.is_ours());
        // the first instance exits: the second's socket stays
        drop(b1);
        assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_socket());
        drop(b2);
        assert!(std::fs::symlink_metadata(&p).is_err());

        // the group's mode and group, from the bind on
        let gid = unsafe { libc::getegid() };
        let (_l, _b) = bind(&p, Access::group(Some(gid)), Live::Refuse).unwrap();
        let md = std::fs::metadata(&p).unwrap();
        assert_eq!((md.mode() & 0o7777, md.gid()), (0o660, gid));

        // not a socket there: refused, left alone
        let f = t.path().join("scx/file");
        std::fs::write(&f, "x").unwrap();
        assert!(bind(&f, Access::OWNER, Live::Refuse).is_err());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "x");
    }

    #[test]
    fn restrict_never_follows_a_symlink() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("target");
        std::fs::write(&target, "").unwrap();
        set_mode(&target, 0o644);
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(restrict(&link, Access::OWNER).is_err());
        assert_eq!(mode(&target), 0o644);
        restrict(&target, Access::OWNER).unwrap();
        assert_eq!(mode(&target), 0o600);
    }

    #[test]
    fn write_replace_does_not_write_through_symlinks() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let out = t.path().join("stats.json");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_replace(&out, b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&out).unwrap().file_type().is_file());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "{}\n");
        // again over a regular file; no temporary file left behind
        write_replace(&out, b"2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "2\n");
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 2);
        assert!(write_replace(&t.path().join("no/such/dir/x"), b"").is_err());
    }
}
