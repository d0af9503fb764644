#!/usr/bin/env bash
# The current Node.js LTS, for running the unit suites on it as well as on the Node that runs
# npm (engines promises both).
#
# Installs the `node` package of the npm registry (which brings the binary for this platform)
# into a directory cached, keyed by version, in
#   ${XDG_CACHE_HOME:-$HOME/.cache}/drydock/node-<version>/
# Idempotent (a complete cache is used as is) and locked, so parallel callers wait for one
# install.
#
# Output: progress goes to stderr; the only line on stdout is the path of the node binary, so
# callers can do  DRYDOCK_NODE_LTS="$(bash scripts/node-lts.sh)".
#
# Options:  --force   reinstall even if the cache is complete
#           --help
# Environment: DRYDOCK_NODE_LTS_VERSION (default 26.10.0, the Active LTS line; deploy/Dockerfile
#              builds on the same major)
set -euo pipefail

NODE_VERSION="${DRYDOCK_NODE_LTS_VERSION:-26.10.0}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/drydock/node-${NODE_VERSION}"
BIN="$CACHE_ROOT/node_modules/node/bin/node"
STAMP="$CACHE_ROOT/.complete"
LOG="$CACHE_ROOT/install.log"

TOOL=node-lts
. "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
cache_options "$@"

complete() {
  [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "node=${NODE_VERSION}" ] && [ -x "$BIN" ] &&
    [ "$("$BIN" --version 2>/dev/null)" = "v${NODE_VERSION}" ]
}

if [ "$FORCE" = 0 ] && complete; then echo "$BIN"; exit 0; fi

mkdir -p "$CACHE_ROOT"
cache_lock "$CACHE_ROOT" "node ${NODE_VERSION}"
# The holder of the lock may have finished the install while we waited.
if [ "$FORCE" = 0 ] && complete; then echo "$BIN"; exit 0; fi

command -v npm >/dev/null || die "npm is not installed"
rm -rf "$CACHE_ROOT/node_modules" "$CACHE_ROOT/package.json" "$CACHE_ROOT/package-lock.json" "$STAMP"
say "installing node@${NODE_VERSION} into $CACHE_ROOT (once; about a minute)"
# A package.json of its own, so npm never climbs up to a project around the cache.
echo '{"private":true}' >"$CACHE_ROOT/package.json"
npm install --prefix "$CACHE_ROOT" --no-audit --no-fund --no-save "node@${NODE_VERSION}" >"$LOG" 2>&1 \
  || die "npm install node@${NODE_VERSION} failed"
[ -x "$BIN" ] || die "the install has no $BIN"
[ "$("$BIN" --version)" = "v${NODE_VERSION}" ] || die "$BIN is not v${NODE_VERSION}"
echo "node=${NODE_VERSION}" >"$STAMP"
say "done"
echo "$BIN"
