//! The report binary measures only a committed tree: with uncommitted changes it refuses
//! before measuring anything, and says how to go on.

use std::process::Command;

mod common;

use common::TempDir;

fn git(dir: &std::path::Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=idkit", "-c", "user.email=idkit@localhost"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(status.status.success(), "git {args:?}: {status:?}");
}

#[test]
fn a_tree_with_uncommitted_changes_is_refused_unless_allowed() {
    let dir = TempDir::new("provenance");
    let tree = &dir.0;
    std::fs::create_dir_all(tree).unwrap();
    git(tree, &["init", "--quiet"]);
    std::fs::write(tree.join("a.txt"), "one\n").unwrap();
    git(tree, &["add", "a.txt"]);
    git(tree, &["commit", "--quiet", "-m", "one"]);
    std::fs::write(tree.join("a.txt"), "two\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_report"))
        .args(["--profile", "quick", "--quiet", "--out"])
        .arg(tree.join("out"))
        .current_dir(tree)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("--allow-dirty"), "{said}");
    assert!(said.contains("-dirty"), "names the revision: {said}");
    assert!(!tree.join("out").exists(), "nothing measured or written");
}
