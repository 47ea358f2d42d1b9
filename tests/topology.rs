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
