#!/usr/bin/env bash
# The project's test command (README.md): vet, then every test with the race
# detector, in the library's module, the examples' module, the integration
# module and the command's (cmd/sqsloop), the real-server tests included.
# Each module is built as its own go.mod says (GOWORK=off: the go.work at
# the top is for the README's `go run ./examples/worker`), but for the
# command's: its go.mod has no replace directive (go install ...@VERSION
# refuses one), so it builds against this library through go.work.
#
# Before the first test it checks what the tests need and gets what it can
# (scripts/machine.sh says how it installs):
#   - an SQS-compatible server for sqsmailbox's conformance suite and the
#     end-to-end tests: SQS_ENDPOINT (with SQS_SERVER naming its kind:
#     fauxqs, localstack, elasticmq or aws), else one it starts with the
#     integration module's command cmd/sqsserver (LocalStack when a Docker
#     engine answers, else the fauxqs emulator, installed from npm first:
#     pinned in integration/package-lock.json, with the Node.js 22 it needs),
#     stopped when the script exits, however it exits;
#   - a DynamoDB-compatible server for jobstate/dynamostore's tests:
#     DYNAMODB_ENDPOINT, else dynalite (from npm, pinned in
#     integration/package-lock.json like fauxqs) on a random free port of
#     127.0.0.1, stopped when the script exits (killed by its EXIT trap);
#   - PostgreSQL for sqlmailbox's tests: PG_DSN, else a server of its own
#     (scripts/postgres.sh: the machine's binaries, Debian's package
#     installed with apt-get, or a container), and its binaries for the
#     tests that crash a server of their own;
#   - Chromium for the browser tests of the lease page and the console (scripts/install-chromium.sh:
#     CHROMIUM, one on the PATH or in /Applications, else Debian's, installed
#     with apt-get).
# It prints one line per thing missing, saying how to get it. Locally the
# tests that need it then skip, saying so; under CI=true the script stops
# before the first test.
#
# Extra arguments go to every `go test` (e.g. -run Conformance -v).
set -euo pipefail
cd "$(dirname "$0")/.."

# coproc and {name}>&- below need bash 4 (macOS's /bin/bash is 3.2).
if [ "${BASH_VERSINFO[0]}" -lt 4 ]; then
  echo "test.sh: needs bash 4 or later, this is $BASH_VERSION (on macOS: brew install bash)" >&2
  exit 1
fi
if ! command -v go >/dev/null 2>&1; then
  echo "test.sh: no go on the PATH: install Go (https://go.dev/dl/, the version go.mod names or later)" >&2
  exit 1
fi
export GOWORK=off

# stop_server closes the server's standard input, which makes sqsserver stop
# the server and exit, and waits for it (SIGTERM after 30 s, SIGKILL after
# 40 s: sqsserver itself gives fauxqs 5 s).
stop_server() {
  if [ -n "${server_pid:-}" ]; then
    local pid=$server_pid
    server_pid=
    exec {server_in}>&- {server_out}<&- || true
    for i in $(seq 400); do
      kill -0 "$pid" 2>/dev/null || break
      if [ "$i" = 300 ]; then
        kill -TERM "$pid" 2>/dev/null || true
      fi
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "test.sh: sqsserver (pid $pid) did not stop; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "${server_bin:-}"
}

# stop_modules ends the module test runs still running (their process
# groups: the go commands and the test binaries).
module_pids=()
stop_modules() {
  local pid
  for pid in "${module_pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
}

# A signal ends the script through its EXIT trap, which stops the module
# runs and then the server.
# stop_dynamo ends dynalite, if this script started it.
stop_dynamo() {
  if [ -n "${dynamo_pid:-}" ]; then
    kill -TERM "$dynamo_pid" 2>/dev/null || true
    wait "$dynamo_pid" 2>/dev/null || true
    dynamo_pid=
  fi
  if [ -n "${dynamo_log:-}" ]; then # what dynalite.mjs said while it ran (aborted requests it survived)
    grep -v '^Dynalite listening at: ' "$dynamo_log" | sed 's/^/test.sh: dynalite: /' >&2 || true
    rm -f "$dynamo_log"
    dynamo_log=
  fi
}

