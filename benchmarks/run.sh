#!/usr/bin/env bash
# run.sh runs the comparative benchmark of issue 4 end to end and prints its
# markdown tables on stdout (progress, one line per run, goes to stderr).
#
#   ./run.sh                      # every scenario, 5 repetitions (3 of slow and two-workers), then the drain
#   ./run.sh -reps 3 -scenarios fast,slow
#   ./run.sh -scenarios two-workers -impls sqsloop,gocloud -drain=false
#   ./run.sh -cpuprofile prof     # also a CPU profile of each sqsloop run
#   SQS_ENDPOINT=http://127.0.0.1:4566 ./run.sh   # another SQS-compatible server
#
# Without SQS_ENDPOINT (and without a Docker engine for LocalStack) it runs
# fauxqs from ../integration, installing it first with npm when missing.
set -euo pipefail
cd "$(dirname "$0")"

if [[ -z "${SQS_ENDPOINT:-}" && ! -x ../integration/node_modules/node/bin/node ]]; then
	echo "run.sh: installing fauxqs (npm ci --prefix integration)" >&2
	(cd .. && npm ci --prefix integration >&2)
fi

# The request counter's self-test first: the table is only as good as it.
go test -count=1 ./wire/ >&2

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/compare" ./cmd/compare
"$bin/compare" -reps 5 "$@"
