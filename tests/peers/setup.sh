#!/bin/sh
# Creates .venv (in the repository root) with the pinned test-peer dependencies.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
python3 -m venv "$root/.venv"
"$root/.venv/bin/pip" install --quiet -r "$root/tests/peers/requirements.txt"
"$root/.venv/bin/python" -c "import mcp, importlib.metadata as m; print('mcp', m.version('mcp'))"
# The readers of the page's saved files (issue 33: tests/structure_files.rs).
"$root/.venv/bin/python" -c "import rdkit, ase, gemmi; print('rdkit', rdkit.__version__, 'ase', ase.__version__, 'gemmi', gemmi.__version__)"
