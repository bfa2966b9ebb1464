//! The module graph has no circles: no two modules import each other, directly or in a
//! loop. Checked on the source text of both crates at two levels: the top-level modules
//! of a crate (`crate::a` -> `crate::b`), and sibling modules inside one folder
//! (`workspace/tags.rs` -> `super::contacts`). A child using its parent (`super::Ctx`)
//! is the normal shape of a module tree and is not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file below `dir`, as (path relative to `dir`, text without test modules).
fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("read source folder") {
            let path = entry.expect("folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).expect("read source");
                // Unit tests may reach anywhere; only the product's own imports count.
                let text = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
                let rel = path.strip_prefix(dir).expect("below dir").to_path_buf();
                out.push((rel, text));
            }
        }
    }
    out
}

/// The identifiers that follow `prefix` in `text` (`crate::` -> `delivery`, ...), including
/// those inside a brace group (`super::{a, b::c}` -> `a`, `b`).
fn targets(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            for part in inner.split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        } else {
            out.insert(
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            );
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// Top-level modules of a crate and whom each imports.
fn crate_graph(files: &[(PathBuf, String)]) -> Graph {
    let mut g = Graph::new();
    for (rel, text) in files {
        let m = module_of(rel);
        let Some(top) = m.first().filter(|t| *t != "lib" && *t != "main") else {
            continue;
        };
        for t in targets(text, "crate::") {
            if &t != top {
                g.entry(top.clone()).or_default().insert(t);
            }
        }
    }
    g
}

/// Sibling modules per folder and whom each imports, keyed `folder/module`.
fn sibling_graph(files: &[(PathBuf, String)]) -> Graph {
    let mut g = Graph::new();
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for (rel, _) in files {
        let m = module_of(rel);
        if m.len() >= 2 {
            let (last, parent) = m.split_last().expect("two parts");
            children
                .entry(parent.to_vec())
                .or_default()
                .insert(last.clone());
        }
    }
    for (rel, text) in files {
        let m = module_of(rel);
        // Each ancestor folder: the sibling this file lives under, and its siblings.
        for depth in 1..m.len() {
            let (folder, me) = (&m[..depth], &m[depth]);
            let Some(siblings) = children.get(folder) else {
                continue;
            };
            let supers = "super::".repeat(m.len() - depth);
            let absolute = format!("crate::{}::", folder.join("::"));
            let named = targets(text, &supers)
                .into_iter()
                .chain(targets(text, &absolute));
            for t in named {
                if siblings.contains(&t) && &t != me {
                    let key = |n: &str| format!("{}/{n}", folder.join("/"));
                    g.entry(key(me)).or_default().insert(key(&t));
                }
            }
        }
    }
    g
}

/// The circles in `g`, each as the path that closes it.
fn circles(g: &Graph) -> Vec<String> {
    let mut found = Vec::new();
    for start in g.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for next in g.get(&node).into_iter().flatten() {
                if next == start {
                    found.push(format!("{} -> {start}", path.join(" -> ")));
                } else if seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next.clone(), p));
                }
            }
        }
    }
    found
}

fn check(dir: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let files = sources(&root);
    assert!(files.len() > 5, "no sources found in {}", root.display());
    let mut out = circles(&crate_graph(&files));
    out.extend(circles(&sibling_graph(&files)));
    out
}

#[test]
fn no_module_imports_itself_through_a_circle() {
    let mut found = check("actors/src");
    found.extend(check("src"));
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn the_check_sees_a_circle_when_there_is_one() {
    let files = vec![
        (PathBuf::from("a.rs"), "use crate::b::X;".to_string()),
        (PathBuf::from("b/mod.rs"), "use crate::c::Y;".to_string()),
        (
            PathBuf::from("c.rs"),
            "fn f() { crate::a::g() }".to_string(),
        ),
        (
            PathBuf::from("w/one.rs"),
            "use super::{two, Ctx};".to_string(),
        ),
        (PathBuf::from("w/two.rs"), "use super::one::Z;".to_string()),
        (PathBuf::from("w/mod.rs"), "mod one; mod two;".to_string()),
    ];
    assert_eq!(circles(&crate_graph(&files)).len(), 3);
    assert_eq!(circles(&sibling_graph(&files)).len(), 2);
}

/// Store record kinds (`const X: &str = "..."` in the workspace handlers) name key
/// prefixes: two resources sharing one would read each other's records.
#[test]
fn every_workspace_record_kind_is_its_own() {
    let mut seen: std::collections::BTreeMap<String, PathBuf> = Default::default();
    let mut repeats = Vec::new();
    for (path, text) in sources(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/actors/src/workspace"
    ))) {
        for line in text.lines() {
            let line = line.trim();
            let is_kind = (line.starts_with("const ") || line.starts_with("pub(super) const "))
                && line.contains(": &str = \"");
            let Some(kind) = is_kind
                .then(|| line.split('"').nth(1))
                .flatten()
                .filter(|k| !k.contains('/') && !k.contains('_'))
            else {
                continue;
            };
            if let Some(first) = seen.insert(kind.to_string(), path.clone()) {
                repeats.push(format!(
                    "`{kind}` in {} and {}",
                    first.display(),
                    path.display()
                ));
            }
        }
    }
    assert!(seen.len() > 20, "the check found the kinds: {seen:?}");
    assert!(repeats.is_empty(), "record kinds used twice: {repeats:?}");
}

