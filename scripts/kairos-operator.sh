#!/usr/bin/env bash
# The Kairos operator (github.com/kairos-io/kairos-operator), built from its source, for the
# benchmark that runs it and drydock side by side on the same NodeOp (test/bench/kairos-peer.ts).
#
# Builds its manager (the module's ./cmd) with Go, its dependencies through the Go module
# proxy, and keeps it with the module's CRDs (config/crd/bases) in
#   ${XDG_CACHE_HOME:-$HOME/.cache}/drydock/kairos-operator-<version>/{bin/kairos-operator,crd/}
#
# The source, first found of:
#   1. the module at v<version> from the Go module proxy (go mod download);
#   2. DRYDOCK_KAIROS_SRC: a directory holding the repository at tag v<version> (for a proxy
#      that refuses the module: some answer "not available" for it);
#   3. a shallow clone of tag v<version> from the repository.
# Every dependency is checked against the module's go.sum.
#
# Idempotent: a complete cache is used as is. Output: progress on stderr; the only line on
# stdout is the cache directory, so callers can do  DRYDOCK_KAIROS_OPERATOR="$(bash scripts/kairos-operator.sh)".
#
# Options:  --force   rebuild even if the cache is complete
#           --help
# Environment: DRYDOCK_KAIROS_VERSION (default 0.1.3), DRYDOCK_KAIROS_SRC (see above),
#   DRYDOCK_BUILD_JOBS (go build -p; default: CPU count, max 4)
set -euo pipefail

VERSION="${DRYDOCK_KAIROS_VERSION:-0.1.3}"
MODULE=github.com/kairos-io/kairos-operator
REPO_URL="https://${MODULE}.git"

CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/drydock/kairos-operator-${VERSION}"
BIN="$CACHE_ROOT/bin/kairos-operator"
CRD_DIR="$CACHE_ROOT/crd"
SRC_DIR="$CACHE_ROOT/src"
LOG="$CACHE_ROOT/build.log"
STAMP="$CACHE_ROOT/.complete"

TOOL=kairos-operator
. "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
cache_options "$@"

cached() { [ -x "$BIN" ] && ls "$CRD_DIR"/*.yaml >/dev/null 2>&1 && [ "$(cat "$STAMP" 2>/dev/null)" = "v$VERSION" ]; }
if [ "$FORCE" = 0 ] && cached; then
  say "cached: $CACHE_ROOT (v$VERSION)"
  echo "$CACHE_ROOT"
  exit 0
fi

mkdir -p "$CACHE_ROOT" 2>/dev/null || die "cannot create $CACHE_ROOT; set XDG_CACHE_HOME (or HOME) to a writable directory"
cache_lock "$CACHE_ROOT" "the Kairos operator v$VERSION" 1800 || die "another build still holds $CACHE_ROOT/.lock after 30 minutes"
if [ "$FORCE" = 0 ] && cached; then
  say "cached (built by the other run): $CACHE_ROOT"
  echo "$CACHE_ROOT"
  exit 0
fi

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || die "the Go toolchain is not on PATH; install Go (https://go.dev/doc/install) and run this script again"
export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0
cores="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"
JOBS="${DRYDOCK_BUILD_JOBS:-$(( cores > 4 ? 4 : cores ))}"
rm -f "$STAMP"
: >"$LOG"

# fetch_source: fills $SRC_DIR with the repository at v$VERSION; says where it came from.
fetch_source() {
  rm -rf "$SRC_DIR"
  local json
  json="$(cd "$CACHE_ROOT" && go mod download -json "${MODULE}@v${VERSION}" 2>>"$LOG" || true)"
  local dir
  dir="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if [ -n "$dir" ] && [ -d "$dir" ]; then
    cp -r "$dir" "$SRC_DIR" && chmod -R u+w "$SRC_DIR"
    say "source: the module ${MODULE}@v${VERSION} from the Go module proxy"
    return
  fi
  printf '%s\n' "$json" >>"$LOG"
  say "the Go module proxy did not give ${MODULE}@v${VERSION} (see $LOG)"
  if [ -n "${DRYDOCK_KAIROS_SRC:-}" ]; then
    [ -f "$DRYDOCK_KAIROS_SRC/go.mod" ] || die "DRYDOCK_KAIROS_SRC=$DRYDOCK_KAIROS_SRC holds no go.mod"
    cp -r "$DRYDOCK_KAIROS_SRC" "$SRC_DIR" && rm -rf "$SRC_DIR/.git"
    say "source: DRYDOCK_KAIROS_SRC=$DRYDOCK_KAIROS_SRC (taken to be tag v${VERSION})"
    return
  fi
  command -v git >/dev/null 2>&1 || die "no module from the proxy, no DRYDOCK_KAIROS_SRC, and no git to clone $REPO_URL"
  git clone --quiet --depth 1 --branch "v${VERSION}" "$REPO_URL" "$SRC_DIR" >>"$LOG" 2>&1 ||
    die "no module from the proxy, no DRYDOCK_KAIROS_SRC, and cloning tag v${VERSION} of $REPO_URL failed; set DRYDOCK_KAIROS_SRC to a checkout of that tag"
  say "source: tag v${VERSION} cloned from $REPO_URL"
}

fetch_source
grep -q "^module ${MODULE}\$" "$SRC_DIR/go.mod" || die "$SRC_DIR/go.mod is not the module ${MODULE}"
ls "$SRC_DIR"/config/crd/bases/*.yaml >/dev/null 2>&1 || die "no CRDs in $SRC_DIR/config/crd/bases"
say "building ${MODULE}/cmd v${VERSION} with $(go env GOVERSION), -p $JOBS (a few minutes on 2 cores)"
mkdir -p "$(dirname "$BIN")"
(cd "$SRC_DIR" && go build -p "$JOBS" -trimpath -ldflags "-s -w" -o "$BIN" ./cmd) >>"$LOG" 2>&1 ||
  die "go build of ./cmd failed"
rm -rf "$CRD_DIR" && mkdir -p "$CRD_DIR"
cp "$SRC_DIR"/config/crd/bases/*.yaml "$CRD_DIR/"
"$BIN" --help >>"$LOG" 2>&1 || true
echo "v$VERSION" >"$STAMP"
say "done: $BIN and $(ls "$CRD_DIR" | wc -l) CRDs in $CRD_DIR"
echo "$CACHE_ROOT"
