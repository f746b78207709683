package worker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/producer"
)

// Kinds of job.
const (
	kindFile  = "file"  // hash the file named by job.File
	kindStuck = "stuck" // hang without beating on its first delivery
	kindFail  = "fail"  // always fail
)

// job is a message's body, as JSON: producer.JSONBody encodes it,
// consumer.JSONHandler decodes it for the handler.
type job struct {
	Kind string `json:"kind"`
	File string `json:"file,omitempty"`
}

// malformedJob is the body of the job that is not JSON: a poison message,
// moved to the dead-letter queue on its first delivery.
const malformedJob = "this job is not JSON"

// listFiles returns the regular files under dir, skipping .git (a
// directory, or in a git worktree a file) and node_modules.
func listFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" || d.Name() == "node_modules" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

// enqueue sends the stuck, the failing and the malformed job first (so
// that their lapse, retries and move overlap the file jobs), then one file
// job per file, with a producer: it batches them into SendMessageBatch
// calls of 10 and retries what fails transiently. It returns how many it
// sent and the errors of those it could not.
func enqueue(ctx context.Context, mb sqsloop.Mailbox, files []string) (int, error) {
	p, err := producer.New(mb, producer.Config{})
	if err != nil {
		return 0, err
	}
	var pending []*producer.Pending
	var errs []error
	add := func(m sqsloop.OutgoingMessage, err error) {
		if err == nil {
			var pd *producer.Pending
			if pd, err = p.Enqueue(ctx, m); err == nil {
				pending = append(pending, pd)
			}
		}
		errs = append(errs, err)
	}
	sent := 0
	wait := func() {
		for _, pd := range pending {
			if _, err := pd.Wait(ctx); err != nil {
				errs = append(errs, err)
				continue
			}
			sent++
		}
		pending = pending[:0]
	}
	add(producer.JSONBody(job{Kind: kindStuck}, sqsloop.OutgoingMessage{}))
	add(producer.JSONBody(job{Kind: kindFail}, sqsloop.OutgoingMessage{}))
	add(sqsloop.OutgoingMessage{Body: malformedJob}, nil)
	wait() // in the queue before the files: the batches of a producer race each other
	for _, f := range files {
		add(producer.JSONBody(job{Kind: kindFile, File: f}, sqsloop.OutgoingMessage{}))
	}
	wait()
	errs = append(errs, p.Close(ctx))
	if err := errors.Join(errs...); err != nil {
		return sent, fmt.Errorf("enqueue: %d of %d jobs sent: %w", sent, len(files)+3, err)
	}
	return sent, nil
}
