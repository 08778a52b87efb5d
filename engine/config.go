package engine

import (
	"fmt"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/inject"
)

// Config holds the engine's limits and cadences. DefaultConfig is the one place their default
// values are defined; the config package starts from it, and nothing fills in zero fields
// later: Validate rejects what is out of range.
type Config struct {
	// TranscriptRoots are the directories transcripts may be read from, after resolving
	// symlinks. Empty means none: no transcript is read.
	TranscriptRoots []string
	// HookReadBytes is how much of a transcript one hook reads while the harness waits. A
	// transcript with more unread than this (one heirloom never saw, or a huge paste) is read
	// in the background instead, HookReadBytes at a time, and the reply meanwhile takes the
	// parent's recent turns from the file's end.
	HookReadBytes int64
	// MaxReadBytes is the longest transcript record heirloom parses: one longer than
	// HookReadBytes is read whole in the background, up to this; a longer one is skipped.
	MaxReadBytes int64
	// Passive keeps every block out of every reply (inherit.enabled false): sessions, turns,
	// runs and checkpoints are still recorded.
	Passive bool
	// TailChars is the budget of the parent's transcript tail in the inherited block; zero
	// means no tail.
	TailChars int
	// RelevantPassages is how many passages of the parent's family most relevant to a child's
	// task its inherited block carries; zero means none.
	RelevantPassages int
	// CrossScope lists the scopes whose sessions hand their context to a sub-agent in another
	// scope; "*" is every scope. Lineage is recorded across scopes either way.
	CrossScope []string
	// MaxContextChars caps the context of one reply, in the harness's characters (UTF-16 code
	// units), under Claude Code's 10,000.
	MaxContextChars int
	// SpawnRecordWait bounds how long a SubagentStart waits for the spawning turn to reach the
	// parent's transcript (Claude Code writes it asynchronously), and for the parent's spawn
	// checkpoint to be written. Zero or negative: no wait.
	SpawnRecordWait time.Duration
	// Spawn holds the spawn limits: how deep sub-agents may nest and how many a session may
	// have open at once.
	Spawn SpawnLimits
	// DescribeWait bounds how long a plugin's inject waits for a harness to describe a sub-agent
	// whose parent is not known yet. Zero or negative: never ask.
	DescribeWait time.Duration
	// Checkpoints configures when checkpoints are taken and how long they are kept.
	Checkpoints Checkpoints
	// Runs configures the sweeps that end runs a harness never reported the end of, how long
	// full results are kept, and how results are condensed when surfaced.
	Runs Runs
}

// Runs configures the lifecycle of sub-agent runs after their spawn (runs.*). The sweeps run at
// Open and then every quarter of the shortest of the three durations, at most every minute
// (sweepEvery, an engine constant, not a key).
type Runs struct {
	// WatchdogTimeout: a run running longer than this (from its sub-agent's start) ends as
	// watchdog_timeout. heirloom only stops waiting: the harness's agent is not stopped.
	WatchdogTimeout time.Duration
	// GhostGrace: a pending run whose sub-agent has not started this long after the spawn ends
	// as ghost_sweep, and so does a running run whose parent session ended at least this long
	// ago (or a minute, whichever is shorter).
	GhostGrace time.Duration
	// ResultRetention is how long a finished run keeps its full result; then the result is
	// swept: replaced by its condensed form (inject.Condense), its length kept.
	ResultRetention time.Duration
	// MaxResultTokens is the estimated tokens a result may have to be surfaced whole (level 1);
	// a longer one is condensed (level 2 or 3).
	MaxResultTokens int
	// CondenseTimeout bounds one level-2 summary (Engine.Condenser); past it the result is
	// condensed at level 3.
	CondenseTimeout time.Duration
}

// Checkpoints configures session checkpoints.
type Checkpoints struct {
	// EveryPrompts: a periodic checkpoint is taken once a session has had this many prompts
	// since its latest one.
	EveryPrompts int
	// Every: a periodic checkpoint is also taken at the first prompt this long after the
	// session's latest one (or its start).
	Every time.Duration
	// Retention: checkpoints older than this are pruned, except the newest Keep of each session.
	Retention time.Duration
	// Keep is how many of each session's newest checkpoints survive pruning.
	Keep int
	// PruneEvery is how often the pruner runs (once at Open, then on this period).
	PruneEvery time.Duration
	// RecoveryWindow is how old another session's checkpoint may be to be recovered at a
	// session's start.
	RecoveryWindow time.Duration
}

// SpawnLimits are the limits on spawning sub-agents (spawn.*). A top-level session is at depth
// 0, its sub-agents at 1.
type SpawnLimits struct {
	// MaxDepth is the deepest a sub-agent may be: a spawn that would make a sub-agent deeper is
	// refused. Zero means no limit.
	MaxDepth int
	// MaxChildren is how many open runs (pending and running together) one session may have: a
	// spawn past it is refused. Zero means no limit.
	MaxChildren int
	// Mode is SpawnEnforce (a spawn past a limit is refused) or SpawnObserve (it is recorded and
	// reported as it would have been refused, and goes ahead).
	Mode string
}

