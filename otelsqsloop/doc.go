// Package otelsqsloop makes OpenTelemetry traces and metrics of sqsloop's
// events (sqsloop.Observer), following the OpenTelemetry semantic
// conventions for messaging and for AWS SQS (semantic-conventions v1.44.0:
// docs/messaging/messaging-spans.md, messaging-metrics.md, sqs.md; the
// attribute names of the Go API's semconv/v1.43.0). It depends on the
// OpenTelemetry API only: the program chooses the SDK and the exporters.
//
//	obs, err := otelsqsloop.New(otelsqsloop.Config{QueueURL: queueURL})
//	c, err := consumer.New(mailbox, handler, consumer.Config{Observer: obs})
//
// # Spans
//
// Every span has messaging.system "aws_sqs", messaging.destination.name
// (the queue's name), aws.sqs.queue.url (when known), messaging.operation.name
// and messaging.operation.type, and is named "{operation} {queue}":
//
//   - "receive jobs", kind CLIENT, type receive: one ReceiveMessage call
//     (empty long polls too), with messaging.batch.message_count and a link to
//     the creation context of each message it returned;
//   - "process jobs", kind CONSUMER, type process: one handler run, a child of
//     the consumer's context (the handler's context carries it, so the
//     handler's own spans are its children), linked to the message's creation
//     context (not parented on it: the conventions' default), with
//     messaging.message.id, sqsloop.receive_count and, at its end,
//     sqsloop.outcome ("acked", "nacked", "panicked", "given_back",
//     "lease_lost", "abandoned", "dead_lettered": sqsloop.ProcessEvent.Outcome),
//     sqsloop.nack_delay (seconds until a nacked or panicked message is
//     visible again; absent when nothing nacks it, as on AWS Lambda without
//     a client) and, on failure, error.type and an error status;
//   - "delete jobs" and "change_visibility jobs", kind CLIENT, type settle:
//     every DeleteMessageBatch (acks) and ChangeMessageVisibilityBatch
//     (extensions, nacks, give-backs) of the lease owner. SQS has no standard
//     operation names for these: "delete" and "change_visibility" are the SQS
//     actions in the conventions' snake case. They carry
//     messaging.batch.message_count and three attributes of our own under
//     aws.sqs.*: aws.sqs.settle.kind (what the entries do: "extend", "ack",
//     "nack", "give_back", sqsloop.SettleEntry.Kind, comma-separated in
//     that order when a batch mixes them; a delete batch holds acks only),
//     aws.sqs.visibility_timeout (the seconds asked for, when every
//     entry asks the same) and aws.sqs.batch.failed_count (entries that
//     failed; then error.type is the first failure's and the status is
//     Error).
//
// error.type is low-cardinality, as the conventions ask, and one of these,
// the first that applies:
//
//   - "panic" for a handler's panic;
//   - the class the error names itself, with an ErrorType() string method
//     anywhere in its chain (the outermost wins): "permanent" for
//     sqsloop.Permanent, "lease_lost" for a lost lease's error; a
//     handler's own errors can name their class the same way;
//   - the error code it carries (an ErrorCode() string method: the SDK's
//     smithy.APIError, e.g. "AWS.SimpleQueueService.NonExistentQueue");
//   - the sentinel it wraps: "receipt_handle_expired", "access_denied",
//     "queue_not_found", "lease_ceiling", "mailbox_closed",
//     "invalid_argument" (the sqsloop sentinels), "timeout"
//     (context.DeadlineExceeded), "canceled" (context.Canceled);
//   - else "_OTHER", the conventions' fallback: never the Go type, which
//     for errors.New or fmt.Errorf ("*errors.errorString") says nothing,
//     and the span's status message has the error's text.
//
// # Metrics
//
// From the conventions (histograms with their advised buckets, 5 ms to
// 10 s): messaging.client.operation.duration (s; receive, delete and
// change_visibility calls), messaging.client.consumed.messages ({message};
// messages receives returned), messaging.process.duration (s; handler runs,
// with sqsloop.outcome). Of our own, under sqsloop.*:
// sqsloop.lease.extensions ({extension}; extension entries, error.type on
// failed ones), sqsloop.lease.late_extensions ({extension}; extensions sent
// with less than a quarter of the lease owner's interval left before the
// deadline), sqsloop.lease.lost ({lease}; by sqsloop.lease.lost_reason:
// "no_beats", "receipt_handle_expired", "ceiling", "call_failures",
// "lapsed_before_start" (sqsloop.LeaseLostEvent.Reason), and
// sqsloop.never_beat), sqsloop.process.late_results ({message}; handlers
// that returned after their lease was lost, by sqsloop.never_beat),
// sqsloop.settled.messages ({message}; entries of delete and visibility
// calls by aws.sqs.settle.kind, error.type on failed ones),
// sqsloop.receive.errors ({call}; by error.type), and gauges sampled at
// every receive and batch call: sqsloop.messages.in_flight ({message}; leases
// held) and sqsloop.receive_ahead.depth ({message}); the lease owner's
// choice (visibility.Config), sqsloop.lease.extension (s; the visibility
// timeout it asks for when it extends a lease) and sqsloop.lease.beat_gap
// (s; the 99th percentile of the gaps between beats it follows, once
// observed). The queue's counts, as the consumer reads them every
// consumer.Config.QueueReadInterval (5 s by default, whatever its receives
// do; sqsloop.QueueEvent), are gauges too: sqsloop.queue.backlog
// ({message}; visible), sqsloop.queue.in_flight ({message}; received by
// any consumer, not yet deleted), sqsloop.queue.delayed ({message}),
// sqsloop.queue.dead_letters ({message}; the dead-letter queue's visible
// messages, when the queue has one), and the scaling signal below,
// sqsloop.backlog_per_consumer ({message}) and
// sqsloop.consumers.recommended ({consumer}); after a failed read they
// report nothing until the next read succeeds.
//
// Given the middlewares of the consumer (Config.Idempotency,
// Config.Checkpoints), the Observer reports their counts as counters, read
// from their Stats at each collection: sqsloop.idempotency.runs ({run};
// handler runs, claims won), sqsloop.idempotency.duplicates ({message};
// deliveries of completed keys acked without a run),
// sqsloop.idempotency.busy ({message}; deliveries nacked while another run
// held the key), sqsloop.idempotency.lost_claims ({run}),
// sqsloop.idempotency.store_errors ({call}), sqsloop.checkpoint.saved
// ({checkpoint}), sqsloop.checkpoint.resumed ({message}; deliveries
// that found a checkpoint), sqsloop.checkpoint.finished ({message};
// deliveries of a job marked done or failed for good, answered without a
// run: a lost ack made good) and sqsloop.checkpoint.mark_errors ({call}).
//
// # Scaling
//
// AWS's guidance for scaling a fleet of SQS workers (EC2 Auto Scaling,
// "Scaling policy based on Amazon SQS") tracks the backlog per instance
// (ApproximateNumberOfMessages ÷ running instances) against an acceptable
// backlog per instance (the latency target ÷ the time one message takes).
// A consumer knows both halves (see package consumer): it reads its queue's
// counts every QueueReadInterval and measures its handlers, so it reports
// sqsloop.backlog_per_consumer and sqsloop.consumers.recommended: how many
// consumers like itself the queue needs for its latency target, at least 1
// (without a target, or before a handler has run: a handler slot per
// message visible or in flight, KEDA's aws-sqs-queue rule). Every consumer of a queue reports the same queue; take
// the maximum over them. Scale on the recommended count:
//
// Amazon ECS (Application Auto Scaling, target tracking with metric math):
// export the metrics to CloudWatch (the AWS Distro for OpenTelemetry
// collector's awsemf exporter, namespace "sqsloop" here), and keep the
// recommended count per running task at 1:
//
//	{
//	  "TargetValue": 1.0,
//	  "CustomizedMetricSpecification": {"Metrics": [
//	    {"Id": "recommended", "ReturnData": false, "MetricStat": {"Stat": "Maximum", "Metric": {
//	      "Namespace": "sqsloop", "MetricName": "sqsloop.consumers.recommended",
//	      "Dimensions": [{"Name": "messaging.destination.name", "Value": "jobs"}]}}},
//	    {"Id": "running", "ReturnData": false, "MetricStat": {"Stat": "Average", "Metric": {
//	      "Namespace": "ECS/ContainerInsights", "MetricName": "RunningTaskCount",
//	      "Dimensions": [{"Name": "ClusterName", "Value": "prod"}, {"Name": "ServiceName", "Value": "jobs-worker"}]}}},
//	    {"Id": "ratio", "Expression": "recommended / running", "ReturnData": true}
//	  ]}
//	}
//
// given to aws application-autoscaling put-scaling-policy --policy-type
// TargetTrackingScaling --service-namespace ecs --scalable-dimension
// ecs:service:DesiredCount as --target-tracking-scaling-policy-configuration.
// Target tracking sets the desired count to about the running count times
// the ratio: the recommended count. (AWS's own recipe divides SQS's
// ApproximateNumberOfMessagesVisible by RunningTaskCount and targets the
// acceptable backlog per task, Concurrency × LatencyTarget ÷ handler time,
// which must then be fixed by hand; the recommended count follows the
// handler time as it changes.)
//
// Kubernetes (KEDA's prometheus scaler, with the metrics in Prometheus as
// sqsloop_consumers_recommended): the HPA's AverageValue target makes the
// replicas ceil(value ÷ threshold), so a threshold of 1 makes them the
// recommended count:
//
//	apiVersion: keda.sh/v1alpha1
//	kind: ScaledObject
//	metadata: {name: jobs-worker}
//	spec:
//	  scaleTargetRef: {name: jobs-worker}
//	  minReplicaCount: 1 # a consumer must run to report
//	  maxReplicaCount: 50
//	  triggers:
//	    - type: prometheus
//	      metadata:
//	        serverAddress: http://prometheus.monitoring:9090
//	        query: max(sqsloop_consumers_recommended{messaging_destination_name="jobs"})
//	        threshold: "1"
//
// To scale from zero, add KEDA's aws-sqs-queue trigger (queueLength: the
// acceptable backlog per consumer): it sees the queue when no consumer
// runs; KEDA follows the larger of the two. Without Prometheus, KEDA's
// metrics-api scaler reads the same number from the lease page's JSON
// (package leasepage; valueLocation: scaling.recommended_consumers) of any
// one consumer behind a Service.
//
// # Propagation
//
// A message's creation context is read from its traceparent (and
// tracestate) message attributes (W3C Trace Context, or the propagator of
// Config.Propagator) and from its AWSTraceHeader system attribute (AWS
// X-Ray's header, which SQS sets from the sender's X-Ray trace and which the
// SDK can send); both become links of the process span when present.
// InjectMessage writes the traceparent message attribute of an outgoing
// message (a producer's hook); AWSTraceHeader formats an X-Ray header for
// senders that set the system attribute themselves.
package otelsqsloop
