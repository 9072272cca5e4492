#!/usr/bin/env bash
# The main job: install what is missing, build the package and serve the demo page www/ on
# 127.0.0.1. Usage: bash scripts/serve.sh [port]   (default 8080)
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${1:-${PORT:-8080}}"
bash scripts/setup.sh
bash scripts/build.sh
echo
echo "Open http://127.0.0.1:$PORT/ (Ctrl-C stops the server)"
exec python3 scripts/serve.py --port "$PORT" --root www
