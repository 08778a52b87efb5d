package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// claudeSession plays one Claude Code session against heirloom's HTTP hook endpoint, as
// Claude Code 2.1.197 sends its hooks (the recordings in ../shared/fixtures/claude-code are
// the model): SessionStart, prompts with tool calls, sub-agents (PreToolUse(Agent),
// SubagentStart, the child's own tool calls, SubagentStop, PostToolUse(Agent)), Stop after
// each prompt, sometimes a compaction (PreCompact, the compaction agent's SubagentStop,
// SessionStart(compact)), and SessionEnd. The transcript is written as Claude Code writes it,
// each record before the hook that follows it, so heirloom reads real JSONL from disk.
type claudeSession struct {
	s    *soak
	r    *rand.Rand
	sid  string
	cwd  string
	dir  string // the project's folder in the transcript root
	path string // the transcript
	f    *os.File
	gen  *recordGen
}

// claudeWorker runs Claude Code sessions one after another until ctx ends.
func (s *soak) claudeWorker(ctx context.Context, worker int) {
	r := rand.New(rand.NewPCG(s.seed, uint64(worker)+1))
	for ctx.Err() == nil {
		if err := s.claudeSession(ctx, r); err != nil && ctx.Err() == nil {
			s.fail("claude-code worker %d: %v", worker, err)
			return
		}
	}
}

func (s *soak) claudeSession(ctx context.Context, r *rand.Rand) error {
	proj := r.IntN(8)
	c := &claudeSession{s: s, r: r, sid: uuid(r), cwd: fmt.Sprintf("/work/soak/proj%d", proj)}
	c.dir = filepath.Join(s.transcripts, fmt.Sprintf("-work-soak-proj%d", proj))
	c.path = filepath.Join(c.dir, c.sid+".jsonl")
	if err := os.MkdirAll(filepath.Join(c.dir, c.sid, "subagents"), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	c.f = f
	c.gen = newRecordGen(c.sid, c.cwd, r)
	return c.run(ctx)
}

func (c *claudeSession) run(ctx context.Context) error {
	c.hook(ctx, "SessionStart", map[string]any{"source": "startup"})
	if ctx.Err() != nil {
		return nil
	}
	c.s.recentClaude.add(c.sid)
	prompts := 3 + c.r.IntN(6)
	compactAfter := -1
	if c.r.IntN(4) == 0 {
		compactAfter = c.r.IntN(prompts)
	}
	for p := range prompts {
		if ctx.Err() != nil {
			return nil
		}
		promptID := uuid(c.r)
		text := prose(c.r, sizeBetween(c.r, 80, 600))
		if err := c.write(c.gen.user(text, promptID)); err != nil {
			return err
		}
		c.hook(ctx, "UserPromptSubmit", map[string]any{"prompt": text, "prompt_id": promptID})
		for range c.r.IntN(4) {
			if err := c.tool(ctx, ""); err != nil {
				return err
			}
		}
		if c.r.IntN(3) == 0 {
			if err := c.spawn(ctx); err != nil {
				return err
			}
		}
		reply := prose(c.r, sizeBetween(c.r, 200, 2000))
		if err := c.write(c.gen.assistant(textBlock(reply))); err != nil {
			return err
		}
		c.hook(ctx, "Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": reply})
		if p == compactAfter {
			if err := c.compact(ctx); err != nil {
				return err
			}
		}
	}
	c.hook(ctx, "SessionEnd", map[string]any{"reason": "other"})
	return nil
}

// tool makes one tool call of the session, or of its sub-agent agentID: the tool_use record,
// PreToolUse, the tool_result record and PostToolUse.
func (c *claudeSession) tool(ctx context.Context, agentID string) error {
	toolID := fmt.Sprintf("toolu_%016x", c.r.Uint64())
	file := fmt.Sprintf("%s/pkg/mod%d/file%d.go", c.cwd, c.r.IntN(20), c.r.IntN(40))
	body := prose(c.r, sizeBetween(c.r, 500, 12000))
	var name string
	var input, response map[string]any
	switch c.r.IntN(3) {
	case 0:
		name = "Read"
		input = map[string]any{"file_path": file}
		response = map[string]any{"type": "text", "file": map[string]any{"filePath": file, "content": body, "numLines": len(body) / 60, "startLine": 1, "totalLines": len(body) / 60}}
	case 1:
		name = "Bash"
		input = map[string]any{"command": "go test ./pkg/...", "description": "run the tests"}
		response = map[string]any{"stdout": body, "stderr": "", "interrupted": false, "isImage": false}
	default:
		name = "Grep"
		input = map[string]any{"pattern": searchWords[c.r.IntN(len(searchWords))], "path": c.cwd}
		response = map[string]any{"mode": "content", "numFiles": 3, "filenames": []string{file}, "content": body, "numLines": len(body) / 60}
	}
	lead := prose(c.r, sizeBetween(c.r, 40, 300))
	if err := c.write(c.gen.assistant([]any{
		map[string]any{"type": "text", "text": lead},
		map[string]any{"type": "tool_use", "id": toolID, "name": name, "input": input},
	})); err != nil {
		return err
	}
	extra := func(m map[string]any) map[string]any {
		if agentID != "" {
			m["agent_id"], m["agent_type"] = agentID, "general-purpose"
		}
		return m
	}
	c.hook(ctx, "PreToolUse", extra(map[string]any{"tool_name": name, "tool_input": input, "tool_use_id": toolID}))
	if err := c.write(c.gen.toolResult(toolID, body, response)); err != nil {
		return err
	}
	c.hook(ctx, "PostToolUse", extra(map[string]any{"tool_name": name, "tool_input": input, "tool_response": response, "tool_use_id": toolID}))
	return nil
}

