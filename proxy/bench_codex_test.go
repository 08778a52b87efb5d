package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/adapters/codex"
	"github.com/heirloom-dev/heirloom/proxy"
)

// codexRoot is the benchmarks' Codex root thread.
const codexRoot = "01a21df2-0000-7000-8000-0000000000aa"

// codexRollout writes Codex rollout records (one JSON object a line) for one thread, with the
// envelope and item fields a real rollout carries.
type codexRollout struct {
	r   *rand.Rand
	n   int
	at  time.Time
	buf bytes.Buffer
}

func (g *codexRollout) line(typ string, payload map[string]any) {
	g.at = g.at.Add(time.Duration(500+g.r.IntN(4000)) * time.Millisecond)
	b, err := json.Marshal(map[string]any{"timestamp": g.at.Format(time.RFC3339Nano), "ordinal": g.n, "type": typ, "payload": payload})
	if err != nil {
		panic(err) // unreachable: only strings, numbers, maps and slices
	}
	g.n++
	g.buf.Write(append(b, '\n'))
}

func (g *codexRollout) item(payload map[string]any) {
	payload["id"] = fmt.Sprintf("item_%016x", g.r.Uint64())
	g.line("response_item", payload)
}

func text(kind, s string) []any { return []any{map[string]any{"type": kind, "text": s}} }

// exchange appends one typical step: a prompt, hook context (a developer message), a shell
// call with a few KB of output, and a reply.
func (g *codexRollout) exchange() {
	call := fmt.Sprintf("call_%016x", g.r.Uint64())
	g.item(map[string]any{"type": "message", "role": "user", "content": text("input_text", benchProse(g.r, 80+g.r.IntN(300)))})
	g.item(map[string]any{"type": "message", "role": "developer", "content": text("input_text", benchProse(g.r, 120))})
	g.item(map[string]any{"type": "function_call", "name": "exec_command", "call_id": call,
		"arguments": fmt.Sprintf(`{"cmd":"sed -n 1,200p pkg/mod%d/file%d.go"}`, g.r.IntN(20), g.r.IntN(40))})
	g.item(map[string]any{"type": "function_call_output", "call_id": call, "output": benchProse(g.r, 1500+g.r.IntN(3000))})
	g.item(map[string]any{"type": "message", "role": "assistant", "content": text("output_text", benchProse(g.r, 200+g.r.IntN(900)))})
	g.line("event_msg", map[string]any{"type": "token_count", "info": map[string]any{"total_token_usage": map[string]any{"input_tokens": g.r.IntN(90000)}}})
}

// codexBench is a Codex root session whose rollout, of a given size, is stored by a Server that
// knows Codex and Claude Code.
type codexBench struct {
	s   *proxy.Server
	c   *http.Client
	dir string
}

