#!/bin/sh
# Puts a Bottlerocket node on a version through the node's own API, from a Job pinned to it.
#
# Inputs (environment):
#   BOTTLEROCKET_VERSION     the target: 1.20.3 (or v1.20.3), or latest. Required.
#   BOTTLEROCKET_REBOOT      true: reboot through the API once the update is Ready. Default false:
#                            the caller reboots the node (drydock's reboot pod records the bootID).
#   BOTTLEROCKET_API_SOCKET  the API's Unix socket, mounted from the host. Default /run/api.sock.
#   BOTTLEROCKET_TERMINATION_LOG  where the one-line summary goes. Default /dev/termination-log;
#                            when it does not exist the summary goes to stderr only.
#   BOTTLEROCKET_POLL_SECONDS     between two reads of /updates/status. Default 2.
#   BOTTLEROCKET_TIMEOUT_SECONDS  the longest one update command may take. Default 1200: prepare
#                            downloads and writes a whole image (apiclient gives it 20 minutes).
#   BOTTLEROCKET_SETTLE_SECONDS   wait after changing settings.updates.version-lock. Default 3.
#   BOTTLEROCKET_REFRESH_ATTEMPTS refreshes before a pinned target is declared unavailable. Default 5.
#
# Outcome, in the container's termination message (one line, no JSON), which the caller reads:
#   exit 0  "staged 1.20.3 (was 1.19.2)"     the update is Ready: it boots on the next reboot
#           "staged 1.20.3 (was 1.19.2), reboot requested"   and the API was asked to reboot
#           "already at 1.20.3"              nothing to do: the node runs the target (for latest:
#                                            the API offers nothing newer)
#   exit 1  "<step> failed: <the API's own words>"   nothing was rebooted
#   exit 2  "invalid input: ..."
#
# The API, as Bottlerocket's sources define it (apiserver, thar-be-updates, apiclient's update
# and set modules) and as brupop's agent drives it:
#   PATCH /settings?tx=T  {"updates":{"version-lock":"v1.20.3"}}      204; 400 on a bad value
#   POST  /tx/commit_and_apply?tx=T      200 ["settings.updates.version-lock"]; 422 when nothing
#         was pending. The apply step starts thar-be-settings in the background, so the file the
#         update dispatcher reads the lock from is rewritten shortly AFTER the answer: a refresh
#         made at once can still choose with the old lock (hence the settle wait and, for a
#         pinned target, the refresh retries). `apiclient set updates.version-lock=v1.20.3`
#         makes these same two calls.
#   GET   /settings?keys=settings.updates.version-lock   200 {"updates":{"version-lock":"latest"}}
#   POST  /actions/refresh-updates | prepare-update | activate-update | deactivate-update
#         204 once thar-be-updates has forked the command; the work goes on in the background,
#         holding the update lock. 423 "Update lock held" (another command runs), 409 "Update
#         action not allowed according to update state", 404 "Previously chosen Update no longer
#         exists" (prepare) or "No update image applied to staging partition" (activate).
#   GET   /updates/status    423 while a command holds the lock; 404 "Update status is
#         uninitialized, refresh-updates to initialize it" before the first command of a boot;
#         200 {"update_state":"Idle|Available|Staged|Ready", "available_updates":["1.20.3",...],
#         "chosen_update":{"arch","version","variant"}|null,
#         "active_partition":{"image":{...,"version"},"next_to_boot":bool},
#         "staging_partition":{"image":{...},"next_to_boot":bool}|null,
#         "most_recent_command":{"cmd_type":"refresh|prepare|activate|deactivate",
#           "cmd_status":"Success|Failed|Unknown","timestamp","exit_status","stderr"}}
#         A command has finished when most_recent_command shows its cmd_type with a timestamp
#         other than the one before it was asked (apiclient's wait); its result is cmd_status,
#         and a failure's words are stderr. A command that fails leaves update_state as it was.
#   POST  /actions/reboot    204; 500 "Failed to reboot, exit code: N, stderr: ..."
# The state machine (thar-be-updates): refresh is allowed in every state; in Idle/Available it
# goes to Available when a chosen_update exists, else Idle. chosen_update follows version-lock:
# latest = the newest update above the running version; vX.Y.Z = exactly that update, and null
# when X.Y.Z is the running version or not in the repository. prepare (Available or Staged)
# writes chosen_update to the staging partition: Staged. activate (Staged) marks it next to
# boot: Ready. deactivate (Ready) unmarks it: Staged. active_partition is the version booted.
# Unlike brupop's agent, which checks a command's type OR its status, both are checked here.
set -u

