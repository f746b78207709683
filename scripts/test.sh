#!/usr/bin/env bash
# The project's test command (README.md): vet, then every test with the race
# detector, in the library's module and then in the integration module, the
# real-server tests included.
#
# The real-server tests (sqsmailbox's conformance suite, the integration
# module's end-to-end tests) share one SQS-compatible server. With
# SQS_ENDPOINT set (and SQS_SERVER naming its kind: fauxqs, localstack,
# elasticmq or aws) they use that one. Otherwise this script starts one with
# the integration module's command cmd/sqsserver (LocalStack when a Docker
# engine answers, else the fauxqs emulator, which it installs from npm first:
# pinned in integration/package-lock.json, with the Node.js 22 it needs),
# exports the SQS_ENDPOINT and SQS_SERVER it prints, and stops it when the
# script exits, however it exits.
#
# Extra arguments go to every `go test` (e.g. -run Conformance -v).
set -euo pipefail
cd "$(dirname "$0")/.."

# coproc and {name}>&- below need bash 4 (macOS's /bin/bash is 3.2).
if [ "${BASH_VERSINFO[0]}" -lt 4 ]; then
  echo "test.sh: needs bash 4 or later, this is $BASH_VERSION (on macOS: brew install bash)" >&2
  exit 1
fi

# run runs a command; with a server started here, without the ends of the
# server's pipes, so that this shell alone holds its standard input open.
run() {
  if [ -n "${server_pid:-}" ]; then
    "$@" {server_in}>&- {server_out}<&-
  else
    "$@"
  fi
}

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

# A signal ends the script through its EXIT trap, which stops the server.
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# PostgreSQL for sqlmailbox's tests: PG_DSN if set, else a server of its
# own, stopped when this script exits (scripts/postgres.sh). Started first, so
# that neither it nor its watchdog holds the SQS server's pipe open.
source scripts/postgres.sh

if [ -z "${SQS_ENDPOINT:-}" ]; then
  npm ci --prefix integration --no-audit --no-fund --loglevel=error
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

# The library's module: sqsmailbox's conformance suite runs on the server.
run go vet ./...
run go test -race "$@" ./...

# The examples' module: the main job's programs (the database one on
# SQLite and on the PostgreSQL above) and the Lambda function.
(cd examples && run go vet ./... && run go test -race "$@" ./...)

# The lease page's browser test drives Debian's chromium: installed here
# when missing (scripts/install-chromium.sh), named by CHROMIUM.
CHROMIUM=$(run bash scripts/install-chromium.sh)
export CHROMIUM

# The integration module: the server launcher's tests and the end-to-end
# tests, on memmailbox and on the server. They mostly wait on the server,
# so more of them run at once than the two cores' default. Test artifacts
# (the lease page's screenshot) are kept under $TEST_ARTIFACTS (default
# artifacts/ at the top of the repository).
artifacts=${TEST_ARTIFACTS:-$PWD/artifacts}
mkdir -p "$artifacts"
cd integration
run go vet ./...
run go test -race -parallel 8 -artifacts -outputdir "$artifacts" "$@" ./...