func openCodexBench(b *testing.B, size int) *codexBench {
	b.Helper()
	dir := b.TempDir()
	g := &codexRollout{r: rand.New(rand.NewPCG(uint64(size), 2)), at: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
	g.line("session_meta", map[string]any{"id": codexRoot, "session_id": codexRoot, "cwd": "/work/app", "base_instructions": map[string]any{"text": benchProse(g.r, 8000)}})
	for g.buf.Len() < size || g.n < 20 {
		g.exchange()
	}
	if err := os.WriteFile(codexPath(dir, codexRoot), g.buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	reg, err := adapters.NewRegistry(claudecode.Registration(), codex.Registration())
	if err != nil {
		b.Fatal(err)
	}
	s := MustOpenServer(b, func(s *proxy.Server) {
		s.Harnesses = reg
		s.Engine.Config.TranscriptRoots = []string{dir}
		s.Engine.Config.SpawnRecordWait = -1
	})
	p := &codexBench{s: s, c: &http.Client{}, dir: dir}
	p.post(b, p.event("SessionStart", "", map[string]any{"source": "startup"}))
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		p.post(b, p.event("Stop", "", nil))
		sess, err := s.Engine.Store.GetSession(b.Context(), "default", codexRoot)
		if err == nil && sess.Transcript.Offset == int64(g.buf.Len()) {
			b.Logf("ingested %d bytes (%d turns)", g.buf.Len(), sess.TurnCount)
			break
		}
		if time.Since(start) > 2*time.Minute {
			b.Fatal("rollout not ingested in 2 minutes")
		}
	}
	return p
}

func codexPath(dir, id string) string {
	return filepath.Join(dir, "rollout-2026-11-01T10-00-00-"+id+".jsonl")
}

func (p *codexBench) event(name, agent string, fields map[string]any) map[string]any {
	m := map[string]any{"session_id": codexRoot, "cwd": "/work/app", "hook_event_name": name, "model": "m",
		"turn_id": "t", "transcript_path": codexPath(p.dir, codexRoot)}
	if agent != "" {
		m["agent_id"], m["agent_type"], m["transcript_path"] = agent, "default", codexPath(p.dir, agent)
	}
	for k, v := range fields {
		m[k] = v
	}
	return m
}

func (p *codexBench) post(b *testing.B, fields map[string]any) []byte {
	body := benchJSON(b, fields)
	resp, err := p.c.Post(p.s.URL()+"/hooks/codex", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	reply, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("hook: %v %d: %s", err, resp.StatusCode, reply)
	}
	return reply
}

// BenchmarkCodexSubagentStart measures the reply to a Codex SubagentStart: the sub-agent's run
// found by its spawn's receipt, its rollout's session_meta read for the parent, the session and
// run writes, and the inherited block from the parent's last turns, for a parent rollout of
// 10 KB and 1 MB (already stored). Each iteration runs the hooks Codex sends around it with the
// timer stopped: PreToolUse(spawn_agent) and its PostToolUse receipt before, SubagentStop after.
// The parent's spawn checkpoint is stored before each SubagentStart, as in BenchmarkSubagentStart
// (Claude Code): compare the two in the same run.
func BenchmarkCodexSubagentStart(b *testing.B) {
	for _, size := range benchSizes[:3] {
		b.Run("parent="+size.name, func(b *testing.B) {
			p := openCodexBench(b, size.bytes)
			const task = "Find every caller of parse() and report their files."
			var lat []time.Duration
			replyBytes := 0
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				i := len(lat)
				call, agent := fmt.Sprintf("call_bench%05d", i), fmt.Sprintf("01a21df2-0000-7000-9000-%012d", i)
				p.post(b, p.event("PreToolUse", "", map[string]any{"tool_name": "spawn_agent", "tool_use_id": call, "tool_input": map[string]any{"message": task}}))
				p.post(b, p.event("PostToolUse", "", map[string]any{"tool_name": "spawn_agent", "tool_use_id": call,
					"tool_input": map[string]any{"message": task}, "tool_response": `{"agent_id":"` + agent + `","nickname":"Kant"}`}))
				lastRun := ""
				if i > 0 {
					lastRun = codex.RunID(codexRoot, fmt.Sprintf("call_bench%05d", i-1))
				}
				settleCheckpoint(b, p.s, codexRoot, lastRun) // as BenchmarkSubagentStart does
				meta, _ := json.Marshal(map[string]any{"timestamp": "2026-11-01T11:00:00Z", "ordinal": 0, "type": "session_meta", "payload": map[string]any{
					"id": agent, "session_id": codexRoot, "parent_thread_id": codexRoot,
					"source": map[string]any{"subagent": map[string]any{"thread_spawn": map[string]any{"parent_thread_id": codexRoot, "depth": 1}}}}})
				if err := os.WriteFile(codexPath(p.dir, agent), append(meta, '\n'), 0o644); err != nil {
					b.Fatal(err)
				}
				body := p.event("SubagentStart", agent, nil)
				b.StartTimer()

				t0 := time.Now()
				reply := p.post(b, body)
				lat = append(lat, time.Since(t0))

				b.StopTimer()
				replyBytes += len(reply)
				if !bytes.Contains(reply, []byte("Inherited from Parent Session")) {
					b.Fatalf("SubagentStart %d: no inherited block in %q", i, reply)
				}
				p.post(b, p.event("SubagentStop", agent, map[string]any{"last_assistant_message": "Three callers.",
					"agent_transcript_path": codexPath(p.dir, agent), "transcript_path": codexPath(p.dir, codexRoot)}))
				b.StartTimer()
			}
			b.ReportMetric(float64(replyBytes)/float64(len(lat)), "reply-B/op")
			reportPercentiles(b, lat)
		})
	}
}
