package config_test

import (
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/config"
)

// TestSpawn_Env: the spawn limits come from HEIRLOOM_SPAWN__* like every key, and a bad mode
// from the environment is an error naming the key and where it came from.
func TestSpawn_Env(t *testing.T) {
	l := mustLoad(t, config.Input{Home: "/home/u", Env: []string{
		"HEIRLOOM_SPAWN__MAX_DEPTH=1", "HEIRLOOM_SPAWN__MAX_CHILDREN=0", "HEIRLOOM_SPAWN__MODE=observe",
	}})
	if got, want := l.Config.Spawn, (config.Spawn{MaxDepth: 1, MaxChildren: 0, Mode: "observe"}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	_, err := config.Load(config.Input{Home: "/home/u", Env: []string{"HEIRLOOM_SPAWN__MODE=block"}})
	if err == nil || !strings.Contains(err.Error(), "spawn.mode") || !strings.Contains(err.Error(), "HEIRLOOM_SPAWN__MODE") {
		t.Fatalf("got %v, want an error naming spawn.mode and its variable", err)
	}
}
