//! Reading BPF map values the way every mechanism does: sum per-CPU counters, count bitmap
//! words. A leaf: it knows no mechanism.

use anyhow::Result;
use libbpf_rs::{MapCore, MapFlags};

/// Sum over CPUs of a per-CPU array's u64 at `key` (0 if absent).
pub fn percpu_sum(map: &impl MapCore, key: u32) -> Result<u64> {
    let vals = map.lookup_percpu(&key.to_ne_bytes(), MapFlags::ANY)?.unwrap_or_default();
    vals.iter().map(|v| Ok(u64::from_ne_bytes(v[..8].try_into()?))).sum()
}

/// Bits set in the u64 bitmap word at `key` (0 if absent).
pub fn word_weight(map: &impl MapCore, key: u32) -> Result<u64> {
    match map.lookup(&key.to_ne_bytes(), MapFlags::ANY)? {
        Some(v) => Ok(u64::from_ne_bytes(v[..8].try_into()?).count_ones() as u64),
        None => Ok(0),
    }
}
