//! The kernel's sched_ext state in sysfs, and the checks before anything is attached: the kernel
//! has sched_ext, we are root, no other sched_ext scheduler is attached. Used by the loader and
//! by `scx_sis bench`, each with its own hints.

use anyhow::Result;

use crate::error::usage_err;

pub const SCX_SYSFS: &str = "/sys/kernel/sched_ext";

fn read_trim(p: &str) -> String {
    std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default()
}

/// sched_ext's state (`disabled`, `enabled`, ...), `?` if unreadable.
pub fn state() -> String {
    let s = read_trim(&format!("{SCX_SYSFS}/state"));
    if s.is_empty() {
        "?".into()
    } else {
        s
    }
}

/// The attached scheduler's ops name, empty if none.
pub fn ops() -> String {
    read_trim(&format!("{SCX_SYSFS}/root/ops"))
}

/// How a refusal reads for one caller.
pub struct Hints {
    /// What to do on a kernel without sched_ext.
    pub no_sched_ext: &'static str,
    /// The whole message when not root.
    pub not_root: &'static str,
    /// Appended to "... is already attached (state: S); stop it first".
    pub attached: &'static str,
}

/// UsageError (exit 2) unless a scheduler can be attached now.
pub fn check(hints: &Hints) -> Result<()> {
    if !std::path::Path::new(SCX_SYSFS).exists() {
        return Err(usage_err(format!(
            "this kernel ({}) has no sched_ext (CONFIG_SCHED_CLASS_EXT): {SCX_SYSFS} is missing; {}",
            read_trim("/proc/sys/kernel/osrelease"),
            hints.no_sched_ext
        )));
    }
    if unsafe { libc::geteuid() } != 0 {
        return Err(usage_err(hints.not_root));
    }
    let state = state();
    if state != "disabled" {
        let ops = ops();
        let ops = if ops.is_empty() { "unknown" } else { ops.as_str() };
        return Err(usage_err(format!(
            "another sched_ext scheduler ({ops}) is already attached (state: {state}); stop it first{}",
            hints.attached
        )));
    }
    Ok(())
}
