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

/// A binary's main: parse the options (a clap error becomes the one line `PROG: error: <clap's
/// first line> (see PROG --help)`, exit 2; --help and --version exit 0), run, and map the outcome
/// to its exit code: 0, 2 for a UsageError anywhere in the chain, 1 for anything else.
pub fn main_with<T: clap::Parser>(prog: &str, run: impl FnOnce(T) -> anyhow::Result<()>) -> std::process::ExitCode {
    use std::process::ExitCode;
    let opts = match T::try_parse() {
        Ok(o) => o,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            let msg = e.to_string();
            let first = msg.lines().next().unwrap_or("invalid arguments");
            eprintln!("{prog}: error: {} (see {prog} --help)", first.trim_start_matches("error: ").trim());
            return ExitCode::from(2);
        }
    };
    match run(opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match as_usage(&e) {
            Some(u) => {
                eprintln!("{prog}: error: {u}");
                ExitCode::from(2)
            }
            None => {
                eprintln!("{prog}: error: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
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
