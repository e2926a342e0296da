#!/usr/bin/env bash
# Get PanDA's own code for `brokerage crosscheck`: the panda-server 1.0.4 sdist (sha256 pinned), unpacked outside
# the repository, and a venv of its own holding panda-common and packaging (hash-pinned), never the project's.
# usage: scripts/panda.sh            env: BROKERAGE_PANDA_DIR (default ~/.cache/brokerage-panda), PYTHON (python3)
# Idempotent: a second run checks the stamp and exits 0. On failure: one sentence on stderr, exit 1.
# The package has no wheel; pip builds its metadata to download it, and that build hook refuses root (it looks up a
# user `atlpan` and writes /var/log/panda): as root the download runs as `nobody` with VIRTUAL_ENV pointing the
# hook's directories into a scratch folder, and DISABLE_MM=1 keeps it from posting to a chat webhook.
set -euo pipefail

PANDA_VERSION=1.0.4
PANDA_SHA256=f77a8b62511c11e224eb270a4abf48ee07e89fe791e2e1f8460390cbe2285620
DIR=${BROKERAGE_PANDA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/brokerage-panda}
SRC="$DIR/panda-server-$PANDA_VERSION"
VENV="$DIR/venv"
STAMP="$DIR/READY-$PANDA_VERSION"
LOG="$DIR/setup.log"
PY=${PYTHON:-python3}

die() {
  echo "scripts/panda.sh: $1" >&2
  exit 1
}

if [ -f "$STAMP" ] && [ -x "$VENV/bin/python" ] && [ -d "$SRC/pandajedi" ]; then
  echo "PanDA $PANDA_VERSION ready: source $SRC, python $VENV/bin/python"
  exit 0
fi
mkdir -p "$DIR" || die "cannot create $DIR (set BROKERAGE_PANDA_DIR to a writable folder)."
: >"$LOG"

# --- 1. the sdist, as a non-root user -----------------------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/brokerage-panda.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
SDIST="$TMP/dl/panda_server-$PANDA_VERSION.tar.gz"
mkdir -p "$TMP/dl" "$TMP/home" "$TMP/hook"
echo "panda-server==$PANDA_VERSION --hash=sha256:$PANDA_SHA256" >"$TMP/req.txt"
PIP_ARGS=(download --no-deps --require-hashes -r "$TMP/req.txt" -d "$TMP/dl")
if [ "$(id -u)" = 0 ]; then
  command -v runuser >/dev/null || die "running as root needs runuser to download as nobody (or run as a normal user)."
  USERPY=/usr/bin/python3
  [ -x "$USERPY" ] || USERPY=$(command -v python3)
  chmod 755 "$TMP"
  chown -R nobody "$TMP/dl" "$TMP/home" "$TMP/hook"
  chmod 644 "$TMP/req.txt"
  runuser -u nobody -- env HOME="$TMP/home" DISABLE_MM=1 VIRTUAL_ENV="$TMP/hook" "$USERPY" -m pip "${PIP_ARGS[@]}" >>"$LOG" 2>&1 ||
    die "pip download of panda-server==$PANDA_VERSION failed as nobody (no network to PyPI, or hash mismatch); see $LOG."
else
  env HOME="$TMP/home" DISABLE_MM=1 VIRTUAL_ENV="$TMP/hook" "$PY" -m pip "${PIP_ARGS[@]}" >>"$LOG" 2>&1 ||
    die "pip download of panda-server==$PANDA_VERSION failed (no network to PyPI, or hash mismatch); see $LOG."
fi
[ -f "$SDIST" ] || die "pip reported success but $SDIST is missing; see $LOG."
echo "$PANDA_SHA256  $SDIST" | sha256sum -c --status || die "the panda-server $PANDA_VERSION sdist does not match its pinned sha256."

# --- 2. unpack outside the repository ------------------------------------------------------------------------
rm -rf "$SRC" "$DIR/unpack"
mkdir -p "$DIR/unpack"
tar -xzf "$SDIST" -C "$DIR/unpack" || die "cannot unpack $SDIST into $DIR."
mv "$DIR/unpack/panda_server-$PANDA_VERSION" "$SRC" || die "the sdist has no panda_server-$PANDA_VERSION folder."
rmdir "$DIR/unpack"
[ -d "$SRC/pandajedi/jedibrokerage" ] || die "the unpacked sdist has no pandajedi/jedibrokerage."

# --- 3. PanDA's own venv: panda-common and packaging (and panda-common's dependencies), hash-pinned -----------
cat >"$TMP/venv-req.txt" <<'EOF'
panda-common==0.1.11 --hash=sha256:645a1428fe1ed2457ddb1b4ee32bb0639f148d3c532b59da3fb1161fad3dcc7f
packaging==26.4 --hash=sha256:81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2
pytz==2026.6 --hash=sha256:7fed3fee8fd6bd4a2b7b75a8d56021d0624127bf69bd5691f115db929ac570b3
requests==2.34.2 --hash=sha256:2a0d60c172f83ac6ab31e4554906c0f3b3588d37b5cb939b1c061f4907e278e0
urllib3==2.8.0 --hash=sha256:0cf3cae568d36aa9576b28dfb35f11328f1cb974ca7647d9475ebb86c75ac6e3
certifi==2026.10.19.post1 --hash=sha256:1324c476b4811eff41a8bc2122cd0bbd4d9c7234c725446d99ab1612b3a7fdd2
charset-normalizer==3.5.3 --hash=sha256:2a6f937e0b70133d1f826d0a253331b6fe1a4c874808cc12e16f2fb8177042f4
idna==3.20 --hash=sha256:ab7ae7122974553370f0bdb919e1a960b2cd1bc1ef0276416d896db81c14582c
stomp-py==9.0.0 --hash=sha256:d115c85950b92dad358d11bc361b23d23994d21ff7eef50119f487f718ea4be2
docopt-ng==0.9.0 --hash=sha256:bfe4c8b03f9fca424c24ee0b4ffa84bf7391cb18c29ce0f6a8227a3b01b81ff9
websocket-client==1.9.2 --hash=sha256:e1a673830a9c7bfa47b1cd3d5e4178f4c9651d80a4eab02c9c23a1c3ec6250ce
EOF
rm -rf "$VENV"
"$PY" -m venv "$VENV" >>"$LOG" 2>&1 || die "cannot create a venv at $VENV with $PY."
"$VENV/bin/python" -m pip install -q --no-deps --require-hashes -r "$TMP/venv-req.txt" >>"$LOG" 2>&1 ||
  die "installing panda-common and packaging into $VENV failed; see $LOG."
"$VENV/bin/python" -c "import pandacommon, packaging, pytz, requests" >>"$LOG" 2>&1 ||
  die "the venv at $VENV cannot import panda-common's modules; see $LOG."

echo "$PANDA_VERSION $PANDA_SHA256" >"$STAMP"
echo "PanDA $PANDA_VERSION ready: source $SRC, python $VENV/bin/python"
