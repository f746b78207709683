package sqlmailbox_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// The zero Config is valid; every bad field is named at once, with its
// range, wrapping sqsloop.ErrInvalidArgument.
func TestConfigValidate(t *testing.T) {
	if err := (sqlmailbox.Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	err := sqlmailbox.Config{AuditRetention: time.Second, ArchiveRetention: -1, ReceiverTTL: 4 * time.Hour, PollInterval: time.Millisecond}.Validate()
	if !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Fatalf("bad Config: %v, want ErrInvalidArgument", err)
	}
	for _, field := range []string{"AuditRetention", "ArchiveRetention", "ReceiverTTL", "PollInterval"} {
		if !strings.Contains(err.Error(), "Config."+field+":") {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
}