trap 'stop_modules; stop_server; stop_dynamo' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

source scripts/postgres.sh
source scripts/install-chromium.sh

# What the tests need, checked before the first one.
missing=()
sqs_start=
if [ -z "${SQS_ENDPOINT:-}" ]; then
  if command -v npm >/dev/null 2>&1 || machine_docker; then
    sqs_start=1
  else
    missing+=("no SQS-compatible server (sqsmailbox's conformance suite and the end-to-end tests on SQS skip): install Node.js with npm (the fauxqs emulator comes from npm), start a Docker engine (LocalStack), or set SQS_ENDPOINT and SQS_SERVER")
  fi
fi
dynamo_start=
if [ -z "${DYNAMODB_ENDPOINT:-}" ]; then
  if command -v npm >/dev/null 2>&1; then
    dynamo_start=1
  else
    missing+=("no DynamoDB-compatible server (jobstate/dynamostore's tests skip): install Node.js with npm (dynalite comes from npm), or set DYNAMODB_ENDPOINT")
  fi
fi
pg_plan
missing+=(${PG_MISSING[@]+"${PG_MISSING[@]}"})
chromium=$(chromium_find || true)
if [ -z "$chromium" ] && ! machine_can_apt; then
  missing+=("no Chromium (the browser tests of the lease page and the console skip): $CHROMIUM_HOW_TO_GET")
