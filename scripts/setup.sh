#!/usr/bin/env bash
# Set everything up on a fresh machine and start the dashboard on the embedded SQLite database.
# usage: scripts/setup.sh [--no-serve]      env: HOST (127.0.0.1), PORT (8050), DATABASE_URL (data/brokerage.sqlite)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip >/dev/null
.venv/bin/pip install -q -e ".[dev]"
mkdir -p data
# creates or upgrades the schema; fills the database with the demo grid only when it is empty
.venv/bin/brokerage db init
if [ "${1:-}" = "--no-serve" ]; then
  exit 0
fi
# the local demo gets one operator so saving on /tuning can be tried; set BROKERAGE_OPERATORS for real use
export BROKERAGE_OPERATORS="${BROKERAGE_OPERATORS:-operator:change-me}"
echo "dashboard: http://${HOST:-127.0.0.1}:${PORT:-8050}/   (tuning saves: operator name and secret from BROKERAGE_OPERATORS)"
exec .venv/bin/brokerage serve --host "${HOST:-127.0.0.1}" --port "${PORT:-8050}"
