package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// Benchmarks of the hook endpoint end to end: a real HTTP round trip on loopback into a Server
// over real Pebble in a temp dir, with transcripts in the shape Claude Code writes them. Every
// hook that stores something does synced writes; docs/benchmarks.md has the numbers, what
// dominates each hook, and the commands that produced them.

// benchSizes are the parent transcript sizes the benchmarks are run at.
var benchSizes = []struct {
	name  string
	bytes int
}{
	{"10KB", 10 << 10},
	{"100KB", 100 << 10},
	{"1MB", 1 << 20},
	{"10MB", 10 << 20},
}

// benchTree is newTree for benchmarks: a transcript root holding session sid's (absent)
// transcript.
func benchTree(b *testing.B, sid string) cct.Tree { return cct.NewTree(b, sid) }

// benchWords is the vocabulary of generated transcript prose: code-review English, so the text
// compresses about as well as a real session's.
var benchWords = strings.Fields(`the parser reads each token and returns a node for the caller; we keep
	offsets stable across calls so that errors name the right line. check vendor tests before the
	refactor lands, then move the lexer state into its own struct with a reset method and a small
	buffer of lookahead runes. func return error nil if else for range map slice string byte int
	context deadline timeout retry budget file path line column span width height index`)

// benchProse returns about n bytes of space-separated words of benchWords, drawn from r.
func benchProse(r *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(benchWords[r.IntN(len(benchWords))])
	}
	return sb.String()
}

// recordGen writes Claude Code transcript records (one JSON object per line) for one session,
// with the envelope fields a real transcript carries, so the bytes per record are realistic.
type recordGen struct {
	sid    string
	seed   uint64 // also part of every uuid, so two generators never collide
	r      *rand.Rand
	n      int    // records written so far; numbers the uuids
	parent string // uuid of the previous record
	at     time.Time
}

