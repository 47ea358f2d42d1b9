//! The module graph of each crate of the workspace (the scheduler at the root, the bench in
//! bench/) has no cycle. An edge is a `crate::` or `super::` path in a module's code (comments
//! and strings aside), to the longest module prefix of that path. Arrows pointing one way keep
//! each module readable and movable on its own; a cycle is printed as its chain of modules.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The crates' source roots, relative to the repository root.
const CRATES: &[&str] = &["src", "bench/src"];

/// Every .rs file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file below a crate's src/: "" for the crate roots (lib.rs, main.rs),
/// "a::b" for a/b.rs or a/b/mod.rs.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts.join("::")
}

/// The code of a Rust file with comments, string and char literals blanked out.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c[i] == 'r' && matches!(c.get(i + 1), Some('"' | '#')) && (i == 0 || !is_ident(c[i - 1])) {
            // raw string r"..." / r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= c.len() {
                    break;
                }
                if c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            out.push_str("\"\"");
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c[i] == '\'' && (c.get(i + 1) == Some(&'\\') || c.get(i + 2) == Some(&'\'')) {
            // a char literal ('x', '\n', '\u{..}'); a lifetime ('a) has no closing quote
            i += 1;
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn is_ident(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// Paths of a use tree after `crate::` at `s`: "a::b", "a::{b, c::d}" give ["a::b"] and
/// ["a::b", "a::c::d"]; `self` inside braces stands for the prefix.
fn paths_at(s: &[char], mut i: usize, prefix: &str, out: &mut Vec<String>) -> usize {
    let mut path = prefix.to_string();
    loop {
        while i < s.len() && s[i].is_whitespace() {
            i += 1;
        }
        if i < s.len() && s[i] == '{' {
            i += 1;
            loop {
                while i < s.len() && (s[i].is_whitespace() || s[i] == ',') {
                    i += 1;
                }
                if i >= s.len() || s[i] == '}' {
                    return i + 1;
                }
                i = paths_at(s, i, &path, out);
                // skip `as alias` and anything else up to the next item
                while i < s.len() && s[i] != ',' && s[i] != '}' {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < s.len() && is_ident(s[i]) {
            i += 1;
        }
        let seg: String = s[start..i].iter().collect();
        if !seg.is_empty() && seg != "self" && seg != "*" {
            path = if path.is_empty() { seg } else { format!("{path}::{seg}") };
        }
        if s.get(i) == Some(&':') && s.get(i + 1) == Some(&':') {
            i += 2;
            continue;
        }
        out.push(path);
        return i;
    }
}

/// Every `crate::` and `super::` path in the code of module `module` (not `$crate::`, a macro's
/// own crate), as a path from the crate root. `super` inside an inline `mod x { }` (tests) is
/// the file's own module.
fn crate_paths(code: &str, module: &str) -> Vec<String> {
    let s: Vec<char> = code.chars().collect();
    let at = |i: usize, w: &str| {
        let w: Vec<char> = w.chars().collect();
        i + w.len() <= s.len() && s[i..i + w.len()] == w[..] && (i == 0 || !(is_ident(s[i - 1]) || s[i - 1] == '$'))
    };
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut out = Vec::new();
    // brace depths at which inline modules opened
    let (mut depth, mut inline): (usize, Vec<usize>) = (0, Vec::new());
    let mut i = 0;
    while i < s.len() {
        if at(i, "crate::") {
            i = paths_at(&s, i + 7, "", &mut out);
        } else if at(i, "super::") {
            let base = if inline.is_empty() { parent } else { module };
            i = paths_at(&s, i + 7, base, &mut out);
        } else if at(i, "mod ") {
            let mut j = i + 4;
            while j < s.len() && (is_ident(s[j]) || s[j].is_whitespace()) {
                j += 1;
            }
            if s.get(j) == Some(&'{') {
                inline.push(depth);
            }
            i += 4;
        } else {
            match s[i] {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if inline.last() == Some(&depth) {
                        inline.pop();
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

/// The module graph of one crate: module -> modules its code names. The crate root is "crate".
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let node = |m: &str| if m.is_empty() { "crate".to_string() } else { m.to_string() };
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let from = module_of(src, f);
        let code = code_only(&fs::read_to_string(f).unwrap());
        let edges = g.entry(node(&from)).or_default();
        for p in crate_paths(&code, &from) {
            let segs: Vec<&str> = p.split("::").collect();
            let to =
                (0..=segs.len()).rev().map(|n| segs[..n].join("::")).find(|m| modules.contains(m)).unwrap_or_default();
            if to != from {
                edges.insert(node(&to));
            }
        }
    }
    g
}

/// The shortest cycle through `n`, as a closed chain n -> ... -> n.
fn shortest_cycle(g: &BTreeMap<String, BTreeSet<String>>, n: &str) -> Option<Vec<String>> {
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([n]);
    while let Some(x) = queue.pop_front() {
        for y in g.get(x).into_iter().flatten() {
            if y == n {
                // x back to n along prev, reversed: n -> ... -> x, then the edge x -> n
                let mut chain = vec![x.to_string()];
                let mut at = x;
                while at != n {
                    at = prev[at];
                    chain.push(at.to_string());
                }
                chain.reverse();
                chain.push(n.to_string());
                return Some(chain);
            }
            if !prev.contains_key(y.as_str()) {
                prev.insert(y, x);
                queue.push_back(y);
            }
        }
    }
    None
}

/// The shortest cycle through each module that is on one, each cycle once (started at its
/// least module).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for n in g.keys() {
        if let Some(mut c) = shortest_cycle(g, n) {
            c.pop();
            let least = (0..c.len()).min_by_key(|&i| &c[i]).unwrap();
            c.rotate_left(least);
            c.push(c[0].clone());
            found.insert(c);
        }
    }
    found.into_iter().collect()
}

#[test]
fn no_module_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bad = Vec::new();
    for c in CRATES {
        let src = root.join(c);
        // a crate moved or renamed must not leave half the project unchecked
        assert!(src.is_dir(), "{c}: no such directory (update CRATES)");
        let g = graph(&src);
        println!("{c}: {} modules, {} edges", g.len(), g.values().map(|e| e.len()).sum::<usize>());
        for cyc in cycles(&g) {
            bad.push(format!("{c}: {}", cyc.join(" -> ")));
        }
    }
    assert!(bad.is_empty(), "module import cycles:\n  {}", bad.join("\n  "));
}

/// The checker itself: a cycle of three is found and printed in order, a chain is not one,
/// grouped and nested use trees give every path, comments and strings give none.
#[test]
fn checker_finds_cycles() {
    let g = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert_eq!(cycles(&g(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])), vec![vec!["a", "b", "c", "a"]]);
    assert_eq!(
        cycles(&g(&[("b", "a"), ("a", "b"), ("b", "c"), ("c", "b")])),
        vec![vec!["a", "b", "a"], vec!["b", "c", "b"]]
    );
    assert!(cycles(&g(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    assert_eq!(cycles(&g(&[("x", "y"), ("y", "x")])), vec![vec!["x", "y", "x"]]);

    let code = code_only(
        "use crate::{a, b::{c, self}, d::e as f};\n// crate::g\nlet s = \"crate::h\"; \
         let c = '\"'; x = crate::i::j(crate::k);\n$crate::l; use super::m;\n\
         mod tests { use super::*; use super::n::o; }",
    );
    let mut p = crate_paths(&code, "p::q");
    p.sort();
    assert_eq!(p, ["a", "b", "b::c", "d::e", "i::j", "k", "p::m", "p::q", "p::q::n::o"]);
}
