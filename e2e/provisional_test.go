package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestReplayProvisional replays a hand-built stream the recordings lack: same-type spawns from
// two different issuers pending at once, started in an order that makes the first guess wrong.
//
// The top-level session S spawns A; A's sub-agent a1 starts. Then S spawns B and, at the same
// time, a1 spawns C (a nested spawn: its PreToolUse carries a1's agent_id). All three are
// general-purpose. Sub-agent a2 starts first, and it is C's: at its SubagentStart the candidates
// B (issuer S) and C (issuer S:a1) share a type but not an issuer, so heirloom must take the
// oldest (B), mark the link provisional, and correct it later — from a2's meta.json where
// Claude Code writes it (variant MetaJSON), or else from PostToolUse(C), whose tool_response
// names a2 (variant PostToolUse).
func TestReplayProvisional(t *testing.T) {
	const (
		sid = "5e55e55e-0000-4000-8000-000000000001"
		a1  = "a1111111111111111"
		a2  = "a2222222222222222" // C's sub-agent, started first
		a3  = "a3333333333333333" // B's sub-agent
	)
	for _, variant := range []string{"PostToolUse", "MetaJSON"} {
		t.Run(variant, func(t *testing.T) {
			root := newReplayRoot(t)
			send, state := httpTransport.open(t, []string{root.TranscriptRoot()}, root)
			transcript := filepath.Join(root.projectDir(), sid+".jsonl")
			subagents := filepath.Join(root.projectDir(), sid, "subagents")
			agentPath := func(agent string) string { return filepath.Join(subagents, "agent-"+agent+".jsonl") }
			writeMeta := func(agent, toolUseID string, depth int) {
				if variant != "MetaJSON" {
					return
				}
				b, _ := json.Marshal(map[string]any{"agentType": "general-purpose", "description": "d", "toolUseId": toolUseID, "spawnDepth": depth})
				if err := os.MkdirAll(subagents, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(subagents, "agent-"+agent+".meta.json"), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			call := func(event string, fields map[string]any) hookCall {
				p := map[string]any{"session_id": sid, "transcript_path": transcript, "cwd": root.Dir, "hook_event_name": event}
				for k, v := range fields {
					p[k] = v
				}
				b, err := json.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				c := hookCall{Event: event, Payload: b}
				if err := json.Unmarshal(b, &c.p); err != nil {
					t.Fatal(err)
				}
				return c
			}
			spawnCall := func(id, issuer, description, prompt string) hookCall {
				f := map[string]any{"tool_name": "Agent", "tool_use_id": id,
					"tool_input": map[string]any{"description": description, "prompt": prompt, "subagent_type": "general-purpose"}}
				if issuer != "" {
					f["agent_id"], f["agent_type"] = issuer, "general-purpose"
				}
				return call("PreToolUse", f)
			}
			resultCall := func(id, issuer, agent, text string, tokens int64) hookCall {
				f := map[string]any{"tool_name": "Agent", "tool_use_id": id, "tool_input": map[string]any{"subagent_type": "general-purpose"},
					"tool_response": map[string]any{"status": "completed", "agentId": agent, "agentType": "general-purpose",
						"content": []map[string]any{{"type": "text", "text": text}}, "totalTokens": tokens, "totalDurationMs": tokens * 10}}
				if issuer != "" {
					f["agent_id"], f["agent_type"] = issuer, "general-purpose"
				}
				return call("PostToolUse", f)
			}
			start := func(agent string) hookCall {
				return call("SubagentStart", map[string]any{"agent_id": agent, "agent_type": "general-purpose"})
			}
			stop := func(agent, text string) hookCall {
				return call("SubagentStop", map[string]any{"agent_id": agent, "agent_type": "general-purpose",
					"agent_transcript_path": agentPath(agent), "last_assistant_message": text})
			}

			type step struct {
				c      hookCall
				before func()           // runs before the call is sent
				check  func(storeState) // runs on the state after the call
			}
			steps := []step{
				{c: call("SessionStart", map[string]any{"source": "startup"})},
				{c: call("UserPromptSubmit", map[string]any{"prompt": "SYNTH fan the work out"})},
				{c: spawnCall("toolu_A", "", "first helper", "TASK-A: split it.")},
				{c: start(a1)},
				{c: spawnCall("toolu_B", "", "second helper", "TASK-B: do part two.")},
				{c: spawnCall("toolu_C", a1, "nested helper", "TASK-C: do part one.")},
				{c: start(a2), check: func(st storeState) {
					// The guess: the oldest candidate, B, marked provisional.
					if r, ok := st.run("toolu_B"); !ok || r.ChildID != sid+":"+a2 || !r.Provisional {
						t.Errorf("after a2 started: run B child %q provisional %v, want %s:%s, true (oldest same-type spawn, issuers differ)", r.ChildID, r.Provisional, sid, a2)
					}
				}},
				{c: start(a3)},
				{c: stop(a2, "RESULT-C"), before: func() { writeMeta(a2, "toolu_C", 2) }, check: func(st storeState) {
					if variant != "MetaJSON" {
						return
					}
					r, _ := st.run("toolu_C")
					s, _ := st.session(sid + ":" + a2)
					if r.ChildID != sid+":"+a2 || r.Provisional || s.ParentID != sid+":"+a1 || s.Depth != 2 {
						t.Errorf("after a2 stopped with its meta.json naming toolu_C: run C child %q provisional %v, session %s parent %q depth %d; want %s:%s, false, parent %s:%s, depth 2",
							r.ChildID, r.Provisional, s.ID, s.ParentID, s.Depth, sid, a2, sid, a1)
					}
				}},
				{c: resultCall("toolu_C", a1, a2, "RESULT-C", 7)},
				{c: stop(a3, "RESULT-B"), before: func() { writeMeta(a3, "toolu_B", 1) }},
				{c: resultCall("toolu_B", "", a3, "RESULT-B", 9)},
				{c: stop(a1, "RESULT-A"), before: func() { writeMeta(a1, "toolu_A", 1) }},
				{c: resultCall("toolu_A", "", a1, "RESULT-A", 11)},
				{c: call("Stop", nil)},
				{c: call("SessionEnd", map[string]any{"reason": "other"})},
			}
			var calls []hookCall
			for pass := 1; pass <= 2; pass++ {
				for i, s := range steps {
					if s.before != nil && pass == 1 {
						s.before()
					}
					s.c.Seq = i + 1
					if pass == 1 {
						calls = append(calls, s.c)
					}
					send(t, s.c.Payload)
					if s.check != nil && pass == 1 {
						s.check(state(t))
					}
				}
				st := state(t)
				checkAgainstHooks(t, calls, st)
				want := map[string]string{"toolu_A": sid + ":" + a1, "toolu_B": sid + ":" + a3, "toolu_C": sid + ":" + a2}
				for id, child := range want {
					if r, _ := st.run(id); r.ChildID != child || r.Provisional {
						t.Errorf("pass %d: run %s child %q provisional %v, want %s, false", pass, id, r.ChildID, r.Provisional, child)
					}
				}
			}
		})
	}
}
