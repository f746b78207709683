// Package harness holds the mailboxtest.Harness of each of the project's own
// mailboxes, and what the real-server tests need to reach their server: Mem
// (memmailbox in a testing/synctest bubble), SQS (sqsmailbox on an
// SQS-compatible server), the server the environment names (ReadEnv:
// SQS_ENDPOINT, SQS_SERVER, the region and the credentials) and a
// ConnTracker that closes an SDK client's connections at the end of a test.
//
// It is test support, written once for the two modules that run these
// harnesses: memmailbox's and sqsmailbox's conformance tests in the library's
// module, and the end-to-end tests and server launcher of the integration
// module (github.com/sqsloop/sqsloop/integration, whose import path lies under
// this package's parent, so Go's internal rule lets it in). Only _test.go
// files of the library import it; no library package does, so it is in no
// user's build. It imports sqsloop, mailboxtest, memmailbox, sqsmailbox and
// aws-sdk-go-v2, all already in the library's dependencies.
package harness
