#!/usr/bin/env bash
# Kubernetes control-plane binaries for drydock's tests and sandbox.
#
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok
# from source through the Go module proxy (release downloads are not assumed to be
# reachable) and caches them, keyed by version, in
#   ${XDG_CACHE_HOME:-$HOME/.cache}/drydock/k8s-<version>/bin
#
# Idempotent: a complete cache, or a complete KUBEBUILDER_ASSETS / DRYDOCK_K8S_BIN
# directory, is used as is and nothing is built.
#
# Output: progress goes to stderr; the only line on stdout is the directory holding the
# binaries, so callers can do  DRYDOCK_K8S_BIN="$(bash scripts/k8s-binaries.sh)".
#
# Options:  --force   rebuild even if the cache is complete
#           --help
# Environment:
#   DRYDOCK_K8S_VERSION (default 1.36.3), DRYDOCK_ETCD_VERSION (3.6.14),
#   DRYDOCK_KWOK_VERSION (0.8.0), DRYDOCK_BUILD_JOBS (go build -p; default: CPU count, max 4)
set -euo pipefail

K8S_VERSION="${DRYDOCK_K8S_VERSION:-1.36.3}"
ETCD_VERSION="${DRYDOCK_ETCD_VERSION:-3.6.14}"
KWOK_VERSION="${DRYDOCK_KWOK_VERSION:-0.8.0}"
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)

CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/drydock/k8s-${K8S_VERSION}"
BIN_DIR="$CACHE_ROOT/bin"
WORK_DIR="$CACHE_ROOT/build"
LOG_DIR="$CACHE_ROOT/logs"
STAMP="$BIN_DIR/.complete"
STAMP_CONTENT="kubernetes=v${K8S_VERSION} etcd=v${ETCD_VERSION} kwok=v${KWOK_VERSION}"

TOOL=k8s-binaries
. "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
cache_options "$@"

START=$(date +%s)
elapsed() { echo "$(( $(date +%s) - START ))s"; }
die() {
  # die <step> <message> [log file]
  say "FAILED at step '$1': $2"
  if [ -n "${3:-}" ]; then
    say "read the log: $3"
    echo "----- last 25 lines of $3 -----" >&2
    tail -n 25 "$3" >&2 || true
    echo "-----" >&2
  fi
  exit 1
}

# has_all <dir>: every binary present and executable.
has_all() {
  local d="$1" b
  [ -n "$d" ] && [ -d "$d" ] || return 1
  for b in "${BINARIES[@]}"; do [ -x "$d/$b" ] || return 1; done
}

# 1. Already provided by the environment?
for var in DRYDOCK_K8S_BIN KUBEBUILDER_ASSETS; do
  dir="${!var:-}"
  if [ -n "$dir" ]; then
    if has_all "$dir"; then
      say "using binaries from $var=$dir; nothing to build"
      echo "$dir"
      exit 0
    fi
    missing=()
    for b in "${BINARIES[@]}"; do [ -x "$dir/$b" ] || missing+=("$b"); done
    say "$var=$dir lacks: ${missing[*]}; falling back to the cache $BIN_DIR"
  fi
done

# 2. Cached?
cached() { has_all "$BIN_DIR" && [ "$(cat "$STAMP" 2>/dev/null)" = "$STAMP_CONTENT" ]; }
if [ "$FORCE" = 0 ] && cached; then
  say "cached: $BIN_DIR ($STAMP_CONTENT)"
  echo "$BIN_DIR"
  exit 0
fi

mkdir -p "$CACHE_ROOT" 2>/dev/null || die "prepare the cache" \
  "cannot create $CACHE_ROOT; set XDG_CACHE_HOME (or HOME) to a writable directory"
# One build at a time per version: a second run waits, then finds the cache complete.
if command -v flock >/dev/null 2>&1; then
  cache_lock "$CACHE_ROOT" "k8s-${K8S_VERSION} (up to 90 min)" 5400 ||
    die "wait for the other build" "it still holds $CACHE_ROOT/.lock after 90 minutes"
  if [ "$FORCE" = 0 ] && cached; then
    say "cached (built by the other run): $BIN_DIR"
    echo "$BIN_DIR"
    exit 0
  fi
fi

# 3. Build.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"   # the official tarball's place, often not on PATH in CI shells
fi
command -v go >/dev/null 2>&1 || die "check Go" \
  "the Go toolchain is not on PATH. Install Go >= 1.26 (https://go.dev/doc/install, or your distribution's golang package) and run this script again, or point DRYDOCK_K8S_BIN at a directory holding: ${BINARIES[*]}"
export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0
GO_VERSION="$(go env GOVERSION)"
go_minor="$(echo "$GO_VERSION" | sed -E 's/^go1\.([0-9]+).*/\1/')"
if ! [ "$go_minor" -ge 26 ] 2>/dev/null; then
  die "check Go" "Kubernetes v${K8S_VERSION} needs Go >= 1.26; found $GO_VERSION. Install a newer Go and run this script again."
fi

