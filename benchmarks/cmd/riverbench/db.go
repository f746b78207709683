package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop/benchmarks/cputime"
)

// freshDatabase creates a database on the server of dsn and returns its
// DSN and a func that drops it.
func freshDatabase(ctx context.Context, dsn string) (string, func(), error) {
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := "riverbench_" + hex.EncodeToString(r[:])
	admin := func(sql string) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := admin("CREATE DATABASE " + name); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, fmt.Errorf("-dsn: want a postgres:// URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), func() { _ = admin("DROP DATABASE " + name + " WITH (FORCE)") }, nil
}

// serverCPU returns the CPU time (user and system) every postgres process
// on this machine has used so far, from /proc: the database server's, when
// it runs here.
func serverCPU() time.Duration {
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || s[open+1:end] != "postgres" {
			continue
		}
		f := strings.Fields(s[end+2:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64) // utime: field 14 of stat
		k, _ := strconv.ParseInt(f[12], 10, 64) // stime: field 15
		ticks += u + k
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ is 100 on Linux
}

// meter measures a run's wall time and CPU.
type meter struct {
	start            time.Time
	server0, client0 time.Duration
}

func startMeter() meter { return meter{time.Now(), serverCPU(), cputime.Self()} }

func (m meter) stop() (wall, server, client time.Duration) {
	return time.Since(m.start), serverCPU() - m.server0, cputime.Self() - m.client0
}
