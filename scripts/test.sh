#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up every tool the tests need, build, run mocha.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run --silent build
# ESLint's type-checked rules and the formatter, as habits the suite enforces.
npm run --silent lint
# Kubernetes binaries for the control-plane tests: built once from source, then cached.
DRYDOCK_K8S_BIN="$(bash scripts/k8s-binaries.sh)"
export DRYDOCK_K8S_BIN
# moto, the AWS emulator, for the AWS provider's tests: installed from PyPI once, then cached.
DRYDOCK_MOTO_SERVER="$(bash scripts/moto.sh)"
export DRYDOCK_MOTO_SERVER
# The current Node LTS, installed once, then cached: engines promises it too.
DRYDOCK_NODE_LTS="$(bash scripts/node-lts.sh)"
# No files named: every test file (.mocharc.json names none, so `npx mocha FILE` runs FILE alone).
if [ "$#" = 0 ]; then set -- 'dist/test/**/*.test.js'; ALL=1; fi
npx mocha "$@"
# The suites that need no control plane, moto or sandbox, again under the LTS (the runtime is
# what this run checks; the cluster suites ran above).
if [ "${ALL:-0}" = 1 ]; then
  echo "unit suites under Node $("$DRYDOCK_NODE_LTS" --version):"
  DRYDOCK_UNIT_ONLY=1 "$DRYDOCK_NODE_LTS" node_modules/mocha/bin/mocha.js --reporter dot 'dist/test/**/*.test.js'
fi
