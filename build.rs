// Builds two BPF objects from the same bpf/ sources:
//  - bpf/main.bpf.c: the scheduler (skeleton `bpf`, shared definitions from bpf/intf.h);
//  - bpf/sis_test.bpf.c: SEC("syscall") programs over the very same mechanism headers,
//    loadable on kernels without sched_ext so `cargo test` exercises them on the host
//    (their argument structs from bpf/test_intf.h);
// and records what `scx_sis --version` prints: the git commit and the target triple.

use std::path::Path;
use std::process::Command;

fn main() {
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("bpf/intf.h", "bpf_intf.rs")
        .enable_skel("bpf/main.bpf.c", "bpf")
        .build()
        .unwrap();

    scx_cargo::BpfBuilder::new().unwrap().enable_skel("bpf/sis_test.bpf.c", "sis_test").build().unwrap();
    test_intf();

    println!("cargo:rustc-env=SCX_SIS_GIT={}", git_version());
    println!("cargo:rustc-env=SCX_SIS_TARGET={}", std::env::var("TARGET").unwrap_or_else(|_| "unknown".into()));
}

/// Bindings of bpf/test_intf.h's own items only: what they use of intf.h comes from bpf_intf.rs,
/// so the tests' structs embed the scheduler's types, not copies of them.
fn test_intf() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    bindgen::Builder::default()
        .clang_args(["-target", "bpf"])
        .header("bpf/test_intf.h")
        .allowlist_file(".*/test_intf\\.h")
        .allowlist_recursively(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .parse_callbacks(Box::new(PlainData))
        .wrap_unsafe_ops(true)
        .generate()
        .expect("bindings of bpf/test_intf.h")
        .write_to_file(out.join("test_intf.rs"))
        .expect("write test_intf.rs");
}

/// bindgen derives nothing for a struct whose field types it was not shown (intf.h's): every
/// struct of test_intf.h is plain data, and gets what bpf_intf.rs's structs get.
#[derive(Debug)]
struct PlainData;

impl bindgen::callbacks::ParseCallbacks for PlainData {
    fn add_derives(&self, info: &bindgen::callbacks::DeriveInfo<'_>) -> Vec<String> {
        match info.kind {
            bindgen::callbacks::TypeKind::Struct => ["Debug", "Copy", "Clone"].map(String::from).to_vec(),
            _ => vec![],
        }
    }
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Short commit hash, "-dirty" with uncommitted changes to tracked files; "unknown" outside
/// a git tree of its own (a release tarball, or one unpacked inside some other repository).
fn git_version() -> String {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let ours = git(&["rev-parse", "--show-toplevel"])
        .is_some_and(|top| Path::new(&top).canonicalize().ok() == Path::new(&dir).canonicalize().ok());
    let Some(hash) = ours.then(|| git(&["rev-parse", "--short=7", "HEAD"])).flatten() else {
        return "unknown".into();
    };
    // Rerun when HEAD moves (commit, checkout) or the index changes (add, commit): paths from git
    // itself, as a worktree's HEAD and its branch ref live in different directories. An edit not
    // yet added reruns this only with a change to bpf/ (scx_cargo's triggers): rerunning on every
    // source edit would recompile both BPF objects each time.
    for p in ["HEAD", "index", "packed-refs"] {
        rerun_on_git_path(p);
    }
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        rerun_on_git_path(&r);
    }
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty {
        hash + "-dirty"
    } else {
        hash
    }
}

/// A path in the git directory, relative to the package (the build script's cwd) or absolute.
fn rerun_on_git_path(p: &str) {
    if let Some(path) = git(&["rev-parse", "--git-path", p]) {
        if Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