SOCKET=${BOTTLEROCKET_API_SOCKET:-/run/api.sock}
TARGET=${BOTTLEROCKET_VERSION:-}
REBOOT=${BOTTLEROCKET_REBOOT:-false}
TERMINATION_LOG=${BOTTLEROCKET_TERMINATION_LOG:-/dev/termination-log}
POLL=${BOTTLEROCKET_POLL_SECONDS:-2}
TIMEOUT=${BOTTLEROCKET_TIMEOUT_SECONDS:-1200}
SETTLE=${BOTTLEROCKET_SETTLE_SECONDS:-3}
REFRESH_ATTEMPTS=${BOTTLEROCKET_REFRESH_ATTEMPTS:-5}
# One transaction name of our own, so a commit carries only what this script set.
TX=drydock-update
NL='
'

log() {
  printf 'bottlerocket-update: %s\n' "$*" >&2
}

# The summary: the container's termination message when the kubelet provides the file.
summary() {
  _line=$(one_line "$1")
  log "$_line"
  if [ -e "$TERMINATION_LOG" ]; then printf '%s\n' "$_line" >"$TERMINATION_LOG"; fi
}

# The kubelet keeps 4 KiB of a termination message and drydock reads 1 KiB of it: a long
# stderr (updog logs as it goes) keeps the step's head and its own last words.
die() {
  summary "$(one_line "$1" | awk '{ if (length($0) > 1000) print substr($0, 1, 250) " ... " substr($0, length($0) - 744); else print }')"
  exit 1
}

# Newlines and tabs of the API's words (updog's stderr has many) become spaces; runs of spaces one.
one_line() {
  printf '%s' "$1" | tr '\n\r\t' '   ' | sed 's/  */ /g; s/^ //; s/ $//'
}

# JSON to one "path<TAB>value" line per string, number or boolean: objects join keys with dots,
# arrays number their items (available_updates.0); null and empty containers give no line.
# The answers are small and their shapes known, but a field name recurs at several depths
# (version), so a real parser (POSIX awk, present wherever sh is) rather than patterns.
JSON_FLATTEN='
function fail(m) { if (bad == "") bad = m; pos = n + 1 }
function ws() { while (pos <= n && index(" \t\r\n", substr(s, pos, 1)) > 0) pos++ }
function str(   c, e, out) {
  pos++; out = ""
  while (pos <= n) {
    c = substr(s, pos, 1)
    if (c == "\"") { pos++; return out }
    if (c == "\\") {
      e = substr(s, pos + 1, 1); pos += 2
      if (e == "u") { out = out " "; pos += 4 }
      else if (e == "\"" || e == "\\" || e == "/") out = out e
      else out = out " "
      continue
    }
    out = out c; pos++
  }
  fail("unterminated string"); return out
}
function emit(path, v) { res = res path "\t" v "\n" }
function value(path,   c, k, i, lit) {
  ws(); c = substr(s, pos, 1)
  if (c == "{") {
    pos++; ws()
    if (substr(s, pos, 1) == "}") { pos++; return }
    while (pos <= n) {
      ws(); if (substr(s, pos, 1) != "\"") { fail("expected a key"); return }
      k = str(); ws()
      if (substr(s, pos, 1) != ":") { fail("expected a colon"); return }
      pos++; value(path == "" ? k : path "." k); ws()
      c = substr(s, pos, 1); pos++
      if (c == "}") return
      if (c != ",") { fail("expected , or }"); return }
    }
  } else if (c == "[") {
    pos++; ws(); i = 0
    if (substr(s, pos, 1) == "]") { pos++; return }
    while (pos <= n) {
      value(path == "" ? i : path "." i); i++; ws()
      c = substr(s, pos, 1); pos++
      if (c == "]") return
      if (c != ",") { fail("expected , or ]"); return }
    }
  } else if (c == "\"") {
    emit(path, str())
  } else {
    lit = ""
    while (pos <= n && index("-+.0123456789eEtrufalsn", substr(s, pos, 1)) > 0) { lit = lit substr(s, pos, 1); pos++ }
    if (lit == "") { fail("unexpected character"); return }
    if (lit != "null") emit(path, lit)
  }
}
{ s = s $0 "\n" }
END {
  n = length(s); pos = 1; bad = ""; res = ""
  value(""); ws()
  if (bad == "" && pos <= n) bad = "trailing characters"
  if (bad != "") { print "not JSON: " bad > "/dev/stderr"; exit 1 }
  printf "%s", res
}'

