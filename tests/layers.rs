//! The layer order of the crate, read from its sources: every file-to-file edge made by a path
//! (`crate::…`, `super::…`, `self::…`, a child module's name, a name a `use` bound, the path
//! crates `megane_pack` / `megane_structure_scan` / `megane_chain` / `megane_elements`), in `use`
//! items and inline in code, must run down the order
//!
//! ```text
//! crates/structure-scan, crates/pack, crates/elements, crates/chain  <  wire  <  chem  <  contract  <  mcp  <  offline  <  wasm
//! ```
//!
//! (a file may use its own layer and the layers below it), and no files may form a circle, in
//! `src/` and in each crate under `crates/`.
//!
//! What counts, decided here:
//! - Test code counts like any other (`#[cfg(test)]` modules, `#[path]` test files): a test inside
//!   `src/` tests its own layer; a test that needs a layer above belongs in `tests/`.
//! - Paths in comments and doc comments do not count (an intra-doc link makes no dependency), nor
//!   do paths in strings.
//! - A path is followed to the file that defines its item: through the module tree (`#[path]`
//!   included) and through `use` bindings (`pub use` re-exports and private imports alike), so a
//!   name re-exported by a `mod.rs` is an edge to the file that defines it, not to the `mod.rs`.
//!   A path to a module itself is an edge to that module's file.
//! - A method call (`self.start()`) names no path and makes no edge: the edges are the ones the
//!   source spells out.
//!
//! A scanner of our own (std only): the sources are ours and plain, and `syn` would bring a
//! parser to check paths a tokenizer finds as well. The checks of the checker itself are the
//! small sources at the end of this file.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The layers of the main crate, lowest first; a file's layer is its top module (`src/<layer>/`).
const LAYERS: [&str; 6] = ["wire", "chem", "contract", "mcp", "offline", "wasm"];

/// The path crates below every layer.
const CRATES_BELOW: [&str; 4] = [
    "megane_chain",
    "megane_elements",
    "megane_pack",
    "megane_structure_scan",
];

// ----- tokens ----------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    /// `::`
    Path,
    Punct(char),
}

