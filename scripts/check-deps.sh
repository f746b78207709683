#!/usr/bin/env bash
# Checks what the library's packages compile in (go list -deps): no
# OpenTelemetry SDK or exporter, no Prometheus client, no browser driver,
# no container client in any of them, and the OpenTelemetry API in
# otelsqsloop alone (and what imports it: nothing in the library). Those
# belong to the tests, the examples and the integration module, and a user
# of consumer and sqsmailbox must not compile them. scripts/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

heavy='^(go\.opentelemetry\.io/otel/sdk|go\.opentelemetry\.io/otel/exporters|github\.com/prometheus/|github\.com/chromedp/|github\.com/testcontainers/|github\.com/docker/)'
otel_api='^go\.opentelemetry\.io/'
status=0
for pkg in $(go list ./... | grep -v -E '/examples/|/internal/'); do
  deps=$(go list -deps "$pkg")
  if bad=$(grep -E "$heavy" <<<"$deps"); then
    echo "check-deps: $pkg compiles in:" $bad >&2
    status=1
  fi
  if [ "$pkg" != github.com/sqsloop/sqsloop/otelsqsloop ] && grep -q -E "$otel_api" <<<"$deps"; then
    echo "check-deps: $pkg compiles in OpenTelemetry (only otelsqsloop may):" $(grep -E "$otel_api" <<<"$deps" | head -3) >&2
    status=1
  fi
done
if [ "$status" = 0 ]; then
  echo "check-deps: no OpenTelemetry SDK, exporter, Prometheus client, browser driver or container client in the library's packages; OpenTelemetry's API in otelsqsloop only"
fi
exit "$status"
