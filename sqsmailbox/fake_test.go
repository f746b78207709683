package sqsmailbox

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// fakeAPI is a recording API: it keeps every input it was given and answers
// with the function set for the operation (by default: every entry
// succeeds, no message, no attribute).
type fakeAPI struct {
	mu         sync.Mutex
	receives   []*sqs.ReceiveMessageInput
	receiveOpt [][]func(*sqs.Options)
	deletes    []*sqs.DeleteMessageBatchInput
	changes    []*sqs.ChangeMessageVisibilityBatchInput
	sends      []*sqs.SendMessageBatchInput
	attrs      []*sqs.GetQueueAttributesInput
	urls       []*sqs.GetQueueUrlInput

	onReceive func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error)
	onDelete  func(context.Context, *sqs.DeleteMessageBatchInput) (*sqs.DeleteMessageBatchOutput, error)
	onChange  func(context.Context, *sqs.ChangeMessageVisibilityBatchInput) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	onSend    func(context.Context, *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error)
	onAttrs   func(context.Context, *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error)
	onURL     func(context.Context, *sqs.GetQueueUrlInput) (*sqs.GetQueueUrlOutput, error)
}

var _ API = (*fakeAPI)(nil)

func (f *fakeAPI) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	f.mu.Lock()
	f.receives = append(f.receives, in)
	f.receiveOpt = append(f.receiveOpt, optFns)
	h := f.onReceive
	f.mu.Unlock()
	if h == nil {
		return &sqs.ReceiveMessageOutput{}, nil
	}
	return h(ctx, in)
}

func (f *fakeAPI) DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	f.mu.Lock()
	f.deletes = append(f.deletes, in)
	h := f.onDelete
	f.mu.Unlock()
	if h == nil {
		out := &sqs.DeleteMessageBatchOutput{}
		for _, e := range in.Entries {
			out.Successful = append(out.Successful, types.DeleteMessageBatchResultEntry{Id: e.Id})
		}
		return out, nil
	}
	return h(ctx, in)
}

func (f *fakeAPI) ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	f.mu.Lock()
	f.changes = append(f.changes, in)
	h := f.onChange
	f.mu.Unlock()
	if h == nil {
		out := &sqs.ChangeMessageVisibilityBatchOutput{}
		for _, e := range in.Entries {
			out.Successful = append(out.Successful, types.ChangeMessageVisibilityBatchResultEntry{Id: e.Id})
		}
		return out, nil
	}
	return h(ctx, in)
}

func (f *fakeAPI) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.mu.Lock()
	f.sends = append(f.sends, in)
	h := f.onSend
	f.mu.Unlock()
	if h == nil {
		out := &sqs.SendMessageBatchOutput{}
		for _, e := range in.Entries {
			id := "msg-" + *e.Id
			out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id, MessageId: &id})
		}
		return out, nil
	}
	return h(ctx, in)
}

func (f *fakeAPI) GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	f.mu.Lock()
	f.attrs = append(f.attrs, in)
	h := f.onAttrs
	f.mu.Unlock()
	if h == nil {
		return &sqs.GetQueueAttributesOutput{}, nil
	}
	return h(ctx, in)
}

func (f *fakeAPI) GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, _ ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error) {
	f.mu.Lock()
	f.urls = append(f.urls, in)
	h := f.onURL
	f.mu.Unlock()
	if h == nil {
		return nil, &types.QueueDoesNotExist{Message: aws.String("The specified queue does not exist.")}
	}
	return h(ctx, in)
}

// calls counts every call the fake received.
func (f *fakeAPI) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.receives) + len(f.deletes) + len(f.changes) + len(f.sends) + len(f.attrs) + len(f.urls)
}

const testQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"

func newTestMailbox(t *testing.T, f *fakeAPI) *Mailbox {
	t.Helper()
	m, err := New(f, testQueueURL)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}