flatten() {
  printf '%s' "$1" | awk "$JSON_FLATTEN"
}

# field FLAT PATH: the value at PATH in flattened JSON, empty when absent or null.
field() {
  printf '%s\n' "$1" | awk -F '\t' -v k="$2" '$1 == k { print substr($0, length(k) + 2); exit }'
}

# The items of an array, comma-separated (available_updates).
items() {
  printf '%s\n' "$1" | awk -F '\t' -v k="$2." 'index($1, k) == 1 && $1 !~ /\..*\./ { printf "%s%s", sep, substr($0, length($1) + 2); sep = ", " }'
}

# api METHOD PATH [BODY]: sets CODE (000 when the socket did not answer), BODY and CURL_EXIT.
api() {
  # curl leaves no file behind an empty answer (204): never read the one before.
  rm -f "$WORK/body"
  if [ $# -ge 3 ]; then
    CODE=$(curl -sS --unix-socket "$SOCKET" --max-time 60 -X "$1" -H 'Content-Type: application/json' \
      --data-binary "$3" -o "$WORK/body" -w '%{http_code}' "http://localhost$2" 2>"$WORK/err")
  else
    CODE=$(curl -sS --unix-socket "$SOCKET" --max-time 60 -X "$1" \
      -o "$WORK/body" -w '%{http_code}' "http://localhost$2" 2>"$WORK/err")
  fi
  CURL_EXIT=$?
  BODY=$(cat "$WORK/body" 2>/dev/null)
  if [ "$CURL_EXIT" -ne 0 ]; then
    CODE=000
    BODY="no answer from $SOCKET: $(cat "$WORK/err")"
  fi
}

# "HTTP 409: Update action not allowed ..." or the transport error, for messages.
answer() {
  if [ "$CODE" = 000 ]; then printf '%s' "$BODY"; else printf 'HTTP %s: %s' "$CODE" "$BODY"; fi
}

now() {
  date +%s
}

# Reads /updates/status into STATUS (flattened), waiting while a command holds the update lock.
# Returns 1 when the status is uninitialized (404): no command ran since boot.
read_status() {
  _deadline=$(($(now) + TIMEOUT))
  while :; do
    api GET /updates/status
    case $CODE in
      200)
        STATUS=$(flatten "$BODY") || die "reading /updates/status failed: the answer is not JSON: $BODY"
        return 0
        ;;
      404) return 1 ;;
      423) ;;
      *) die "reading /updates/status failed: $(answer)" ;;
    esac
    [ "$(now)" -lt "$_deadline" ] || die "reading /updates/status failed: still locked after ${TIMEOUT}s: $(answer)"
    sleep "$POLL"
  done
}

