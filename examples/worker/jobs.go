package main

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sqsloop/sqsloop"
)

// Kinds of job, carried in the "kind" message attribute.
const (
	kindFile  = "file"  // hash the file named by the body
	kindStuck = "stuck" // hang without beating on its first delivery
	kindFail  = "fail"  // always fail
)

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

// enqueue sends the stuck and the failing job first (so their lapse and
// retries overlap the file jobs), then one file job per file.
func enqueue(ctx context.Context, mb sqsloop.Mailbox, files []string) error {
	var batch []sqsloop.OutgoingMessage
	add := func(kind, body string) {
		batch = append(batch, sqsloop.OutgoingMessage{
			Body:              body,
			MessageAttributes: map[string]sqsloop.MessageAttribute{"kind": {DataType: "String", StringValue: kind}},
		})
	}
	add(kindStuck, "a job that stops beating")
	add(kindFail, "a job that always fails")
	for _, f := range files {
		add(kindFile, f)
	}
	for len(batch) > 0 {
		n := min(len(batch), sqsloop.MaxBatchSize)
		res, err := mb.Send(ctx, batch[:n])
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				return fmt.Errorf("send: %w", r.Err)
			}
		}
		batch = batch[n:]
	}
	return nil
}
