package heartbeat_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/heartbeat"
)

func TestWatchdogConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		cfg    heartbeat.WatchdogConfig
		fields []string // each must be named in the error
	}{
		{"zero threshold", heartbeat.WatchdogConfig{}, []string{"Threshold"}},
		{"negative threshold", heartbeat.WatchdogConfig{Threshold: -time.Second}, []string{"Threshold"}},
		{"negative interval", heartbeat.WatchdogConfig{Threshold: time.Second, CheckInterval: -1}, []string{"CheckInterval"}},
		{"interval above threshold", heartbeat.WatchdogConfig{Threshold: time.Second, CheckInterval: 2 * time.Second}, []string{"CheckInterval"}},
		{"both", heartbeat.WatchdogConfig{Threshold: -1, CheckInterval: -1}, []string{"Threshold", "CheckInterval"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wd, err := heartbeat.NewWatchdog(tt.cfg)
			if err == nil {
				t.Fatal("NewWatchdog returned no error")
			}
			if wd != nil {
				t.Error("NewWatchdog returned a Watchdog with its error")
			}
			if !errors.Is(err, heartbeat.ErrInvalidArgument) {
				t.Errorf("error %q does not wrap ErrInvalidArgument", err)
			}
			for _, f := range tt.fields {
				if !strings.Contains(err.Error(), "WatchdogConfig."+f) {
					t.Errorf("error %q does not name field %s", err, f)
				}
			}
		})
	}
}

func TestWatchdogConfigValid(t *testing.T) {
	for _, cfg := range []heartbeat.WatchdogConfig{
		{Threshold: time.Nanosecond},
		{Threshold: time.Minute},
		{Threshold: time.Minute, CheckInterval: time.Minute},
		{Threshold: time.Minute, CheckInterval: time.Second},
	} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", cfg, err)
		}
		if _, err := heartbeat.NewWatchdog(cfg); err != nil {
			t.Errorf("NewWatchdog(%+v) = %v, want nil", cfg, err)
		}
	}
}
