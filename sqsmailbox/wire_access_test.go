package sqsmailbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/sqsloop/sqsloop"
)

// answerError answers like SQS's JSON protocol does on an error: status, the
// query-compatible code and fault in x-amzn-query-error (left out when
// queryError is empty), and {"__type": typ, "message": msg}. The SDK takes
// the code from X-Amzn-ErrorType, else from __type (the part after '#');
// SQS being query-compatible, a code in x-amzn-query-error overrides it
// (smithy-go, transport/http/protocol/awsjson).
func answerError(status int, queryError, typ, msg string) func(http.ResponseWriter, *http.Request, string) {
	return func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if queryError != "" {
			w.Header().Set("x-amzn-query-error", queryError)
		}
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"__type":%q,"message":%q}`, typ, msg)
	}
}

// everyCall makes each Mailbox call once and returns its error by name.
func everyCall(ctx context.Context, m *Mailbox) map[string]error {
	_, errReceive := m.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1})
	_, errDelete := m.Delete(ctx, []string{"rh"})
	_, errChange := m.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: "rh", Timeout: 0}})
	_, errSend := m.Send(ctx, []sqsloop.OutgoingMessage{{Body: "b"}})
	_, errAttrs := m.QueueAttributes(ctx)
	return map[string]error{"Receive": errReceive, "Delete": errDelete, "ChangeVisibility": errChange, "Send": errSend, "QueueAttributes": errAttrs}
}

// Permission and KMS refusals, as a real *sqs.Client decodes SQS's answer:
// every call's error matches ErrAccessDenied (KMS throttling excepted: it is
// transient), and errors.As still reaches the SDK's error and its code.
func TestWireAccessDenied(t *testing.T) {
	cases := []struct {
		name                  string
		status                int
		queryError, typ, code string
		typed                 func(error) bool // errors.As with the SDK's type, or nil
		want                  error
	}{
		{"AccessDenied as SQS sends it", http.StatusBadRequest, "AccessDenied;Sender", "com.amazon.coral.service#AccessDeniedException", "AccessDenied", nil, sqsloop.ErrAccessDenied},
		{"AccessDenied without x-amzn-query-error", http.StatusBadRequest, "", "com.amazon.coral.service#AccessDeniedException", "AccessDeniedException", nil, sqsloop.ErrAccessDenied},
		{"InvalidClientTokenId", http.StatusForbidden, "InvalidClientTokenId;Sender", "com.amazon.coral.service#UnrecognizedClientException", "InvalidClientTokenId", nil, sqsloop.ErrAccessDenied},
		{"ExpiredToken", http.StatusForbidden, "ExpiredToken;Sender", "com.amazon.coral.service#ExpiredTokenException", "ExpiredToken", nil, sqsloop.ErrAccessDenied},
		{"KMS key access denied", http.StatusBadRequest, "KMS.AccessDeniedException;Sender", "com.amazonaws.sqs#KmsAccessDenied", "KMS.AccessDeniedException", as[*types.KmsAccessDenied], sqsloop.ErrAccessDenied},
		{"KMS key disabled", http.StatusBadRequest, "KMS.DisabledException;Sender", "com.amazonaws.sqs#KmsDisabled", "KMS.DisabledException", as[*types.KmsDisabled], sqsloop.ErrAccessDenied},
		{"KMS throttled is transient", http.StatusBadRequest, "KMS.ThrottlingException;Sender", "com.amazonaws.sqs#KmsThrottled", "KMS.ThrottlingException", as[*types.KmsThrottled], nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWireServer(t)
			ws.handle = answerError(c.status, c.queryError, c.typ, "User: arn:aws:iam::000000000000:user/x is not authorized")
			m := wireMailbox(t, ws)
			for name, err := range everyCall(t.Context(), m) {
				if err == nil {
					t.Errorf("%s: nil error", name)
					continue
				}
				if got := errors.Is(err, sqsloop.ErrAccessDenied); got != (c.want != nil) {
					t.Errorf("%s: errors.Is(%v, ErrAccessDenied) = %v, want %v", name, err, got, c.want != nil)
				}
				var apiErr smithy.APIError
				if !errors.As(err, &apiErr) || apiErr.ErrorCode() != c.code {
					t.Errorf("%s: errors.As(smithy.APIError) does not reach code %q: %v", name, c.code, err)
				}
				if c.typed != nil && !c.typed(err) {
					t.Errorf("%s: errors.As cannot reach the SDK's typed error in %v", name, err)
				}
			}
		})
	}
}

// A Failed entry of a batch answer with a permission or KMS code is an entry
// error matching ErrAccessDenied.
func TestWireEntryAccessDenied(t *testing.T) {
	ws := newWireServer(t)
	ws.handle = func(w http.ResponseWriter, _ *http.Request, op string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		code := "AccessDenied"
		if op == "SendMessageBatch" {
			code = "KMS.AccessDeniedException"
		}
		_, _ = fmt.Fprintf(w, `{"Successful":[],"Failed":[{"Id":"0","Code":%q,"Message":"denied","SenderFault":true}]}`, code)
	}
	m := wireMailbox(t, ws)
	ctx := t.Context()
	errsDelete, err := m.Delete(ctx, []string{"rh"})
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	errsChange, err := m.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: "rh", Timeout: 0}})
	if err != nil {
		t.Fatalf("ChangeVisibility: %v", err)
	}
	results, err := m.Send(ctx, []sqsloop.OutgoingMessage{{Body: "b"}})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	for name, err := range map[string]error{"Delete": errsDelete[0], "ChangeVisibility": errsChange[0], "Send": results[0].Err} {
		var apiErr smithy.APIError
		if !errors.Is(err, sqsloop.ErrAccessDenied) || !errors.As(err, &apiErr) {
			t.Errorf("%s entry 0 = %v, want ErrAccessDenied with its code", name, err)
		}
	}
}
