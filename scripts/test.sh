#!/usr/bin/env bash
# The project's test command (README.md): vet, then every test with the race
# detector, the integration suite included.
#
# The integration suite needs an SQS-compatible server. With SQS_ENDPOINT set
# it uses that one; otherwise it starts LocalStack when a Docker engine
# answers, else the fauxqs emulator, which this script installs from npm
# (pinned in integration/package-lock.json, with the Node.js 22 it needs).
# Extra arguments go to `go test` (e.g. -run TestConformance -v).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${SQS_ENDPOINT:-}" ]; then
  npm ci --prefix integration --no-audit --no-fund --loglevel=error
fi
go vet ./...
go test -race "$@" ./...
