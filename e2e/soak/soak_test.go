package soak

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestSoak runs the real heirloom binary under the mixed load for two minutes (SOAK_DURATION
// says otherwise: SOAK_DURATION=30m for the long run, with -timeout to match; 0 skips it) and
// fails when RSS or goroutines grow without bound, a cap is broken, a path fails, a hook keeps
// the harness waiting, or heirloom does not reconnect to a restarted upstream. The report is
// logged, and written as JSON to SOAK_OUT when set.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs for minutes; -short skips it")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the soak reads /proc/<pid>/status")
	}
	cfg := DefaultConfig()
	cfg.Interval = 5 * time.Second
	cfg.IdleAfter = 20 * time.Second
	cfg.RestartEvery = 40 * time.Second
	if d := os.Getenv("SOAK_DURATION"); d != "" {
		dur, err := time.ParseDuration(d)
		if err != nil {
			t.Fatalf("SOAK_DURATION=%q: %v", d, err)
		}
		if dur == 0 {
			t.Skip("SOAK_DURATION=0")
		}
		cfg.Duration = dur
		if dur >= 10*time.Minute {
			cfg.Interval, cfg.IdleAfter, cfg.RestartEvery = 10*time.Second, 2*time.Minute+10*time.Second, time.Minute
		}
	}
	cfg.Logf = t.Logf
	rep, err := Run(t.Context(), cfg)
	if rep == nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	_ = rep.WriteText(&text)
	t.Logf("\n%s", text.String())
	if out := os.Getenv("SOAK_OUT"); out != "" {
		var b bytes.Buffer
		if err := rep.WriteJSON(&b); err == nil {
			err = os.WriteFile(filepath.Clean(out), b.Bytes(), 0o644)
			if err != nil {
				t.Errorf("write the report: %v", err)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Violations {
		t.Error(v)
	}
}
