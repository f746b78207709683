package worker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/sqsloop/sqsloop/lifecycle"
)

// RunFunc runs a program's job in group, printing to out: the program's
// part around Run.
type RunFunc func(ctx context.Context, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) (Summary, error)

// Main is the main function of the program name around run: warnings on
// standard error, a LoopGroup whose SIGTERM or SIGINT drains the run (a
// second one exits at once), the summary on standard output once the
// consumer ran, and exit status 1 with the error on standard error when
// run fails.
func Main(name string, run RunFunc) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var group lifecycle.LoopGroup
	sum, err := run(context.Background(), &group, os.Stdout, log)
	if sum.Ran {
		sum.Print(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
