#!/usr/bin/env bash
# moto, the AWS service emulator, for drydock's AWS provider tests.
#
# Installs moto[server] from PyPI into a virtual environment cached, keyed by version, in
#   ${XDG_CACHE_HOME:-$HOME/.cache}/drydock/moto-<version>/
# Idempotent (a complete cache is used as is) and locked, so parallel callers wait for one
# install. Needs python3 with the venv module; as root, python3-venv is installed with
# apt-get when it is missing.
#
# Output: progress goes to stderr; the only line on stdout is the path of the moto_server
# binary, so callers can do  DRYDOCK_MOTO_SERVER="$(bash scripts/moto.sh)".
#
# Options:  --force   reinstall even if the cache is complete
#           --help
# Environment: DRYDOCK_MOTO_VERSION (default 5.2.5)
set -euo pipefail

MOTO_VERSION="${DRYDOCK_MOTO_VERSION:-5.2.5}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/drydock/moto-${MOTO_VERSION}"
VENV="$CACHE_ROOT/venv"
SERVER="$VENV/bin/moto_server"
STAMP="$CACHE_ROOT/.complete"
LOG="$CACHE_ROOT/install.log"

TOOL=moto
. "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
cache_options "$@"

complete() { [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "moto=${MOTO_VERSION}" ] && [ -x "$SERVER" ]; }

if [ "$FORCE" = 0 ] && complete; then echo "$SERVER"; exit 0; fi

mkdir -p "$CACHE_ROOT"
cache_lock "$CACHE_ROOT" "moto ${MOTO_VERSION}"
# The holder of the lock may have finished the install while we waited.
if [ "$FORCE" = 0 ] && complete; then echo "$SERVER"; exit 0; fi

command -v python3 >/dev/null || die "python3 is not installed; install Python 3.9 or newer"
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing python3-venv with apt-get"
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv; } >"$LOG" 2>&1 \
      || die "apt-get install python3-venv failed"
  else
    die "python3's venv module is missing; install python3-venv (e.g. sudo apt-get install python3-venv)"
  fi
fi

rm -rf "$VENV" "$STAMP"
say "installing moto[server]==${MOTO_VERSION} into $VENV (once; about a minute)"
{
  python3 -m venv "$VENV" &&
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet "moto[server]==${MOTO_VERSION}"
} >"$LOG" 2>&1 || die "pip install moto[server]==${MOTO_VERSION} failed"
[ -x "$SERVER" ] || die "the install has no $SERVER"
echo "moto=${MOTO_VERSION}" >"$STAMP"
say "done"
echo "$SERVER"
