// Command compare measures sqsloop beside the SQS consumers people write
// today, on one SQS-compatible server, in one run: for each scenario and
// each repetition it runs every implementation in turn (sqsloop, a naive
// hand-rolled loop, gocloud.dev/pubsub with its awssnssqs driver at its
// defaults and with a 20 s long poll; each repetition starting one further
// along the list), each on a fresh queue preloaded with the scenario's
// messages, and reports wall time, messages/s, the consumer's SQS requests
// by action (counted on the wire and cross-checked against an SDK
// middleware), requests per message, the consumer process's CPU time per
// message, duplicates and messages left undeleted, as a markdown table of
// medians. In the two-workers scenario each implementation runs as two
// consumers on one queue at once, and a second table shows how the jobs were
// spread over them, the largest receive count, and how long jobs sat at one
// worker while the other had a free handler slot. It then measures sqsloop's
// drain: how soon after Shutdown the unstarted messages are visible again.
//
// The server is the one at SQS_ENDPOINT when that is set, else the one
// package integration would start for its tests (LocalStack when a Docker
// engine answers, else fauxqs from integration/node_modules).
//
// Usage (from the benchmarks directory):
//
//	go run ./cmd/compare [-reps 3] [-long-reps 3] [-scenarios fast,fast-20k,fast-rtt10ms,slow,two-workers]
//		[-impls sqsloop,naive,gocloud,gocloud-wait20] [-drain=true] [-cpuprofile DIR]
package main
