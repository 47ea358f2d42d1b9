//! Each mechanism file of bpf/ compiles on its own after the scheduler's base header
//! (scx/common.bpf.h): it includes what it uses, and what it leaves to its includer is a hook
//! declared in bpf/hooks.bpf.h. So the include order of main.bpf.c carries no contract.
//! clang -fsyntax-only with the BPF build's headers; no root needed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The clang the BPF objects were built with (.cargo/config.toml sets BPF_CLANG).
fn clang() -> String {
    std::env::var("BPF_CLANG").ok().or(option_env!("BPF_CLANG").map(String::from)).unwrap_or("clang".into())
}

/// The kernel's name for the host's architecture: the arch/ directory of scx's headers.
fn kernel_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x86",
        "aarch64" => "arm64",
        "arm" => "arm",
        "riscv64" => "riscv",
        "s390x" => "s390",
        "powerpc64" => "powerpc",
        "mips64" => "mips",
        other => panic!("no scx arch headers known for {other}"),
    }
}

/// libbpf's BPF headers (bpf/bpf_helpers.h, ...) as the build gets them: from libbpf-sys.
fn libbpf_headers(dir: &Path) -> PathBuf {
    let bpf = dir.join("bpf");
    std::fs::create_dir_all(&bpf).unwrap();
    for (name, text) in libbpf_rs::libbpf_sys::API_HEADERS.iter() {
        std::fs::write(bpf.join(name), text).unwrap();
    }
    dir.to_path_buf()
}

#[test]
fn each_mechanism_header_compiles_alone() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("bpf");
    let scx = Path::new(env!("OUT_DIR")).join("scx_utils-bpf_h");
    assert!(scx.join("scx/common.bpf.h").exists(), "no scx headers at {}", scx.display());
    let tmp = tempfile::tempdir().unwrap();
    let libbpf = libbpf_headers(tmp.path());
    let arch = kernel_arch();

    let mut headers: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(".bpf.h")))
        .collect();
    headers.sort();
    let names: Vec<String> = headers.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
    for must in ["hooks.bpf.h", "idle_filter.bpf.h", "steal.bpf.h", "knobs.bpf.h"] {
        assert!(names.iter().any(|n| n == must), "{must} not found among {names:?}");
    }

    let mut failed = Vec::new();
    for (path, name) in headers.iter().zip(&names) {
        let tu = tmp.path().join(format!("{name}.c"));
        std::fs::write(&tu, format!("#include <scx/common.bpf.h>\n#include \"{name}\"\n")).unwrap();
        let out = Command::new(clang())
            .args(["-target", "bpf", "-mcpu=v4", "-fsyntax-only", "-Wall", "-Werror"])
            .arg("-Wno-compare-distinct-pointer-types") // as in the build
            // the hooks: declared by hooks.bpf.h, defined by the includer
            .arg("-Wno-undefined-internal")
            // a static helper whose callers are in the files that include this one
            .arg("-Wno-unused-function")
            .arg(format!("-D__TARGET_ARCH_{arch}"))
            .arg(format!("-I{}", scx.join("arch").join(arch).display()))
            .arg(format!("-I{}", scx.display()))
            .arg(format!("-I{}", scx.join("bpf-compat").display()))
            .arg(format!("-I{}", libbpf.display()))
            .arg(format!("-I{}", src.display()))
            .arg(&tu)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", clang()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        println!("{name}: exit {:?}, {} lines of diagnostics", out.status.code(), stderr.lines().count());
        if !out.status.success() || !stderr.trim().is_empty() {
            failed.push(format!("{} on its own:\n{stderr}", path.display()));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
