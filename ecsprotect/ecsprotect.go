// Package ecsprotect keeps an Amazon ECS task safe from scale-in while its
// consumer holds messages: task scale-in protection, set through the ECS
// container agent's endpoint ($ECS_AGENT_URI/task-protection/v1/state)
// while messages are in flight, renewed while work goes on, and cleared
// once the consumer is idle and when it stops, so that the service
// scheduler (a scale-in, a deployment) picks idle tasks to stop and never
// one in the middle of a job.
//
//	c, _ := consumer.New(mb, handle, consumer.Config{})
//	p, _ := ecsprotect.New(c, ecsprotect.Config{})
//	group.Add("consumer", c)
//	group.Add("scale-in protection", p, lifecycle.LoopOption{Last: true})
//
// The Protector looks at the consumer's messages in flight
// (consumer.Stats.Held) every CheckInterval: the first message held
// sets the protection (within CheckInterval and a call), a protection half
// gone is renewed while messages are held, and one IdleAfter without a
// message clears it (within IdleAfter + CheckInterval and a call). Run
// clears it too when it returns: run it as a lifecycle loop stopped after
// the consumer (LoopOption{Last: true}), so that the drain keeps the task
// protected until it is done. The ECS agent's own rules apply: a
// protection lasts ExpiresIn (1 min–48 h) unless renewed; a standalone task
// (not in a service) is refused (TASK_NOT_VALID).
//
// A failing endpoint never blocks consuming: the Protector runs on its own
// goroutine, logs a failed call at WARN (at most once a minute while calls
// keep failing, and once when they work again), and tries again after a
// back-off (1 s doubling to 30 s). The task role needs no permission: the
// agent calls ecs:UpdateTaskProtection itself.
//
// Cost: one PUT when the first message is held, one per ExpiresIn/2 while
// messages are held (every 5 min by default), one when idle; nothing per
// message (the look is two atomic reads, every 250 ms).
package ecsprotect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"

	"github.com/sqsloop/sqsloop/consumer"
)

// Path is the task-protection endpoint's path under the agent's URI.
const Path = "/task-protection/v1/state"

// Defaults and bounds of Config.
const (
	// DefaultExpiresIn is how long each protection asked for lasts: 10 min,
	// renewed when half has passed while messages are held. A process that
	// hangs holding messages keeps its task protected this long at most.
	DefaultExpiresIn = 10 * time.Minute
	// DefaultCheckInterval is how often the messages in flight are looked
	// at: 250 ms.
	DefaultCheckInterval = 250 * time.Millisecond
	// DefaultIdleAfter is how long the consumer must hold nothing before
	// the protection is cleared: 500 ms, so that a worker between two
	// short jobs does not clear and set it again each time.
	DefaultIdleAfter = 500 * time.Millisecond

	minExpiresIn = time.Minute
	maxExpiresIn = 48 * time.Hour // the agent's limit, 2,880 minutes
)

// callTimeout bounds one call to the agent.
const callTimeout = 5 * time.Second

// Back-off of failed calls: from minRetry, doubling up to maxRetry.
const (
	minRetry = time.Second
	maxRetry = 30 * time.Second
)

// warnEvery spaces out the WARN lines of calls that keep failing.
const warnEvery = time.Minute

// Holder is what the Protector watches: *consumer.Consumer is one. Its
// Stats' Held counts the messages held: received and not yet acked, nacked
// or given back. (Not Paused's count, which takes an idle long poll on the
// wire for a message: an idle consumer would never be.)
type Holder interface {
	Stats() consumer.Stats
}

