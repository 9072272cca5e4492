//! The `tools/list` of the in-page offline tools: the same shapes as the reference server's
//! `liquid_box`, `polymer_chain` and `solvate` (contract §12.1–§12.3), so discovery, forms, validation and the
//! apply path treat them exactly like remote tools.
//!
//! Written as JSON text, parsed when asked for: `serde_json::json!` made each key and value a few
//! calls of code (about 25 KB of wasm before wasm-opt; the text is a fraction of that, gzip). A
//! piece several tools share is written once and named in a tool's text by a string `"@name"`
//! ([`piece`]); no other string of these definitions starts with `@`.

use std::sync::OnceLock;

use serde_json::Value;

use crate::contract::result::BUILDER_RESULT_SCHEMA;

/// §5: every offline tool declares the BuilderResult schema as its `outputSchema` — our one copy
/// ([`BUILDER_RESULT_SCHEMA`], an object schema as MCP requires), parsed once.
pub fn output_schema() -> Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            serde_json::from_str(BUILDER_RESULT_SCHEMA)
                .expect("builder_result.schema.json is JSON (checked by tests/offline.rs)")
        })
        .clone()
}

/// `text` (one of this file's definitions) as a value, each `"@name"` string replaced by [`piece`].
fn definition(text: &str) -> Value {
    fn expand(value: &mut Value) {
        match value {
            Value::String(s) if s.starts_with('@') => *value = piece(&s[1..]),
            Value::Array(items) => items.iter_mut().for_each(expand),
            Value::Object(map) => map.values_mut().for_each(expand),
            _ => {}
        }
    }
    let mut value = serde_json::from_str(text)
        .expect("the offline tools' definitions are JSON (tests/offline.rs)");
    expand(&mut value);
    value
}

/// A piece several definitions share, by name.
fn piece(name: &str) -> Value {
    match name {
        "output" => output_schema(),
        "molecule" => definition(MOLECULE),
        "structure" => definition(STRUCTURE),
        "seed" => definition(SEED),
        "density" => definition(DENSITY),
        "tolerance" => definition(TOLERANCE),
        _ => unreachable!("no shared piece @{name}"),
    }
}

/// §4.2 molecule schema, with the reference server's limits.
const MOLECULE: &str = r##"{
    "type": "object",
    "title": "Molecule",
    "description": "A molecule from the Builder library: a V2000 mol block with explicit hydrogens and 3D coordinates in Å.",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 128, "title": "Name"},
        "molblock": {"type": "string", "description": "V2000 mol block, explicit H, 3D, Å.", "title": "Molblock"},
        "smiles": {"type": "string", "description": "SMILES (cannot be embedded offline; a mol block is needed).", "title": "Smiles"}
    },
    "required": ["name"],
    "anyOf": [{"required": ["molblock"]}, {"required": ["smiles"]}]
}"##;

/// §5.1 Structure schema for the document argument.
const STRUCTURE: &str = r##"{
    "type": "object",
    "title": "Structure",
    "properties": {
        "elements": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 118}},
        "positions": {"type": "array", "items": {"type": "number"}},
        "cell": {"anyOf": [{"type": "array", "items": {"type": "number"}, "minItems": 9, "maxItems": 9}, {"type": "null"}]},
        "bonds": {"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2}},
        "bondOrders": {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]}
    },
    "required": ["elements", "positions", "cell", "bonds"]
}"##;

const SEED: &str = r##"{"type": "integer", "minimum": 0, "x-megane-widget": "seed", "title": "Seed",
    "description": "Random seed; the same seed gives the same result."}"##;

const DENSITY: &str = r##"{"type": "number", "exclusiveMinimum": 0, "maximum": 5, "default": 1.0, "title": "Density", "x-megane-unit": "g/cm3"}"##;

const TOLERANCE: &str = r##"{"type": "number", "minimum": 1.0, "maximum": 4.0, "default": 2.0, "title": "Minimum distance", "x-megane-unit": "angstrom"}"##;

/// §12.1 `liquid_box`, served in the page.
pub fn liquid_box() -> Value {
    definition(
        r##"{
    "name": "liquid_box",
    "title": "Liquid box",
    "description": "Fill a periodic box with a random packing of molecules at a target density, in this page with no server: centres and orientations at random (no lattice), then moved apart until every atom of one molecule is at least the minimum distance from every atom of another, across periodic boundaries. Give each component and its number of copies; the box is sized so that the mixture has the requested density (g/cm³). The result is a liquid-like starting structure, not an equilibrated liquid: relax it (minimisation, molecular dynamics) before reading properties from it.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "components": {
                "type": "array", "title": "Components", "minItems": 1, "maxItems": 8,
                "items": {"$ref": "#/$defs/Component"}
            },
            "seed": "@seed",
            "density": "@density",
            "shape": {"type": "string", "enum": ["cubic", "orthorhombic"], "default": "cubic", "title": "Box shape"},
            "aspect": {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0}, "minItems": 3, "maxItems": 3,
                       "default": [1.0, 1.0, 1.0], "title": "Aspect ratio a:b:c", "description": "Used for orthorhombic boxes."},
            "tolerance": "@tolerance"
        },
        "required": ["components", "seed"],
        "$defs": {
            "Molecule": "@molecule",
            "Component": {
                "type": "object", "title": "Component",
                "description": "One species of the mixture and how many copies of it to pack.",
                "properties": {
                    "molecule": {"$ref": "#/$defs/Molecule", "x-megane-widget": "molecule"},
                    "count": {"type": "integer", "minimum": 1, "maximum": 500000, "title": "Count", "examples": [100], "x-megane-unit": "count"}
                },
                "required": ["molecule", "count"]
            }
        }
    },
    "outputSchema": "@output",
    "annotations": {"title": "Liquid box", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
    "_meta": {"io.github.megane-labs/builder": {
        "contract": 1, "category": "bulk", "apply": "new_document", "document": "none", "stochastic": true, "expectedSeconds": 5
    }}
}"##,
    )
}