fi
if [ ${#missing[@]} -gt 0 ]; then
  printf 'test.sh: %s\n' "${missing[@]}" >&2
  if [ "${CI:-}" = true ]; then
    echo "test.sh: CI=true: a skipped test would hide that nothing was tested; stopping before the first test" >&2
    exit 1
  fi
  echo "test.sh: going on; the tests named above skip, saying so" >&2
fi

# fail says what could not be had: under CI=true it ends the script.
fail() {
  echo "test.sh: $*" >&2
  if [ "${CI:-}" = true ]; then
    exit 1
  fi
}

# Getting them, still before the first test: what apt-get can install,
# in one go; then PostgreSQL before the SQS server, so that neither it nor
# its watchdog holds the SQS server's pipe open.
apt=()
if [ -z "$chromium" ] && machine_can_apt; then
  apt+=(chromium)
fi
if [ "$PG_HOW" = install ]; then
  apt+=(postgresql)
fi
if [ ${#apt[@]} -gt 0 ]; then
  echo "test.sh: installing Debian's ${apt[*]} (apt-get)" >&2
  machine_apt_install "${apt[@]}" || fail "apt-get install ${apt[*]} failed"
  if [ -z "$chromium" ]; then
    chromium=$(chromium_find) || fail "no Chromium after apt-get (the browser tests of the lease page and the console skip)"
  fi
  if [ "$PG_HOW" = install ]; then
    pg_plan # finds the binaries now
  fi
fi
if [ -n "$chromium" ]; then
  export CHROMIUM=$chromium
fi
if [ -n "$PG_HOW" ]; then
  if pg_start $$; then
    export PG_DSN PG_BIN
  else
    fail "PostgreSQL could not be had (sqlmailbox/postgres's tests skip)"
    unset PG_DSN
  fi
fi
if [ -n "$sqs_start$dynamo_start" ] && command -v npm >/dev/null 2>&1; then
  npm ci --prefix integration --no-audit --no-fund --loglevel=error
fi
if [ -n "$dynamo_start" ]; then
  # integration/dynalite.mjs: dynalite on a free port of 127.0.0.1, kept
  # serving when a client aborts a request (a dynalite bug it declares).
  dynamo_log=$(mktemp)
  integration/node_modules/.bin/node integration/dynalite.mjs >"$dynamo_log" 2>&1 &
  dynamo_pid=$!
  for i in $(seq 300); do
    grep -q '^Dynalite listening at: ' "$dynamo_log" && break
    kill -0 "$dynamo_pid" 2>/dev/null || break
    sleep 0.1
  done
  DYNAMODB_ENDPOINT=$(sed -n 's/^Dynalite listening at: //p' "$dynamo_log")
  if [ -n "$DYNAMODB_ENDPOINT" ]; then
    export DYNAMODB_ENDPOINT
    echo "test.sh: DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT (dynalite)" >&2
  else
    cat "$dynamo_log" >&2
    fail "dynalite did not start (jobstate/dynamostore's tests skip)"
  fi
fi
if [ -n "$sqs_start" ]; then
  server_bin=$(mktemp -d)
  (cd integration && go build -o "$server_bin/sqsserver" ./cmd/sqsserver)
  # A coprocess: its standard input is a pipe this shell holds. Closing it
  # (stop_server), or this shell's death, however it dies, stops the server.
  coproc SQSSERVER { exec "$server_bin/sqsserver" -dir integration; }
  server_pid=$SQSSERVER_PID
  server_in=${SQSSERVER[1]}
  server_out=${SQSSERVER[0]}
  SQS_ENDPOINT=
  SQS_SERVER=
  seen=0
  while [ "$seen" -lt 2 ]; do
    if ! IFS= read -r -t 300 line <&"$server_out"; then
      echo "test.sh: sqsserver gave no SQS_ENDPOINT and SQS_SERVER (see its messages above)" >&2
      exit 1
    fi
    case $line in
      SQS_ENDPOINT=*) SQS_ENDPOINT=${line#SQS_ENDPOINT=}; seen=$((seen + 1)) ;;
      SQS_SERVER=*) SQS_SERVER=${line#SQS_SERVER=}; seen=$((seen + 1)) ;;
    esac
  done
  export SQS_ENDPOINT SQS_SERVER
  echo "test.sh: SQS_ENDPOINT=$SQS_ENDPOINT SQS_SERVER=$SQS_SERVER" >&2
fi

# The four modules' tests run at once, each vetted first: the integration
# module's end-to-end tests mostly wait (on the server, on leases and
# drains), and the library's and the examples' run meanwhile. Each module's
# output goes to a file and is printed whole once it has ended, in this
# order; the script fails if any module failed.
#   - the library's module: sqsmailbox's conformance suite runs on the
#     server, sqlmailbox's on SQLite and on the PostgreSQL above;
#   - the examples' module: the main job's programs (the database one on
#     SQLite and on that PostgreSQL) and the Lambda function;
#   - the integration module: the server launchers' tests and the
#     end-to-end tests, on every mailbox. They mostly wait on the server, so
#     more of them run at once than the two cores' default. Test artifacts
#     (the lease page's screenshot) are kept under $TEST_ARTIFACTS (default
#     artifacts/ at the top of the repository).
#   - the command's module (cmd/sqsloop): sqsloop run as a process, end to
#     end, on the server, on SQLite and on that PostgreSQL.
artifacts=${TEST_ARTIFACTS:-$PWD/artifacts}
mkdir -p "$artifacts"
logs=$(mktemp -d)
modules=(library examples integration cmd)
declare -A dirs=([library]=. [examples]=examples [integration]=integration [cmd]=cmd/sqsloop)
flags_library=() flags_examples=() flags_integration=(-parallel 8 -artifacts -outputdir "$artifacts") flags_cmd=(-parallel 8)
# Each in a process group of its own (set -m), which stop_modules ends.
set -m
for m in "${modules[@]}"; do
  flags="flags_$m[@]"
  (
    if [ -n "${server_pid:-}" ]; then
      exec {server_in}>&- {server_out}<&- # this shell alone holds the server's input open
    fi
    if [ "$m" = cmd ]; then
      export GOWORK=$PWD/go.work
    fi
    cd "${dirs[$m]}" && go vet ./... && go test -race ${!flags+"${!flags}"} "$@" ./...
  ) >"$logs/$m" 2>&1 &
  module_pids+=($!)
done
set +m
status=0
for i in "${!modules[@]}"; do
  wait "${module_pids[$i]}" || status=1
  cat "$logs/${modules[$i]}"
done
module_pids=()
rm -rf "$logs"
exit $status
