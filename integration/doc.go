// Package integration starts real SQS-compatible servers for tests, and
// holds the end-to-end tests of the consumer and of the worker example.
//
// It is a Go module of its own (github.com/sqsloop/sqsloop/integration), so
// that what it needs (testcontainers-go and the Docker client, goleak) never
// enters the library's dependencies: `go list -deps` of the library's
// packages shows none of it, and a user who imports package consumer does
// not download it.
//
// [StartSQSServer] provides a server, chosen in this order: the one at
// SQS_ENDPOINT (SQS_SERVER says which kind, so its declared differences
// apply); else LocalStack through testcontainers-go when a Docker engine
// answers; else the fauxqs emulator, which `npm ci --prefix integration`
// installs with the Node.js 22 it needs. The command
// github.com/sqsloop/sqsloop/integration/cmd/sqsserver starts one the same
// way and prints its SQS_ENDPOINT and SQS_SERVER, which is how
// scripts/test.sh gives one server to every module's tests.
//
// The conformance suite every Mailbox passes is package mailboxtest; it runs
// from the mailboxes' own tests. The end-to-end tests here get their queues
// from the same harnesses those tests use (the library's internal/harness:
// memmailbox in a testing/synctest bubble, sqsmailbox, here on the server
// StartSQSServer gives, and sqlmailbox on SQLite and PostgreSQL) and use
// mailboxtest's helpers, so each test runs on every mailbox: with the
// timings users run (20 s long polls, messages that arrive mid-poll),
// injected faults on every call, denied permissions on the wire, and
// handlers that ignore their context. Consumer processes (the test binary
// started again) are drained with SIGTERM and killed with SIGKILL, on the
// server and on both databases.
//
// The package is test support: [StartSQSServer] may start a child process
// (fauxqs) or a container (LocalStack), which the server's Close stops.
package integration
