//! Live knobs: the mechanism switches that `scx_sis set KEY=VALUE` (and `scx_sis top --control`)
//! change on a running scx_sis without a reload. Each is a writable BPF global (.data) that the
//! loader writes through the skeleton's mmapped data section (bpf/knobs.bpf.h).
//!
//! Not a knob: the group balancer, whose groups and partitions are set when scx_sis starts
//! (`--gb-parent`, `--gb-cgroup`, `--partitions`).
//!
//! Hidden: `inject-error=1`, a test knob (tests/vm/guest/faults.sh): the BPF side calls
//! scx_bpf_error() at its next tick and the kernel ejects scx_sis. It is in no list of knobs
//! (help, errors, `scx_sis set` without a key, stats) so nobody sets it by mistake.

use std::fmt;
use std::str::FromStr;

use clap::ValueEnum;

use crate::bpf_intf;
use crate::idle_filter::SisMode;
use crate::overload::{StealMode, StealScope};

/// The knobs' current values; the start values come from the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knobs {
    pub sis_mode: SisMode,
    pub steal: StealMode,
    pub steal_scope: StealScope,
    pub oracle_every: u32,
    pub slice_us: u64,
    pub inject_error: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            sis_mode: SisMode::Full,
            steal: StealMode::On,
            steal_scope: StealScope::Node,
            oracle_every: bpf_intf::sis_consts_SIS_DFL_ORACLE_EVERY,
            slice_us: 3000,
            inject_error: false,
        }
    }
}

/// One knob change: `KEY=VALUE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knob {
    SisMode(SisMode),
    Steal(StealMode),
    StealScope(StealScope),
    OracleEvery(u32),
    SliceUs(u64),
    InjectError(bool),
}

/// Keys and what they take, for help texts and errors (inject-error is hidden).
pub const KEYS: &[(&str, &str)] = &[
    ("sis-mode", "full | filter | linear"),
    ("steal", "on | map-only | off"),
    ("steal-scope", "llc | node | all"),
    ("oracle-every", "0 or a power of two up to 65536"),
    ("slice-us", "100..=100000"),
];

/// The command-line name of a clap value (`map-only`, not `MapOnly`).
pub trait KnobName {
    fn name(&self) -> String;
}

impl<T: ValueEnum> KnobName for T {
    fn name(&self) -> String {
        self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }
}

pub fn parse_oracle_every(s: &str) -> Result<u32, String> {
    let v: u32 = s.parse().map_err(|_| format!("{s:?} is not a whole number"))?;
    if v > 65536 || (v != 0 && !v.is_power_of_two()) {
        return Err(format!("{v} is not 0 or a power of two up to 65536"));
    }
    Ok(v)
}

pub fn parse_slice_us(s: &str) -> Result<u64, String> {
    let v: u64 = s.parse().map_err(|_| format!("{s:?} is not a whole number"))?;
    if !(100..=100_000).contains(&v) {
        return Err(format!("{v} is out of range 100..=100000"));
    }
    Ok(v)
}

fn parse_inject_error(s: &str) -> Result<bool, String> {
    match s {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err("want 0 or 1 (a test knob: 1 ejects scx_sis through scx_bpf_error)".into()),
    }
}

fn enum_value<T: ValueEnum>(key: &str, v: &str) -> Result<T, String> {
    T::from_str(v, true).map_err(|_| {
        let want = KEYS.iter().find(|(k, _)| *k == key).map_or("", |(_, w)| w);
        format!("invalid value {v:?} for {key}: want {want}")
    })
}

impl FromStr for Knob {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (key, val) = s.split_once('=').ok_or_else(|| format!("{s:?} is not KEY=VALUE"))?;
        let key = key.trim().replace('_', "-");
        let val = val.trim();
        let bad = |e: String| format!("invalid value {val:?} for {key}: {e}");
        Ok(match key.as_str() {
            "sis-mode" => Knob::SisMode(enum_value(&key, val)?),
            "steal" => Knob::Steal(enum_value(&key, val)?),
            "steal-scope" => Knob::StealScope(enum_value(&key, val)?),
            "oracle-every" => Knob::OracleEvery(parse_oracle_every(val).map_err(bad)?),
            "slice-us" => Knob::SliceUs(parse_slice_us(val).map_err(bad)?),
            "inject-error" => Knob::InjectError(parse_inject_error(val).map_err(bad)?),
            "gb" | "group-balancer" => {
                return Err("no group balancer knob: the group balancer is set when scx_sis starts (--gb-parent, --gb-cgroup, --partitions)".into())
            }
            _ => {
                let keys: Vec<_> = KEYS.iter().map(|(k, _)| *k).collect();
                return Err(format!("unknown key {key:?}: one of {}", keys.join(", ")));
            }
        })
    }
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Knob::SisMode(v) => write!(f, "sis-mode={}", v.name()),
            Knob::Steal(v) => write!(f, "steal={}", v.name()),
            Knob::StealScope(v) => write!(f, "steal-scope={}", v.name()),
            Knob::OracleEvery(v) => write!(f, "oracle-every={v}"),
            Knob::SliceUs(v) => write!(f, "slice-us={v}"),
            Knob::InjectError(v) => write!(f, "inject-error={}", u8::from(*v)),
        }
    }
}

impl Knobs {
    /// The current value of `k`'s key, as a knob.
    pub fn get(&self, k: &Knob) -> Knob {
        match k {
            Knob::SisMode(_) => Knob::SisMode(self.sis_mode),
            Knob::Steal(_) => Knob::Steal(self.steal),
            Knob::StealScope(_) => Knob::StealScope(self.steal_scope),
            Knob::OracleEvery(_) => Knob::OracleEvery(self.oracle_every),
            Knob::SliceUs(_) => Knob::SliceUs(self.slice_us),
            Knob::InjectError(_) => Knob::InjectError(self.inject_error),
        }
    }

