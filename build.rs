// Builds two BPF objects from the same bpf/ sources:
//  - bpf/main.bpf.c: the scheduler (skeleton `bpf`, shared definitions from bpf/intf.h);
//  - bpf/sis_test.bpf.c: SEC("syscall") programs over the very same mechanism headers,
//    loadable on kernels without sched_ext so `cargo test` exercises them on the host.

fn main() {
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("bpf/intf.h", "bpf_intf.rs")
        .enable_skel("bpf/main.bpf.c", "bpf")
        .build()
        .unwrap();

    scx_cargo::BpfBuilder::new().unwrap().enable_skel("bpf/sis_test.bpf.c", "sis_test").build().unwrap();
}