// spawn runs one sub-agent as Claude Code does: the Agent tool_use, PreToolUse(Agent),
// SubagentStart (whose reply must carry the inherited block), the child's transcript, meta.json
// and a tool call of its own, SubagentStop, the tool_result and PostToolUse(Agent).
func (c *claudeSession) spawn(ctx context.Context) error {
	toolID := fmt.Sprintf("toolu_%016x", c.r.Uint64())
	agentID := fmt.Sprintf("a%016x", c.r.Uint64())
	typ := []string{"general-purpose", "Explore"}[c.r.IntN(2)]
	task := prose(c.r, sizeBetween(c.r, 100, 800))
	input := map[string]any{"description": "soak task " + toolID[6:12], "prompt": task, "subagent_type": typ}
	if err := c.write(c.gen.assistant([]any{
		map[string]any{"type": "text", "text": "Delegating: " + prose(c.r, 80)},
		map[string]any{"type": "tool_use", "id": toolID, "name": "Agent", "input": input},
	})); err != nil {
		return err
	}
	c.hook(ctx, "PreToolUse", map[string]any{"tool_name": "Agent", "tool_input": input, "tool_use_id": toolID})
	reply, ok := c.hook(ctx, "SubagentStart", map[string]any{"agent_id": agentID, "agent_type": typ})
	if ok && !bytes.Contains(reply, []byte("Inherited from Parent Session")) {
		c.s.degraded.Add(1)
	}

	// The child's transcript and meta.json appear while it runs.
	child := filepath.Join(c.dir, c.sid, "subagents", "agent-"+agentID)
	cg := newRecordGen(c.sid, c.cwd, c.r)
	cg.agentID = agentID
	result := prose(c.r, sizeBetween(c.r, 200, 1500))
	var recs []byte
	recs = append(recs, cg.user(task, uuid(c.r))...)
	recs = append(recs, cg.assistant(textBlock(result))...)
	if err := os.WriteFile(child+".jsonl", recs, 0o644); err != nil {
		return err
	}
	c.s.ingested.Add(int64(len(recs)))
	meta, _ := json.Marshal(map[string]any{"agentType": typ, "description": input["description"], "toolUseId": toolID, "spawnDepth": 1})
	if err := os.WriteFile(child+".meta.json", meta, 0o644); err != nil {
		return err
	}
	if c.r.IntN(2) == 0 {
		if err := c.tool(ctx, agentID); err != nil {
			return err
		}
	}
	c.hook(ctx, "SubagentStop", map[string]any{"agent_id": agentID, "agent_type": typ, "stop_hook_active": false,
		"agent_transcript_path": child + ".jsonl", "last_assistant_message": result})
	response := map[string]any{"status": "completed", "prompt": task, "agentId": agentID, "agentType": typ,
		"content": textBlock(result), "totalDurationMs": 200 + c.r.IntN(60000), "totalTokens": 100 + c.r.IntN(20000),
		"totalToolUseCount": 1, "usage": c.gen.usage()}
	if err := c.write(c.gen.toolResult(toolID, result, response)); err != nil {
		return err
	}
	c.hook(ctx, "PostToolUse", map[string]any{"tool_name": "Agent", "tool_input": input, "tool_response": response, "tool_use_id": toolID})
	return nil
}

// compact compacts the session as `/compact` does: PreCompact, the compaction agent's
// SubagentStop (agent_type ""), the boundary and summary records, and SessionStart(compact),
// whose reply must carry the objective reinforcement.
func (c *claudeSession) compact(ctx context.Context) error {
	c.hook(ctx, "PreCompact", map[string]any{"trigger": "manual", "custom_instructions": "keep the objective"})
	summary := prose(c.r, sizeBetween(c.r, 300, 2000))
	c.hook(ctx, "SubagentStop", map[string]any{"agent_id": fmt.Sprintf("a%016x", c.r.Uint64()), "agent_type": "", "stop_hook_active": false,
		"agent_transcript_path": filepath.Join(c.dir, c.sid, "subagents", "agent-compact.jsonl"), "last_assistant_message": summary})
	recs := c.gen.record("system", map[string]any{"subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": false, "level": "info",
		"compactMetadata": map[string]any{"trigger": "manual", "preTokens": 50000 + c.r.IntN(100000)}})
	recs = append(recs, c.gen.record("user", map[string]any{"isCompactSummary": true, "isVisibleInTranscriptOnly": true,
		"message": map[string]any{"role": "user", "content": "This session is being continued from a previous conversation that ran out of context. " + summary}})...)
	if err := c.write(recs); err != nil {
		return err
	}
	reply, ok := c.hook(ctx, "SessionStart", map[string]any{"source": "compact"})
	if ok && !bytes.Contains(reply, []byte("[Objective Reinforcement]")) {
		c.s.degraded.Add(1)
	}
	return nil
}

