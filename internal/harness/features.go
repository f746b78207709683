package harness

import "github.com/sqsloop/sqsloop/mailboxtest"

// sqsFeatures are Amazon SQS's: every capability and every behaviour of
// mailboxtest.Features, on the wall clock.
func sqsFeatures() mailboxtest.Features {
	return mailboxtest.Features{
		FIFO:                   true,
		DLQ:                    true,
		AttributesReader:       true,
		LeaseCeiling:           true,
		FIFOBatchesWithinGroup: true,
		RedriveKeepsMessageID:  true,
		OmitsUnaskedAttributes: true,
		FIFODeleteExpires:      true,
		StandardGroupID:        true,
	}
}
