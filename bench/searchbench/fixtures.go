package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
	"github.com/heirloom-dev/heirloom/adapters/opencode"
)

// realTurn is one turn of a recorded transcript, as heirloom's adapters read it.
type realTurn struct {
	Harness string
	Role    string
	Tool    string
	Text    string
}

// readFixtures returns the turns of every recorded transcript under dir, through the same
// decoders heirloom's ingest uses: Claude Code JSONL transcripts (sub-agents included), the
// OpenCode SSE captures, and the OpenClaw Gateway frames. Turns with no text are dropped; the
// order is deterministic (files sorted by path, records in file order), and a turn that appears
// twice (a streamed part growing, a global stream's sync copy) is kept in its last version once.
func readFixtures(dir string) ([]realTurn, error) {
	var out []realTurn
	add := func(harness string, ts []adapters.Turn, seen map[string]int) {
		for _, t := range ts {
			if strings.TrimSpace(t.Text) == "" {
				continue
			}
			rt := realTurn{Harness: harness, Role: t.Role, Tool: t.Tool, Text: t.Text}
			if i, ok := seen[t.ID]; ok && t.ID != "" {
				out[i] = rt
				continue
			}
			seen[t.ID] = len(out)
			out = append(out, rt)
		}
	}

	cc, err := filepath.Glob(filepath.Join(dir, "claude-code", "transcripts", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sub, _ := filepath.Glob(filepath.Join(dir, "claude-code", "transcripts", "*", "subagents", "*.jsonl"))
	cc = append(cc, sub...)
	sort.Strings(cc)
	for _, p := range cc {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		ts, _ := claudecode.Adapter{}.ParseTranscript(b, true)
		add("claude-code", ts, map[string]int{})
	}

	oc, _ := filepath.Glob(filepath.Join(dir, "opencode", "*.sse"))
	oc2, _ := filepath.Glob(filepath.Join(dir, "opencode", "events", "*.sse"))
	oc = append(oc, oc2...)
	sort.Strings(oc)
	for _, p := range oc {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		seen := map[string]int{}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			if !ok {
				continue
			}
			evs, err := opencode.DecodeFrame(line)
			if err != nil {
				continue
			}
			for _, ev := range evs {
				add("opencode", ev.Turns, seen)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}

	frames, err := os.ReadFile(filepath.Join(dir, "openclaw", "live", "spawn.all-frames.json"))
	if err == nil {
		var recs []struct {
			Frame struct {
				Type    string          `json:"type"`
				Event   string          `json:"event"`
				Payload json.RawMessage `json:"payload"`
			} `json:"frame"`
		}
		if err := json.Unmarshal(frames, &recs); err != nil {
			return nil, fmt.Errorf("openclaw frames: %w", err)
		}
		seen := map[string]int{}
		for _, r := range recs {
			if r.Frame.Type != "event" {
				continue
			}
			evs, err := openclaw.DecodeEvent(r.Frame.Event, r.Frame.Payload)
			if err != nil {
				continue
			}
			for _, ev := range evs {
				add("openclaw", ev.Turns, seen)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no transcript turns under %s", dir)
	}
	return out, nil
}
