//! The house rules on the source tree that a reader would otherwise check by hand (issue 34): no
//! JavaScript inside Rust (the JavaScript halves of the wasm bindings are modules in
//! `src/js/snippets/`, type-checked and tested in Node, imported with `#[wasm_bindgen(module =
//! …)]`, and every such import names a file that exists), and no Rust file of `src/` or `crates/`
//! over 1 200 lines or without its `//!` scope header.

use std::path::{Path, PathBuf};

/// The most lines a Rust file of `src/` or `crates/` may have.
const MAX_LINES: usize = 1200;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, sorted (`target/` and hidden folders skipped).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// `(path relative to the repository, text)` of every Rust file of `src/` and `crates/`.
fn sources() -> Vec<(String, String)> {
    let root = repo();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    assert!(files.len() > 100, "{} files", files.len());
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let relative = path.strip_prefix(&root).unwrap().display().to_string();
            (relative, text)
        })
        .collect()
}

/// What JavaScript inside Rust looks like: wasm-bindgen's inline modules, functions made from
/// text, and `eval`.
const JS_IN_RUST: [&str; 4] = [
    "inline_js",
    "Function::new",
    "js_sys::eval",
    "js_sys::global().eval",
];

/// The places `text` writes JavaScript inside Rust, as `path:line: text`.
fn javascript_inside(path: &str, text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| JS_IN_RUST.iter().any(|p| line.contains(p)))
        .map(|(i, line)| format!("{path}:{}: {}", i + 1, line.trim()))
        .collect()
}

/// The files `text` imports with `#[wasm_bindgen(module = "/…")]` (paths from the repository).
fn imported_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("module = \"/") {
        let rest = &text[at + "module = \"/".len()..];
        if let Some(end) = rest.find('"') {
            out.push(rest[..end].to_string());
        }
    }
    out
}

#[test]
fn no_javascript_is_written_inside_rust() {
    let found: Vec<String> = sources()
        .iter()
        .flat_map(|(path, text)| javascript_inside(path, text))
        .collect();
    assert!(
        found.is_empty(),
        "JavaScript inside Rust (move it to a module in src/js/snippets/):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_imported_javascript_module_exists_where_it_belongs() {
    let mut imports = Vec::new();
    for (path, text) in sources() {
        for module in imported_modules(&text) {
            imports.push((path.clone(), module));
        }
    }
    assert!(imports.len() >= 5, "{imports:?}");
    for (path, module) in imports {
        assert!(
            module.starts_with("src/js/snippets/") || module.starts_with("tests/wasm/"),
            "{path} imports {module}: the bindings' JavaScript lives in src/js/snippets/ (a test's in tests/wasm/)"
        );
        assert!(
            repo().join(&module).is_file(),
            "{path} imports {module}, which does not exist"
        );
    }
}

#[test]
fn every_rust_file_is_short_and_says_what_it_is_for() {
    let mut problems = Vec::new();
    for (path, text) in sources() {
        let lines = text.lines().count();
        if lines > MAX_LINES {
            problems.push(format!("{path}: {lines} lines (at most {MAX_LINES})"));
        }
        if !text.trim_start().starts_with("//!") {
            problems.push(format!("{path}: no `//!` scope header"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checks_see_what_they_look_for() {
    let inline = "#[wasm_bindgen(inline_js = \"export function f() {}\")]\nextern \"C\" {}";
    assert_eq!(javascript_inside("a.rs", inline).len(), 1);
    let made = "let f = js_sys::Function::new_no_args(\"return 1\");";
    assert_eq!(
        javascript_inside("b.rs", made),
        ["b.rs:1: ".to_string() + made]
    );
    assert!(javascript_inside(
        "c.rs",
        "#[wasm_bindgen(module = \"/src/js/snippets/x.js\")]"
    )
    .is_empty());
    assert_eq!(
        imported_modules("#[wasm_bindgen(module = \"/src/js/snippets/lazy.js\")]\n#[wasm_bindgen(module = \"/tests/wasm/v.js\")]"),
        ["src/js/snippets/lazy.js", "tests/wasm/v.js"]
    );
}
