package harness

import (
	"regexp"
	"strings"
	"testing"
)

// Queue names follow SQS's rules whatever the test's name: at most 80
// characters of letters, digits, '-' and '_', and ".fifo" for a FIFO queue,
// with room for the dead-letter queue's "-dlq".
func TestQueueName(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	t.Run(strings.Repeat("a very long test name/with slashes and spaces ", 4), func(t *testing.T) {
		for _, fifo := range []bool{false, true} {
			name := queueName(t, fifo)
			base, isFIFO := strings.CutSuffix(name, ".fifo")
			if isFIFO != fifo || len(name) > 80-len("-dlq") || !valid.MatchString(base) {
				t.Errorf("queueName(fifo=%v) = %q (%d characters)", fifo, name, len(name))
			}
			if again := queueName(t, fifo); again == name {
				t.Errorf("queueName gave %q twice", name)
			}
		}
	})
}
