#!/usr/bin/env bash
# A plain `go test ./...` of the library, as on a machine with no server:
# PG_DSN, SQS_ENDPOINT, SQS_SERVER, CHROMIUM and CI unset, and PG_BIN naming
# no binaries (as on a machine without PostgreSQL: the tests that would start
# servers of their own with the binaries they find skip too), so the tests
# that need a server skip. CI runs it (.ci/run) and this script checks
# what the README promises: it finishes (a test that hangs fails it at
# -timeout), it passes, and every test it skips says why. sqsmailbox's
# conformance suite must be among them, naming SQS_ENDPOINT, and
# sqlmailbox/postgres's, naming PG_DSN: a run that skipped neither had a
# server after all. It prints each skip on one line: package, test, reason.
#
# Extra arguments go to `go test` (uncached, -json, -timeout 5m before them).
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
status=0
env -u PG_DSN -u SQS_ENDPOINT -u SQS_SERVER -u CHROMIUM -u CI PG_BIN=/nonexistent \
  go test -count=1 -json -timeout 5m "$@" ./... >"$log" || status=$?

# go test -json: one event a line. Gather each test's output; print the
# skips (the test's first line of output that is not go test's own) and the
# output of every test and package that failed.
awk -v status="$status" -v took="$((SECONDS - start))" '
function field(name,   v) {
  if (!match($0, "\"" name "\":\"[^\"]*\"")) return ""
  v = substr($0, RSTART, RLENGTH)
  sub("^\"" name "\":\"", "", v)
  return substr(v, 1, length(v) - 1)
}
function output(   v) {
  v = $0
  sub(/.*"Output":"/, "", v)
  sub(/"}$/, "", v)
  gsub(/\\n/, "\n", v); gsub(/\\t/, "\t", v); gsub(/\\"/, "\"", v); gsub(/\\\\/, "\\", v)
  return v
}
# reason is the first line of a skipped test output that the test wrote.
function reason(text,   n, lines, i, l) {
  n = split(text, lines, "\n")
  for (i = 1; i <= n; i++) {
    l = lines[i]
    if (l ~ /^ *(=== (RUN|PAUSE|CONT|NAME)|--- SKIP)/) continue
    sub(/^ +([A-Za-z0-9_]+\.go:[0-9]+: *)?/, "", l)
    sub(/^\*\*\* (SKIPPING: )?/, "", l)
    if (l != "") return l
  }
  return ""
}
{
  action = field("Action"); pkg = field("Package"); test = field("Test")
  key = pkg " " test
  if (action == "output") out[key] = out[key] output()
  else if (action == "skip" && test != "") skipped[++nskip] = key
  else if (action == "fail") failed[++nfail] = key
}
END {
  bad = 0
  for (i = 1; i <= nfail; i++) {
    printf "%s", out[failed[i]]
  }
  printf "plain go test ./... (no server): %s in %d s; %d skipped:\n", (status == 0 ? "passed" : "FAILED"), took, nskip
  for (i = 1; i <= nskip; i++) {
    r = reason(out[skipped[i]])
    split(skipped[i], kt, " ")
    sub(/^github.com\/sqsloop\/sqsloop\/?/, "", kt[1])
    printf "  %s %s: %s\n", (kt[1] == "" ? "sqsloop" : kt[1]), kt[2], (r == "" ? "(NO REASON GIVEN)" : r)
    if (r == "") bad = 1
    if (kt[1] == "sqsmailbox" && r ~ /SQS_ENDPOINT/) sqs = 1
    if (kt[1] == "sqlmailbox/postgres" && r ~ /PG_DSN/) pg = 1
  }
  if (bad) print "plain-test.sh: a test skipped without saying why" > "/dev/stderr"
  if (!sqs) print "plain-test.sh: sqsmailbox'\''s conformance suite did not skip for want of SQS_ENDPOINT" > "/dev/stderr"
  if (!pg) print "plain-test.sh: sqlmailbox/postgres did not skip for want of PG_DSN" > "/dev/stderr"
  exit (status != 0 || bad || !sqs || !pg)
}' "$log"