// Config tunes a Protector. The zero Config is valid on ECS: the agent
// from $ECS_AGENT_URI, 10 min protections, looked at every 250 ms,
// cleared after 500 ms idle.
type Config struct {
	// AgentURI is the ECS container agent's API ($ECS_AGENT_URI, which the
	// agent sets in every container of a task); "" reads the variable. An
	// http(s) URL; the Protector calls AgentURI + Path.
	AgentURI string
	// ExpiresIn is how long each protection lasts, 1 min–48 h in whole
	// minutes (the agent's ExpiresInMinutes; rounded up); 0 means
	// DefaultExpiresIn.
	ExpiresIn time.Duration
	// CheckInterval is how often the messages in flight are looked at,
	// 10 ms–10 s; 0 means DefaultCheckInterval.
	CheckInterval time.Duration
	// IdleAfter is how long with no message held clears the protection,
	// 0 means DefaultIdleAfter; at most ExpiresIn/2; a negative value
	// means at the first look that finds none.
	IdleAfter time.Duration
	// Client makes the calls; nil means a client of its own.
	Client *http.Client
	// Logger receives the WARN lines of failed calls and an INFO line as
	// the protection is set and cleared; nil means slog.Default().
	Logger *slog.Logger
}

// Protector sets, renews and clears a task's scale-in protection from
// what a Holder holds. Run it once; its methods are safe for concurrent
// use.
type Protector struct {
	h   Holder
	cfg Config
	url string
}

// New returns the Protector of h. It returns an error wrapping
// sqsloop.ErrInvalidArgument naming each Config field out of range, a nil
// h, or an agent URI that is not an http(s) URL; and one saying that
// ECS_AGENT_URI is unset (not in an ECS task) when AgentURI is "".
func New(h Holder, cfg Config) (*Protector, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("ecsprotect: "+format+": %w", append(args, sqsloop.ErrInvalidArgument)...))
	}
	if h == nil {
		bad("holder: must not be nil")
	}
	if cfg.AgentURI == "" {
		cfg.AgentURI = os.Getenv("ECS_AGENT_URI")
		if cfg.AgentURI == "" {
			errs = append(errs, fmt.Errorf("ecsprotect: ECS_AGENT_URI is unset, so this is no ECS task (the agent sets it in every container); "+
				"set Config.AgentURI to test: %w", sqsloop.ErrInvalidArgument))
		}
	}
	if u := cfg.AgentURI; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		bad("AgentURI: want an http(s) URL, got %q", u)
	}
	if cfg.ExpiresIn == 0 {
		cfg.ExpiresIn = DefaultExpiresIn
	}
	cfg.ExpiresIn = (cfg.ExpiresIn + time.Minute - 1).Truncate(time.Minute)
	if cfg.ExpiresIn < minExpiresIn || cfg.ExpiresIn > maxExpiresIn {
		bad("ExpiresIn: must be between 1m and 48h (the agent's ExpiresInMinutes, 1-2880), got %v", cfg.ExpiresIn)
	}
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = DefaultCheckInterval
	}
	if cfg.CheckInterval < 10*time.Millisecond || cfg.CheckInterval > 10*time.Second {
		bad("CheckInterval: must be between 10ms and 10s, got %v", cfg.CheckInterval)
	}
	if cfg.IdleAfter == 0 {
		cfg.IdleAfter = DefaultIdleAfter
	}
	if cfg.IdleAfter > cfg.ExpiresIn/2 {
		bad("IdleAfter: must be at most ExpiresIn/2 (%v), got %v", cfg.ExpiresIn/2, cfg.IdleAfter)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Protector{h: h, cfg: cfg, url: strings.TrimSuffix(cfg.AgentURI, "/") + Path}, nil
}

