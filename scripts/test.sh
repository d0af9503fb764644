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
npx mocha "$@"
