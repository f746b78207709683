// Package wire counts the SQS requests a client makes, two independent ways,
// so that a benchmark can report them by action and trust the figures:
//
//   - on the wire: HTTPClient wraps the SDK's HTTP client and counts every
//     request it sends by its X-Amz-Target header (the AWS JSON protocol names
//     the action there, "AmazonSQS.ReceiveMessage"), retries included;
//   - in the SDK: Middleware adds a smithy middleware that counts every
//     attempt by operation name (middleware.GetOperationName) at the end of
//     the Finalize step, after the retry loop, and every call at the start of
//     the Initialize step.
//
// Instrument puts both on an sqs.Client. The two attempt counts must agree;
// Calls tells retries apart (attempts minus calls). WithLatency gives a
// client the round trip of a remote endpoint on a local server.
package wire