/// The names of the types that derive `ToSchema` in `files`, with where each stands. A
/// `#[schema(as = Name)]` renames it.
fn schema_names(files: &[(PathBuf, String)]) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for (path, text) in files {
        let mut deriving = false;
        let mut renamed = None;
        for line in text.lines().map(str::trim) {
            if line.starts_with("#[derive(") && line.contains("ToSchema") {
                deriving = true;
            } else if deriving && line.starts_with("#[schema(as = ") {
                renamed = line["#[schema(as = ".len()..]
                    .split([')', ','])
                    .next()
                    .map(|n| n.trim().to_string());
            } else if deriving && !line.starts_with("#[") && !line.starts_with("//") {
                let item = line
                    .split_whitespace()
                    .skip_while(|w| !matches!(*w, "struct" | "enum"))
                    .nth(1)
                    .map(|n| {
                        n.chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect()
                    });
                if let Some(name) = renamed.take().or(item) {
                    out.push((name, path.clone()));
                }
                deriving = false;
            }
        }
    }
    out
}

/// The OpenAPI document keys schemas by type name: two types of one name would share one
/// entry, and one would silently describe the other's requests.
#[test]
fn every_documented_type_has_a_schema_name_of_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut repeats = Vec::new();
    for dir in ["actors/src", "src"] {
        for (name, path) in schema_names(&sources(&root.join(dir))) {
            let path = Path::new(dir).join(path);
            if let Some(first) = seen.insert(name.clone(), path.clone()) {
                repeats.push(format!(
                    "`{name}` in {} and {}",
                    first.display(),
                    path.display()
                ));
            }
        }
    }
    assert!(seen.len() > 50, "the check found the schemas: {seen:?}");
    assert!(repeats.is_empty(), "schema names used twice: {repeats:?}");
}

#[test]
fn the_schema_check_sees_a_repeated_name_and_a_rename() {
    let files = vec![(
        PathBuf::from("a.rs"),
        "#[derive(Debug, ToSchema)]\n#[serde(deny_unknown_fields)]\npub struct Input {}\n\
         #[derive(ToSchema)]\n#[schema(as = Other)]\nenum Input2 {}\n"
            .to_string(),
    )];
    let names: Vec<String> = schema_names(&files).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["Input", "Other"]);
}

/// Every path of the product that names sled, outside the store module.
fn engine_outside_the_store(files: &[(PathBuf, String)]) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|(path, _)| !path.components().any(|c| c.as_os_str() == "store"))
        .filter(|(_, text)| {
            text.lines()
                .map(str::trim_start)
                .filter(|line| !line.starts_with("//"))
                .any(|line| {
                    ["sled::", "use sled", "postgres::", "use postgres"]
                        .iter()
                        .any(|name| line.contains(name))
                })
        })
        .map(|(path, _)| path.clone())
        .collect()
}

#[test]
fn nothing_outside_the_store_touches_sled_or_postgres() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = sources(&root.join("src"));
    files.extend(sources(&root.join("actors/src")));
    let found = engine_outside_the_store(&files);
    assert!(
        found.is_empty(),
        "sled or postgres used outside store/: {found:?}"
    );
}

#[test]
fn the_engine_check_sees_a_use_outside_the_store() {
    let files = vec![
        (
            PathBuf::from("domain/error.rs"),
            "fn f(e: sled::Error) {}".to_string(),
        ),
        (
            PathBuf::from("store/mod.rs"),
            "use sled::Batch;".to_string(),
        ),
        (
            PathBuf::from("http/mod.rs"),
            "// sled::Db is the store's".to_string(),
        ),
        (
            PathBuf::from("app.rs"),
            "let c = postgres::Client::connect(url, NoTls);".to_string(),
        ),
        (
            PathBuf::from("config/mod.rs"),
            r#"if v.starts_with("postgres://") {}"#.to_string(),
        ),
    ];
    assert_eq!(
        engine_outside_the_store(&files),
        vec![PathBuf::from("domain/error.rs"), PathBuf::from("app.rs")]
    );
}

/// `cargo fmt` does not reach the black-box suite: both test binaries pull its modules in
/// with `include!("suite.rs")`, which rustfmt does not follow. This holds it to the same
/// formatting (`rustfmt --edition 2021 tests/api/suite.rs` formats it).
#[test]
fn the_black_box_suite_is_formatted_like_the_rest() {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/api/suite.rs");
    let out = std::process::Command::new("rustfmt")
        .args(["--edition", "2021", "--check"])
        .arg(&suite)
        .output()
        .expect("rustfmt runs (it comes with the toolchain, like cargo fmt)");
    assert!(
        out.status.success(),
        "the suite needs `rustfmt --edition 2021 tests/api/suite.rs`:\n{}",
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .take(40)
            .collect::<Vec<_>>()
            .join("\n")
    );
}
