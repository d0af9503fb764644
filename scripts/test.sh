#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up every tool the tests need, build, run mocha.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run --silent build
# Kubernetes binaries for the control-plane tests: built once from source, then cached.
DRYDOCK_K8S_BIN="$(bash scripts/k8s-binaries.sh)"
export DRYDOCK_K8S_BIN
npx mocha "$@"