func newRecordGen(sid string, seed uint64) *recordGen {
	return &recordGen{sid: sid, seed: seed, r: rand.New(rand.NewPCG(seed, 1)), at: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
}

// record returns one line of type typ with the given extra fields.
func (g *recordGen) record(typ string, fields map[string]any) []byte {
	g.n++
	uuid := fmt.Sprintf("%08x-%04x-4000-8000-%012x", g.r.Uint32(), g.seed&0xffff, g.n)
	g.at = g.at.Add(time.Duration(500+g.r.IntN(4000)) * time.Millisecond)
	m := map[string]any{
		"parentUuid": g.parent, "isSidechain": false, "type": typ, "uuid": uuid,
		"timestamp": g.at.Format(time.RFC3339Nano), "userType": "external", "entrypoint": "cli",
		"cwd": "/work/app", "sessionId": g.sid, "version": "2.1.197", "gitBranch": "main",
	}
	for k, v := range fields {
		m[k] = v
	}
	g.parent = uuid
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

func (g *recordGen) assistant(content []any) []byte {
	return g.record("assistant", map[string]any{"message": map[string]any{
		"id": fmt.Sprintf("msg_%016x", g.r.Uint64()), "type": "message", "role": "assistant",
		"model": "claude-sonnet-4-5", "content": content, "stop_reason": "end_turn", "usage": g.usage()}})
}

// prompt returns a user prompt record and an assistant text reply.
func (g *recordGen) prompt() []byte {
	user := g.record("user", map[string]any{"promptId": fmt.Sprintf("p-%d", g.n),
		"message": map[string]any{"role": "user", "content": benchProse(g.r, 80+g.r.IntN(300))}})
	reply := g.assistant([]any{map[string]any{"type": "text", "text": benchProse(g.r, 200+g.r.IntN(900))}})
	return append(user, reply...)
}

// exchange returns the records of one typical step: a prompt, a hook attachment (no turn), a
// tool call with a few KB of result, and a text reply.
func (g *recordGen) exchange() []byte {
	file := fmt.Sprintf("/work/app/pkg/mod%d/file%d.go", g.r.IntN(20), g.r.IntN(40))
	toolID := fmt.Sprintf("toolu_%016x", g.r.Uint64())
	var out []byte
	out = append(out, g.record("user", map[string]any{"promptId": fmt.Sprintf("p-%d", g.n),
		"message": map[string]any{"role": "user", "content": benchProse(g.r, 80+g.r.IntN(300))}})...)
	out = append(out, g.record("attachment", map[string]any{"attachment": map[string]any{
		"type": "hook_additional_context", "content": []any{benchProse(g.r, 120)}, "hookName": "UserPromptSubmit",
		"toolUseID": "UserPromptSubmit", "hookEvent": "UserPromptSubmit"}})...)
	out = append(out, g.assistant([]any{
		map[string]any{"type": "text", "text": benchProse(g.r, 60+g.r.IntN(200))},
		map[string]any{"type": "tool_use", "id": toolID, "name": "Read", "input": map[string]any{"file_path": file}},
	})...)
	body := benchProse(g.r, 1500+g.r.IntN(3000))
	out = append(out, g.record("user", map[string]any{
		"message": map[string]any{"role": "user", "content": []any{map[string]any{
			"tool_use_id": toolID, "type": "tool_result", "content": body}}},
		"toolUseResult": map[string]any{"type": "text", "file": map[string]any{"filePath": file, "content": body}},
	})...)
	out = append(out, g.assistant([]any{map[string]any{"type": "text", "text": benchProse(g.r, 200+g.r.IntN(900))}})...)
	return out
}

// writeBenchTranscript writes at least size bytes of whole exchanges to path.
func writeBenchTranscript(b *testing.B, path, sid string, size int) {
	b.Helper()
	g := newRecordGen(sid, uint64(size))
	var buf bytes.Buffer
	for buf.Len() < size {
		buf.Write(g.exchange())
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
}

// benchPost sends one hook body to s and returns the reply body; anything but 200 fails b.
func benchPost(b *testing.B, c *http.Client, s *proxy.Server, body []byte) []byte {
	resp, err := c.Post(s.URL()+"/hooks/claude-code", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	reply, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("hook: status %d: %s", resp.StatusCode, reply)
	}
	return reply
}

func benchJSON(b *testing.B, fields map[string]any) []byte {
	body, err := json.Marshal(fields)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// benchIngestAll announces session sid and posts Stop until its whole transcript is stored (a
// hook reads at most hook_read_bytes itself; a longer transcript is caught up in the
// background). It logs how long that took.
func benchIngestAll(b *testing.B, c *http.Client, s *proxy.Server, tr cct.Tree, sid string) {
	b.Helper()
	benchPost(b, c, s, benchJSON(b, cct.Event(tr, sid, "SessionStart", map[string]any{"source": "startup"})))
	fi, err := os.Stat(tr.Transcript)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for calls := 1; ; calls++ {
		benchPost(b, c, s, benchJSON(b, cct.Event(tr, sid, "Stop", nil)))
		sess, err := s.Engine.Store.GetSession(b.Context(), "default", sid)
		if err != nil {
			b.Fatal(err)
		}
		if sess.Transcript.Offset == fi.Size() {
			b.Logf("ingested %d bytes (%d turns) in %d hook calls, %s", fi.Size(), sess.TurnCount, calls, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > 2*time.Minute {
			b.Fatalf("transcript not ingested after %d hook calls: offset %d of %d", calls, sess.Transcript.Offset, fi.Size())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// benchParent is a top-level session S whose transcript, of a given size, is fully ingested
// by a Server. A benchmark may append to the transcript as Claude Code would.
type benchParent struct {
	s  *proxy.Server
	c  *http.Client // keeps connections alive, like an HTTP hook client
	tr cct.Tree
	f  *os.File   // the transcript, open for appending
	g  *recordGen // generates what is appended
}

func openBenchParent(b *testing.B, size int) *benchParent {
	// SubagentStart waits (at most SpawnRecordWait) for the spawning record to reach the parent's
	// transcript and for the spawn checkpoint being written. These benchmarks leave the
	// transcript as it is, so that every iteration sees the same parent, and wait for the
	// checkpoint themselves (benchParent.settle): with no wait configured, neither the look at
	// the transcript's end nor the polling is made.
	return openBenchParentWait(b, size, -1)
}

// openBenchParentWait is openBenchParent with Config.SpawnRecordWait set to wait.
func openBenchParentWait(b *testing.B, size int, wait time.Duration) *benchParent {
	b.Helper()
	tr := benchTree(b, "S")
	writeBenchTranscript(b, tr.Transcript, "S", size)
	s := MustOpenServer(b, func(s *proxy.Server) {
		s.Engine.Config.TranscriptRoots = []string{tr.Root}
		s.Engine.Config.SpawnRecordWait = wait
	})
	c := &http.Client{}
	benchIngestAll(b, c, s, tr, S)
	f, err := os.OpenFile(tr.Transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return &benchParent{s: s, c: c, tr: tr, f: f, g: newRecordGen("S", uint64(size)+1)}
}

// settle waits until the parent's spawn checkpoint, written in the background, is stored and
// recorded on the session: its latest finished run is lastRun ("" for none yet).
func (p *benchParent) settle(b *testing.B, lastRun string) { settleCheckpoint(b, p.s, S, lastRun) }

// settleCheckpoint waits until session sid's spawn checkpoint, written in the background, is
// stored and recorded on the session: its latest finished run is lastRun ("" for none yet).
func settleCheckpoint(b *testing.B, s *proxy.Server, sid, lastRun string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		c, err := s.Engine.Store.LatestCheckpoint(b.Context(), "default", sid)
		if err != nil {
			continue
		}
		got := ""
		if f := c.Digest.FinishedRuns; len(f) > 0 {
			got = f[len(f)-1].RunID
		}
		sess, err := s.Engine.Store.GetSession(b.Context(), "default", sid)
		if got == lastRun && err == nil && sess.LastCheckpointAt.Equal(c.CreatedAt) {
			return
		}
	}
	b.Fatalf("the parent's spawn checkpoint naming finished run %q was not written within 10s", lastRun)
}

func (p *benchParent) write(b *testing.B, records []byte) {
	if _, err := p.f.Write(records); err != nil {
		b.Fatal(err)
	}
}

// reportPercentiles reports the median and 99th percentile of lat.
func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) }
	b.ReportMetric(pct(0.50), "p50-ns")
	b.ReportMetric(pct(0.99), "p99-ns")
}

// benchSubagentStarts times SubagentStart, one fresh sub-agent per iteration, between the hooks
// Claude Code sends around it: with the timer stopped, PreToolUse(Agent) before it, and
// SubagentStop and PostToolUse after it, so each run finishes as it does in use. With settle,
// SubagentStart is sent once the parent's spawn checkpoint is stored; without, right after
// PreToolUse(Agent) returns (p must then be opened with a SpawnRecordWait, as serve runs).
func benchSubagentStarts(b *testing.B, p *benchParent, settle bool) {
	const task = "Find every caller of parse() and report their files."
	var lat []time.Duration
	replyBytes := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		i := len(lat)
		toolID, agentID := fmt.Sprintf("toolu_bench%05d", i), fmt.Sprintf("abench%05d", i)
		if !settle {
			// The look for the spawning record must find it, as it does in a session whose
			// writes have caught up; a record that adds no turn names the tool call, so the
			// parent stays the same from one iteration to the next.
			p.write(b, p.g.record("attachment", map[string]any{"toolUseID": toolID, "attachment": map[string]any{
				"type": "hook_success", "hookName": "PreToolUse:Agent", "hookEvent": "PreToolUse", "toolUseID": toolID, "content": ""}}))
		}
		benchPost(b, p.c, p.s, benchJSON(b, cct.Spawn(p.tr, S, toolID, "Explore", task, "")))
		if settle {
			// Claude Code starts the sub-agent some milliseconds after the spawn's hook: by then
			// the parent's spawn checkpoint, written in the background, is usually stored.
			lastRun := ""
			if i > 0 {
				lastRun = fmt.Sprintf("toolu_bench%05d", i-1)
			}
			p.settle(b, lastRun)
		}
		body := benchJSON(b, cct.Start(p.tr, S, agentID, "Explore"))
		b.StartTimer()

		t0 := time.Now()
		reply := benchPost(b, p.c, p.s, body)
		lat = append(lat, time.Since(t0))

		b.StopTimer()
		replyBytes += len(reply)
		if !bytes.Contains(reply, []byte("Inherited from Parent Session")) {
			b.Fatalf("SubagentStart %d: no inherited block in the reply %q", i, reply)
		}
		benchPost(b, p.c, p.s, benchJSON(b, cct.Event(p.tr, S, "SubagentStop", map[string]any{
			"agent_id": agentID, "agent_type": "Explore", "last_assistant_message": "Three callers."})))
		benchPost(b, p.c, p.s, benchJSON(b, cct.Result(p.tr, S, toolID, agentID, "Three callers: a.go, b.go, c.go.")))
		b.StartTimer()
	}
	b.ReportMetric(float64(replyBytes)/float64(len(lat)), "reply-B/op")
	reportPercentiles(b, lat)
}

// BenchmarkSubagentStart measures the reply to SubagentStart — pairing with the pending spawn,
// the session and run writes, and the inherited block built from the parent's last turns — for
// a parent whose transcript (already ingested) is 10 KB … 10 MB. The block is built from the
// parent's last 200 turns at most, never the whole transcript, so the cost may grow with the
// parent only until it has that many turns (between 100 KB and 1 MB here) and must be flat
// beyond. Each iteration leaves one more finished run in the scope, and a SubagentStart's cost
// depends on those (BenchmarkSubagentStartRunsInScope), so compare sizes at a fixed iteration
// count (-benchtime 200x).
func BenchmarkSubagentStart(b *testing.B) {
	for _, size := range benchSizes {
		b.Run("parent="+size.name, func(b *testing.B) {
			benchSubagentStarts(b, openBenchParent(b, size.bytes), true)
		})
	}
}

// BenchmarkSubagentStartNoWait is BenchmarkSubagentStart with SubagentStart sent as soon as
// PreToolUse(Agent) has returned, as when Claude Code starts the sub-agent at once: the spawn
// checkpoint may still be being written, and SubagentStart waits for it (at most
// SpawnRecordWait, 400 ms, the default serve runs with), and looks once for the spawning
// record at the transcript's end.
func BenchmarkSubagentStartNoWait(b *testing.B) {
	for _, size := range benchSizes {
		b.Run("parent="+size.name, func(b *testing.B) {
			benchSubagentStarts(b, openBenchParentWait(b, size.bytes, engine.DefaultConfig().SpawnRecordWait), false)
		})
	}
}

// BenchmarkSubagentStartRunsInScope is BenchmarkSubagentStart with a 10 KB parent in a scope that
// already holds 0 … 10,000 finished runs of earlier sessions, as a long-used install does. A
// SubagentStart's cost should not depend on them.
func BenchmarkSubagentStartRunsInScope(b *testing.B) {
	for _, runs := range []int{0, 1000, 10000} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			p := openBenchParent(b, benchSizes[0].bytes)
			at := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
			for batch := 0; batch < runs; batch += 1000 {
				err := p.s.Engine.Store.Update(b.Context(), func(tx *kv.Tx) error {
					for i := batch; i < min(runs, batch+1000); i++ {
						root := fmt.Sprintf("old-%d", i/10)
						_, err := tx.UpdateRun("default", fmt.Sprintf("toolu_old%05d", i), func(r *kv.Run, _ bool) error {
							r.Harness, r.RootID, r.ParentID, r.ChildID = "claude-code", root, root, root+":a"+fmt.Sprint(i)
							r.Type, r.Prompt, r.Description = "Explore", "an earlier task", "earlier"
							r.Status, r.Result = kv.RunCompleted, "done"
							r.CreatedAt, r.StartedAt, r.EndedAt = at, at, at.Add(time.Minute)
							return nil
						})
						if err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			benchSubagentStarts(b, p, true)
		})
	}
}

// BenchmarkUnseenTranscript measures every hook of a session whose transcript heirloom never
// saw: a 50 MB Claude Code transcript (as when heirloom is installed beside a long session),
// then SessionStart (resume), UserPromptSubmit, PreToolUse(Agent), SubagentStart, Stop, one
// after the other against a fresh store each iteration. It reports each hook's time and the
// slowest; none may approach the 1 s hook deadline. The transcript is read in the background
// meanwhile; an iteration ends when it is all stored, with the timer stopped.
func BenchmarkUnseenTranscript(b *testing.B) {
	tr := benchTree(b, "U")
	writeBenchTranscript(b, tr.Transcript, "U", 50<<20)
	g := newRecordGen("U", 7)
	f, err := os.OpenFile(tr.Transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(g.record("assistant", map[string]any{"message": map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "text", "text": "Delegating the callers."},
		map[string]any{"type": "tool_use", "id": "toolu_unseen", "name": "Agent", "input": map[string]any{"prompt": "x", "subagent_type": "Explore"}},
	}}})); err != nil {
		b.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(tr.Transcript)
	if err != nil {
		b.Fatal(err)
	}
	hooks := []struct {
		name string
		body []byte
	}{
		{"SessionStart", benchJSON(b, cct.Event(tr, U, "SessionStart", map[string]any{"source": "resume"}))},
		{"UserPromptSubmit", benchJSON(b, cct.Event(tr, U, "UserPromptSubmit", map[string]any{"prompt": "next step"}))},
		{"PreToolUse", benchJSON(b, cct.Spawn(tr, U, "toolu_unseen", "Explore", "Find every caller", ""))},
		{"SubagentStart", benchJSON(b, cct.Start(tr, U, "a1", "Explore"))},
		{"Stop", benchJSON(b, cct.Event(tr, U, "Stop", nil))},
	}
	worst := make([]time.Duration, len(hooks))
	var slowest time.Duration
	for b.Loop() {
		b.StopTimer()
		s := MustOpenServer(b, func(s *proxy.Server) {
			s.Engine.Config.TranscriptRoots = []string{tr.Root}
			s.Engine.Config.SpawnRecordWait = -1
		})
		c := &http.Client{}
		b.StartTimer()
		for i, h := range hooks {
			t0 := time.Now()
			reply := benchPost(b, c, s, h.body)
			d := time.Since(t0)
			worst[i], slowest = max(worst[i], d), max(slowest, d)
			if h.name == "SubagentStart" && !bytes.Contains(reply, []byte("Inherited from Parent Session")) {
				b.Fatalf("SubagentStart: no inherited block in %q", reply)
			}
		}
		b.StopTimer()
		for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			sess, err := s.Engine.Store.GetSession(b.Context(), "default", U)
			if err == nil && sess.Transcript.Offset == fi.Size() {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("the transcript was not caught up within 5 minutes")
			}
		}
		b.StartTimer()
	}
	for i, h := range hooks {
		b.ReportMetric(float64(worst[i].Microseconds())/1000, h.name+"-max-ms")
	}
	b.ReportMetric(float64(slowest.Microseconds())/1000, "slowest-hook-ms")
}

// BenchmarkPromptIngest measures one UserPromptSubmit that finds one new prompt and its reply
// appended to a transcript already ingested at 10 KB … 10 MB: read the new bytes from the stored
// offset, parse them, store two turns and the session in synced writes. Appending the records
// is done with the timer stopped. The cost must not grow with the transcript: it is O(new
// turns).
func BenchmarkPromptIngest(b *testing.B) {
	for _, size := range benchSizes {
		b.Run("transcript="+size.name, func(b *testing.B) {
			p := openBenchParent(b, size.bytes)
			before, err := p.s.Engine.Store.GetSession(b.Context(), "default", S)
			if err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				p.write(b, p.g.prompt())
				body := benchJSON(b, cct.Event(p.tr, S, "UserPromptSubmit", map[string]any{"prompt": "next step"}))
				b.StartTimer()

				t0 := time.Now()
				benchPost(b, p.c, p.s, body)
				lat = append(lat, time.Since(t0))
			}
			after, err := p.s.Engine.Store.GetSession(b.Context(), "default", S)
			if err != nil {
				b.Fatal(err)
			}
			fi, err := p.f.Stat()
			if err != nil {
				b.Fatal(err)
			}
			if after.Transcript.Offset != fi.Size() || after.TurnCount != before.TurnCount+2*uint64(len(lat)) {
				b.Fatalf("after %d prompts: offset %d of %d, turns %d (was %d); want everything ingested, two turns a prompt",
					len(lat), after.Transcript.Offset, fi.Size(), after.TurnCount, before.TurnCount)
			}
			reportPercentiles(b, lat)
		})
	}
}
