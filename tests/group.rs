//! Group balancer: `--partitions` parsing, the settle algorithm on synthetic loads
//! (groups end in distinct partitions, hysteresis stops ping-pong, light loads fit), and
//! bpf/group.bpf.h's cgroup and run-time state through BPF_PROG_TEST_RUN.
mod common;

use common::*;
use libbpf_rs::{MapCore, MapFlags};
use scx_sis::bpf_intf::*;
use scx_sis::group::{parse_partitions, settle, GroupLoad, PartLoad, HYSTERESIS};
use scx_sis::test_intf::*;

// ---- --partitions ----

#[test]
fn partitions_parse() {
    let topo = topology_of(&Shape::new(8, 2, 4));
    assert_eq!(parse_partitions("0-3;4-7", &topo).unwrap(), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
    // the proposal's gb_ctrl form, with a trailing ';'; CPUs left out are in no partition
    assert_eq!(parse_partitions("0-1,4;5;", &topo).unwrap(), vec![vec![0, 1, 4], vec![5]]);
}

#[test]
fn partitions_refused() {
    let mut shape = Shape::new(8, 2, 4);
    shape.offline = vec![6];
    let topo = topology_of(&shape);
    for (spec, want) in [
        ("0-3;3-7", "CPU 3 is in partitions 0 and 1"),
        ("0-3;4-5,8", "CPU 8 is out of range (CPU ids here are 0-7)"),
        ("0-3;4-6", "CPU 6 is not online"),
        ("", "empty"),
        (";", "empty"),
        ("0-3;;4-5", "partition 1 is empty"),
        ("0-3;x", "partition 1"),
        ("3-1", "partition 0"),
    ] {
        let e = parse_partitions(spec, &topo).expect_err(spec);
        assert!(e.contains(want), "{spec:?}: {e:?} lacks {want:?}");
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
    // ids past nr_cpu_ids are refused as read, before a range is expanded: at once, not after
    // building billions of entries or overflowing at usize::MAX
    let t0 = std::time::Instant::now();
    for (spec, want) in [
        ("0-4000000000", "partition 0 (0-4000000000): CPU 4000000000 is out of range (CPU ids here are 0-7)"),
        (
            "0-3;4-18446744073709551615",
            "partition 1 (4-18446744073709551615): CPU 18446744073709551615 is out of range",
        ),
        ("18446744073709551615", "CPU 18446744073709551615 is out of range"),
    ] {
        let e = parse_partitions(spec, &topo).expect_err(spec);
        assert!(e.contains(want), "{spec:?}: {e:?} lacks {want:?}");
    }
    assert!(t0.elapsed() < std::time::Duration::from_secs(1), "took {:?}", t0.elapsed());
    let many = (0..8).map(|c| c.to_string()).collect::<Vec<_>>().join(";");
    let topo = topology_of(&Shape::new(64, 2, 32));
    assert!(parse_partitions(&many, &topo).is_ok());
    let too_many = (0..33).map(|c| c.to_string()).collect::<Vec<_>>().join(";");
    assert!(parse_partitions(&too_many, &topo).unwrap_err().contains("at most 32"));
}

// ---- settle ----

fn parts(n: usize, cap: f64) -> Vec<PartLoad> {
    (0..n).map(|_| PartLoad { capacity: cap, load: 0.0 }).collect()
}

/// Groups with `loads`, all measured on partition 0, at `current`; partition loads to match.
fn squeezed(ps: &mut [PartLoad], loads: &[f64], current: Option<usize>) -> Vec<GroupLoad> {
    ps[0].load = loads.iter().sum();
    loads
        .iter()
        .map(|&l| {
            let mut by_part = vec![0.0; ps.len()];
            by_part[0] = l;
            GroupLoad { load: l, by_part, current }
        })
        .collect()
}

/// Runs `settle` to a fixed point the way the loader does: each group's measured load
/// spreads over the partitions as the choice says; returns the choices after `rounds`.
fn run(ps: &[PartLoad], loads: &[f64], rounds: usize) -> Vec<usize> {
    let mut cur: Vec<Option<usize>> = vec![None; loads.len()];
    let mut out = vec![];
    for _ in 0..rounds {
        let mut p = ps.to_vec();
        let gs: Vec<GroupLoad> = loads
            .iter()
            .zip(&cur)
            .map(|(&l, c)| {
                let mut by_part = vec![0.0; ps.len()];
                by_part[c.unwrap_or(0)] = l;
                p[c.unwrap_or(0)].load += l;
                GroupLoad { load: l, by_part, current: *c }
            })
            .collect();
        out = settle(&p, &gs, HYSTERESIS);
        cur = out.iter().map(|&c| Some(c)).collect();
    }
    out
}

#[test]
fn busy_groups_end_in_distinct_partitions() {
    let mut ps = parts(2, 4.0);
    let gs = squeezed(&mut ps, &[4.0, 4.0], Some(0));
    let c = settle(&ps, &gs, HYSTERESIS);
    assert_ne!(c[0], c[1], "{c:?}");
    assert!(c.contains(&0), "one stays where it is: {c:?}");

    // four groups, four partitions of 8 CPUs (the proposal's scenario scaled): one each
    let c = run(&parts(4, 8.0), &[8.0, 8.0, 8.0, 8.0], 3);
    let mut sorted = c.clone();
    sorted.sort();
    assert_eq!(sorted, [0, 1, 2, 3], "{c:?}");
}

#[test]
fn light_groups_fit_apart() {
    // groups that fit: still each its own partition (nothing lost, caches gained)
    let c = run(&parts(2, 4.0), &[0.5, 0.5], 3);
    assert_ne!(c[0], c[1], "{c:?}");
}

#[test]
fn heavy_and_light_groups_balance_by_load() {
    // 3 groups on 2 partitions: the heavy one alone, the two light ones together
    let c = run(&parts(2, 4.0), &[3.5, 1.5, 1.0], 4);
    assert_ne!(c[0], c[1]);
    assert_eq!(c[1], c[2], "{c:?}");
}

#[test]
fn other_load_counts() {
    // partition 0 is busy with ungrouped work: the group goes to partition 1
    let ps = vec![PartLoad { capacity: 4.0, load: 3.0 }, PartLoad { capacity: 4.0, load: 0.0 }];
    let g = GroupLoad { load: 2.0, by_part: vec![0.0, 0.0], current: None };
    assert_eq!(settle(&ps, &[g], HYSTERESIS), [1]);
}

/// Three equal groups on two partitions whose loads wobble by +-10% every period: without
/// hysteresis the heaviest-first order flips and groups hop; with it, after settling, none moves.
#[test]
fn hysteresis_stops_ping_pong() {
    let moves = |hyst: f64| {
        let ps = parts(2, 4.0);
        let mut cur: Vec<Option<usize>> = vec![None; 3];
        let mut moves = 0;
        for round in 0..40 {
            let loads: Vec<f64> = (0..3).map(|g| 2.0 * (1.0 + 0.1 * (((round + g) % 3) as f64 - 1.0))).collect();
            let mut p = ps.clone();
            let gs: Vec<GroupLoad> = loads
                .iter()
                .zip(&cur)
                .map(|(&l, c)| {
                    let mut by_part = vec![0.0; 2];
                    by_part[c.unwrap_or(0)] = l;
                    p[c.unwrap_or(0)].load += l;
                    GroupLoad { load: l, by_part, current: *c }
                })
                .collect();
            let out = settle(&p, &gs, hyst);
            if round >= 2 {
                moves += out.iter().zip(&cur).filter(|(o, c)| Some(**o) != **c).count();
            }
            cur = out.into_iter().map(Some).collect();
        }
        moves
    };
    assert!(moves(0.0) > 0, "the scenario must ping-pong without hysteresis");
    assert_eq!(moves(HYSTERESIS), 0);
}

#[test]
fn idle_groups_stay() {
    // a settled group with next to no load stays even where the other load is higher
    let ps = vec![PartLoad { capacity: 4.0, load: 3.0 }, PartLoad { capacity: 4.0, load: 0.0 }];
    let g = GroupLoad { load: 0.01, by_part: vec![0.01, 0.0], current: Some(0) };
    assert_eq!(settle(&ps, &[g], HYSTERESIS), [0]);
}

// ---- group.bpf.h: cgroup and run-time state ----

fn gb(s: &mut Sis, op: u32, cgid: u64, parent: u64, part: i32, delta: u64) -> gb_args {
    let mut a: gb_args = zeroed();
    a.op = op;
    a.cgid = cgid;
    a.parent = parent;
    a.part = part;
    a.delta = delta;
    assert_eq!(Sis::run(&mut s.skel.progs.test_gb, &mut a), 0);
    a
}

fn group_of(s: &mut Sis, cgid: u64) -> (u64, i32) {
    let a = gb(s, gb_test_op_GB_T_GROUP_OF, cgid, 0, 0, 0);
    (a.ret, a.part)
}

fn keys(m: &impl MapCore) -> Vec<u64> {
    let mut k: Vec<u64> = m.keys().map(|k| u64::from_ne_bytes(k[..8].try_into().unwrap())).collect();
    k.sort();
    k
}

#[test]
fn cgroups_join_groups_and_leave_no_state() {
    let mut s = Sis::load(&Shape::new(16, 2, 8), FULL);
    let (parent, solo) = (100u64, 200u64);
    s.skel.maps.gb_optin.update(&parent.to_ne_bytes(), &gb_consts_GB_OPT_PARENT.to_ne_bytes(), MapFlags::ANY).unwrap();
    s.skel.maps.gb_optin.update(&solo.to_ne_bytes(), &gb_consts_GB_OPT_CGROUP.to_ne_bytes(), MapFlags::ANY).unwrap();
    let init = |s: &mut Sis, c: u64, p: u64| gb(s, gb_test_op_GB_T_CGROUP_INIT, c, p, 0, 0);
    init(&mut s, parent, 1);
    init(&mut s, 101, parent); // child of --gb-parent: a group
    init(&mut s, 102, parent);
    init(&mut s, 1011, 101); // grandchild: inherits 101
    init(&mut s, 10111, 1011);
    init(&mut s, solo, 1); // --gb-cgroup
    init(&mut s, 300, 1); // not opted in
    assert_eq!(group_of(&mut s, parent), (0, -1), "the parent itself is no group");
    assert_eq!(group_of(&mut s, 101), (101, -1), "a new group is not settled yet");
    assert_eq!(group_of(&mut s, 10111).0, 101);
    assert_eq!(group_of(&mut s, 102).0, 102);
    assert_eq!(group_of(&mut s, solo).0, solo);
    assert_eq!(group_of(&mut s, 300).0, 0);
    assert_eq!(keys(&s.skel.maps.gb_group_map), [101, 102, solo]);
    assert_eq!(keys(&s.skel.maps.gb_acct_map), [101, 102, solo]);

    // the loader's choice shows through
    let g = gb_group { part: 1, __pad: 0 };
    let bytes = unsafe { std::slice::from_raw_parts(&g as *const _ as *const u8, std::mem::size_of::<gb_group>()) };
    s.skel.maps.gb_group_map.update(&101u64.to_ne_bytes(), bytes, MapFlags::EXIST).unwrap();
    assert_eq!(group_of(&mut s, 1011), (101, 1));

    // run time by partition; a CPU of no partition goes to the last slot
    gb(&mut s, gb_test_op_GB_T_CHARGE, 101, 0, 1, 700);
    gb(&mut s, gb_test_op_GB_T_CHARGE, 101, 0, 1, 300);
    gb(&mut s, gb_test_op_GB_T_CHARGE, 101, 0, -1, 50);
    gb(&mut s, gb_test_op_GB_T_CHARGE, 999, 0, 0, 50); // no such group: nothing
    let vals = s.skel.maps.gb_acct_map.lookup_percpu(&101u64.to_ne_bytes(), MapFlags::ANY).unwrap().unwrap();
    let sum = |slot: usize| -> u64 { vals.iter().map(|v| scx_sis::map_value::<gb_acct>(v).part_ns[slot]).sum() };
    assert_eq!((sum(0), sum(1), sum(gb_consts_GB_NO_PART as usize)), (0, 1000, 50));

    // deleted cgroups (children first, as the kernel does) leave nothing behind
    for c in [10111, 1011, 101, 102, solo, 300, parent] {
        gb(&mut s, gb_test_op_GB_T_CGROUP_EXIT, c, 0, 0, 0);
    }
    assert!(keys(&s.skel.maps.gb_cgrp_map).is_empty());
    assert!(keys(&s.skel.maps.gb_group_map).is_empty());
    assert!(keys(&s.skel.maps.gb_acct_map).is_empty());
    // and a new child of the parent becomes a group again
    init(&mut s, 103, parent);
    assert_eq!(group_of(&mut s, 103).0, 103);
}

/// Stealing and balance prefer the thief's groups (soft affinity): rank 2 for a group at home
/// on the thief's partition, 1 for no group or a group homed elsewhere, 0 for a group at home
/// on the victim's partition (taken last), through the loader's own partition maps.
#[test]
fn steals_prefer_the_thiefs_groups() {
    let mut s = Sis::load(&Shape::new(8, 2, 4), FULL);
    let cfg = scx_sis::group::Config {
        parts: vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]],
        optin: vec![(100, gb_consts_GB_OPT_PARENT, "/sys/fs/cgroup/p".into())],
        period: std::time::Duration::from_millis(100),
    };
    let m = &s.skel.maps;
    scx_sis::group::write_maps(&cfg, &s.topo, &m.gb_cpu_map, &m.gb_part_map, &m.gb_part_cpus, &m.gb_optin).unwrap();
    let init = |s: &mut Sis, c: u64, p: u64| gb(s, gb_test_op_GB_T_CGROUP_INIT, c, p, 0, 0);
    init(&mut s, 100, 1);
    init(&mut s, 101, 100);
    init(&mut s, 102, 100);
    init(&mut s, 103, 100);
    let settle_in = |s: &mut Sis, group: u64, part: i32| {
        let g = gb_group { part, __pad: 0 };
        let bytes = unsafe { std::slice::from_raw_parts(&g as *const _ as *const u8, std::mem::size_of::<gb_group>()) };
        s.skel.maps.gb_group_map.update(&group.to_ne_bytes(), bytes, MapFlags::EXIST).unwrap();
    };
    settle_in(&mut s, 101, 0);
    settle_in(&mut s, 102, 1);
    // 103 is not settled yet (part -1)
    let rank = |s: &mut Sis, group: u64, thief: i32, victim: i32| {
        let mut a: gb_args = zeroed();
        a.op = gb_test_op_GB_T_STEAL_RANK;
        a.cgid = group;
        a.cpu = thief;
        a.victim = victim;
        assert_eq!(Sis::run(&mut s.skel.progs.test_gb, &mut a), 0);
        a.ret
    };
    // thief CPU 1 (partition 0) takes from CPU 5 (partition 1)
    assert_eq!(rank(&mut s, 101, 1, 5), 2, "group at home on the thief's partition: first");
    assert_eq!(rank(&mut s, 102, 1, 5), 0, "group at home on the victim's partition: last");
    assert_eq!(rank(&mut s, 103, 1, 5), 1, "unsettled group: in between");
    assert_eq!(rank(&mut s, 0, 1, 5), 1, "no group: in between");
    // within one partition (victim CPU 2): its own group comes first, nothing is 'at home elsewhere'
    assert_eq!(rank(&mut s, 101, 1, 2), 2);
    assert_eq!(rank(&mut s, 102, 1, 2), 1);
    // the other way round
    assert_eq!(rank(&mut s, 102, 6, 0), 2);
    assert_eq!(rank(&mut s, 101, 6, 0), 0);
}