# run ACTION CMD: POST /actions/ACTION and wait until most_recent_command shows CMD finished;
# fails with its stderr unless it succeeded. STATUS is then the status after it.
run() {
  if read_status; then _before=$(field "$STATUS" most_recent_command.timestamp); else _before=; fi
  _deadline=$(($(now) + TIMEOUT))
  while :; do
    api POST "/actions/$1"
    case $CODE in
      204 | 200) break ;;
      423) ;; # another command holds the update lock: ask again once it is done
      *) die "$1 failed: $(answer)" ;;
    esac
    [ "$(now)" -lt "$_deadline" ] || die "$1 failed: the update lock stayed held for ${TIMEOUT}s: $(answer)"
    sleep "$POLL"
  done
  log "step=$1 asked"
  _failures=0
  while :; do
    sleep "$POLL"
    api GET /updates/status
    case $CODE in
      200)
        STATUS=$(flatten "$BODY") || die "$1 failed: /updates/status is not JSON: $BODY"
        _ts=$(field "$STATUS" most_recent_command.timestamp)
        if [ "$(field "$STATUS" most_recent_command.cmd_type)" = "$2" ] && [ "$_ts" != "$_before" ]; then
          _result=$(field "$STATUS" most_recent_command.cmd_status)
          [ "$_result" = Success ] || die "$1 failed: $_result (exit_status $(field "$STATUS" most_recent_command.exit_status)): $(field "$STATUS" most_recent_command.stderr)"
          log "step=$1 done state=$(field "$STATUS" update_state)"
          return 0
        fi
        ;;
      423) ;; # the command still runs
      *)
        # apiclient gives the status read five chances before it gives up on a command.
        _failures=$((_failures + 1))
        [ "$_failures" -lt 5 ] || die "$1 failed: its status could not be read: $(answer)"
        ;;
    esac
    [ "$(now)" -lt "$_deadline" ] || die "$1 failed: not finished after ${TIMEOUT}s (most_recent_command $(field "${STATUS:-}" most_recent_command.cmd_type) $(field "${STATUS:-}" most_recent_command.cmd_status))"
  done
}

# Sets settings.updates.version-lock to $1 unless it is already; returns 1 when it was.
set_version_lock() {
  api GET '/settings?keys=settings.updates.version-lock'
  [ "$CODE" = 200 ] || die "reading settings.updates.version-lock failed: $(answer)"
  _flat=$(flatten "$BODY") || die "reading settings.updates.version-lock failed: not JSON: $BODY"
  _was=$(field "$_flat" updates.version-lock)
  [ "$_was" != "$1" ] || return 1
  api PATCH "/settings?tx=$TX" "{\"updates\":{\"version-lock\":\"$1\"}}"
  [ "$CODE" = 204 ] || die "setting updates.version-lock to $1 failed: $(answer)"
  api POST "/tx/commit_and_apply?tx=$TX"
  [ "$CODE" = 200 ] || die "committing updates.version-lock $1 failed: $(answer)"
  log "step=version-lock set=$1 was=${_was:-unset}"
  return 0
}

# Refreshes until the chosen update agrees with the target. Sets CURRENT (the version booted)
# and CHOSEN (the chosen update's version, empty when none).
refresh() {
  _attempt=1
  while :; do
    run refresh-updates refresh
    CURRENT=$(field "$STATUS" active_partition.image.version)
    CHOSEN=$(field "$STATUS" chosen_update.version)
    log "step=refresh running=$CURRENT chosen=${CHOSEN:-none} available=$(items "$STATUS" available_updates | tr -d ' ')"
    # A pinned target is consistent when chosen, or when it runs already; latest always is.
    if [ "$TARGET" = latest ] || [ "$CHOSEN" = "$TARGET" ] || { [ -z "$CHOSEN" ] && [ "$CURRENT" = "$TARGET" ]; }; then
      return 0
    fi
    # Only a lock changed by this run can still be on its way to the dispatcher.
    [ "$LOCK_CHANGED" = true ] && [ "$_attempt" -lt "$REFRESH_ATTEMPTS" ] || break
    _attempt=$((_attempt + 1))
    sleep "$POLL"
  done
  _what="update_state $(field "$STATUS" update_state), available_updates [$(items "$STATUS" available_updates)], running $CURRENT, version-lock $LOCK"
  if [ -z "$CHOSEN" ]; then die "refresh-updates failed: no update to $TARGET: chosen_update null ($_what)"; fi
  die "refresh-updates failed: chosen_update $CHOSEN is not the target $TARGET ($_what)"
}

