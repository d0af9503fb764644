#!/usr/bin/env bash
# The Debian packages the test suite runs besides Node: curl (the Bottlerocket update script a
# node Job runs is tested as it is, with curl, against a local copy of the update API).
# Idempotent: a package whose command is already there is left alone. As root, missing ones
# are installed with apt-get; otherwise it says which to install and fails.
set -euo pipefail
missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
[ "${#missing[@]}" = 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} with apt-get" >&2
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; } >&2
else
  echo "the tests need ${missing[*]}: install it (e.g. sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
