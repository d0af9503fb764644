# Shared by the scripts that install a tool into drydock's cache
# (${XDG_CACHE_HOME:-$HOME/.cache}/drydock/): their options, their messages, their lock.
# The sourcing script sets TOOL (its name in messages) first.

# cache_options "$@": --force sets FORCE=1; --help prints the script's leading comment block.
FORCE=0
cache_options() {
  local arg
  for arg in "$@"; do
    case "$arg" in
      --force) FORCE=1 ;;
      -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
      *) echo "$TOOL: unknown option '$arg' (see --help)" >&2; exit 2 ;;
    esac
  done
}

say() { echo "$TOOL: $*" >&2; }

# die <message>: says it, points at the install log ($LOG, when the sourcing script set one and it
# exists) with its tail, and exits 1. A script whose failures name a step defines its own.
die() {
  say "FAILED: $1"
  if [ -n "${LOG:-}" ] && [ -f "$LOG" ]; then say "read the log: $LOG"; tail -n 25 "$LOG" >&2 || true; fi
  exit 1
}

# cache_lock <cache dir> <what is installed> [seconds to wait]: one install per cache directory
# at a time; a second caller waits for the first (without a limit unless one is given), then
# finds the cache complete. Fails only when the wait runs out.
cache_lock() {
  exec 9>"$1/.lock"
  if ! flock -n 9; then
    say "another install of $2 is running; waiting for it"
    if [ -n "${3:-}" ]; then flock -w "$3" 9 || return 1; else flock 9; fi
  fi
}