// Spawn limit modes (SpawnLimits.Mode).
const (
	SpawnEnforce = "enforce" // refuse a spawn past a limit
	SpawnObserve = "observe" // record and report it, never refuse
)

// DefaultConfig returns the defaults: no transcript roots (the caller names them), 1 MiB read
// per hook and 4 MiB per background read, blocks on, a tail of up to the whole reply, a
// 9,500-character reply, 400 ms for the spawning turn, sub-agents at most 3 deep and 10 open
// per session (enforced), 300 ms to describe a sub-agent, and checkpoints every 10 prompts or
// 15 minutes, kept 7 days (the newest 3 of each session always), pruned hourly, recovered
// within 4 hours; runs watched for 30 minutes, pending ones swept after 10, full results kept
// 24 hours, surfaced whole up to 4,000 estimated tokens, level-2 summaries given 30 seconds.
func DefaultConfig() Config {
	return Config{
		HookReadBytes:    1 << 20,
		MaxReadBytes:     4 << 20,
		TailChars:        inject.DefaultTailChars,
		RelevantPassages: 6,
		CrossScope:       []string{"*"},
		MaxContextChars:  adapters.DefaultMaxContextChars,
		SpawnRecordWait:  400 * time.Millisecond,
		Spawn:            SpawnLimits{MaxDepth: 3, MaxChildren: 10, Mode: SpawnEnforce},
		DescribeWait:     300 * time.Millisecond,
		Checkpoints: Checkpoints{
			EveryPrompts:   10,
			Every:          15 * time.Minute,
			Retention:      7 * 24 * time.Hour,
			Keep:           3,
			PruneEvery:     time.Hour,
			RecoveryWindow: 4 * time.Hour,
		},
		Runs: Runs{
			WatchdogTimeout: 30 * time.Minute,
			GhostGrace:      10 * time.Minute,
			ResultRetention: 24 * time.Hour,
			MaxResultTokens: inject.DefaultMaxResultTokens,
			CondenseTimeout: 30 * time.Second,
		},
	}
}

// Validate reports the first value out of range, naming its field.
func (c Config) Validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("config: %s: got %v, %s", field, v, want)
	}
	switch {
	case c.HookReadBytes <= 0:
		return bad("HookReadBytes", c.HookReadBytes, "want > 0")
	case c.MaxReadBytes < c.HookReadBytes:
		return bad("MaxReadBytes", c.MaxReadBytes, fmt.Sprintf("want ≥ HookReadBytes (%d)", c.HookReadBytes))
	case c.TailChars < 0:
		return bad("TailChars", c.TailChars, "want ≥ 0")
	case c.RelevantPassages < 0:
		return bad("RelevantPassages", c.RelevantPassages, "want ≥ 0")
	case c.MaxContextChars <= 0:
		return bad("MaxContextChars", c.MaxContextChars, "want > 0")
	case c.Spawn.MaxDepth < 0:
		return bad("Spawn.MaxDepth", c.Spawn.MaxDepth, "want ≥ 0")
	case c.Spawn.MaxChildren < 0:
		return bad("Spawn.MaxChildren", c.Spawn.MaxChildren, "want ≥ 0")
	case c.Spawn.Mode != SpawnEnforce && c.Spawn.Mode != SpawnObserve:
		return bad("Spawn.Mode", fmt.Sprintf("%q", c.Spawn.Mode), "want enforce or observe")
	case c.Checkpoints.EveryPrompts <= 0:
		return bad("Checkpoints.EveryPrompts", c.Checkpoints.EveryPrompts, "want > 0")
	case c.Checkpoints.Every <= 0:
		return bad("Checkpoints.Every", c.Checkpoints.Every, "want > 0")
	case c.Checkpoints.Retention <= 0:
		return bad("Checkpoints.Retention", c.Checkpoints.Retention, "want > 0")
	case c.Checkpoints.Keep < 0:
		return bad("Checkpoints.Keep", c.Checkpoints.Keep, "want ≥ 0")
	case c.Checkpoints.PruneEvery <= 0:
		return bad("Checkpoints.PruneEvery", c.Checkpoints.PruneEvery, "want > 0")
	case c.Checkpoints.RecoveryWindow <= 0:
		return bad("Checkpoints.RecoveryWindow", c.Checkpoints.RecoveryWindow, "want > 0")
	case c.Runs.WatchdogTimeout <= 0:
		return bad("Runs.WatchdogTimeout", c.Runs.WatchdogTimeout, "want > 0")
	case c.Runs.GhostGrace <= 0:
		return bad("Runs.GhostGrace", c.Runs.GhostGrace, "want > 0")
	case c.Runs.ResultRetention <= 0:
		return bad("Runs.ResultRetention", c.Runs.ResultRetention, "want > 0")
	case c.Runs.MaxResultTokens <= 0:
		return bad("Runs.MaxResultTokens", c.Runs.MaxResultTokens, "want > 0")
	case c.Runs.CondenseTimeout <= 0:
		return bad("Runs.CondenseTimeout", c.Runs.CondenseTimeout, "want > 0")
	}
	return nil
}
