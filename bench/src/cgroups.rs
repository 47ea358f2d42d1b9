//! cgroup v2 plumbing for the `cg-*` fairness cases: a throw-away tree with the cpu controller
//! on, cpu.weight set, processes moved in, everything removed afterwards.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Where cgroup2 is mounted (the first cgroup2 line of /proc/self/mounts).
pub fn cgroup2_mount(mounts: &str) -> Option<PathBuf> {
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 2 && f[2] == "cgroup2").then(|| PathBuf::from(f[1]))
    })
}

/// The cgroup2 root, mounted at /sys/fs/cgroup if nothing has mounted it (a bare VM).
fn cgroup2_root() -> Result<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").context("read /proc/self/mounts")?;
    if let Some(p) = cgroup2_mount(&mounts) {
        return Ok(p);
    }
    let dir = Path::new("/sys/fs/cgroup");
    std::fs::create_dir_all(dir).ok();
    let c = |s: &str| std::ffi::CString::new(s).unwrap();
    let (src, target, fs) = (c("cgroup2"), c("/sys/fs/cgroup"), c("cgroup2"));
    if unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) } != 0 {
        bail!("mount cgroup2 at /sys/fs/cgroup: {}", std::io::Error::last_os_error());
    }
    Ok(dir.to_path_buf())
}

fn write(path: &Path, what: &str) -> Result<()> {
    std::fs::write(path, what).with_context(|| format!("write '{what}' to {}", path.display()))
}

/// Turn the cpu controller on for `dir`'s children.
fn enable_cpu(dir: &Path) -> Result<()> {
    let ctl = dir.join("cgroup.subtree_control");
    if std::fs::read_to_string(&ctl).unwrap_or_default().split_whitespace().any(|c| c == "cpu") {
        return Ok(());
    }
    write(&ctl, "+cpu").context("the cpu controller (CONFIG_CGROUP_SCHED; with sched_ext, CONFIG_EXT_GROUP_SCHED)")
}

/// A cgroup tree under a fresh directory of the cgroup2 root; removed (leaves first) on drop,
/// so the processes in it must be gone by then: keep the hogs' owner declared after it.
pub struct CgTree {
    base: PathBuf,
    made: Vec<PathBuf>,
}

impl CgTree {
    pub fn new(name: &str) -> Result<CgTree> {
        let root = cgroup2_root()?;
        enable_cpu(&root)?;
        let base = root.join(format!("{name}.{}", std::process::id()));
        std::fs::create_dir(&base).with_context(|| format!("mkdir {}", base.display()))?;
        let mut t = CgTree { base, made: Vec::new() };
        t.made.push(t.base.clone());
        enable_cpu(&t.base)?;
        Ok(t)
    }

    /// A tree in `dir`, an existing cgroup (cpu controller on for its children) that stays:
    /// only what `add` makes is removed.
    pub fn within(dir: &Path) -> CgTree {
        CgTree { base: dir.to_path_buf(), made: Vec::new() }
    }

    /// Create `rel` (parents first, e.g. "a" then "a/x") with cpu.weight `weight`.
    pub fn add(&mut self, rel: &str, weight: u32) -> Result<PathBuf> {
        let dir = self.mkdir(rel)?;
        write(&dir.join("cpu.weight"), &weight.to_string())?;
        Ok(dir)
    }

    /// Create `rel` with the default cpu.weight (the cpu controller on in its parent).
    pub fn mkdir(&mut self, rel: &str) -> Result<PathBuf> {
        let dir = self.base.join(rel);
        std::fs::create_dir(&dir).with_context(|| format!("mkdir {}", dir.display()))?;
        self.made.push(dir.clone());
        if let Some(parent) = dir.parent() {
            enable_cpu(parent)?;
        }
        Ok(dir)
    }

    /// A chain of `depth` >= 1 cgroups from a fresh directory of the cgroup2 root (level 1) down,
    /// the cpu controller on at each level; the deepest one's path.
    pub fn chain(name: &str, depth: u32) -> Result<(CgTree, PathBuf)> {
        let mut t = CgTree::new(name)?;
        let mut rel = PathBuf::new();
        for level in 2..=depth {
            rel.push(format!("l{level}"));
            t.mkdir(&rel.to_string_lossy())?;
        }
        let deepest = if depth > 1 { t.base.join(&rel) } else { t.base.clone() };
        Ok((t, deepest))
    }

    /// Move process `pid` into `dir`.
    pub fn enter(dir: &Path, pid: libc::pid_t) -> Result<()> {
        write(&dir.join("cgroup.procs"), &pid.to_string())
    }
}

impl Drop for CgTree {
    fn drop(&mut self) {
        for d in self.made.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cgroup2_mount() {
        let m = "sysfs /sys sysfs rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n";
        assert_eq!(cgroup2_mount(m), Some(PathBuf::from("/sys/fs/cgroup")));
        assert_eq!(cgroup2_mount("cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"), None);
    }
}
