package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// Every command's --help shows examples, and so does sqsloop --help.
func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range append([]string{""}, commandNames(t)...) {
		args := strings.Fields(cmd + " --help")
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr, func(int) {})
		if code != 0 {
			t.Errorf("sqsloop %s: exit status %d, stderr %q", strings.Join(args, " "), code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "Examples:\n\n  ") && !strings.Contains(stdout.String(), "Examples:\n\n    ") {
			t.Errorf("sqsloop %s shows no examples:\n%s", strings.Join(args, " "), stdout.String())
		}
	}
}

// Every flag of every command can be set in the environment, as
// SQSLOOP_ and its name (12-factor configuration).
func TestEveryFlagHasEnvVar(t *testing.T) {
	parser := testParser(t)
	for _, n := range append([]*kong.Node{parser.Model.Node}, parser.Model.Children...) {
		for _, f := range n.Flags {
			if f.Name == "help" || f.Name == "version" {
				continue
			}
			want := envVarPrefix + "_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
			if len(f.Envs) != 1 || f.Envs[0] != want {
				t.Errorf("sqsloop %s --%s: environment variables %q, want [%s]", n.Name, f.Name, f.Envs, want)
			}
		}
	}
}

// An environment variable sets its flag.
func TestEnvVarSetsFlag(t *testing.T) {
	t.Setenv("SQSLOOP_MAX", "1001")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"peek", "--mailbox", "sqlite:" + t.TempDir() + "/x.db", "--queue", "q"},
		strings.NewReader(""), &stdout, &stderr, func(int) {})
	if code == 0 || !strings.Contains(stderr.String(), "--max: want 1-1000, got 1001") {
		t.Errorf("SQSLOOP_MAX=1001: exit status %d, stderr %q; want --max's range error", code, stderr.String())
	}
}

func commandNames(t *testing.T) []string {
	var names []string
	for _, n := range testParser(t).Model.Children {
		names = append(names, n.Name)
	}
	return names
}

func testParser(t *testing.T) *kong.Kong {
	t.Helper()
	var c cli
	p, err := newParser(&c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
