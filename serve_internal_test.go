package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/config"
)

// TestServe_PassiveMode: inherit.enabled false is passive mode for every block, not only the
// inherited one: the engine is told to add no reinforcement or recovered block either.
func TestServe_PassiveMode(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		cfg := config.Default(t.TempDir(), "")
		cfg.DataDir, cfg.Listen, cfg.Inherit.Enabled = filepath.Join(t.TempDir(), "data"), "127.0.0.1:0", enabled
		m := NewMain(cfg, io.Discard)
		if err := m.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := m.Engine.Config.Passive; got != !enabled {
			t.Errorf("inherit.enabled %v: got engine Passive %v", enabled, got)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := m.Close(ctx); err != nil {
			t.Error(err)
		}
		cancel()
	}
}
