//! Host tests of bpf/overload.bpf.h through BPF_PROG_TEST_RUN: sparse layout, set/clear at
//! transitions, wrap-around walks, concurrent writers, more than 64 CPUs.

mod common;
use common::*;
use scx_sis::bpf_intf::*;
use scx_sis::overload;

#[test]
fn sparse_layout_puts_eight_cpus_per_line() {
    let mut sis = Sis::load(&Shape::new(32, 2, 16), FULL);
    // 2 LLCs x 16 CPUs: 2 lines per LLC
    assert_eq!(overload::ovl_lines(&sis.topo), 2);
    assert_eq!(overload::ovl_index(&sis.topo, 1, 9), (3, 1));
    assert!(sis.ovl_set(3));
    assert!(sis.ovl_set(25)); // LLC 1, position 9 -> line 3, bit 1
    assert_eq!(sis.ovl_lines(), vec![1 << 3, 0, 0, 1 << 1]);
}

#[test]
fn set_and_clear_only_at_transitions() {
    let mut sis = Sis::load(&Shape::new(16, 2, 8), FULL);
    assert!(sis.ovl_set(5));
    assert!(!sis.ovl_set(5), "already set: no write, no transition");
    assert_eq!(sis.stat(sis_stat_STAT_OVERLOAD_SET), 1);
    sis.ovl_clear(5);
    sis.ovl_clear(5);
    assert_eq!(sis.stat(sis_stat_STAT_OVERLOAD_CLEAR), 1);
    assert_eq!(sis.ovl_lines(), vec![0, 0]);
}

/// What the sync step, the tick and ops.stopping read for "something waits here": the CPU's own
/// bit, and no other CPU's.
#[test]
fn a_cpu_reads_its_own_bit() {
    let mut sis = Sis::load(&Shape::new(16, 2, 8), FULL);
    assert!(!sis.ovl_cpu(9));
    sis.ovl_set(9);
    assert!(sis.ovl_cpu(9));
    assert!(!sis.ovl_cpu(8), "a neighbour of the same line");
    assert!(!sis.ovl_cpu(1), "the same position in the other LLC");
    sis.ovl_clear(9);
    assert!(!sis.ovl_cpu(9));
    sis.ovl_set(15);
    assert!(sis.ovl_cpu(15) && !sis.ovl_cpu(14) && !sis.ovl_cpu(7), "the last CPU of the LLC");
}

#[test]
fn walk_wraps_from_after_the_walker_and_skips_it() {
    let mut sis = Sis::load(&Shape::new(16, 2, 8), FULL);
    for c in [1, 3, 6] {
        sis.ovl_set(c);
    }
    // CPU 3 walks: from position 4, 7 positions (itself left out) -> 6, then wraps to 1
    assert_eq!(sis.ovl_walk(0, 4, 7), vec![6, 1]);
    // CPU 6 walks: 7, 0, 1, 2, 3, 4, 5 -> 1, 3
    assert_eq!(sis.ovl_walk(0, 7, 7), vec![1, 3]);
    // another LLC's walk sees only its own map
    sis.ovl_set(12);
    assert_eq!(sis.ovl_walk(1, 0, 8), vec![12]);
    assert_eq!(sis.ovl_walk(0, 0, 8), vec![1, 3, 6]);
}

#[test]
fn walk_skips_empty_lines_without_losing_positions() {
    // 20-CPU LLCs: lines cover positions 0-7, 8-15, 16-19 (a short last line)
    let mut sis = Sis::load(&Shape::new(40, 2, 20), FULL);
    for c in [2, 19] {
        sis.ovl_set(c);
    }
    // from 8: line 8-15 empty (skipped whole), 16-19 -> 19, wrap, 0-7 -> 2
    assert_eq!(sis.ovl_walk(0, 8, 20), vec![19, 2]);
    // from 16 over 8 positions: 16..19, 0..3 -> 19, 2
    assert_eq!(sis.ovl_walk(0, 16, 8), vec![19, 2]);
    // from 3 over 16 positions: 3..18 -> nothing (19 and 2 are outside)
    assert_eq!(sis.ovl_walk(0, 3, 16), Vec::<usize>::new());
}

#[test]
fn more_than_64_cpus() {
    let mut sis = Sis::load(&Shape { nodes: 2, ..Shape::new(256, 2, 128) }, FULL);
    assert_eq!(overload::ovl_lines(&sis.topo), 16);
    for c in [130, 200, 255] {
        sis.ovl_set(c);
    }
    // CPU 210 (position 82 of LLC 1) walks from 83 -> 255 (127), wraps -> 130 (2), 200 (72)
    assert_eq!(sis.ovl_walk(1, 83, 127), vec![255, 130, 200]);
    assert_eq!(sis.ovl_lines().iter().map(|w| w.count_ones()).sum::<u32>(), 3);
}

#[test]
fn concurrent_writers_leave_a_consistent_map() {
    // CPUs 0..7 share one line. Two threads per bit pattern hammer set/clear in-kernel; the
    // final state must be exactly the final_set bits: a lost update would show here.
    let sis = Sis::load(&Shape::new(16, 2, 8), FULL);
    let prog_fd = {
        use std::os::fd::{AsFd, AsRawFd};
        sis.skel.progs.test_ovl_toggle.as_fd().as_raw_fd()
    };
    let mut handles = vec![];
    for cpu in 0..8i32 {
        handles.push(std::thread::spawn(move || {
            let mut a = OvlArgs { cpu, final_set: (cpu % 2 == 0) as u32, ret: 0 };
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(&mut a as *mut OvlArgs as *mut u8, std::mem::size_of::<OvlArgs>())
            };
            let mut opts = libbpf_rs::libbpf_sys::bpf_test_run_opts {
                sz: std::mem::size_of::<libbpf_rs::libbpf_sys::bpf_test_run_opts>() as _,
                ctx_in: bytes.as_ptr() as *const _,
                ctx_size_in: bytes.len() as u32,
                repeat: 0,
                ..Default::default()
            };
            for _ in 0..20_000 {
                let r = unsafe { libbpf_rs::libbpf_sys::bpf_prog_test_run_opts(prog_fd, &mut opts) };
                assert_eq!(r, 0);
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(sis.ovl_lines(), vec![0b0101_0101, 0]);
}

/// `steal=off` stops the stealing only: the busy-CPU balance finds its victims in the map, so
/// the map is kept while the balance is on; with --no-balance too, nothing reads it and it is
/// left alone.
#[test]
fn steal_off_keeps_the_map_for_the_balance() {
    let mut sis = Sis::load(&Shape::new(16, 2, 8), FULL);
    sis.set_steal_mode(steal_mode_STEAL_OFF);
    assert!(sis.ovl_set(5), "steal off, balance on: the map is kept");
    assert!(sis.ovl_set(12));
    assert_eq!(sis.ovl_lines(), vec![1 << 5, 1 << 4]);
    sis.ovl_clear(5);
    assert_eq!(sis.ovl_lines(), vec![0, 1 << 4]);

    let mut sis = Sis::load_with(&Shape::new(16, 2, 8), FULL, false);
    assert!(sis.ovl_set(5), "steal on, balance off: the map is kept for stealing");
    sis.set_steal_mode(steal_mode_STEAL_OFF);
    assert!(!sis.ovl_set(6), "neither: no write");
    sis.ovl_clear(5);
    assert_eq!(sis.ovl_lines(), vec![1 << 5, 0], "left as it was (the loader empties it)");
    sis.set_steal_mode(steal_mode_STEAL_MAP_ONLY);
    assert!(sis.ovl_set(6));
}
