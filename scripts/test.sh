#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up every tool the tests need, build, run mocha.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run --silent build
npx mocha "$@"
