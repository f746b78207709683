package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// execCmd is `sqsloop exec`: any program as the handler.
type execCmd struct {
	workerFlags `embed:""`

	BeatOn         string        `enum:"stdout,stderr,both,none" default:"both" help:"Which output streams beat: every line written there keeps the lease (stdout, stderr, both, none)."`
	BeatFile       bool          `help:"Also beat when the command touches a file: each run gets an empty file of its own, named in SQSLOOP_BEAT_FILE; every change of its modification time is a beat."`
	KillGrace      time.Duration `default:"5s" help:"When a command must stop (its lease lost, the drain's budget spent), its process group gets SIGTERM, then SIGKILL after this long."`
	PoisonExitCode int           `placeholder:"N" help:"An exit status (1-255) that sends the message to the dead-letter queue at once, instead of retrying it. 0: none."`

	Command []string `arg:"" passthrough:"partial" name:"command" help:"The command to run for each message, and its arguments (after --)."`
}

// Help is exec's long help.
func (c *execCmd) Help() string {
	return `For each message, run the command with the message body on standard input and the message in the environment:

  SQSLOOP_MESSAGE_ID, SQSLOOP_RECEIVE_COUNT (1 on the first delivery), SQSLOOP_QUEUE (the queue's name),
  SQSLOOP_MESSAGE_GROUP_ID (FIFO queues), SQSLOOP_SENT_AT and SQSLOOP_FIRST_RECEIVED_AT (RFC 3339, UTC),
  SQSLOOP_ATTR_<NAME> for each message attribute (the name in upper case, every character but
  A-Z and 0-9 turned into _; Binary values in base64), SQSLOOP_BEAT_FILE with --beat-file.

The command's own environment is sqsloop's, without sqsloop's SQSLOOP_ settings.

Exit status 0 acks (deletes) the message; any other nacks it, to be retried after a back-off (1s doubling
to 5m) until the queue's max receive count moves it to the dead-letter queue; --poison-exit-code N moves it
there at once. Every line the command writes (--beat-on) is a heartbeat: a command that goes silent for
longer than the lease loses its message, and is stopped (SIGTERM to its process group, SIGKILL after
--kill-grace), while the message goes to another worker. Its output is logged line by line, with the
message ID. On SIGTERM or SIGINT sqsloop drains: it stops receiving and lets the commands running finish
within --shutdown-timeout; those still running then are stopped and their messages given back. A second
signal gives back every message at once and exits.

sqsloop's own exit status:
  0    a drain in which every command finished within --shutdown-timeout (its ack sent), or an exit
       by --exit-when-idle
  1    a drain that ran out of --shutdown-timeout (commands stopped, their messages given back), a
       queue that failed for good (gone, access denied), or a bad setting
  2    bad usage (an unknown flag)
  130  a second SIGINT (143: a second SIGTERM): the messages in flight were given back at once

Examples:

  sqsloop exec --queue-url https://sqs.eu-west-1.amazonaws.com/123456789012/jobs -- ./process.sh
  sqsloop exec --mailbox sqlite:jobs.db --queue jobs --concurrency 4 --poison-exit-code 3 -- python work.py
  SQSLOOP_QUEUE_URL=... SQSLOOP_CONCURRENCY=8 sqsloop exec -- sh -c 'jq .id'`
}

// Validate checks exec's own flags, and takes the -- off the command
// (kong keeps it before a passthrough argument).
func (c *execCmd) Validate() error {
	if len(c.Command) > 0 && c.Command[0] == "--" {
		c.Command = c.Command[1:]
	}
	errs := []error{c.workerFlags.check()}
	if c.PoisonExitCode < 0 || c.PoisonExitCode > 255 {
		errs = append(errs, fmt.Errorf("--poison-exit-code: want 1-255 (or 0 for none), got %d", c.PoisonExitCode))
	}
	if c.KillGrace < 0 {
		errs = append(errs, fmt.Errorf("--kill-grace: want 0 or more, got %v", c.KillGrace))
	}
	if len(c.Command) == 0 {
		errs = append(errs, errors.New("no command: give it after --, as in: sqsloop exec --queue-url URL -- ./work.sh"))
	}
	return errors.Join(errs...)
}

// Run consumes the queue, running the command for each message, until a
// signal drains it (or --exit-when-idle); it returns once the commands it
// stopped have exited.
func (c *execCmd) Run(g *globals) error {
	path, err := exec.LookPath(c.Command[0])
	if err != nil {
		return fmt.Errorf("command: %w", err)
	}
	r := newRunner(append([]string{path}, c.Command[1:]...), os.Environ())
	r.beatOn, r.beatFile, r.killGrace, r.poisonExit, r.log = c.BeatOn, c.BeatFile, c.KillGrace, c.PoisonExitCode, g.log
	// The lease owner looks at a lease every fifth of the visibility
	// timeout; a beat file looked at twice as often is never what loses it.
	r.beatPoll = min(max(c.VisibilityTimeout/10, 50*time.Millisecond), time.Second)
	err = c.workerFlags.run(g, "exec", func(q *queue) (handlerRun, error) {
		r.queue = q.name
		return handlerRun{handle: r.handle, interrupted: r.killAll}, nil
	})
	r.wait()
	return err
}
