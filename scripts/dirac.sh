#!/usr/bin/env bash
# Get DIRAC's own code for `brokerage crosscheck --brokers dirac`, and a throwaway MariaDB for its TaskQueueDB.
# usage: scripts/dirac.sh [install]          the DIRAC 9.1.22 wheel and the modules its TaskQueueDB and Matcher import,
#                                            every file sha256-pinned, in a venv of its own (never the project's)
#        scripts/dirac.sh db start|stop|status   a MariaDB on 127.0.0.1:$DIRAC_DB_PORT (53306), data under /tmp/brokerage-dirac-db-PORT
# env: BROKERAGE_DIRAC_DIR (default ~/.cache/brokerage-dirac), DIRAC_DB_PORT, DIRAC_DB_DIR
# Idempotent: install finds its READY stamp and exits 0; db start on a running server only prints its settings.
# On failure: one sentence on stderr, exit 1. Nothing of DIRAC enters the repository or the project's venv.
# As root, every third-party step that runs code (pip download, building the two sdists M2Crypto and mysqlclient)
# runs as `nobody` in a scratch folder; root then installs the built, hash-checked wheels from local files only.
set -euo pipefail

DIRAC_VERSION=9.1.22
DIR=${BROKERAGE_DIRAC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/brokerage-dirac}
VENV="$DIR/venv"
STAMP="$DIR/READY-$DIRAC_VERSION"
LOG="$DIR/setup.log"
DB_PORT=${DIRAC_DB_PORT:-53306}
DB_DIR=${DIRAC_DB_DIR:-${TMPDIR:-/tmp}/brokerage-dirac-db-$DB_PORT}  # the server runs as mysql when root: not under /root
# Debian's python3 (as root it must be one `nobody` can run; /root is private); else python3 on PATH
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
APT_PACKAGES="gcc pkg-config libmariadb-dev libssl-dev swig mariadb-server python3-venv"

die() {
  echo "scripts/dirac.sh: $1" >&2
  exit 1
}

as_nobody() { if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi; }

# --- the MariaDB of TaskQueueDB -----------------------------------------------------------------------------
db_env() {
  echo "DIRAC_DB_HOST=127.0.0.1"
  echo "DIRAC_DB_PORT=$DB_PORT"
  echo "DIRAC_DB_USER=dirac"
  echo "DIRAC_DB_PASSWORD=dirac"
}

db_up() { mariadb-admin --protocol=tcp -h 127.0.0.1 -P "$DB_PORT" -udirac -pdirac ping >/dev/null 2>&1; }

