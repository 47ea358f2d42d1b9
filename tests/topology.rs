//! Topology discovery against fixture sysfs trees.

mod common;
use common::*;

#[test]
fn smt2_two_llcs() {
    let t = topology_of(&Shape::new(8, 2, 4));
    assert_eq!(t.nr_cpu_ids, 8);
    assert_eq!((t.cpus.len(), t.nr_cores, t.llcs.len(), t.smt_width), (8, 4, 2, 2));
    assert_eq!(t.llcs[0].cpus, vec![0, 1, 2, 3]);
    assert_eq!(t.llcs[1].cpus, vec![4, 5, 6, 7]);
    assert_eq!(t.llcs[1].nr_cores, 2);
    let c5 = t.cpu(5).unwrap();
    assert_eq!((c5.core, c5.llc, c5.llc_pos), (2, 1, 1));
    assert_eq!(c5.siblings, vec![4, 5]);
    assert_eq!(t.llc_stride(), 4);
    assert_eq!(t.summary(), "8 CPUs, 4 cores, 2 LLCs, 1 node, SMT2");
}

#[test]
fn no_smt_one_llc() {
    let t = topology_of(&Shape::new(6, 1, 6));
    assert_eq!((t.nr_cores, t.llcs.len(), t.smt_width), (6, 1, 1));
    assert!(t.cpus.iter().all(|c| c.siblings == vec![c.id]));
    assert_eq!(t.cpu(4).unwrap().llc_pos, 4);
}

#[test]
fn offline_cpus_are_left_out_of_spans() {
    let t = topology_of(&Shape { offline: vec![2, 5], ..Shape::new(8, 2, 4) });
    assert_eq!(t.nr_cpu_ids, 8, "ids stay sized by possible CPUs");
    assert_eq!(t.cpus.iter().map(|c| c.id).collect::<Vec<_>>(), vec![0, 1, 3, 4, 6, 7]);
    assert_eq!(t.llcs[0].cpus, vec![0, 1, 3]);
    assert_eq!(t.llcs[1].cpus, vec![4, 6, 7]);
    // the sibling of an offline CPU stands alone
    assert_eq!(t.cpu(3).unwrap().siblings, vec![3]);
    assert_eq!(t.cpu(4).unwrap().siblings, vec![4]);
    assert_eq!(t.cpu(7).unwrap().llc_pos, 2);
}

#[test]
fn more_than_64_cpus_and_nodes() {
    let t = topology_of(&Shape { nodes: 2, ..Shape::new(160, 2, 40) });
    assert_eq!(t.nr_cpu_ids, 160);
    assert_eq!((t.nr_cores, t.llcs.len(), t.nr_nodes), (80, 4, 2));
    assert_eq!(t.cpu(130).unwrap().llc, 3);
    assert_eq!(t.cpu(130).unwrap().node, 1);
    assert_eq!(t.llcs[3].node, 1);
    assert_eq!(t.cpu(130).unwrap().llc_pos, 10);
}

#[test]
fn no_cache_info_falls_back_to_the_package() {
    let t = topology_of(&Shape { no_cache: true, ..Shape::new(8, 2, 4) });
    assert_eq!(t.llcs.len(), 2);
    assert_eq!(t.llcs[0].cpus, vec![0, 1, 2, 3]);
}

#[test]
fn llc_ids_follow_first_cpu_order() {
    let t = topology_of(&Shape::new(16, 2, 4));
    let firsts: Vec<usize> = t.llcs.iter().map(|l| l.cpus[0]).collect();
    assert_eq!(firsts, vec![0, 4, 8, 12]);
    for l in &t.llcs {
        for (pos, c) in l.cpus.iter().enumerate() {
            assert_eq!(t.cpu(*c).unwrap().llc_pos, pos);
            assert_eq!(t.cpu(*c).unwrap().llc, l.id);
        }
    }
}

#[test]
fn missing_sysfs_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(scx_sis::topology::Topology::from_sysfs(dir.path()).is_err());
}

/// The machine's limits against bpf/intf.h: an LLC or a core bigger than the BPF side is built
/// for is refused with one line naming the limit and the size found, not truncated.
#[test]
fn limits_of_the_bpf_side() {
    use scx_sis::bpf_intf::{sis_consts_SIS_MAX_LLC_CPUS as MAX_LLC, sis_consts_SIS_MAX_SMT as MAX_SMT};
    let max_llc = MAX_LLC as usize;
    // hundreds of CPUs: without cache/ (the package is the LLC) the tree is a few files per CPU
    let big = |n: usize, smt: usize| topology_of(&Shape { no_cache: true, ..Shape::new(n, smt, n) });
    // at the limits: fine
    assert_eq!(big(max_llc, MAX_SMT as usize).check_limits(), Ok(()));

    let t = big(max_llc + 8, 2);
    let e = t.check_limits().unwrap_err();
    assert_eq!(
        e,
        format!(
            "this machine has an LLC of {n} CPUs (LLC 0: CPUs 0-{last}); scx_sis is built for at most \
             SIS_MAX_LLC_CPUS = {max_llc} per LLC (bpf/intf.h)",
            n = max_llc + 8,
            last = max_llc + 7
        )
    );
    assert!(!e.contains('\n'));

    // possible CPU ids size the per-CPU arrays: 8 online of 8193 possible
    let dir = tempfile::tempdir().unwrap();
    write_sysfs(dir.path(), &Shape::new(8, 2, 4));
    std::fs::write(dir.path().join("sys/devices/system/cpu/possible"), "0-8192\n").unwrap();
    let t = scx_sis::topology::Topology::from_sysfs(dir.path()).unwrap();
    assert_eq!(
        t.check_limits().unwrap_err(),
        "this machine has 8193 possible CPU ids; scx_sis is built for at most SIS_MAX_CPUS = 8192 (bpf/intf.h)"
    );

    let t = topology_of(&Shape::new(32, 16, 32));
    assert_eq!(
        t.check_limits().unwrap_err(),
        "this machine has a core of 16 hardware threads (CPUs 0-15); scx_sis is built for at most SIS_MAX_SMT = 8 \
         (bpf/intf.h)"
    );
}

/// The group balancer's default partitions are one per LLC, at most GB_MAX_PARTS of them: a
/// machine with more LLCs needs --partitions, it does not lose the rest silently.
#[test]
fn default_partitions_within_gb_max_parts() {
    let max = scx_sis::group::MAX_PARTS;
    let t = topology_of(&Shape::new(2 * max, 2, 2));
    assert_eq!(scx_sis::group::default_partitions(&t).unwrap().len(), max);
    let t = topology_of(&Shape::new(2 * (max + 1), 2, 2));
    assert_eq!(
        scx_sis::group::default_partitions(&t).unwrap_err(),
        format!(
            "group balancer: this machine has {} LLCs, more than GB_MAX_PARTS = {max} partitions (one per LLC by \
             default); give --partitions",
            max + 1
        )
    );
}
