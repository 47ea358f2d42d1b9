//! Code and its docs speak of the code: no comment, string or page of the tree cites a numbered
//! lab session, issue or seed, or a `#N` reference, and none points at the removed benchmark
//! notebook page. Such a number means nothing to a reader without the notebook; name the
//! mechanism instead, and put measurements in docs/results.md or docs/lab-notes/.

use std::fs;
use std::path::{Path, PathBuf};

/// What the check covers, relative to the repository root: docs/ whole, the results page and the
/// dated lab notes with their data included.
const SCOPE: &[&str] = &[
    "src",
    "bpf",
    "tests",
    "scripts",
    "bench",
    "dist",
    ".ci",
    "build.rs",
    "meson.build",
    "meson_options.txt",
    "README.md",
    "docs",
];

/// The benchmarks' outputs under here print their random-number seed ("seed" and a number):
/// not a citation.
const RNG_SEED_OUTPUTS: &str = "docs/lab-notes/data";

/// Words that, followed by a number, cite the notebook or a tracker.
const WORDS: &[&str] = &["session", "sessions", "issue", "issues", "seed", "seeds"];

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The citations on one line, as the matched text.
fn citations(line: &str) -> Vec<String> {
    let lower = line.to_ascii_lowercase();
    let b = lower.as_bytes();
    let mut found = Vec::new();
    for w in WORDS {
        let mut from = 0;
        while let Some(at) = lower[from..].find(w) {
            let start = from + at;
            let mut end = start + w.len();
            from = end;
            if start > 0 && is_word_byte(b[start - 1]) {
                continue;
            }
            if end < b.len() && is_word_byte(b[end]) {
                continue;
            }
            while end < b.len() && b[end] == b' ' {
                end += 1;
            }
            if end < b.len() && b[end].is_ascii_digit() {
                while end < b.len() && b[end].is_ascii_digit() {
                    end += 1;
                }
                found.push(line[start..end].to_string());
            }
        }
    }
    // '#' and a number as a reference: not an HTML entity ("&#" and a number) nor inside a word
    for (i, _) in lower.match_indices('#') {
        let before_ok = i == 0 || !(is_word_byte(b[i - 1]) || b[i - 1] == b'&');
        if before_ok && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
            found.push(line[i..=i + 1].to_string());
        }
    }
    // the notebook page that docs/results.md and docs/lab-notes/ replaced
    let old_page = concat!("benchmarks", ".md");
    if lower.contains(old_page) {
        found.push(old_page.to_string());
    }
    found
}

fn walk(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for e in entries {
            walk(&e, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

#[test]
fn the_matcher_flags_citations_and_passes_plain_text() {
    // built at run time, so this file itself stays clean
    for bad in [
        format!("see {} {}", "session", 33),
        format!("({} 8's target)", "Issue"),
        format!("the {}  002 scenario", "seed"),
        format!("{} 000 and 003", "seeds"),
        format!("fixed in {}{}", '#', 12),
        format!("results in {}.md", "BENCHMARKS"),
    ] {
        assert!(!citations(&bad).is_empty(), "not flagged: {bad}");
    }
    for good in [
        "a benchmark session, start to end",
        "the seed's gb_stat view",
        "issue an IPI to the CPU",
        "&#8212; an entity",
        "sessions: 3 runs",
        "#[derive(Debug)]",
        "$# -eq 0",
    ] {
        assert_eq!(citations(good), Vec::<String>::new(), "flagged: {good}");
    }
}

#[test]
fn no_numbered_citations_in_code_and_docs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for s in SCOPE {
        let p = root.join(s);
        assert!(p.exists(), "{s} is in the check's scope but does not exist");
        walk(&p, &mut files);
    }
    let mut hits = Vec::new();
    let mut checked = 0;
    for f in &files {
        // binary files (none expected in scope) are not text to cite from
        let Ok(text) = fs::read_to_string(f) else {
            continue;
        };
        checked += 1;
        for (n, line) in text.lines().enumerate() {
            for c in citations(line) {
                let rel = f.strip_prefix(root).unwrap_or(f);
                if rel.starts_with(RNG_SEED_OUTPUTS) && c.to_ascii_lowercase().starts_with("seed ") {
                    continue;
                }
                hits.push(format!("{}:{}: {c}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(checked > 50, "only {checked} files read: is the scope right?");
    assert!(
        hits.is_empty(),
        "{} numbered citation(s); name the mechanism instead, measurements go to docs/results.md:\n{}",
        hits.len(),
        hits.join("\n")
    );
}
