#!/usr/bin/env bash
# Prometheus and Alertmanager, for the tests of drydock's metric gates.
#
# Fetches Debian's prometheus and prometheus-alertmanager packages with `apt-get download`
# (no root, nothing installed system-wide, no service started) and unpacks them with
# `dpkg -x` into a cache keyed by version:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/drydock/prometheus-<version>/bin
# Idempotent (a complete cache, or a complete DRYDOCK_PROMETHEUS_BIN, is used as is) and
# locked, so parallel callers wait for one install.
#
# Output: progress goes to stderr; the only line on stdout is the directory holding the
# prometheus and alertmanager binaries (run alertmanager from that directory: it reads its
# templates from ./alertmanager-share), so callers can do
#   DRYDOCK_PROMETHEUS_BIN="$(bash scripts/prometheus.sh)".
#
# Options:  --force   fetch again even if the cache is complete
#           --help
# Environment: DRYDOCK_PROMETHEUS_VERSION (default 2.42.0+ds-5+deb12u1),
#   DRYDOCK_ALERTMANAGER_VERSION (default 0.25.0-1+b4): Debian package versions.
set -euo pipefail

PROMETHEUS_VERSION="${DRYDOCK_PROMETHEUS_VERSION:-2.42.0+ds-5+deb12u1}"
ALERTMANAGER_VERSION="${DRYDOCK_ALERTMANAGER_VERSION:-0.25.0-1+b4}"
BINARIES=(prometheus alertmanager)
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/drydock/prometheus-${PROMETHEUS_VERSION%%+*}"
BIN_DIR="$CACHE_ROOT/bin"
STAMP="$CACHE_ROOT/.complete"
STAMP_CONTENT="prometheus=${PROMETHEUS_VERSION} alertmanager=${ALERTMANAGER_VERSION} templates=alertmanager-share"
LOG="$CACHE_ROOT/install.log"

TOOL=prometheus
. "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
cache_options "$@"

has_all() {
  local d="$1" b
  [ -n "$d" ] && [ -d "$d" ] || return 1
  for b in "${BINARIES[@]}"; do [ -x "$d/$b" ] || return 1; done
}

if [ -n "${DRYDOCK_PROMETHEUS_BIN:-}" ]; then
  if has_all "$DRYDOCK_PROMETHEUS_BIN"; then echo "$DRYDOCK_PROMETHEUS_BIN"; exit 0; fi
  say "DRYDOCK_PROMETHEUS_BIN=$DRYDOCK_PROMETHEUS_BIN lacks ${BINARIES[*]}; falling back to the cache $BIN_DIR"
fi

complete() { has_all "$BIN_DIR" && [ "$(cat "$STAMP" 2>/dev/null)" = "$STAMP_CONTENT" ]; }
if [ "$FORCE" = 0 ] && complete; then echo "$BIN_DIR"; exit 0; fi

mkdir -p "$CACHE_ROOT"
cache_lock "$CACHE_ROOT" "prometheus ${PROMETHEUS_VERSION}"
# The holder of the lock may have finished the install while we waited.
if [ "$FORCE" = 0 ] && complete; then echo "$BIN_DIR"; exit 0; fi

command -v apt-get >/dev/null || die "apt-get is not available; point DRYDOCK_PROMETHEUS_BIN at a directory holding: ${BINARIES[*]}"
command -v perl >/dev/null || die "perl is not available (it ships with Debian); point DRYDOCK_PROMETHEUS_BIN at a directory holding: ${BINARIES[*]}"
command -v dpkg >/dev/null || die "dpkg is not available; point DRYDOCK_PROMETHEUS_BIN at a directory holding: ${BINARIES[*]}"

rm -rf "$BIN_DIR" "$STAMP" "$CACHE_ROOT/debs" "$CACHE_ROOT/root"
mkdir -p "$CACHE_ROOT/debs" "$CACHE_ROOT/root" "$BIN_DIR"
say "fetching prometheus ${PROMETHEUS_VERSION} and prometheus-alertmanager ${ALERTMANAGER_VERSION} (once)"
fetch() {
  (cd "$CACHE_ROOT/debs" &&
    apt-get download "prometheus=${PROMETHEUS_VERSION}" "prometheus-alertmanager=${ALERTMANAGER_VERSION}")
}
if ! fetch >"$LOG" 2>&1; then
  # An index that predates the package (a fresh container) is refreshed as root, then retried.
  if [ "$(id -u)" = 0 ]; then
    { apt-get update && fetch; } >>"$LOG" 2>&1 || die "apt-get download failed"
  else
    die "apt-get download failed; run 'sudo apt-get update' and this script again"
  fi
fi
for deb in "$CACHE_ROOT"/debs/*.deb; do
  dpkg -x "$deb" "$CACHE_ROOT/root" >>"$LOG" 2>&1 || die "dpkg -x $deb failed"
done
ln -sf ../root/usr/bin/prometheus "$BIN_DIR/prometheus"
# Debian's Alertmanager reads its notification templates from /usr/share/prometheus/alertmanager,
# fixed at build time (upstream embeds them). So that nothing is installed outside the cache,
# the cached copy reads them from ././././././././alertmanager-share instead (the same length,
# so the binary's string is replaced in place): run it with the bin directory as its working
# directory, where alertmanager-share points at the package's templates.
AM_SRC="$CACHE_ROOT/root/usr/bin/prometheus-alertmanager"
[ -x "$AM_SRC" ] || die "the package holds no prometheus-alertmanager"
perl -pe 's|/usr/share/prometheus/alertmanager|././././././././alertmanager-share|g' "$AM_SRC" >"$BIN_DIR/alertmanager" ||
  die "could not write $BIN_DIR/alertmanager"
chmod 755 "$BIN_DIR/alertmanager"
ln -sfn ../root/usr/share/prometheus/alertmanager "$BIN_DIR/alertmanager-share"
"$BIN_DIR/prometheus" --version >>"$LOG" 2>&1 || die "prometheus --version failed"
"$BIN_DIR/alertmanager" --version >>"$LOG" 2>&1 || die "alertmanager --version failed"
rm -rf "$CACHE_ROOT/debs"
echo "$STAMP_CONTENT" >"$STAMP"
say "done"
echo "$BIN_DIR"
