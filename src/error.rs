//! The error a user caused or must fix: bad input or an unfit system. main prints it as one
//! line, `scx_sis: error: <msg>`, and exits with code 2; nothing is attached.

/// Bad input or an unfit system (see the module doc).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

pub fn usage_err(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// The UsageError anywhere in `e`'s chain (context may have been added on the way up).
pub fn as_usage(e: &anyhow::Error) -> Option<&UsageError> {
    e.chain().find_map(|c| c.downcast_ref::<UsageError>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_through_context() {
        let e = usage_err("bad").context("while doing x").context("and y");
        assert_eq!(as_usage(&e).unwrap().0, "bad");
        assert!(as_usage(&anyhow::anyhow!("other")).is_none());
    }
}
