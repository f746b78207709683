// Package integration starts real SQS-compatible servers for tests
// ([StartSQSServer]: SQS_ENDPOINT if set, else LocalStack through
// testcontainers-go when a Docker engine answers, else the fauxqs emulator
// from npm) and holds the end-to-end tests of the consumer and the worker
// example, run on memmailbox in virtual time and on sqsmailbox on such a
// server.
//
// The conformance suite every Mailbox passes is package mailboxtest; the
// end-to-end tests get their queues from harnesses of that package's shape
// (memharness_test.go, sqsharness_test.go) and use its helpers.
//
// The package is test support: [StartSQSServer] may start a child process
// (the fauxqs emulator) or a container (LocalStack).
package integration