# An update activated for another version would boot on the next reboot: take it back.
cancel_other_activation() {
  [ "$(field "$STATUS" update_state)" = Ready ] || return 0
  _staged=$(field "$STATUS" staging_partition.image.version)
  [ "$_staged" != "$1" ] || return 0
  log "step=deactivate-update staged=$_staged target=$1"
  run deactivate-update deactivate
}

expect_state() {
  _state=$(field "$STATUS" update_state)
  [ "$_state" = "$2" ] || die "$1 failed: update_state is $_state, not $2"
}

stage() {
  if [ "$(field "$STATUS" update_state)" = Ready ] && [ "$(field "$STATUS" staging_partition.image.version)" = "$RESOLVED" ] &&
    [ "$(field "$STATUS" staging_partition.next_to_boot)" = true ]; then
    log "step=activate-update skipped: $RESOLVED is Ready already"
    return 0
  fi
  cancel_other_activation "$RESOLVED"
  run prepare-update prepare
  expect_state prepare-update Staged
  _staged=$(field "$STATUS" staging_partition.image.version)
  [ "$_staged" = "$RESOLVED" ] || die "prepare-update failed: staging_partition holds ${_staged:-nothing}, not $RESOLVED"
  run activate-update activate
  expect_state activate-update Ready
  [ "$(field "$STATUS" staging_partition.next_to_boot)" = true ] || die "activate-update failed: staging_partition is not next_to_boot"
}

reboot_node() {
  api POST /actions/reboot
  case $CODE in
    204 | 200) ;;
    # The host may go down before it answers: a dropped connection is the reboot under way.
    # curl's exit codes for an empty reply (52) and a connection reset while receiving (56).
    000) [ "$CURL_EXIT" = 52 ] || [ "$CURL_EXIT" = 56 ] || die "$1, but reboot failed: $(answer)" ;;
    *) die "$1, but reboot failed: $(answer)" ;;
  esac
}

invalid() {
  summary "invalid input: $1"
  exit 2
}

check_inputs() {
  if [ "$TARGET" != latest ]; then
    TARGET=${TARGET#v}
    # The versions Bottlerocket publishes: X.Y.Z, semver's pre-release and build suffixes allowed.
    # grep reads lines: a second line must not slip through behind a good first one.
    case $TARGET in *"$NL"*) TARGET=invalid ;; esac
    printf '%s\n' "$TARGET" | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?' ||
      invalid "BOTTLEROCKET_VERSION '${BOTTLEROCKET_VERSION:-}' is not X.Y.Z, vX.Y.Z or latest"
  fi
  case $REBOOT in
    true | false) ;;
    *) invalid "BOTTLEROCKET_REBOOT '$REBOOT' is not true or false" ;;
  esac
  command -v curl >/dev/null || invalid "curl is not in the image"
}

main() {
  check_inputs
  WORK=$(mktemp -d) || die "mktemp failed"
  trap 'rm -rf "$WORK"' EXIT
  if [ "$TARGET" = latest ]; then LOCK=latest; else LOCK="v$TARGET"; fi
  LOCK_CHANGED=false
  if set_version_lock "$LOCK"; then
    LOCK_CHANGED=true
    sleep "$SETTLE"
  fi
  refresh
  RESOLVED=${CHOSEN:-$CURRENT}
  if [ -z "$CHOSEN" ]; then
    # Nothing to prepare: the node runs the target. Keep it there.
    cancel_other_activation "$CURRENT"
    summary "already at $CURRENT"
    exit 0
  fi
  stage
  if [ "$REBOOT" = true ]; then
    # Written first: a reboot that works ends this container before it could write anything.
    summary "staged $RESOLVED (was $CURRENT), reboot requested"
    reboot_node "staged $RESOLVED (was $CURRENT)"
  else
    summary "staged $RESOLVED (was $CURRENT)"
  fi
  exit 0
}

main