// Run looks at the holder every CheckInterval and sets, renews or clears
// the protection (see the package doc) until ctx is done; then it clears
// a protection it set (within 5 s) and returns nil. It never returns
// early: a failing endpoint is logged and tried again.
func (p *Protector) Run(ctx context.Context) error {
	var (
		protectedUntil time.Time // zero: not protected (as far as this Protector knows)
		busyAt         time.Time // the last look that found messages held
		retryAt        time.Time // no call before this, after a failure
		backoff        time.Duration
		failing        bool
		warnedAt       time.Time
	)
	call := func(enable bool) bool {
		now := time.Now()
		if now.Before(retryAt) {
			return false
		}
		until, err := p.put(ctx, enable)
		if err != nil {
			backoff = min(max(2*backoff, minRetry), maxRetry)
			retryAt = now.Add(backoff)
			if !failing || now.Sub(warnedAt) >= warnEvery {
				warnedAt = now
				p.cfg.Logger.Warn("ecsprotect: the ECS agent's task-protection call failed; consuming goes on, the call is tried again",
					slog.Bool("protection_enabled", enable), slog.Duration("retry_in", backoff), slog.Any("error", err))
			}
			failing = true
			return false
		}
		if failing {
			p.cfg.Logger.Info("ecsprotect: the ECS agent's task-protection calls work again")
		}
		failing, backoff, retryAt = false, 0, time.Time{}
		if enable {
			if protectedUntil.IsZero() {
				p.cfg.Logger.Info("ecsprotect: messages in flight; the task is protected from scale-in", slog.Time("until", until))
			}
			protectedUntil = until
		} else {
			protectedUntil = time.Time{}
			p.cfg.Logger.Info("ecsprotect: idle; the task's scale-in protection is cleared")
		}
		return true
	}
	t := time.NewTicker(p.cfg.CheckInterval)
	defer t.Stop()
	for {
		now := time.Now()
		if p.h.Stats().Held > 0 {
			busyAt = now
			if protectedUntil.Sub(now) < p.cfg.ExpiresIn/2 { // not protected, or half gone
				call(true)
			}
		} else if !protectedUntil.IsZero() && now.Sub(busyAt) >= p.cfg.IdleAfter {
			call(false)
		}
		select {
		case <-ctx.Done():
			if !protectedUntil.IsZero() {
				retryAt = time.Time{}
				ctx = context.WithoutCancel(ctx)
				call(false)
			}
			return nil
		case <-t.C:
		}
	}
}

// request is the body of a PUT to the endpoint.
type request struct {
	ProtectionEnabled bool `json:"ProtectionEnabled"`
	ExpiresInMinutes  int  `json:"ExpiresInMinutes,omitempty"`
}

// response is the agent's answer: a protection, a failure (ECS refused it:
// a task not in a service), or an error.
type response struct {
	Protection *struct {
		ExpirationDate    *time.Time `json:"ExpirationDate"`
		ProtectionEnabled bool       `json:"ProtectionEnabled"`
		TaskArn           string     `json:"TaskArn"`
	} `json:"protection"`
	Failure *struct {
		Arn, Detail, Reason string
	} `json:"failure"`
	Error *struct {
		Arn, Code, Message string
	} `json:"error"`
}

// put sets (enable) or clears the protection and returns until when the
// agent says it lasts (now + ExpiresIn when it does not say).
func (p *Protector) put(ctx context.Context, enable bool) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	body := request{ProtectionEnabled: enable}
	if enable {
		body.ExpiresInMinutes = int(p.cfg.ExpiresIn / time.Minute)
	}
	b, _ := json.Marshal(body)
	sent := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, p.url, bytes.NewReader(b))
	if err != nil {
		return time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := p.cfg.Client.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err != nil {
		return time.Time{}, err
	}
	var r response
	jerr := json.Unmarshal(raw, &r)
	switch {
	case r.Error != nil:
		return time.Time{}, fmt.Errorf("%s (HTTP %d): %s", r.Error.Code, res.StatusCode, r.Error.Message)
	case r.Failure != nil:
		return time.Time{}, fmt.Errorf("%s (HTTP %d): %s", r.Failure.Reason, res.StatusCode, r.Failure.Detail)
	case res.StatusCode != http.StatusOK:
		return time.Time{}, fmt.Errorf("HTTP %d: %.200s", res.StatusCode, raw)
	case jerr != nil:
		return time.Time{}, fmt.Errorf("an answer that is not the agent's: %w", jerr)
	case r.Protection == nil:
		return time.Time{}, fmt.Errorf("an answer without a protection: %.200s", raw)
	case r.Protection.ProtectionEnabled != enable:
		return time.Time{}, fmt.Errorf("the agent answered ProtectionEnabled %v to a request for %v", r.Protection.ProtectionEnabled, enable)
	}
	until := sent.Add(p.cfg.ExpiresIn)
	if d := r.Protection.ExpirationDate; enable && d != nil && d.Before(until) {
		until = *d // the agent's word, when shorter
	}
	return until, nil
}