cores="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"
JOBS="${DRYDOCK_BUILD_JOBS:-$(( cores > 4 ? 4 : cores ))}"
mkdir -p "$BIN_DIR" "$WORK_DIR" "$LOG_DIR"
rm -f "$STAMP"
say "building Kubernetes v${K8S_VERSION}, etcd v${ETCD_VERSION}, kwok v${KWOK_VERSION} with $GO_VERSION, -p $JOBS"
say "into $BIN_DIR; logs in $LOG_DIR (a cold build takes tens of minutes on 2 cores)"

LDFLAGS_STRIP="-s -w"

# run_step <step> <log> <command...>: runs in the background logging to <log>, printing a
# heartbeat so a long build is visibly alive.
run_step() {
  local step="$1" log="$2"; shift 2
  say "[$(elapsed)] $step ..."
  local t0; t0=$(date +%s)
  "$@" >"$log" 2>&1 &
  local pid=$!
  trap 'kill "$pid" 2>/dev/null || true' INT TERM
  local n=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    n=$((n + 1))
    if [ $((n % 60)) = 0 ] && kill -0 "$pid" 2>/dev/null; then
      say "[$(elapsed)] $step still running ($(tail -n 1 "$log" 2>/dev/null | cut -c1-100))"
    fi
  done
  if ! wait "$pid"; then
    trap - INT TERM
    return 1
  fi
  trap - INT TERM
  say "[$(elapsed)] $step done in $(( $(date +%s) - t0 ))s"
}

