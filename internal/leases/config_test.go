package leases

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

func TestZeroConfigIsValid(t *testing.T) {
	if err := Validate(visibility.Config{}); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	d := withDefaults(visibility.Config{})
	if d.Interval != visibility.DefaultInterval || d.Extension != 0 || d.MinExtensionPeriod != 3*visibility.DefaultInterval {
		t.Fatalf("defaults = %v/%v/%v", d.Interval, d.Extension, d.MinExtensionPeriod)
	}
}

func TestInvalidConfigNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   visibility.Config
		field string
	}{
		{"negative interval", visibility.Config{Interval: -time.Second}, "Interval"},
		{"interval not below half the extension", visibility.Config{Interval: 30 * time.Second, Extension: 60 * time.Second}, "Interval"},
		{"extension below a second", visibility.Config{Extension: 500 * time.Millisecond, Interval: 100 * time.Millisecond}, "Extension"},
		{"extension past 12h", visibility.Config{Extension: 13 * time.Hour}, "Extension"},
		{"max extension past 12h", visibility.Config{MaxExtension: 13 * time.Hour}, "MaxExtension"},
		{"negative max extension", visibility.Config{MaxExtension: -1}, "MaxExtension"},
		{"fixed interval without a bound", visibility.Config{FixedInterval: true}, "MaxExtension"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.cfg)
			if err == nil {
				t.Fatal("Validate returned nil")
			}
			if !strings.Contains(err.Error(), tc.field+":") {
				t.Fatalf("error %q does not name field %s", err, tc.field)
			}
			if _, err := New(&recorder{}, tc.cfg, nil); err == nil {
				t.Fatal("New accepted the config")
			}
		})
	}
}

func TestValidateJoinsEveryProblem(t *testing.T) {
	err := Validate(visibility.Config{Interval: -1, Extension: 13 * time.Hour, MaxExtension: -1})
	for _, f := range []string{"Interval:", "Extension:", "MaxExtension:"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("error %v lacks %s", err, f)
		}
	}
}

// A disabled Config is valid: the extension fields do not matter.
func TestDisabledConfigIgnoresExtensionFields(t *testing.T) {
	if err := Validate(visibility.Config{Disabled: true, Interval: -1, Extension: time.Hour * 13, FixedInterval: true}); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejectsNilMailbox(t *testing.T) {
	if _, err := New(nil, visibility.Config{}, nil); err == nil {
		t.Fatal("New(nil) returned no error")
	}
}

// ForVisibilityTimeout derives Interval from the visibility timeout
// messages are received with (a zero Extension stays zero: the lease owner
// chooses it), as a consumer and sqslambda do, and
// refuses what cannot keep such a lease: a first look too late, a ceiling
// before the receive's own deadline, a visibility timeout out of range.
func TestForVisibilityTimeout(t *testing.T) {
	vt := 30 * time.Second
	for _, tc := range []struct {
		name                string
		cfg                 visibility.Config
		vt                  time.Duration
		extension, interval time.Duration
		field               string // the field the error names; "" for none
	}{
		{"zero: the extension chosen", visibility.Config{}, vt, 0, 6 * time.Second, ""},
		{"a longer extension", visibility.Config{Extension: time.Minute}, vt, time.Minute, 6 * time.Second, ""},
		{"a shorter extension", visibility.Config{Extension: 10 * time.Second}, vt, 10 * time.Second, 2 * time.Second, ""},
		{"max extension at the visibility timeout", visibility.Config{MaxExtension: vt}, vt, 0, 6 * time.Second, ""},
		{"interval past half the visibility timeout", visibility.Config{Interval: 20 * time.Second, Extension: time.Minute}, vt, time.Minute, 20 * time.Second, "Interval:"},
		{"max extension under the visibility timeout", visibility.Config{MaxExtension: 10 * time.Second}, vt, 0, 6 * time.Second, "MaxExtension:"},
		{"a problem Validate finds", visibility.Config{Interval: -time.Second}, vt, 0, -time.Second, "Interval:"},
		{"no visibility timeout", visibility.Config{}, 0, 0, 0, "visibility timeout:"},
		{"disabled", visibility.Config{Disabled: true, Interval: time.Hour, MaxExtension: time.Second}, vt, 0, time.Hour, ""},
		{"a minimum extension under two intervals", visibility.Config{MinExtensionPeriod: 10 * time.Second}, vt, 0, 6 * time.Second, "MinExtensionPeriod:"},
		{"a maximum extension under the minimum", visibility.Config{MinExtensionPeriod: time.Minute, MaxExtensionPeriod: 30 * time.Second}, vt, 0, 6 * time.Second, "MaxExtensionPeriod:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ForVisibilityTimeout(tc.cfg, tc.vt)
			if got.Extension != tc.extension || got.Interval != tc.interval {
				t.Errorf("Extension %v, Interval %v; want %v, %v", got.Extension, got.Interval, tc.extension, tc.interval)
			}
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("err %v, want nil", err)
			case tc.field != "" && (!errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.field)):
				t.Errorf("err %v, want ErrInvalidArgument naming %s", err, tc.field)
			}
		})
	}
}
