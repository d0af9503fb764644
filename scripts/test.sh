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
# Prometheus and Alertmanager for the metric gates' tests: Debian's packages, unpacked once, then cached.
DRYDOCK_PROMETHEUS_BIN="$(bash scripts/prometheus.sh)"
export DRYDOCK_PROMETHEUS_BIN
# Debian packages the tests call (curl), installed with apt-get when missing.
bash scripts/debian-packages.sh
# The current Node LTS, installed once, then cached: engines promises it too.
DRYDOCK_NODE_LTS="$(bash scripts/node-lts.sh)"
# Files named: mocha runs those alone (.mocharc.json names no spec).
if [ "$#" != 0 ]; then
  exec npx mocha "$@"
fi
# Everything, in two lanes side by side. The sandbox's end-to-end scenarios take a quarter of an
# hour that is almost all waiting (the sandbox's own soaks, reboots and health gates), so they run
# beside the rest, followed by the suites that need no control plane, moto or sandbox again under
# the LTS (the runtime is what that pass checks). A few end-to-end files that also wait more than
# they compute (a rollout held by a gate, a notification's retries) run in the side lane too, so the
# two lanes end together. The side lane's report is printed after the main one's; the run fails if
# either lane does.
SIDE_FILES=(
  dist/test/sandbox/scenario.test.js
  dist/test/e2e/metric-gates.test.js
  dist/test/e2e/stop-gates.test.js
  dist/test/e2e/notifications.test.js
  dist/test/e2e/fleet-stages.test.js
)
SIDE_LOG="$(mktemp)"
trap 'rm -f "$SIDE_LOG"' EXIT
(
  side=0
  npx mocha "${SIDE_FILES[@]}" || side=$?
  echo "unit suites under Node $("$DRYDOCK_NODE_LTS" --version):"
  DRYDOCK_UNIT_ONLY=1 "$DRYDOCK_NODE_LTS" node_modules/mocha/bin/mocha.js --reporter dot 'dist/test/**/*.test.js' ||
    side=$?
  exit "$side"
) >"$SIDE_LOG" 2>&1 &
SIDE_PID=$!
main=0
ignore=()
for f in "${SIDE_FILES[@]}"; do ignore+=(--ignore "$f"); done
npx mocha "${ignore[@]}" 'dist/test/**/*.test.js' || main=$?
side=0
wait "$SIDE_PID" || side=$?
echo
echo "the sandbox's scenarios, then the unit suites under the LTS (run beside the above):"
cat "$SIDE_LOG"
if [ "$main" != 0 ] || [ "$side" != 0 ]; then
  echo "failed: the main lane exited $main, the side lane $side" >&2
  exit 1
fi