    pub fn set(&mut self, k: Knob) {
        match k {
            Knob::SisMode(v) => self.sis_mode = v,
            Knob::Steal(v) => self.steal = v,
            Knob::StealScope(v) => self.steal_scope = v,
            Knob::OracleEvery(v) => self.oracle_every = v,
            Knob::SliceUs(v) => self.slice_us = v,
            Knob::InjectError(v) => self.inject_error = v,
        }
    }

    /// Changes `k` in the scheduler `ctx`: `write` puts every value there, then `follow_up(old,
    /// ctx)` does what the change needs beyond the write (a filter rebuild, say). If that fails,
    /// the old values are written back: a change that failed leaves the old value. Returns the
    /// old value of `k`'s key.
    pub fn apply<C, E>(
        &mut self,
        k: Knob,
        ctx: &mut C,
        write: impl Fn(&Knobs, &mut C),
        follow_up: impl FnOnce(Knob, &mut C) -> Result<(), E>,
    ) -> Result<Knob, E> {
        let before = self.clone();
        let old = self.get(&k);
        self.set(k);
        write(self, ctx);
        if let Err(e) = follow_up(old, ctx) {
            *self = before;
            write(self, ctx);
            return Err(e);
        }
        Ok(old)
    }

    /// Every knob as `KEY=VALUE`, space-separated; not the hidden inject-error.
    pub fn summary(&self) -> String {
        [
            Knob::SisMode(self.sis_mode),
            Knob::Steal(self.steal),
            Knob::StealScope(self.steal_scope),
            Knob::OracleEvery(self.oracle_every),
            Knob::SliceUs(self.slice_us),
        ]
        .iter()
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(" ")
    }

    /// Writes every knob into the scheduler's .data (before load, or live through the mmap).
    pub fn write_bpf(&self, data: &mut crate::bpf_skel::types::data) {
        data.sis_mode = self.sis_mode.to_bpf();
        data.steal_mode = self.steal.to_bpf();
        data.steal_scope = self.steal_scope.to_bpf();
        data.oracle_every = self.oracle_every;
        data.slice_ns = self.slice_us * 1000;
        data.inject_error = self.inject_error.into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        assert_eq!("steal=off".parse::<Knob>(), Ok(Knob::Steal(StealMode::Off)));
        assert_eq!("steal_scope=all".parse::<Knob>(), Ok(Knob::StealScope(StealScope::All)));
        assert_eq!("sis-mode=linear".parse::<Knob>(), Ok(Knob::SisMode(SisMode::Linear)));
        assert_eq!("oracle-every=64".parse::<Knob>(), Ok(Knob::OracleEvery(64)));
        assert_eq!("slice-us=500".parse::<Knob>(), Ok(Knob::SliceUs(500)));
        assert_eq!("inject-error=1".parse::<Knob>(), Ok(Knob::InjectError(true)));
        assert_eq!("inject_error=0".parse::<Knob>(), Ok(Knob::InjectError(false)));
        assert_eq!(Knob::Steal(StealMode::MapOnly).to_string(), "steal=map-only");
        assert_eq!(Knob::InjectError(true).to_string(), "inject-error=1");
        for bad in ["steal", "steal=maybe", "oracle-every=3", "slice-us=50", "nope=1", "gb=on"] {
            assert!(bad.parse::<Knob>().is_err(), "{bad} accepted");
        }
        for bad in ["inject-error=2", "inject-error=on", "inject-error=-1", "inject-error="] {
            let e = bad.parse::<Knob>().unwrap_err();
            assert!(e.starts_with("invalid value") && e.contains("for inject-error: want 0 or 1"), "{bad}: {e}");
        }
        // hidden: in no list of knobs
        assert!(!"nope=1".parse::<Knob>().unwrap_err().contains("inject"));
        let mut k = Knobs::default();
        k.set(Knob::Steal(StealMode::Off));
        assert_eq!(k.get(&Knob::Steal(StealMode::On)), Knob::Steal(StealMode::Off));
        k.set(Knob::InjectError(true));
        assert_eq!(k.get(&Knob::InjectError(false)), Knob::InjectError(true));
        assert_eq!(k.summary(), "sis-mode=full steal=off steal-scope=node oracle-every=16 slice-us=3000");
    }

    /// A change whose follow-up fails (the filter rebuild when leaving linear mode) leaves the
    /// old value, in the loader's copy and in what was written to the scheduler.
    #[test]
    fn a_failed_change_leaves_the_old_value() {
        let mut k = Knobs { sis_mode: SisMode::Linear, ..Default::default() };
        // the "scheduler": every write lands here
        let mut written: Vec<Knobs> = vec![];
        let write = |k: &Knobs, w: &mut Vec<Knobs>| w.push(k.clone());
        let e = k.apply(Knob::SisMode(SisMode::Full), &mut written, write, |old, w| {
            assert_eq!(old, Knob::SisMode(SisMode::Linear));
            // the new value is in place when the follow-up runs
            assert_eq!(w.last().unwrap().sis_mode, SisMode::Full);
            Err("rebuild failed")
        });
        assert_eq!(e, Err("rebuild failed"));
        assert_eq!(k.sis_mode, SisMode::Linear);
        assert_eq!(written.last().unwrap(), &k);

        let old = k.apply(Knob::SisMode(SisMode::Full), &mut written, write, |_, _| Ok::<_, ()>(()));
        assert_eq!(old, Ok(Knob::SisMode(SisMode::Linear)));
        assert_eq!((k.sis_mode, written.last().unwrap().sis_mode), (SisMode::Full, SisMode::Full));
    }
}
