//! The external programs the suites run: which Debian package has each, whether a missing one
//! skips its suite or stops the session, and PATH lookup.

use std::path::{Path, PathBuf};

/// The tools a suite needs, with the Debian package that has them.
fn tools(suite: &str) -> &'static [(&'static str, &'static str)] {
    match suite {
        "hackbench" | "hackbench-socket" => &[("hackbench", "rt-tests")],
        "tbench" => &[("tbench", "dbench"), ("tbench_srv", "dbench")],
        "netperf-udp" | "netperf-tcp" | "netperf-rr" => &[("netperf", "netperf"), ("netserver", "netperf")],
        "schbench" => &[("schbench", "schbench")],
        "gb-sysbench" => &[("sysbench", "sysbench")],
        "wakelat" => &[("cyclictest", "rt-tests")],
        "pipe" => &[("perf", "linux-perf")],
        _ => &[],
    }
}

/// Whether a missing tool skips the suite (reported) rather than stopping the session.
pub fn optional(suite: &str) -> bool {
    matches!(suite, "netperf-udp" | "netperf-tcp" | "netperf-rr" | "schbench")
}

/// `Err(message)` naming the first tool of `suite` missing from PATH.
pub fn check_tools(suite: &str) -> Result<(), String> {
    for (tool, pkg) in tools(suite) {
        if which(tool).is_none() {
            let hint = match *pkg {
                "netperf" => "netperf is in Debian's non-free component: scripts/setup.sh installs it".to_string(),
                "schbench" => "schbench is not packaged by Debian; build it from source (kernel.org schbench.git) to run this suite".to_string(),
                p => format!("install it with `apt-get install {p}`"),
            };
            return Err(format!("{tool} not found on PATH: {hint}"));
        }
    }
    Ok(())
}

/// Full path of `prog` on PATH (or `prog` itself if it contains a '/' and exists).
pub fn which(prog: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exe = |p: &Path| p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false);
    if prog.contains('/') {
        let p = PathBuf::from(prog);
        return is_exe(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(prog)).find(|p| is_exe(p))
}