/// §12.3 `solvate`, served in the page.
pub fn solvate() -> Value {
    definition(
        r##"{
    "name": "solvate",
    "title": "Solvate",
    "description": "Fill the empty space of the open structure's cell with a random packing of solvent molecules (centres and orientations at random, no lattice; every solvent atom at least the minimum distance from the other molecules and the structure's atoms), in this page with no server. The number of solvent molecules is chosen so that the solvent has the requested density (g/cm³) in the part of the cell not taken by the existing atoms' van der Waals spheres. Only the added solvent is returned; the open structure is not changed. Needs an orthorhombic cell.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "document": {"$ref": "#/$defs/Structure", "x-megane-widget": "document"},
            "solvent": {"$ref": "#/$defs/Molecule", "x-megane-widget": "molecule", "title": "Solvent"},
            "seed": "@seed",
            "density": "@density",
            "tolerance": "@tolerance"
        },
        "required": ["document", "solvent", "seed"],
        "$defs": {"Molecule": "@molecule", "Structure": "@structure"}
    },
    "outputSchema": "@output",
    "annotations": {"title": "Solvate", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
    "_meta": {"io.github.megane-labs/builder": {
        "contract": 1, "category": "solvation", "apply": "insert", "document": "required", "stochastic": true, "expectedSeconds": 5
    }}
}"##,
    )
}

/// §12.2 `polymer_chain`, served in the page: the reference server's arguments (monomer, head and
/// tail atoms of that monomer, seed, 1–200 repeat units), built by [`super::polymer`] as a
/// self-avoiding random coil of rigid units.
pub fn polymer_chain() -> Value {
    definition(
        r##"{
    "name": "polymer_chain",
    "title": "Polymer chain",
    "description": "Build a linear homopolymer as a seeded, self-avoiding random coil, in this page with no server. The head and tail atoms (0-based indices into the monomer) are the atoms that bond to the neighbouring units; each gives up one hydrogen at every junction, so the chain ends keep theirs. Each unit is the monomer's 3D conformer, or its mirror image when the monomer has no stereocentre of its own, so that centres made at junctions come in both hands (atactic). Each junction bond takes a force-field length for its two atoms and the angles of the hydrogens it replaces, and its torsion is drawn in its wells: trans or gauche about single bonds between sp3 atoms, planar trans for amides and esters, twisted for diaryl ethers; so are the torsions of single bonds between sp3 atoms inside a unit's backbone (a long unit, as nylon-6,6's, is not a rigid rod). Where units crowd each other, side groups turn and the neighbourhood is relaxed apart (no full force-field optimisation). Every repeat unit is one residue.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "monomer": {"$ref": "#/$defs/Molecule", "x-megane-widget": "molecule", "title": "Monomer",
                        "examples": [{"name": "ethylene", "smiles": "CC"}]},
            "head": {"type": "integer", "minimum": 0, "x-megane-widget": "atom", "x-megane-of": "monomer",
                     "title": "Head atom", "examples": [0]},
            "tail": {"type": "integer", "minimum": 0, "x-megane-widget": "atom", "x-megane-of": "monomer",
                     "title": "Tail atom", "examples": [1]},
            "seed": "@seed",
            "length": {"type": "integer", "minimum": 1, "maximum": 200, "default": 10, "title": "Repeat units",
                       "x-megane-unit": "count"}
        },
        "required": ["monomer", "head", "tail", "seed"],
        "$defs": {"Molecule": "@molecule"}
    },
    "outputSchema": "@output",
    "annotations": {"title": "Polymer chain", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
    "_meta": {"io.github.megane-labs/builder": {
        "contract": 1, "category": "polymer", "apply": "new_document", "document": "none", "stochastic": true, "expectedSeconds": 5
    }}
}"##,
    )
}

/// The offline server's `tools/list` result, in the reference server's order.
pub fn tools_list() -> Value {
    let mut list = serde_json::Map::new();
    list.insert(
        "tools".into(),
        Value::Array(vec![liquid_box(), polymer_chain(), solvate()]),
    );
    Value::Object(list)
}