/// A partition swap trades tasks of about the same load weight only (within an eighth): a
/// 300-weight group's task for a 100-weight group's would undo the balance by weighted load, and
/// cpu.weight across partitions with it (bench gb-wide).
#[test]
fn swaps_keep_the_load() {
    let mut s = Sis::load(&Shape::new(8, 2, 4), FULL);
    let mut keeps = |ours: u64, theirs: u64| {
        let mut a: gb_args = zeroed();
        a.op = gb_test_op_GB_T_SWAP_KEEPS_LOAD;
        a.delta = ours;
        a.parent = theirs;
        assert_eq!(Sis::run(&mut s.skel.progs.test_gb, &mut a), 0);
        a.ret == 1
    };
    let nice0 = 100u64 << sis_consts_SIS_LOAD_SHIFT;
    assert!(keeps(nice0, nice0), "equal weights swap");
    assert!(keeps(nice0, nice0 * 9 / 8) && keeps(nice0, nice0 * 7 / 8), "within an eighth");
    assert!(!keeps(nice0, nice0 * 9 / 8 + 1) && !keeps(nice0, nice0 * 7 / 8 - 1), "beyond it");
    // cg-wide's tasks: 300-weight group with 8 tasks vs 100-weight with 16 (9.375 vs 1.5625)
    let (heavy, light) = (nice0 * 75 / 800, nice0 * 25 / 1600);
    assert!(!keeps(heavy, light) && !keeps(light, heavy));
    assert!(keeps(0, 0));
}
