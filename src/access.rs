//! Who may read the stats socket. The scx_stats socket (`STATS_SOCKET`) serves every counter and
//! the per-CPU state: root only (mode 0600) by default, or a group's too (0660) with
//! `--stats-group`. Clients that cannot connect get one line saying why.

use std::ffi::CString;
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// scx_stats' default socket, the one scxtop reads too (shared by the scx schedulers).
pub const STATS_SOCKET: &str = "/var/run/scx/root/stats";

/// The group of `--stats-group`: the name as given and its gid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    pub gid: u32,
}

/// `--stats-group GROUP`: a group name from the group database (/etc/group, NSS), or a numeric
/// gid. Resolved while the options are parsed, so an unknown group stops scx_sis before
/// anything is loaded.
pub fn parse_group(name: &str) -> Result<Group, String> {
    if let Some(gid) = lookup_gid(name)? {
        return Ok(Group { name: name.to_string(), gid });
    }
    match name.parse::<u32>() {
        Ok(gid) => Ok(Group { name: name.to_string(), gid }),
        Err(_) => Err(format!("no group {name:?} in the group database")),
    }
}

/// The gid of group `name`, None if there is no such group.
fn lookup_gid(name: &str) -> Result<Option<u32>, String> {
    let cname = CString::new(name).map_err(|_| format!("bad group name {name:?}"))?;
    let mut buf = vec![0u8; 1024];
    loop {
        let mut grp: libc::group = unsafe { std::mem::zeroed() };
        let mut res: *mut libc::group = std::ptr::null_mut();
        // SAFETY: valid C string, out struct and buffer of the given length
        let rc = unsafe {
            libc::getgrnam_r(cname.as_ptr(), &mut grp, buf.as_mut_ptr() as *mut libc::c_char, buf.len(), &mut res)
        };
        match rc {
            0 if res.is_null() => return Ok(None),
            0 => return Ok(Some(grp.gr_gid)),
            // a group with many members: its entry needs a bigger buffer
            libc::ERANGE if buf.len() < 1 << 20 => buf.resize(buf.len() * 4, 0),
            e => {
                return Err(format!("looking up group {name:?}: {}", std::io::Error::from_raw_os_error(e)));
            }
        }
    }
}

/// The first directory above `path` that members of `gid` cannot search (no x for others, nor
/// for the group where it is the directory's group): they could not reach the socket there,
/// whatever its mode.
pub fn unsearchable_dir(path: &Path, gid: u32) -> Option<PathBuf> {
    for dir in path.ancestors().skip(1).filter(|d| !d.as_os_str().is_empty()) {
        let Ok(md) = std::fs::metadata(dir) else { return Some(dir.to_path_buf()) };
        let mode = md.mode();
        if mode & 0o001 == 0 && !(md.gid() == gid && mode & 0o010 != 0) {
            return Some(dir.to_path_buf());
        }
    }
    None
}

/// Why a client could not connect to the stats socket.
#[derive(Debug, PartialEq, Eq)]
pub enum ConnectError {
    /// Not allowed (EACCES / EPERM): the socket is root's or another group's. Exit 2.
    Denied(String),
    /// No socket, or nobody serves it: no scx_sis is running (clients wait for one).
    NotRunning(String),
    Other(String),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Denied(s) | ConnectError::NotRunning(s) | ConnectError::Other(s) => f.write_str(s),
        }
    }
}

/// Classifies a failed connect to the stats socket at `path` (an io::Error anywhere in `e`).
pub fn classify(path: &Path, e: &anyhow::Error) -> ConnectError {
    let p = path.display();
    match e.chain().find_map(|c| c.downcast_ref::<std::io::Error>()).map(|io| io.kind()) {
        Some(ErrorKind::PermissionDenied) => ConnectError::Denied(format!(
            "cannot read the stats socket {p}: permission denied (root only unless scx_sis runs with --stats-group)"
        )),
        Some(ErrorKind::NotFound | ErrorKind::ConnectionRefused) => {
            ConnectError::NotRunning(format!("no scx_sis running ({p} is not served)"))
        }
        _ => ConnectError::Other(format!("connecting to the stats socket {p}: {e:#}")),
    }
}

/// Tries the stats socket at `path` once: Err(why) only when it is not ours to read. No scx_sis
/// running is fine here (the callers wait for one), and other errors they report as they go.
pub fn check_readable(path: &Path) -> Result<(), String> {
    match std::os::unix::net::UnixStream::connect(path) {
        Err(e) if e.kind() == ErrorKind::PermissionDenied => Err(classify(path, &anyhow::Error::from(e)).to_string()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn egid() -> u32 {
        unsafe { libc::getegid() }
    }

    #[test]
    fn groups_resolve_by_name_or_number() {
        let root = parse_group("root").unwrap();
        assert_eq!((root.name.as_str(), root.gid), ("root", 0));
        assert_eq!(parse_group("4242").unwrap().gid, 4242);
        let e = parse_group("no-such-group-xyz").unwrap_err();
        assert_eq!(e, "no group \"no-such-group-xyz\" in the group database");
        assert!(parse_group("a\0b").is_err());
    }

    #[test]
    fn unsearchable_dirs_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let sock = sub.join("stats");
        let set = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        // tempdir makes its directory 0700
        set(dir.path(), 0o755);
        set(&dir.path().join("a"), 0o755);
        set(&sub, 0o750);
        let other_gid = if egid() == 4242 { 4243 } else { 4242 };
        // the group of b is ours, not other_gid's: b stops other_gid only
        assert_eq!(unsearchable_dir(&sock, egid()), None);
        assert_eq!(unsearchable_dir(&sock, other_gid), Some(sub.clone()));
        set(&sub, 0o751);
        assert_eq!(unsearchable_dir(&sock, other_gid), None);
        set(&dir.path().join("a"), 0o700);
        assert_eq!(unsearchable_dir(&sock, egid()), Some(dir.path().join("a")));
        set(&dir.path().join("a"), 0o755);
    }

    #[test]
    fn connect_errors_read_as_one_line() {
        let p = Path::new("/var/run/scx/root/stats");
        let io = |k: ErrorKind| anyhow::Error::from(std::io::Error::from(k));
        let denied = classify(p, &io(ErrorKind::PermissionDenied));
        assert_eq!(
            denied.to_string(),
            "cannot read the stats socket /var/run/scx/root/stats: permission denied \
             (root only unless scx_sis runs with --stats-group)"
        );
        assert!(matches!(denied, ConnectError::Denied(_)));
        // EPERM (an LSM) is PermissionDenied too
        let eperm = anyhow::Error::from(std::io::Error::from_raw_os_error(libc::EPERM));
        assert!(matches!(classify(p, &eperm), ConnectError::Denied(_)));
        for k in [ErrorKind::NotFound, ErrorKind::ConnectionRefused] {
            assert_eq!(
                classify(p, &io(k).context("connecting")),
                ConnectError::NotRunning("no scx_sis running (/var/run/scx/root/stats is not served)".into())
            );
        }
        assert!(matches!(classify(p, &anyhow::anyhow!("other")), ConnectError::Other(_)));

        // a real socket: nobody listening any more is "not running"; a missing one too
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join("stats");
        drop(std::os::unix::net::UnixListener::bind(&s).unwrap());
        assert_eq!(check_readable(&s), Ok(()));
        assert_eq!(check_readable(&dir.path().join("none")), Ok(()));
    }
}