// write appends records to the transcript.
func (c *claudeSession) write(records []byte) error {
	if _, err := c.f.Write(records); err != nil {
		return fmt.Errorf("write transcript %s: %w", c.path, err)
	}
	c.s.ingested.Add(int64(len(records)))
	return nil
}

// hook posts one hook call and records its latency under "hook:EVENT"; it returns the reply
// and whether it was a good one (200 with JSON). A call cut short by the end of the run counts
// for nothing. A pause follows, as a harness does not call back to back.
func (c *claudeSession) hook(ctx context.Context, event string, extra map[string]any) ([]byte, bool) {
	p := map[string]any{"session_id": c.sid, "transcript_path": c.path, "cwd": c.cwd, "hook_event_name": event, "permission_mode": "default"}
	for k, v := range extra {
		p[k] = v
	}
	body, err := json.Marshal(p)
	if err != nil {
		panic(err) // unreachable: maps of strings, numbers and slices
	}
	start := time.Now()
	status, reply, err := c.s.heirloom.do(ctx, http.MethodPost, "/hooks/claude-code", "application/json", body)
	d := time.Since(start)
	if ctx.Err() != nil {
		return nil, false
	}
	ok := err == nil && status == http.StatusOK && json.Valid(reply)
	if !ok {
		c.s.errorf("hook:"+event, "status %d, error %v, reply %.200q", status, err, reply)
	}
	c.s.lat.record("hook:"+event, d, !ok, d > c.s.cfg.SlowHook)
	c.s.hooks.Add(1)
	sleep(ctx, jitter(c.r, c.s.cfg.HookPause))
	return reply, ok
}

func textBlock(text string) []any { return []any{map[string]any{"type": "text", "text": text}} }

// recordGen writes Claude Code transcript records (one JSON object per line) for one session,
// with the envelope fields a real transcript carries, so the bytes per record are realistic.
type recordGen struct {
	sid, cwd string
	agentID  string // set for a sub-agent's transcript (isSidechain)
	r        *rand.Rand
	parent   string // uuid of the previous record
	at       time.Time
}

func newRecordGen(sid, cwd string, r *rand.Rand) *recordGen {
	return &recordGen{sid: sid, cwd: cwd, r: r, at: time.Now().UTC()}
}

// record returns one line of type typ with the given extra fields.
func (g *recordGen) record(typ string, fields map[string]any) []byte {
	id := uuid(g.r)
	g.at = g.at.Add(time.Duration(500+g.r.IntN(4000)) * time.Millisecond)
	m := map[string]any{
		"parentUuid": g.parent, "isSidechain": g.agentID != "", "type": typ, "uuid": id,
		"timestamp": g.at.Format(time.RFC3339Nano), "userType": "external", "entrypoint": "cli",
		"cwd": g.cwd, "sessionId": g.sid, "version": "2.1.197", "gitBranch": "main",
	}
	if g.agentID != "" {
		m["agentId"] = g.agentID
	}
	for k, v := range fields {
		m[k] = v
	}
	if g.parent == "" {
		m["parentUuid"] = nil
	}
	g.parent = id
	line, err := json.Marshal(m)
	if err != nil {
		panic(err) // unreachable: only strings, numbers, bools, maps and slices
	}
	return append(line, '\n')
}

func (g *recordGen) usage() map[string]any {
	return map[string]any{"input_tokens": 10 + g.r.IntN(5000), "cache_read_input_tokens": g.r.IntN(90000),
		"output_tokens": 5 + g.r.IntN(800), "service_tier": "standard"}
}

func (g *recordGen) user(text, promptID string) []byte {
	return g.record("user", map[string]any{"promptId": promptID, "permissionMode": "default",
		"message": map[string]any{"role": "user", "content": text}})
}

func (g *recordGen) assistant(content []any) []byte {
	return g.record("assistant", map[string]any{"message": map[string]any{
		"id": fmt.Sprintf("msg_%020x", g.r.Uint64()), "type": "message", "role": "assistant",
		"model": "claude-sonnet-4-5", "content": content, "stop_reason": "end_turn", "usage": g.usage()}})
}

func (g *recordGen) toolResult(toolID, content string, result map[string]any) []byte {
	return g.record("user", map[string]any{
		"message": map[string]any{"role": "user", "content": []any{map[string]any{
			"tool_use_id": toolID, "type": "tool_result", "content": content}}},
		"toolUseResult": result,
	})
}