/// Rust source as tokens with their line numbers: comments dropped, strings kept as [`Tok::Str`]
/// (their text is never a path), characters and numbers dropped, lifetimes dropped.
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| b.get(i).copied().unwrap_or('\0');
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if let Some((text, end)) = raw_string(&b, i) {
            line += text.matches('\n').count();
            out.push((Tok::Str(text), line));
            i = end;
        } else if c == '"' || ((c == 'b' || c == 'c') && at(i + 1) == '"') {
            let start_line = line;
            i += if c == '"' { 1 } else { 2 };
            let mut text = String::new();
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    text.push(b[i]);
                    i += 1;
                }
                if b[i] == '\n' {
                    line += 1;
                }
                text.push(b[i]);
                i += 1;
            }
            i += 1;
            out.push((Tok::Str(text), start_line));
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}', b'x' was taken as an ident `b` first
            // only when not followed by a quote) or a lifetime / label ('a).
            if at(i + 1) == '\\' {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_ascii_digit() {
            while i < b.len()
                && (b[i].is_alphanumeric()
                    || b[i] == '_'
                    || (b[i] == '.' && at(i + 1).is_ascii_digit()))
            {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            if c == 'b' && at(i + 1) == '\'' {
                // A byte literal b'x' / b'\n'.
                i += 1;
                continue;
            }
            if c == 'r' && at(i + 1) == '#' {
                i += 2; // a raw identifier r#name
            }
            let word_start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            let word: String = b[word_start..i].iter().collect();
            out.push((Tok::Ident(word), line));
        } else if c == '$' && src_word(&b, i + 1) == "crate" {
            out.push((Tok::Ident("crate".into()), line));
            i += 6;
        } else if c == ':' && at(i + 1) == ':' {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

fn src_word(b: &[char], from: usize) -> String {
    b[from.min(b.len())..]
        .iter()
        .take_while(|c| c.is_alphanumeric() || **c == '_')
        .collect()
}

/// A raw string (`r"…"`, `r#"…"#`, `br#"…"#`) starting at `i`: its text and where it ends.
fn raw_string(b: &[char], i: usize) -> Option<(String, usize)> {
    let mut j = i;
    if b.get(j) == Some(&'b') || b.get(j) == Some(&'c') {
        j += 1;
    }
    if b.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while b.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if b.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    let start = j;
    loop {
        if j >= b.len() {
            return Some((b[start..].iter().collect(), j));
        }
        if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
            return Some((b[start..j].iter().collect(), j + 1 + hashes));
        }
        j += 1;
    }
}

// ----- the module tree -------------------------------------------------------------------------

/// One source file of a crate.
#[derive(Debug)]
struct File {
    /// Shown in messages: the path from the repository root.
    name: String,
    /// Its module path (`["mcp", "client"]`; empty for the crate root).
    module: Vec<String>,
    toks: Vec<(Tok, usize)>,
}

/// A crate's files, found from its root by following `mod` items (`#[path]` honoured).
struct Crate {
    files: Vec<File>,
    /// Module path → the file that holds it (inline modules map to their file).
    modules: HashMap<Vec<String>, usize>,
    /// Per module: the names a `use` binds there → the path it names (absolute, or `extern` first).
    bindings: HashMap<Vec<String>, Vec<(String, Vec<String>)>>,
    /// Per module: the paths of its glob imports.
    globs: HashMap<Vec<String>, Vec<Vec<String>>>,
    /// Per module: the names it defines (`fn`, `struct`, `mod {…}`, …).
    defined: HashMap<Vec<String>, BTreeSet<String>>,
}

/// Source text by path: the disk, or a test's made-up files.
trait Sources {
    fn read(&self, path: &Path) -> Option<String>;
}

struct Disk;

impl Sources for Disk {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }
}

impl Sources for BTreeMap<PathBuf, String> {
    fn read(&self, path: &Path) -> Option<String> {
        self.get(path).cloned()
    }
}

/// `mod name;` items of a file: (name, `#[path]` value), outside inline modules' braces too.
fn module_items(toks: &[(Tok, usize)]) -> Vec<(String, Option<String>, bool)> {
    let mut out = Vec::new();
    let mut path_attr: Option<String> = None;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct('#') if matches!(toks.get(i + 1), Some((Tok::Punct('['), _))) => {
                if let (
                    Some((Tok::Ident(a), _)),
                    Some((Tok::Punct('='), _)),
                    Some((Tok::Str(p), _)),
                ) = (toks.get(i + 2), toks.get(i + 3), toks.get(i + 4))
                {
                    if a == "path" {
                        path_attr = Some(p.clone());
                    }
                }
                // Skip to the attribute's end.
                let mut depth = 0;
                while i < toks.len() {
                    match toks[i].0 {
                        Tok::Punct('[') => depth += 1,
                        Tok::Punct(']') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            Tok::Ident(k) if k == "mod" => {
                if let Some((Tok::Ident(name), _)) = toks.get(i + 1) {
                    match toks.get(i + 2) {
                        Some((Tok::Punct(';'), _)) => {
                            out.push((name.clone(), path_attr.take(), false))
                        }
                        Some((Tok::Punct('{'), _)) => {
                            path_attr = None;
                            out.push((name.clone(), None, true))
                        }
                        _ => {}
                    }
                }
            }
            Tok::Ident(k) if k == "pub" || k == "crate" || k == "in" || k == "super" => {}
            Tok::Punct('(') | Tok::Punct(')') => {}
            _ => path_attr = None,
        }
        i += 1;
    }
    out
}

impl Crate {
    /// Reads the crate whose root file is `root` (`src/lib.rs`); `shown` is how its directory is
    /// named in messages.
    fn read(sources: &dyn Sources, root: &Path, shown: &str) -> Crate {
        let mut files = Vec::new();
        let mut queue = vec![(root.to_path_buf(), Vec::<String>::new(), true)];
        while let Some((path, module, mod_rs)) = queue.pop() {
            let Some(text) = sources.read(&path) else {
                panic!(
                    "{} is named by a mod item but cannot be read",
                    path.display()
                );
            };
            let toks = tokens(&text);
            let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
            // A non-mod.rs file's children live in a folder named after it.
            let child_dir = if mod_rs {
                dir.clone()
            } else {
                dir.join(path.file_stem().unwrap_or_default())
            };
            for (name, attr, inline) in module_items(&toks) {
                if inline {
                    continue;
                }
                let mut child = module.clone();
                child.push(name.clone());
                let (file, is_mod_rs) = match attr {
                    Some(p) => {
                        let f = dir.join(p);
                        let m = f.file_name().is_some_and(|n| n == "mod.rs");
                        (f, m)
                    }
                    None => {
                        let flat = child_dir.join(format!("{name}.rs"));
                        if sources.read(&flat).is_some() {
                            (flat, false)
                        } else {
                            (child_dir.join(&name).join("mod.rs"), true)
                        }
                    }
                };
                queue.push((file, child, is_mod_rs));
            }
            let rel = path
                .strip_prefix(root.parent().unwrap_or(Path::new("")))
                .unwrap_or(&path);
            files.push(File {
                name: format!("{shown}/{}", rel.display()),
                module,
                toks,
            });
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        let mut krate = Crate {
            files,
            modules: HashMap::new(),
            bindings: HashMap::new(),
            globs: HashMap::new(),
            defined: HashMap::new(),
        };
        krate.index();
        krate
    }

    /// Fills the module map, each module's `use` bindings, globs and defined names.
    fn index(&mut self) {
        for (fi, file) in self.files.iter().enumerate() {
            self.modules.insert(file.module.clone(), fi);
        }
        for fi in 0..self.files.len() {
            let file = &self.files[fi];
            let children = self.child_names(&file.module);
            let toks = &file.toks;
            let mut found = Vec::new();
            walk(file, |i, here, top| {
                let ident = |k: usize| match toks.get(k) {
                    Some((Tok::Ident(n), _)) => Some(n.clone()),
                    _ => None,
                };
                let Some(Tok::Ident(k)) = toks.get(i).map(|t| &t.0) else {
                    return None;
                };
                match k.as_str() {
                    "mod" if matches!(toks.get(i + 2), Some((Tok::Punct('{'), _))) => {
                        if let Some(n) = ident(i + 1) {
                            let mut inner = here.to_vec();
                            inner.push(n.clone());
                            found.push(Found::Module(inner));
                            found.push(Found::Defined(here.to_vec(), n));
                        }
                    }
                    "fn" | "struct" | "enum" | "const" | "static" | "type" | "trait" | "union" => {
                        if let Some(n) = ident(i + 1) {
                            found.push(Found::Defined(here.to_vec(), n));
                        }
                    }
                    "macro_rules" => {
                        if let Some(n) = ident(i + 2) {
                            found.push(Found::Defined(here.to_vec(), n));
                        }
                    }
                    "use" => {
                        let (trees, end) = use_trees(toks, i + 1);
                        let local = if top {
                            children.clone()
                        } else {
                            BTreeSet::new()
                        };
                        for (path, binding, glob) in trees {
                            let Some(abs) = absolute(here, &path, &local, &[]) else {
                                continue;
                            };
                            if glob {
                                found.push(Found::Glob(here.to_vec(), abs));
                            } else if let Some(b) = binding {
                                found.push(Found::Binding(here.to_vec(), b, abs));
                            }
                        }
                        return Some(end);
                    }
                    _ => {}
                }
                None
            });
            for f in found {
                match f {
                    Found::Module(m) => {
                        self.modules.insert(m, fi);
                    }
                    Found::Defined(m, n) => {
                        self.defined.entry(m).or_default().insert(n);
                    }
                    Found::Glob(m, p) => self.globs.entry(m).or_default().push(p),
                    Found::Binding(m, n, p) => self.bindings.entry(m).or_default().push((n, p)),
                }
            }
        }
    }

    /// The names of the file modules declared by the module `module`.
    fn child_names(&self, module: &[String]) -> BTreeSet<String> {
        self.files
            .iter()
            .filter(|f| f.module.len() == module.len() + 1 && f.module.starts_with(module))
            .map(|f| f.module[module.len()].clone())
            .collect()
    }

    /// Where an absolute path leads: the files that define what it names, or the path crate.
    fn resolve(&self, path: &[String], depth: usize) -> Vec<Target> {
        if depth > 16 {
            return Vec::new();
        }
        if path.first().is_some_and(|p| p == "extern") {
            return path
                .get(1)
                .filter(|c| CRATES_BELOW.contains(&c.as_str()))
                .map(|c| vec![Target::Below(c.clone())])
                .unwrap_or_default();
        }
        let mut module: Vec<String> = Vec::new();
        let mut i = 0;
        while i < path.len() {
            let mut next = module.clone();
            next.push(path[i].clone());
            if self.modules.contains_key(&next) {
                module = next;
                i += 1;
            } else {
                break;
            }
        }
        let file = self.modules[&module];
        if i == path.len() {
            return vec![Target::File(file)];
        }
        let name = &path[i];
        if self.defined.get(&module).is_some_and(|d| d.contains(name)) {
            return vec![Target::File(file)];
        }
        let bound: Vec<&Vec<String>> = self
            .bindings
            .get(&module)
            .map(|b| {
                b.iter()
                    .filter(|(n, _)| n == name)
                    .map(|(_, p)| p)
                    .collect()
            })
            .unwrap_or_default();
        if !bound.is_empty() {
            return bound
                .into_iter()
                .flat_map(|p| {
                    let mut whole = p.clone();
                    whole.extend_from_slice(&path[i + 1..]);
                    self.resolve(&whole, depth + 1)
                })
                .collect();
        }
        let through_globs: Vec<Target> = self
            .globs
            .get(&module)
            .map(|globs| {
                globs
                    .iter()
                    .filter(|g| *g != &module)
                    .flat_map(|g| {
                        let mut whole = g.clone();
                        whole.extend_from_slice(&path[i..]);
                        self.resolve(&whole, depth + 1)
                    })
                    .filter(|t| *t != Target::File(file))
                    .collect()
            })
            .unwrap_or_default();
        if through_globs.is_empty() {
            vec![Target::File(file)]
        } else {
            through_globs
        }
    }

    /// Every edge a file's paths make: (target, the path as written, line).
    fn edges(&self, fi: usize) -> Vec<(Target, String, usize)> {
        let file = &self.files[fi];
        let toks = &file.toks;
        let children = self.child_names(&file.module);
        let mut aliases: Vec<(String, Vec<String>)> = Vec::new();
        let mut out = Vec::new();
        walk(file, |i, here, top| {
            let local = if top {
                children.clone()
            } else {
                BTreeSet::new()
            };
            let (Tok::Ident(first), line) = &toks[i] else {
                return None;
            };
            if first == "use" {
                let (trees, end) = use_trees(toks, i + 1);
                for (path, binding, _glob) in trees {
                    let Some(abs) = absolute(here, &path, &local, &aliases) else {
                        continue;
                    };
                    if let Some(b) = binding {
                        aliases.push((b, abs.clone()));
                    }
                    for t in self.resolve(&abs, 0) {
                        out.push((t, path.join("::"), *line));
                    }
                }
                return Some(end);
            }
            let starts_path = matches!(toks.get(i + 1), Some((Tok::Path, _)))
                && !matches!(toks.get(i.wrapping_sub(1)), Some((Tok::Path, _)));
            if !starts_path {
                return None;
            }
            let mut path = vec![first.clone()];
            let mut j = i + 1;
            while let (Some((Tok::Path, _)), Some((Tok::Ident(s), _))) =
                (toks.get(j), toks.get(j + 1))
            {
                path.push(s.clone());
                j += 2;
            }
            if let Some(abs) = absolute(here, &path, &local, &aliases) {
                for t in self.resolve(&abs, 0) {
                    out.push((t, path.join("::"), *line));
                }
            }
            Some(j)
        });
        out
    }
}

/// Walks a file's tokens with the module each stands in (an inline `mod name { … }` block is
/// entered at its `{` and left at its `}`): `visit(i, module, top)` sees token `i` (`top`: outside
/// any inline module) and says where to go on (`None`: the next token).
fn walk(file: &File, mut visit: impl FnMut(usize, &[String], bool) -> Option<usize>) {
    let toks = &file.toks;
    let mut stack: Vec<(String, i32)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        let here: Vec<String> = file
            .module
            .iter()
            .cloned()
            .chain(stack.iter().map(|(n, _)| n.clone()))
            .collect();
        if let Some(next) = visit(i, &here, stack.is_empty()) {
            i = next;
            continue;
        }
        match &toks[i].0 {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth -= 1;
                if stack.last().is_some_and(|(_, d)| *d == depth) {
                    stack.pop();
                }
            }
            Tok::Ident(k) if k == "mod" => {
                if let (Some((Tok::Ident(n), _)), Some((Tok::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    stack.push((n.clone(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

enum Found {
    Module(Vec<String>),
    Defined(Vec<String>, String),
    Glob(Vec<String>, Vec<String>),
    Binding(Vec<String>, String, Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    File(usize),
    Below(String),
}

/// One leaf of a use tree: its path, the name it binds (none for `_` and globs), whether a glob.
type UseLeaf = (Vec<String>, Option<String>, bool);

/// The leaves of the use tree starting at `i` (after `use`), and the index after its `;`.
fn use_trees(toks: &[(Tok, usize)], i: usize) -> (Vec<UseLeaf>, usize) {
    let mut out = Vec::new();
    let end = tree(toks, i, Vec::new(), &mut out);
    let mut j = end;
    while j < toks.len() && toks[j].0 != Tok::Punct(';') {
        j += 1;
    }
    (out, j + 1)
}

fn tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<UseLeaf>,
) -> usize {
    if toks.get(i).map(|t| &t.0) == Some(&Tok::Path) {
        i += 1; // `use ::name`
    }
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Ident(s)) if toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path) => {
                prefix.push(s.clone());
                i += 2;
            }
            Some(Tok::Ident(s)) => {
                let mut binding = s.clone();
                let mut path = prefix.clone();
                if s == "self" {
                    binding = prefix.last().cloned().unwrap_or_default();
                } else {
                    path.push(s.clone());
                }
                i += 1;
                if let (Some((Tok::Ident(a), _)), Some((Tok::Ident(alias), _))) =
                    (toks.get(i), toks.get(i + 1))
                {
                    if a == "as" {
                        binding = alias.clone();
                        i += 2;
                    }
                }
                let binding = (binding != "_").then_some(binding);
                out.push((path, binding, false));
                return i;
            }
            Some(Tok::Punct('*')) => {
                out.push((prefix, None, true));
                return i + 1;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Punct('}')) => return i + 1,
                        Some(Tok::Punct(',')) => i += 1,
                        None => return i,
                        _ => i = tree(toks, i, prefix.clone(), out),
                    }
                }
            }
            _ => return i,
        }
    }
}

/// A path as written in module `here` made absolute (from the crate root), or `["extern", …]`
/// for a path crate; `None` for anything else (std, serde, a local variable's type …).
fn absolute(
    here: &[String],
    path: &[String],
    children: &BTreeSet<String>,
    aliases: &[(String, Vec<String>)],
) -> Option<Vec<String>> {
    let first = path.first()?;
    let (mut module, rest): (Vec<String>, &[String]) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "super" => {
            let mut module = here.to_vec();
            let mut k = 0;
            while path.get(k).is_some_and(|s| s == "super") {
                module.pop()?;
                k += 1;
            }
            (module, &path[k..])
        }
        "self" => (here.to_vec(), &path[1..]),
        "Self" => return None,
        name if CRATES_BELOW.contains(&name) => {
            let mut abs = vec!["extern".to_string()];
            abs.extend_from_slice(path);
            return Some(abs);
        }
        name if children.contains(name) => (here.to_vec(), path),
        name => {
            let (_, target) = aliases.iter().rev().find(|(a, _)| a == name)?;
            let mut abs = target.clone();
            abs.extend_from_slice(&path[1..]);
            return Some(abs);
        }
    };
    module.extend_from_slice(rest);
    Some(module)
}

// ----- the checks --------------------------------------------------------------------------------

/// The layer rank of a main-crate file (its top module); the crate root is above every layer.
fn rank(module: &[String]) -> usize {
    match module.first() {
        None => LAYERS.len() + 1,
        Some(top) => LAYERS
            .iter()
            .position(|l| l == top)
            .map_or(LAYERS.len() + 1, |p| p + 1),
    }
}

/// Edges running up the layer order, as messages.
fn upward_edges(krate: &Crate) -> Vec<String> {
    let mut out = Vec::new();
    for (fi, file) in krate.files.iter().enumerate() {
        let from = rank(&file.module);
        for (target, path, line) in krate.edges(fi) {
            let Target::File(t) = target else { continue };
            let to = rank(&krate.files[t].module);
            if to > from {
                out.push(format!(
                    "{}:{line}: `{path}` runs up to {}",
                    file.name, krate.files[t].name
                ));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The circles among a crate's files (strongly connected sets of two or more), each as its files.
fn circles(krate: &Crate) -> Vec<Vec<String>> {
    let n = krate.files.len();
    let mut graph: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for (fi, edges) in graph.iter_mut().enumerate() {
        for (t, _, _) in krate.edges(fi) {
            if let Target::File(t) = t {
                if t != fi {
                    edges.insert(t);
                }
            }
        }
    }
    // Tarjan's strongly connected components.
    struct State<'g> {
        graph: &'g [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in s.graph[v].iter() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                set.push(w);
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                s.out.push(set);
            }
        }
    }
    let mut s = State {
        graph: &graph,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    let mut out: Vec<Vec<String>> = s
        .out
        .into_iter()
        .map(|set| {
            let mut names: Vec<String> = set.iter().map(|&f| krate.files[f].name.clone()).collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The crates under `crates/`, by their roots.
fn path_crates() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(repo().join("crates")).expect("crates/") {
        let dir = entry.expect("crates/ entry").path();
        let root = dir.join("src/lib.rs");
        if root.exists() {
            let shown = format!("crates/{}/src", dir.file_name().unwrap().to_string_lossy());
            out.push((root, shown));
        }
    }
    out.sort();
    out
}

#[test]
fn no_edge_runs_up_the_layer_order() {
    let krate = Crate::read(&Disk, &repo().join("src/lib.rs"), "src");
    assert!(
        krate.files.len() > 50,
        "the module tree was not followed: {} files",
        krate.files.len()
    );
    for file in &krate.files {
        assert!(
            file.module.is_empty() || rank(&file.module) <= LAYERS.len(),
            "{} is in no layer: add its top module to LAYERS in the order",
            file.name
        );
    }
    let up = upward_edges(&krate);
    assert!(
        up.is_empty(),
        "edges against the layer order:\n{}",
        up.join("\n")
    );
}

#[test]
fn no_files_form_a_circle() {
    let mut found = Vec::new();
    let main = Crate::read(&Disk, &repo().join("src/lib.rs"), "src");
    found.extend(circles(&main));
    for (root, shown) in path_crates() {
        found.extend(circles(&Crate::read(&Disk, &root, &shown)));
    }
    let found: Vec<String> = found.iter().map(|c| c.join(" <-> ")).collect();
    assert!(
        found.is_empty(),
        "files in a circle (each line one circle):\n{}",
        found.join("\n")
    );
}

// ----- the checker's own checks, on made-up crates ------------------------------------------------

fn made_up(files: &[(&str, &str)]) -> Crate {
    let sources: BTreeMap<PathBuf, String> = files
        .iter()
        .map(|(p, s)| (PathBuf::from(p), s.to_string()))
        .collect();
    Crate::read(&sources, Path::new("src/lib.rs"), "src")
}

const ROOT: &str = "pub mod wire; pub mod contract; pub mod mcp;";

#[test]
fn the_checker_sees_an_upward_path_in_a_use_group_and_inline() {
    let krate = made_up(&[
        ("src/lib.rs", ROOT),
        ("src/wire/mod.rs", "pub mod text;"),
        ("src/wire/text.rs", "pub fn one_line() {}"),
        ("src/contract/mod.rs", "pub mod result;"),
        (
            "src/contract/result.rs",
            "use crate::{wire::text::one_line, mcp::{sse::{Decoder}}};\n\
             // crate::mcp::body::Reader in a comment is no edge\n\
             const S: &str = \"crate::mcp::body::x\";\n\
             fn f() { let _ = crate::mcp::body::read(); }",
        ),
        ("src/mcp/mod.rs", "pub mod sse; pub mod body;"),
        ("src/mcp/sse.rs", "pub struct Decoder;"),
        ("src/mcp/body.rs", "pub fn read() {}"),
    ]);
    let up = upward_edges(&krate);
    assert_eq!(
        up,
        [
            "src/contract/result.rs:1: `crate::mcp::sse::Decoder` runs up to src/mcp/sse.rs",
            "src/contract/result.rs:4: `crate::mcp::body::read` runs up to src/mcp/body.rs",
        ]
    );
}

#[test]
fn the_checker_follows_reexports_aliases_and_test_modules() {
    let krate = made_up(&[
        ("src/lib.rs", ROOT),
        ("src/wire/mod.rs", "pub mod text;"),
        ("src/wire/text.rs", "pub fn one_line() {}"),
        (
            "src/contract/mod.rs",
            "pub mod result;\npub use crate::mcp::errors::Error;",
        ),
        (
            "src/contract/result.rs",
            "use super::Error;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    \
             #[test] fn t() { let _ = crate::mcp::Client::new(); }\n}",
        ),
        (
            "src/mcp/mod.rs",
            "pub mod errors; mod client;\npub use client::Client;",
        ),
        ("src/mcp/errors.rs", "pub struct Error;"),
        (
            "src/mcp/client.rs",
            "use crate::wire::text;\npub struct Client;\nfn f() { text::one_line(); }",
        ),
    ]);
    let up = upward_edges(&krate);
    assert_eq!(
        up,
        [
            "src/contract/mod.rs:2: `crate::mcp::errors::Error` runs up to src/mcp/errors.rs",
            "src/contract/result.rs:1: `super::Error` runs up to src/mcp/errors.rs",
            "src/contract/result.rs:5: `crate::mcp::Client::new` runs up to src/mcp/client.rs",
        ]
    );
    // The alias `text` leads to wire/text.rs: down, no message; and an edge is there.
    let client = krate
        .files
        .iter()
        .position(|f| f.name == "src/mcp/client.rs")
        .unwrap();
    let targets: Vec<String> = krate
        .edges(client)
        .into_iter()
        .filter_map(|(t, _, _)| match t {
            Target::File(t) => Some(krate.files[t].name.clone()),
            Target::Below(_) => None,
        })
        .collect();
    assert!(
        targets.iter().all(|t| t.ends_with("wire/text.rs")),
        "{targets:?}"
    );
    assert_eq!(targets.len(), 2, "{targets:?}");
}

#[test]
fn the_checker_finds_a_circle_through_super_and_a_path_attribute() {
    let krate = made_up(&[
        ("src/lib.rs", "pub mod contract;"),
        ("src/contract/mod.rs", "pub mod result;"),
        (
            "src/contract/result.rs",
            "pub fn read() {}\n#[cfg(test)]\n#[path = \"scan.rs\"]\nmod scan;\n#[cfg(test)]\n#[path = \"facts.rs\"]\nmod facts;",
        ),
        (
            "src/contract/scan.rs",
            "use super::read;\npub fn wrap() { super::facts::hold(); }",
        ),
        ("src/contract/facts.rs", "pub fn hold() { super::scan::wrap(); }"),
    ]);
    assert_eq!(
        circles(&krate),
        [["src/contract/facts.rs", "src/contract/scan.rs"]]
    );
    // A lifetime, a char and a raw string do not confuse the tokens.
    let toks = tokens("fn f<'a>(x: &'a str) -> char { let _ = r#\"crate::x\"#; '\\'' }");
    assert!(toks.iter().all(|(t, _)| *t != Tok::Ident("crate".into())));
    assert!(toks.contains(&(Tok::Punct('}'), 1)));
}