db_start() {
  command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] ||
    die "no MariaDB server: run scripts/dirac.sh install (it installs Debian's mariadb-server) or apt-get install mariadb-server."
  if db_up; then
    db_env
    return 0
  fi
  local owner=""
  [ "$(id -u)" = 0 ] && owner=mysql
  mkdir -p "$DB_DIR"
  [ -n "$owner" ] && chown "$owner:$owner" "$DB_DIR"
  if [ ! -d "$DB_DIR/data/mysql" ]; then
    mariadb-install-db ${owner:+--user=$owner} --datadir="$DB_DIR/data" --auth-root-authentication-method=normal \
      --skip-test-db >"$DB_DIR/install.log" 2>&1 || die "mariadb-install-db failed; see $DB_DIR/install.log."
  fi
  local args=(--no-defaults --datadir="$DB_DIR/data" --port="$DB_PORT" --bind-address=127.0.0.1
    --socket="$DB_DIR/mysqld.sock" --pid-file="$DB_DIR/mysqld.pid" --skip-log-bin --log-error="$DB_DIR/error.log"
    --innodb-flush-log-at-trx-commit=0 --innodb-buffer-pool-size=64M)
  if [ -n "$owner" ]; then
    runuser -u "$owner" -- /usr/sbin/mariadbd "${args[@]}" >/dev/null 2>&1 &
  else
    /usr/sbin/mariadbd "${args[@]}" >/dev/null 2>&1 &
  fi
  for _ in $(seq 100); do
    mariadb-admin --socket="$DB_DIR/mysqld.sock" -uroot ping >/dev/null 2>&1 && break
    sleep 0.2
  done
  mariadb --socket="$DB_DIR/mysqld.sock" -uroot -e "
    CREATE USER IF NOT EXISTS 'dirac'@'127.0.0.1' IDENTIFIED BY 'dirac';
    GRANT ALL ON \`TaskQueueDB%\`.* TO 'dirac'@'127.0.0.1';" >>"$DB_DIR/install.log" 2>&1 ||
    die "MariaDB did not start on port $DB_PORT; see $DB_DIR/error.log."
  db_env
}

db_stop() {
  if [ -S "$DB_DIR/mysqld.sock" ]; then
    mariadb-admin --socket="$DB_DIR/mysqld.sock" -uroot shutdown >/dev/null 2>&1 || true
  fi
}

if [ "${1:-install}" = db ]; then
  case "${2:-status}" in
  start) db_start ;;
  stop) db_stop ;;
  status)
    if db_up; then
      echo "mariadb: up (port $DB_PORT)"
      db_env
    else
      echo "mariadb: down (port $DB_PORT)"
    fi
    ;;
  *)
    echo "usage: $0 db start|stop|status" >&2
    exit 2
    ;;
  esac
  exit 0
fi
[ "${1:-install}" = install ] || {
  echo "usage: $0 [install] | db start|stop|status" >&2
  exit 2
}

# --- install ------------------------------------------------------------------------------------------------
if [ -f "$STAMP" ] && [ -x "$VENV/bin/python" ]; then
  echo "DIRAC $DIRAC_VERSION ready: python $VENV/bin/python"
  exit 0
fi
STARTED=$(date +%s)
mkdir -p "$DIR" || die "cannot create $DIR (set BROKERAGE_DIRAC_DIR to a writable folder)."
: >"$LOG"

# 1. Debian packages: compilers and headers for the two sdists (M2Crypto needs swig and OpenSSL's headers,
#    mysqlclient MariaDB's client library), and the MariaDB server itself
missing=""
for p in $APT_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  [ "$(id -u)" = 0 ] || die "missing Debian packages:$missing (as root: apt-get install -y$missing)."
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing; } >>"$LOG" 2>&1 ||
    die "apt-get install$missing failed; see $LOG."
fi

# 2. the files, hash-checked: wheels, and the two sdists built into wheels, as a non-root user
TMP=$(mktemp -d "${TMPDIR:-/tmp}/brokerage-dirac.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/dl" "$TMP/wheels" "$TMP/home"
cat >"$TMP/req.txt" <<'REQ'
Events==0.5 --hash=sha256:a7286af378ba3e46640ac9825156c93bdba7502174dd696090fdfcd4d80a1abd
aiohappyeyeballs==2.7.1 --hash=sha256:9243213661e29250eb41368e5daa826fc017156c3b8a11440826b2e3ed376472
aiohttp==3.14.5 --hash=sha256:50a195903119008fe9cc68710535eb37f556ffffd6a7759afe70a2c145587045
aiosignal==1.4.0 --hash=sha256:053243f8b92b990551949e63930a839ff0cf0b0ebbe0597b0f3fb19e1a0fe82e
annotated_types==0.8.0 --hash=sha256:f072f4d804ea359e4eaf198b1af7a8b0943881a87f31bb764f8bf219bb9419e0
anyio==4.16.0 --hash=sha256:c66ae634e0b8228396b801741beb3294326d4b6102f7bba4041c0dfb58c29026
attrs==26.1.0 --hash=sha256:c647aa4a12dfbad9333ca4e71fe62ddc36f4e63b2d260a37a8b83d2f043ac309
azure_core==1.41.0 --hash=sha256:522b4011e8180b1a3dcd2024396a4e7fe9ac37fb8597db47163d230b5efe892d
cachetools==8.0.2 --hash=sha256:502bf3c17c6e35d78ccdaa70da8c7001b28634541f5cde0dee33c93bb252277d
certifi==2026.10.19.post1 --hash=sha256:1324c476b4811eff41a8bc2122cd0bbd4d9c7234c725446d99ab1612b3a7fdd2
cffi==2.1.1 --hash=sha256:34e261f78cb6ceaaa36f42f2613f4380d94d9c759a9c73c769ee6e0247364632
charset_normalizer==3.5.3 --hash=sha256:2a6f937e0b70133d1f826d0a253331b6fe1a4c874808cc12e16f2fb8177042f4
cryptography==50.0.2 --hash=sha256:9dab55f57c74c3cad24c323bacbbd04be4705ba6eb0d92e920b1fc4837ed5079
dirac==9.1.22 --hash=sha256:436e054bab6f896d9bb94556db56e9fe434636506e7bbcca0f3ff2a3603f3c1f
diraccfg==1.0.1 --hash=sha256:5103e25208fd41c623a72ddd5775416633f97b376531c86fb4e79282871db218
diraccommon==9.1.22 --hash=sha256:b2ade98871ecf56a7fec662ec6930c3ed3dff662682e034a5f90bc10dbd3b11e
diracx_client==0.7.0 --hash=sha256:9e8de6912ee01a34f2252cf685e1a3349d3462f29a9aee7b4e68d96df573ece0
diracx_core==0.7.0 --hash=sha256:e60b64bb6832743de99a546e23072609f6cdd56dc70096ef50b08f696077c4f6
dnspython==2.9.2 --hash=sha256:af15f7d385a6ae2fb35a796fde2138004c8c42c7389090e2addc83e3b3340fd8
email_validator==2.4.0 --hash=sha256:4454e41c4e1c6b6caee34a1dc71d5e736791562be8fd179b02e298f796522684
frozenlist==1.8.0 --hash=sha256:2552f44204b744fba866e573be4c1f9048d6a324dfe14475103fd51613eb1d1f
gitdb==4.0.12 --hash=sha256:67073e15955400952c6565cc3e707c554a4eea2e428946f7a4c162fab9bd9bcf
gitpython==3.2.1 --hash=sha256:d66b0832aa8755c1a84892937282df0befb16c97e5a64aeebd68be9c5e323f53
h11==0.16.0 --hash=sha256:63cf8bbe7522de3bf65932fda1d9c2772064ffb3dae62d55932da54b31cb6c86
httpcore==1.0.9 --hash=sha256:2d400746a40668fc9dec9810239072b40b4484b640a8c38fd654a024c7a1bf55
httpcore2==2.16.2 --hash=sha256:16051ae2a42f776007543f32de9349a317b23d2cbb4e1456b4bac0e88b87419a
httpx==0.28.1 --hash=sha256:d909fcccc110f8c7faf814ca82a9a4d816bc5a6dbfea25d6591d6985b8ba59ad
httpx2==2.16.2 --hash=sha256:f05c13aade4c45dbf1c9060647a1058f0acad62398fad96e741269edb33d46f5
idna==3.20 --hash=sha256:ab7ae7122974553370f0bdb919e1a960b2cd1bc1ef0276416d896db81c14582c
importlib_metadata==10.2.0 --hash=sha256:c7a4bf1c7479601f6b8e437cfc14f4f77028ba62a8f34ae95cd93d9774dfba51
importlib_resources==7.1.0 --hash=sha256:1bd7b48b4088eddb2cd16382150bb515af0bd2c70128194392725f82ad2c96a1
isodate==0.7.2 --hash=sha256:28009937d8031054830160fce6d409ed342816b543597cece116d966c6d99e15
joserfc==1.8.0 --hash=sha256:176b836ac7ed9a46a88629e24076314b475f33a75d0bad7f26146e572eed7c79
lazy_importer==0.1.0 --hash=sha256:bd93fab7bef18e842eea02b839410954d37889140dc64ca4d9680aec6880c739
m2crypto==0.51.0 --hash=sha256:5428f6601086a8f5e41aa70248b3b983443e7badf263551c5104ba2ec0c9d955
multidict==7.2.1 --hash=sha256:3b7542fad2706595c1b1853b46f2c3c4ae5cc5a6252b7225f294d607a29e1bdf
mysqlclient==2.3.2 --hash=sha256:d8921cc2e8aa0e7f7c1c0b69b17e3a6f370dae235c7e7716938959dac84de4eb
opensearch_py==3.2.0 --hash=sha256:721a0d3b13fbed9e82278aed748285cf63a1855354ab7e73e3d4992d1b93418b
orjson==3.13.0 --hash=sha256:89bcf2d4bc6c9a7e1763c8cf534f38712e66b76a0fefda7fb7785462f0d635e4
packaging==26.4 --hash=sha256:81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2
propcache==0.5.4 --hash=sha256:6e9368e87a3efc285e559131092c5db643eb8e56de4ee42064d5baec22ef2bb5
psutil==7.2.2 --hash=sha256:076a2d2f923fd4821644f5ba89f059523da90dc9014e85f8e45a5774ca5bc6f9
pyasn1==0.6.5 --hash=sha256:4017b0fce125096b8573b39c989fdb1a4b19cf761e683398184550fea0e66587
pyasn1_modules==0.4.2 --hash=sha256:29253a9207ce32b64c3ac6600edc75368f98473906e8fd1043bd6b5b1de2c14a
pycparser==3.12 --hash=sha256:a076f3f489b39b43ed13563a1dafe42447445bec2e294154ec5c57fcdda4c85e
pydantic==2.14.4 --hash=sha256:653a2ad9f6d8858529c77c72717d0ea991d6c6837fe683246b2f4b2bbfc3fadc
pydantic_core==2.50.5 --hash=sha256:488319076ec92908b91fc6265ce761f1d78748f69f85518564fd16bf333e1b70
pydantic_settings==2.16.3 --hash=sha256:d1db16a2d34006323a1b42c0640898da58adfbad7ec30baaa9e2b18aafc08999
pyjwt==2.15.1 --hash=sha256:42d59d631f7768a1028a64c7ff581a9bf7519804daf91fc5b6c56e30eec5e193
python_dateutil==4.0.0 --hash=sha256:a5e246f79eb80475e691bf93862cead98decd8a498cf53ba0516fcdc0f50dc1c
python_dotenv==1.2.4 --hash=sha256:42269a8a5b3fd54ffa6f3d84b18abed50064717576b4ecf03dc4a55d8aa04fdc
pyyaml==6.0.4 --hash=sha256:622aa875fa6533f25fedcffe23079357d65a690d462200afed5d8e9d0e01ebee
requests==2.34.2 --hash=sha256:2a0d60c172f83ac6ab31e4554906c0f3b3588d37b5cb939b1c061f4907e278e0
setuptools==84.2.1 --hash=sha256:ca140b45d5325a9478f880e351484f62fef15f336462e449ca0c03c873d589c2
sh==2.4.0 --hash=sha256:98eba32eeb5ecdd310668737d7461e668afc42b273550d0bc198a1c5c2b1ab36
signurlarity==0.3.1 --hash=sha256:6a5c7dfbfae2b74a290dd14ec77d84ad8d18921d25a99507bf4330566227139b
smmap==5.0.3 --hash=sha256:c106e05d5a61449cf6ba9a1e650227ecfb141590d2a98412103ff35d89fc7b2f
truststore==0.10.5 --hash=sha256:9aaaedaefaf06d8b206278cf8b5012bc897f485a874503501e12d776df78951c
typing_extensions==4.16.0 --hash=sha256:481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8
typing_inspection==0.4.5 --hash=sha256:bc210535442b39e1bf2805e0c7a17dfd6a4ace760c84c7f7d16245d23a6b1c39
urllib3==2.8.0 --hash=sha256:0cf3cae568d36aa9576b28dfb35f11328f1cb974ca7647d9475ebb86c75ac6e3
wheel==0.48.0 --hash=sha256:3217dcc807155e45db462d7ef2431f5ddda0d7273b700d05a67b271ceb1287ab
yarl==1.25.1 --hash=sha256:d5add7b4ca7afeea91d52e4d4e4db3b1fe9885b71f07054560d8c4296b7441a2
REQ
grep -v -E '^(m2crypto|mysqlclient)==' "$TMP/req.txt" >"$TMP/wheel-req.txt"
grep -E '^(m2crypto|mysqlclient|setuptools|wheel)==' "$TMP/req.txt" >"$TMP/build-req.txt"
grep -E '^(setuptools|wheel)==' "$TMP/req.txt" >"$TMP/tools-req.txt"
if [ "$(id -u)" = 0 ]; then
  command -v runuser >/dev/null || die "running as root needs runuser to download and build as nobody."
  chmod 755 "$TMP"
  chown -R nobody "$TMP/dl" "$TMP/wheels" "$TMP/home"
  chmod 644 "$TMP"/*.txt
fi
as_nobody env HOME="$TMP/home" "$PY" -m pip download -q --no-deps --require-hashes --only-binary=:all: \
  -r "$TMP/wheel-req.txt" -d "$TMP/dl" >>"$LOG" 2>&1 ||
  die "pip download of DIRAC $DIRAC_VERSION's wheels failed (no network to PyPI, or a hash mismatch); see $LOG."
as_nobody "$PY" -m venv "$TMP/home/build" >>"$LOG" 2>&1 || die "cannot create a build venv with $PY."
as_nobody env HOME="$TMP/home" "$TMP/home/build/bin/pip" install -q --no-index --no-deps --require-hashes \
  -f "$TMP/dl" -r "$TMP/tools-req.txt" >>"$LOG" 2>&1 || die "installing the pinned setuptools and wheel failed; see $LOG."
as_nobody env HOME="$TMP/home" "$TMP/home/build/bin/pip" download -q --no-deps --require-hashes \
  --no-binary=m2crypto,mysqlclient --no-build-isolation -r "$TMP/build-req.txt" -d "$TMP/dl" >>"$LOG" 2>&1 ||
  die "pip download of the M2Crypto and mysqlclient sdists failed; see $LOG."
for sdist in "$TMP"/dl/m2crypto-*.tar.gz "$TMP"/dl/mysqlclient-*.tar.gz; do
  as_nobody env HOME="$TMP/home" "$TMP/home/build/bin/pip" wheel -q --no-index --no-deps --no-build-isolation \
    -w "$TMP/wheels" "$sdist" >>"$LOG" 2>&1 || die "building $(basename "$sdist") failed (compiler, swig or headers); see $LOG."
done

# 3. DIRAC's venv, from those local files only
rm -rf "$VENV"
"$PY" -m venv "$VENV" >>"$LOG" 2>&1 || die "cannot create a venv at $VENV with $PY."
"$VENV/bin/pip" install -q --no-index --no-deps --require-hashes -f "$TMP/dl" -r "$TMP/wheel-req.txt" >>"$LOG" 2>&1 ||
  die "installing DIRAC's wheels into $VENV failed; see $LOG."
"$VENV/bin/pip" install -q --no-index --no-deps "$TMP"/wheels/*.whl >>"$LOG" 2>&1 ||
  die "installing the built M2Crypto and mysqlclient wheels into $VENV failed; see $LOG."
(cd "$TMP" && "$VENV/bin/python" -c "import DIRAC, MySQLdb
from DIRAC.WorkloadManagementSystem.DB.TaskQueueDB import TaskQueueDB
from DIRAC.WorkloadManagementSystem.Client.Matcher import Matcher") >>"$LOG" 2>&1 ||
  die "the venv at $VENV cannot import DIRAC's TaskQueueDB and Matcher; see $LOG."

echo "$DIRAC_VERSION $(($(date +%s) - STARTED)) s" >"$STAMP"
echo "DIRAC $DIRAC_VERSION ready: python $VENV/bin/python ($(($(date +%s) - STARTED)) s)"
