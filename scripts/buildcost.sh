#!/usr/bin/env bash
# How long the main job takes to build on a fresh machine, next to a program
# that only uses the AWS SDK's SQS client: each is built with an empty build
# cache (GOCACHE in a new temporary directory; the module cache is shared and
# filled first, so downloads are not counted), and the script prints the
# times (wall and CPU) and their ratios. The README's
# `go run ./examples/worker` should take at most 1.5 times the SDK-only
# program's wall time (issue 19).
#
#   scripts/buildcost.sh                  # ./examples/worker; exits 1 above 1.5x
#   ROUNDS=3 scripts/buildcost.sh         # 3 rounds, medians compared
#   scripts/buildcost.sh ./examples/sqlworker ./examples/otelworker   # others, no limit
#
# Packages are built from the top of the repository (the go.work there
# holds the examples module). The builds take minutes each on 2 cores, and
# other work on the machine slows them: the load average is printed with
# each build, and so is the CPU time (user + system) each took, which other
# work changes much less than the wall time; the limit is on the wall time's
# ratio, so compare runs made on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=1.5
check=
if [ $# -eq 0 ]; then
  set -- ./examples/worker
  check=1
fi
rounds=${ROUNDS:-1}

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# The SDK-only program, in a module of its own with the versions of the
# SDK the workspace selects.
base=$tmp/sdkonly
mkdir "$base"
cat >"$base/main.go" <<'EOF'
package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(sqs.NewFromConfig(cfg).Options().Region)
}
EOF
version() { go list -m -f '{{.Version}}' "$1"; }
{
  echo "module sdkonly"
  echo
  echo "go $(go list -m -f '{{.GoVersion}}' github.com/sqsloop/sqsloop)"
  echo
  echo "require ("
  echo "	github.com/aws/aws-sdk-go-v2/config $(version github.com/aws/aws-sdk-go-v2/config)"
  echo "	github.com/aws/aws-sdk-go-v2/service/sqs $(version github.com/aws/aws-sdk-go-v2/service/sqs)"
  echo ")"
} >"$base/go.mod"
cat go.sum examples/go.sum | sort -u >"$base/go.sum"
(cd "$base" && GOWORK=off GOFLAGS=-mod=mod go mod tidy)

# build TARGET CACHE: builds the SDK-only program ("sdk-only") or a package
# of the workspace with the build cache CACHE.
build() {
  if [ "$1" = sdk-only ]; then
    (cd "$base" && GOCACHE=$2 GOWORK=off go build -buildvcs=false -o "$tmp/bin" .)
  else
    GOCACHE=$2 go build -buildvcs=false -o "$tmp/bin" "$1"
  fi
}

targets=(sdk-only "$@")
for target in "${targets[@]}"; do # fills the module cache; not timed
  build "$target" "$(go env GOCACHE)"
done

echo "load average before: $(uptime | sed 's/.*load average: //')"
declare -A wall cpu
for round in $(seq "$rounds"); do
  for target in "${targets[@]}"; do
    cache=$(mktemp -d "$tmp/gocache.XXXXXX")
    TIMEFORMAT='%3R %3U %3S'
    t=$( { time build "$target" "$cache" >/dev/null 2>"$tmp/err"; } 2>&1 ) || { cat "$tmp/err" >&2; exit 1; }
    chmod -R u+w "$cache" && rm -rf "$cache"
    read -r real user sys <<<"$t"
    c=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.3f", u + s}')
    wall[$target]="${wall[$target]:-} $real"
    cpu[$target]="${cpu[$target]:-} $c"
    echo "round $round: $target ${real}s, CPU ${c}s (load average $(uptime | sed 's/.*load average: //'))"
  done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{v[NR]=$1} END {printf "%.1f\n", (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
base_wall=$(echo "${wall[sdk-only]}" | median)
base_cpu=$(echo "${cpu[sdk-only]}" | median)
status=0
echo
printf '%-28s %10s %7s %10s %7s\n' "cold build (medians)" "wall s" ratio "CPU s" ratio
printf '%-28s %10s %7s %10s %7s\n' sdk-only "$base_wall" 1.00 "$base_cpu" 1.00
for target in "$@"; do
  w=$(echo "${wall[$target]}" | median)
  c=$(echo "${cpu[$target]}" | median)
  r=$(ratio "$w" "$base_wall")
  printf '%-28s %10s %7s %10s %7s\n' "$target" "$w" "$r" "$c" "$(ratio "$c" "$base_cpu")"
  if [ -n "$check" ] && awk -v r="$r" -v l="$limit" 'BEGIN {exit !(r > l)}'; then
    echo "buildcost.sh: $target takes ${r}x the SDK-only program's wall time, over ${limit}x" >&2
    status=1
  fi
done
exit $status
