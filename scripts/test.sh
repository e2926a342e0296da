#!/usr/bin/env bash
# Run every test on a fresh machine: installs apt packages and the Python environment, starts a
# throwaway PostgreSQL and Redis, then runs lint, the fast lane (core, app, db on SQLite and PostgreSQL)
# and the browser lane (headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
need_apt=0
command -v chromium >/dev/null || need_apt=1
command -v redis-server >/dev/null || need_apt=1
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt=1
if [ "$need_apt" = 1 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver postgresql redis-server >/dev/null
fi
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
.venv/bin/pip install -q -e ".[dev]"

eval "$(bash scripts/services.sh start | sed 's/^/export /')"
export TEST_POSTGRES_URL="$DATABASE_URL" TEST_REDIS_URL="$REDIS_URL"
unset DATABASE_URL  # the tests pick their databases themselves
trap 'bash scripts/services.sh stop' EXIT

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -q -p no:playwright --ignore=tests/browser "$@"
.venv/bin/python -m pytest -q tests/browser
