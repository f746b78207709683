package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A console listening beyond loopback without credentials refuses to
// start, naming the variables that give them; on loopback it needs none.
func TestConsoleRefusesNonLoopbackWithoutCredentials(t *testing.T) {
	db := "sqlite:" + t.TempDir() + "/q.db"
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a console that started would stop at once, and the test fail rather than hang
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "10.1.2.3:8080", "console.internal:8080"} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"console", "--listen", addr, "--mailbox", db}, strings.NewReader(""), &stdout, &stderr, func(int) {})
		if code == 0 || !strings.Contains(stderr.String(), "refusing to serve the console on "+addr+" without credentials") ||
			!strings.Contains(stderr.String(), envConsoleToken) {
			t.Errorf("console --listen %s without credentials: exit status %d, stderr %q; want a refusal naming %s", addr, code, stderr.String(), envConsoleToken)
		}
	}
	for _, tc := range []struct {
		addr string
		env  map[string]string
		ok   bool
	}{
		{"127.0.0.1:8080", nil, true},
		{"[::1]:8080", nil, true},
		{"localhost:8080", nil, true},
		{"0.0.0.0:8080", map[string]string{envConsoleToken: "t"}, true},
		{"0.0.0.0:8080", map[string]string{envConsoleUser: "ops", envConsolePassword: "pw"}, true},
		{"0.0.0.0:8080", map[string]string{envConsoleUser: "ops"}, false},
	} {
		c := &consoleCmd{Listen: tc.addr}
		_, err := c.auth(func(k string) string { return tc.env[k] })
		if (err == nil) != tc.ok {
			t.Errorf("--listen %s with %v: %v, want ok %v", tc.addr, tc.env, err, tc.ok)
		}
	}
}
