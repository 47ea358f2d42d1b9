// Builds the bench's own BPF object: bpf/rq_lock.bpf.c, the runqueue-lock timer of --lock-time
// (skeleton `rq_lock`).

fn main() {
    scx_cargo::BpfBuilder::new().unwrap().enable_skel("bpf/rq_lock.bpf.c", "rq_lock").build().unwrap();
}
