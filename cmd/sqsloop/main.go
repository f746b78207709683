// Command sqsloop runs any program as an SQS worker, and operates queues.
//
// `sqsloop exec -- CMD ARGS…` runs CMD for each message (body on standard
// input, the message in SQSLOOP_* variables; exit status 0 acks), and
// `sqsloop http --to URL` POSTs each message to a local HTTP application as
// Elastic Beanstalk's worker daemon (sqsd) does (200 acks). Both keep a
// message's lease only while its handler shows it is alive (a line of
// output, a chunk of a streamed response, a call of its beat URL), stop a
// handler that lost its lease, and drain on SIGTERM. The operator commands
// send, peek, stats, redrive, purge, migrate and create-queue work on the
// same queues, and console serves a web console of them (package
// console). The queue is an SQS queue (--queue-url, or --queue with the
// standard AWS chain and --endpoint for an emulator) or one in a database
// (--mailbox sqlite:PATH|postgres://… with --queue). Every flag has an
// environment variable: SQSLOOP_ and its name (--queue-url:
// SQSLOOP_QUEUE_URL). `sqsloop --help` and `sqsloop COMMAND --help` say
// the rest.
//
// It runs on Unix systems (Linux, macOS): it runs commands in process
// groups.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/alecthomas/kong"
)

// envVarPrefix prefixes the environment variable of every flag.
const envVarPrefix = "SQSLOOP"

// cli is the command line: global flags and the commands.
type cli struct {
	LogFormat string           `enum:"text,json" default:"text" help:"Log records (to standard error) as text or JSON lines."`
	LogLevel  string           `enum:"debug,info,warn,error" default:"info" help:"The least severe log records written."`
	Version   kong.VersionFlag `env:"-" help:"Print sqsloop's version and exit."`

	Exec        execCmd        `cmd:"" help:"Run a command for each message: the body on its standard input, the message in SQSLOOP_* variables; exit status 0 acks."`
	HTTP        httpCmd        `cmd:"" name:"http" help:"POST each message to a local HTTP application, as Elastic Beanstalk's worker daemon (sqsd) does; 200 acks."`
	Send        sendCmd        `cmd:"" help:"Send messages: one per argument, per --file, or per line of standard input."`
	Peek        peekCmd        `cmd:"" help:"Print messages without deleting them (a receive with visibility timeout 0)."`
	Stats       statsCmd       `cmd:"" help:"Print the queue's and its dead-letter queue's counts and attributes."`
	Redrive     redriveCmd     `cmd:"" help:"Move the messages of the queue's dead-letter queue back to it."`
	Purge       purgeCmd       `cmd:"" help:"Delete every message of the queue."`
	Migrate     migrateCmd     `cmd:"" help:"Create or upgrade the schema of a database mailbox (--mailbox)."`
	CreateQueue createQueueCmd `cmd:"" name:"create-queue" help:"Create a queue and, with --max-receive-count, its dead-letter queue NAME-dlq."`
	Console     consoleCmd     `cmd:"" help:"Serve a web console of the queues: browse and filter messages, redrive, delete or export all matching, see leases and workers."`
}

// Help is sqsloop's long help: what it is for, with examples.
func (cli) Help() string {
	return `Any program as an SQS worker: a message stays hidden while its handler shows it is alive, a stuck handler
loses it to another worker, and SIGTERM drains without losing any.

Examples:

  # A script as a worker: each message's body on its standard input; exit status 0 deletes it.
  sqsloop exec --queue-url https://sqs.eu-west-1.amazonaws.com/123456789012/jobs -- ./process.sh

  # A replacement for Elastic Beanstalk's worker daemon (sqsd): POST each message to a local application.
  sqsloop http --queue-url "$QUEUE_URL" --to http://127.0.0.1:8080/work --concurrency 16

  # Operating queues: on SQS, on an emulator (--endpoint), or in a database (--mailbox).
  sqsloop create-queue --endpoint http://127.0.0.1:4566 --queue jobs --max-receive-count 5
  seq 100 | sqsloop send --queue-url "$QUEUE_URL"
  sqsloop stats --queue-url "$QUEUE_URL"
  sqsloop peek --mailbox sqlite:jobs.db --queue jobs --json
  sqsloop redrive --queue-url "$QUEUE_URL"
  sqsloop purge --queue-url "$QUEUE_URL" --yes
  sqsloop console --mailbox sqlite:jobs.db    # a web console at http://127.0.0.1:8080

Every flag can be set in the environment instead: SQSLOOP_ and the flag's name (--queue-url:
SQSLOOP_QUEUE_URL, --concurrency: SQSLOOP_CONCURRENCY). AWS credentials and region come from the standard
chain (AWS_REGION, AWS_PROFILE, instance and task roles).`
}

// globals is what every command's Run gets.
type globals struct {
	ctx    context.Context // cancelled by the first SIGTERM or SIGINT
	log    *slog.Logger    // to standard error
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	exit   func(code int) // ends the process at once
}

// exitPanic carries an exit status out of kong, which calls its Exit
// function and would otherwise go on (after --help, a bad flag).
type exitPanic struct{ code int }

// run parses args and runs the command they name; it returns the process's
// exit status: 0, 1 when the command failed (its error on stderr), 2 for
// bad usage (kong's message).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, exit func(int)) (code int) {
	var c cli
	parser, err := newParser(&c, stdout, stderr)
	if err != nil {
		panic(err) // the cli struct is wrong: a bug, found by the tests
	}
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(exitPanic)
			if !ok {
				panic(r)
			}
			code = p.code
		}
	}()
	kctx, err := parser.Parse(args)
	if err != nil {
		parser.Errorf("%s", err)
		return 2
	}
	log := newLogger(stderr, c.LogFormat, c.LogLevel)
	g := &globals{ctx: ctx, log: log, stdin: stdin, stdout: stdout, stderr: stderr, exit: exit}
	if err := kctx.Run(g); err != nil {
		parser.Errorf("%s", err)
		return 1
	}
	return 0
}

// newParser returns the parser of the command line into c, writing help
// and usage errors to stdout and stderr; its Exit panics with an exitPanic.
func newParser(c *cli, stdout, stderr io.Writer) (*kong.Kong, error) {
	return kong.New(c,
		kong.Name("sqsloop"),
		kong.Description("sqsloop runs any program as an SQS worker, and operates queues."),
		kong.DefaultEnvars(envVarPrefix),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitPanic{code}) }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Vars{"version": version()},
		workerVars(),
	)
}

// newLogger returns the logger of --log-format and --log-level.
func newLogger(w io.Writer, format, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // the enum allows only valid levels
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// version is the module's version as built ("(devel)" from a clone).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return "unknown"
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Exit)
	stop()
	os.Exit(code)
}