# --- Kubernetes --------------------------------------------------------------------
# k8s.io/kubernetes replaces its staging modules (k8s.io/api, ...) with local paths, so
# `go install ...@v` is refused. A wrapper module requires it and points each staging
# module at its published v0.<minor>.<patch> version. The list comes from the module's
# own go.mod so a version bump needs no edit here.
K8S_MOD_DIR="$WORK_DIR/kubernetes"
mkdir -p "$K8S_MOD_DIR"
if ! (cd "$WORK_DIR" && go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" >"$LOG_DIR/download-kubernetes.json" 2>"$LOG_DIR/download-kubernetes.log"); then
  cat "$LOG_DIR/download-kubernetes.json" >>"$LOG_DIR/download-kubernetes.log" 2>/dev/null || true
  die "download k8s.io/kubernetes@v${K8S_VERSION}" \
    "could not fetch the module: is v${K8S_VERSION} a real release (DRYDOCK_K8S_VERSION)? Is the Go module proxy reachable (GOPROXY=$(go env GOPROXY))?" \
    "$LOG_DIR/download-kubernetes.log"
fi
K8S_GOMOD="$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' "$LOG_DIR/download-kubernetes.json")"
[ -f "$K8S_GOMOD" ] || die "read k8s.io/kubernetes go.mod" "no go.mod in $LOG_DIR/download-kubernetes.json" "$LOG_DIR/download-kubernetes.json"
STAGING_VERSION="v0.${K8S_VERSION#1.}"
mapfile -t STAGING < <(sed -nE 's#^[[:space:]]*([^[:space:]]+)[[:space:]]+=>[[:space:]]+\./staging/.*#\1#p' "$K8S_GOMOD")
[ "${#STAGING[@]}" -gt 10 ] || die "read k8s.io/kubernetes go.mod" "found only ${#STAGING[@]} staging replace lines in $K8S_GOMOD"
K8S_GO="$(sed -nE 's/^go ([0-9.]+)$/\1/p' "$K8S_GOMOD")"
K8S_GODEBUG="$(sed -nE 's/^godebug (.*)$/\1/p' "$K8S_GOMOD")"
say "k8s.io/kubernetes v${K8S_VERSION}: go ${K8S_GO}, ${#STAGING[@]} staging modules -> ${STAGING_VERSION}"
{
  echo "// Generated by scripts/k8s-binaries.sh: builds Kubernetes commands from the module proxy."
  echo "module drydock.local/k8s-build"
  echo
  echo "go ${K8S_GO}"
  [ -n "$K8S_GODEBUG" ] && { echo; echo "godebug ${K8S_GODEBUG}"; }
  echo
  echo "require k8s.io/kubernetes v${K8S_VERSION}"
  echo
  echo "replace ("
  for m in "${STAGING[@]}"; do echo "	$m => $m ${STAGING_VERSION}"; done
  echo ")"
} >"$K8S_MOD_DIR/go.mod.new"
if ! cmp -s "$K8S_MOD_DIR/go.mod.new" "$K8S_MOD_DIR/go.mod.src" 2>/dev/null; then
  cp "$K8S_MOD_DIR/go.mod.new" "$K8S_MOD_DIR/go.mod"
  cp "$K8S_MOD_DIR/go.mod.new" "$K8S_MOD_DIR/go.mod.src"
  rm -f "$K8S_MOD_DIR/go.sum"
fi
rm -f "$K8S_MOD_DIR/go.mod.new"

K8S_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
K8S_PKGS=()
for c in "${K8S_CMDS[@]}"; do K8S_PKGS+=("k8s.io/kubernetes/cmd/$c"); done
(
  cd "$K8S_MOD_DIR"
  go get "k8s.io/kubernetes@v${K8S_VERSION}"
  go list -deps "${K8S_PKGS[@]}" >/dev/null
) >"$LOG_DIR/download-kubernetes-deps.log" 2>&1 || die "download Kubernetes dependencies" \
  "resolving the wrapper module $K8S_MOD_DIR/go.mod failed (a module may be missing from the proxy, or the network is down)" \
  "$LOG_DIR/download-kubernetes-deps.log"

K8S_MAJOR="${K8S_VERSION%%.*}"
K8S_MINOR="$(echo "$K8S_VERSION" | cut -d. -f2)"
BUILD_DATE="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
VERSION_LDFLAGS=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  VERSION_LDFLAGS+=" -X $p.gitVersion=v${K8S_VERSION} -X $p.gitMajor=${K8S_MAJOR} -X $p.gitMinor=${K8S_MINOR}"
  VERSION_LDFLAGS+=" -X $p.gitTreeState=clean -X $p.buildDate=${BUILD_DATE}"
done
build_k8s() {
  cd "$K8S_MOD_DIR" && go build -p "$JOBS" -trimpath -ldflags "$LDFLAGS_STRIP$VERSION_LDFLAGS" -o "$BIN_DIR/" -v "${K8S_PKGS[@]}"
}
run_step "build ${K8S_CMDS[*]}" "$LOG_DIR/build-kubernetes.log" build_k8s \
  || die "build Kubernetes" "go build failed" "$LOG_DIR/build-kubernetes.log"

# --- etcd ----------------------------------------------------------------------------
# go.etcd.io/etcd/server/v3 is itself the etcd main package.
ETCD_MOD_DIR="$WORK_DIR/etcd"
mkdir -p "$ETCD_MOD_DIR"
if [ ! -f "$ETCD_MOD_DIR/go.mod" ] || ! grep -q "server/v3 v${ETCD_VERSION}\$" "$ETCD_MOD_DIR/go.mod"; then
  rm -f "$ETCD_MOD_DIR/go.mod" "$ETCD_MOD_DIR/go.sum"
  printf '// Generated by scripts/k8s-binaries.sh: builds etcd from the module proxy.\nmodule drydock.local/etcd-build\n\ngo 1.24\n' >"$ETCD_MOD_DIR/go.mod"
fi
(
  cd "$ETCD_MOD_DIR"
  go get "go.etcd.io/etcd/server/v3@v${ETCD_VERSION}"
) >"$LOG_DIR/download-etcd.log" 2>&1 || die "download etcd v${ETCD_VERSION}" \
  "go get go.etcd.io/etcd/server/v3@v${ETCD_VERSION} failed (network or proxy problem?)" "$LOG_DIR/download-etcd.log"
build_etcd() {
  cd "$ETCD_MOD_DIR" && go build -p "$JOBS" -trimpath -ldflags "$LDFLAGS_STRIP" -o "$BIN_DIR/etcd" -v go.etcd.io/etcd/server/v3
}
run_step "build etcd" "$LOG_DIR/build-etcd.log" build_etcd \
  || die "build etcd" "go build failed" "$LOG_DIR/build-etcd.log"

# --- kwok ----------------------------------------------------------------------------
build_kwok() {
  GOBIN="$BIN_DIR" go install -p "$JOBS" -trimpath -ldflags "$LDFLAGS_STRIP -X sigs.k8s.io/kwok/pkg/consts.Version=v${KWOK_VERSION}" -v "sigs.k8s.io/kwok/cmd/kwok@v${KWOK_VERSION}"
}
run_step "build kwok" "$LOG_DIR/build-kwok.log" build_kwok \
  || die "build kwok" "go install sigs.k8s.io/kwok/cmd/kwok@v${KWOK_VERSION} failed" "$LOG_DIR/build-kwok.log"

# --- verify ----------------------------------------------------------------------------
for b in "${BINARIES[@]}"; do
  [ -x "$BIN_DIR/$b" ] || die "verify" "$BIN_DIR/$b is missing after the build" "$LOG_DIR/build-kubernetes.log"
done
"$BIN_DIR/kube-apiserver" --version >"$LOG_DIR/verify.log" 2>&1 || die "verify" "kube-apiserver --version failed" "$LOG_DIR/verify.log"
"$BIN_DIR/etcd" --version >>"$LOG_DIR/verify.log" 2>&1 || die "verify" "etcd --version failed" "$LOG_DIR/verify.log"
"$BIN_DIR/kubectl" version --client >>"$LOG_DIR/verify.log" 2>&1 || die "verify" "kubectl version --client failed" "$LOG_DIR/verify.log"
grep -q "v${K8S_VERSION}" "$LOG_DIR/verify.log" || die "verify" "kube-apiserver does not report v${K8S_VERSION}" "$LOG_DIR/verify.log"
echo "$STAMP_CONTENT" >"$STAMP"
say "[$(elapsed)] done: ${BINARIES[*]} in $BIN_DIR"
echo "$BIN_DIR"
