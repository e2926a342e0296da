#!/usr/bin/env bash
# Start or stop a throwaway PostgreSQL and Redis on loopback ports for tests (idempotent; needs root for apt + su).
# usage: scripts/services.sh start|stop|status   env: RUN_DIR, PG_PORT (55432), REDIS_PORT (56379)
# `start` prints DATABASE_URL=... and REDIS_URL=... lines, e.g. eval "$(scripts/services.sh start | sed 's/^/export /')"
set -euo pipefail
RUN_DIR=${RUN_DIR:-/tmp/app-test-services}
PG_PORT=${PG_PORT:-55432}
REDIS_PORT=${REDIS_PORT:-56379}
PG_DB=${PG_DB:-app_test}
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)

as_postgres() { su postgres -s /bin/bash -c "$1"; }

urls() {
  echo "DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/$PG_DB"
  echo "REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0"
}

case "${1:-start}" in
start)
  if [ -z "$PG_BIN" ] || ! command -v redis-server >/dev/null; then
    apt-get update -qq >&2  # stdout carries only the URL lines (callers eval them)
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql redis-server >&2
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  mkdir -p "$RUN_DIR"
  chown postgres:postgres "$RUN_DIR"
  [ -f "$RUN_DIR/pg/PG_VERSION" ] ||
    as_postgres "$PG_BIN/initdb -D $RUN_DIR/pg -U postgres --auth=trust -E UTF8 >&2"
  # the status guard makes a second start a no-op instead of "another server might be running"
  as_postgres "$PG_BIN/pg_ctl -D $RUN_DIR/pg status" >/dev/null 2>&1 ||
    as_postgres "$PG_BIN/pg_ctl -D $RUN_DIR/pg -l $RUN_DIR/pg.log -w -o '-p $PG_PORT -k $RUN_DIR \
      -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off' start >/dev/null"
  as_postgres "$PG_BIN/psql -h 127.0.0.1 -p $PG_PORT -U postgres -qtAc \"SELECT 1 FROM pg_database WHERE datname='$PG_DB'\"" |
    grep -q 1 || as_postgres "$PG_BIN/createdb -h 127.0.0.1 -p $PG_PORT -U postgres $PG_DB"
  redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 ||
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
      --daemonize yes --pidfile "$RUN_DIR/redis.pid" --logfile "$RUN_DIR/redis.log" >/dev/null
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  urls
  ;;
stop)
  if [ -n "$PG_BIN" ] && [ -f "$RUN_DIR/pg/PG_VERSION" ]; then
    as_postgres "$PG_BIN/pg_ctl -D $RUN_DIR/pg -m fast -w stop" >/dev/null 2>&1 || true
  fi
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  ;;
status)
  pg=down
  [ -n "$PG_BIN" ] && as_postgres "$PG_BIN/pg_ctl -D $RUN_DIR/pg status" >/dev/null 2>&1 && pg=up
  redis=down
  redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && redis=up
  echo "postgresql: $pg (port $PG_PORT)  redis: $redis (port $REDIS_PORT)"
  if [ "$pg" = up ] && [ "$redis" = up ]; then urls; fi
  ;;
*)
  echo "usage: $0 start|stop|status" >&2
  exit 2
  ;;
esac
