package proxy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cct "github.com/heirloom-dev/heirloom/adapters/claudecode/claudecodetest"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// clock is a settable time source for a server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openAt opens a server over the store in dir; close closes it (also run at cleanup).
func openAt(t *testing.T, dir string, configure func(*proxy.Server)) (s *proxy.Server, close func()) {
	t.Helper()
	return openServer(t, dir, configure)
}

func checkpoints(t *testing.T, s *proxy.Server, scope, id string) []kv.Checkpoint {
	t.Helper()
	cps, err := s.Engine.Store.Checkpoints(t.Context(), scope, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return cps
}

// waitCheckpoints waits until session id has n checkpoints (a periodic one is written in the
// background) and returns them.
func waitCheckpoints(t *testing.T, s *proxy.Server, id string, n int) []kv.Checkpoint {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		cps := checkpoints(t, s, "default", id)
		if len(cps) >= n || time.Now().After(deadline) {
			return cps
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// prompt writes prompt i of session sid to its transcript and submits it.
func prompt(t *testing.T, s *proxy.Server, tr cct.Tree, sid string, i int, text string) string {
	t.Helper()
	cct.AppendLines(t, tr.Transcript, cct.UserLine(fmt.Sprintf("%s-u%d", sid, i), text), cct.AssistantLine(fmt.Sprintf("%s-a%d", sid, i), fmt.Sprintf("Done step %d.", i)))
	return hook(t, s, cct.Event(tr, sid, "UserPromptSubmit", map[string]any{"prompt": text}))
}

func TestPeriodicCheckpointSurvivesRestart(t *testing.T) {
	tr := cct.NewTree(t, "S")
	dir := t.TempDir()
	clk := newClock()
	configure := func(s *proxy.Server) {
		s.Engine.Config.TranscriptRoots, s.Engine.Now = []string{tr.Root}, clk.Now
	}
	s, closeS := openAt(t, dir, configure)
	for i := 1; i <= 9; i++ {
		prompt(t, s, tr, S, i, fmt.Sprintf("Step %d of the port. Never touch vendor/.", i))
	}
	if got := mustSession(t, s, S); got.Prompts != 9 {
		t.Fatalf("prompts after 9: got %d", got.Prompts)
	}
	closeS() // heirloom restarts between prompt 9 and prompt 10

	s2, _ := openAt(t, dir, configure)
	if cps := checkpoints(t, s2, "default", S); len(cps) != 0 {
		t.Fatalf("checkpoints before prompt 10: got %d, want 0", len(cps))
	}
	prompt(t, s2, tr, S, 10, "Step 10 of the port.")
	cps := waitCheckpoints(t, s2, S, 1)
	if len(cps) != 1 || cps[0].Trigger != kv.TriggerPeriodic || cps[0].Prompts != 10 {
		t.Fatalf("checkpoints after prompt 10: got %+v", cps)
	}
	d := cps[0].Digest
	if d.Objective != "Step 1 of the port. Never touch vendor/." || len(d.Constraints) == 0 || d.LastAssistant != "Done step 10." {
		t.Fatalf("digest: got %+v", d)
	}
	// The session records the checkpoint just after it is stored.
	sess := mustSession(t, s2, S)
	for deadline := time.Now().Add(5 * time.Second); sess.LastCheckpointPrompts != 10 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		sess = mustSession(t, s2, S)
	}
	if sess.LastCheckpointPrompts != 10 || sess.LastCheckpointAt.IsZero() {
		t.Fatalf("session after the checkpoint: got %+v", sess)
	}
	// The next periodic one is due 10 prompts later, or after 15 minutes of activity.
	prompt(t, s2, tr, S, 11, "Step 11.")
	time.Sleep(50 * time.Millisecond)
	if cps := checkpoints(t, s2, "default", S); len(cps) != 1 {
		t.Fatalf("checkpoints after prompt 11: got %d, want 1", len(cps))
	}
	clk.Add(15 * time.Minute)
	prompt(t, s2, tr, S, 12, "Step 12.")
	if cps := waitCheckpoints(t, s2, S, 2); len(cps) != 2 || cps[0].Prompts != 12 {
		t.Fatalf("checkpoints after 15 minutes: got %+v", cps)
	}
}

func TestReinforcementOncePerEpoch(t *testing.T) {
	tr := cct.NewTree(t, "S")
	clk := newClock()
	s := MustOpenServer(t, func(s *proxy.Server) { s.Engine.Config.TranscriptRoots, s.Engine.Now = []string{tr.Root}, clk.Now })
	hook(t, s, cct.Event(tr, S, "SessionStart", map[string]any{"source": "startup"}))
	prompt(t, s, tr, S, 1, "Port the parser to Go. OBJ-4242. Never touch vendor/.")
	prompt(t, s, tr, S, 2, "Now the lexer.")

	hook(t, s, cct.Event(tr, S, "PreCompact", map[string]any{"trigger": "manual", "custom_instructions": "keep the lexer plan"}))
	cps := checkpoints(t, s, "default", S)
	if len(cps) != 1 || cps[0].Trigger != kv.TriggerPreCompaction || cps[0].Epoch != 0 {
		t.Fatalf("pre-compaction checkpoint: got %+v", cps)
	}
	if !strings.Contains(fmt.Sprint(cps[0].Digest.Decisions), "keep the lexer plan") {
		t.Errorf("custom instructions not kept: %+v", cps[0].Digest.Decisions)
	}

	clk.Add(time.Minute)
	got := hook(t, s, cct.Event(tr, S, "SessionStart", map[string]any{"source": "compact"}))
	for _, want := range []string{"[Objective Reinforcement]", "OBJ-4242", "Checkpoint taken before the compaction:", "Never touch vendor/"} {
		if !strings.Contains(got, want) {
			t.Errorf("reinforcement lacks %q:\n%s", want, got)
		}
	}
	if len(got) > s.Engine.Config.MaxContextChars {
		t.Errorf("reinforcement is %d chars, over %d", len(got), s.Engine.Config.MaxContextChars)
	}
	if sess := mustSession(t, s, S); sess.Compactions != 1 || sess.ReinforcedEpoch != 1 {
		t.Fatalf("after the first compaction: compactions %d reinforced %d", sess.Compactions, sess.ReinforcedEpoch)
	}
	// SessionStart fires again in the same epoch: nothing more.
	if again := hook(t, s, cct.Event(tr, S, "SessionStart", map[string]any{"source": "compact"})); again != "" {
		t.Fatalf("second SessionStart in one epoch: got %q, want nothing", again)
	}
	// Resuming the compacted session: the reinforcement already holds its latest checkpoint,
	// so it is not recovered a second time.
	if resumed := hook(t, s, cct.Event(tr, S, "SessionStart", map[string]any{"source": "resume"})); strings.Contains(resumed, "## Recovered Session Checkpoint") {
		t.Fatalf("resume after a reinforced compaction: got %q, want no recovered block", resumed)
	}

	// A second compaction, later: a second reinforcement.
	clk.Add(time.Hour)
	prompt(t, s, tr, S, 3, "Then the emitter.")
	hook(t, s, cct.Event(tr, S, "PreCompact", map[string]any{"trigger": "auto"}))
	clk.Add(time.Minute)
	got = hook(t, s, cct.Event(tr, S, "SessionStart", map[string]any{"source": "compact"}))
	if !strings.Contains(got, "[Objective Reinforcement]") || !strings.Contains(got, "OBJ-4242") {
		t.Fatalf("second epoch: got %q", got)
	}
	if sess := mustSession(t, s, S); sess.Compactions != 2 || sess.ReinforcedEpoch != 2 {
		t.Fatalf("after the second compaction: compactions %d reinforced %d", sess.Compactions, sess.ReinforcedEpoch)
	}
	var pre []kv.Checkpoint
	for _, c := range checkpoints(t, s, "default", S) { // an hour passed: a periodic one too
		if c.Trigger == kv.TriggerPreCompaction {
			pre = append(pre, c)
		}
	}
	if len(pre) != 2 || pre[0].Epoch != 1 || pre[0].Prompts != 3 {
		t.Fatalf("pre-compaction checkpoints: got %+v", pre)
	}
}

func TestRecoveredAtSessionStart(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	link := filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	tr := cct.NewTree(t, "A")
	clk := newClock()
	s := MustOpenServer(t, func(s *proxy.Server) { s.Engine.Config.TranscriptRoots, s.Engine.Now = []string{tr.Root}, clk.Now })
	start := func(sid, source, cwd string) string {
		return hook(t, s, map[string]any{"session_id": sid, "cwd": cwd, "hook_event_name": "SessionStart", "source": source})
	}

	start(A, "startup", real)
	cct.AppendLines(t, tr.Transcript, cct.UserLine("a-u1", "Migrate the config loader. REC-9911."), cct.AssistantLine("a-a1", "Loader migrated halfway."))
	hook(t, s, map[string]any{"session_id": A, "transcript_path": tr.Transcript, "cwd": real, "hook_event_name": "UserPromptSubmit", "prompt": "Migrate the config loader. REC-9911."})
	if code, body, _ := do(t, "POST", s.URL()+"/api/sessions/"+A+"/checkpoints", `{"decisions":["use koanf"]}`, nil); code != 200 {
		t.Fatalf("checkpoint A: %d %v", code, body)
	}

	// Nothing for the session itself at startup; resume gives its own checkpoint.
	if got := start(A, "startup", real); got != "" {
		t.Errorf("A's own startup: got %q, want nothing", got)
	}
	if got := start(A, "resume", real); !strings.Contains(got, "## Recovered Session Checkpoint") || !strings.Contains(got, "From: this session") || !strings.Contains(got, "use koanf") {
		t.Errorf("A resumed: got %q", got)
	}

	// Another session in the same project, reached through a symlink, recovers A's.
	clk.Add(4*time.Hour - time.Minute)
	got := start("5e550000-0000-4000-8000-0000000000e1", "startup", link)
	for _, want := range []string{"## Recovered Session Checkpoint", "another session of this project", "REC-9911", "use koanf"} {
		if !strings.Contains(got, want) {
			t.Errorf("B's recovered block lacks %q:\n%s", want, got)
		}
	}
	if got := start("5e550000-0000-4000-8000-0000000000e2", "clear", real); !strings.Contains(got, "REC-9911") {
		t.Errorf("C after clear: got %q", got)
	}
	// Resume of a session without checkpoints: nothing, not another session's.
	if got := start("5e550000-0000-4000-8000-0000000000e3", "resume", real); got != "" {
		t.Errorf("D resumed: got %q, want nothing", got)
	}
	// Past the window, nothing.
	clk.Add(2 * time.Minute)
	if got := start("5e550000-0000-4000-8000-0000000000e4", "startup", real); got != "" {
		t.Errorf("E past the window: got %q, want nothing", got)
	}
	// Another project: nothing.
	clk.Add(-2 * time.Minute)
	if got := start("5e550000-0000-4000-8000-0000000000e5", "startup", base); got != "" {
		t.Errorf("F in another project: got %q, want nothing", got)
	}
}

func TestRecoveredScopeIsolation(t *testing.T) {
	s := MustOpenServer(t, nil)
	ctx := t.Context()
	// A checkpoint in another scope, same project, just now.
	if _, err := s.Engine.Store.PutCheckpoint(ctx, kv.Checkpoint{Scope: "other", SessionID: "X", Project: "/p", ProjectNorm: "/p",
		Trigger: kv.TriggerPeriodic, Digest: kv.Digest{Objective: "SECRET-SCOPE objective"}, CreatedAt: s.Engine.Now()}); err != nil {
		t.Fatal(err)
	}
	got := hook(t, s, map[string]any{"session_id": Y, "cwd": "/p", "hook_event_name": "SessionStart", "source": "startup"})
	if got != "" {
		t.Fatalf("another scope's checkpoint recovered: %q", got)
	}
	// The same through a plugin harness's first model call.
	consume(t, s, adapters.Event{Harness: "opencode", Kind: adapters.KindSessionStart, SessionID: "ses_Y", Cwd: "/p", At: s.Engine.Now()})
	if _, got := getInject(t, s, "harness=opencode&session=ses_Y"); got != "" {
		t.Fatalf("another scope's checkpoint recovered by inject: %q", got)
	}
}

func TestCheckpointAPI(t *testing.T) {
	tr := cct.NewTree(t, "S")
	s := openEngine(t, tr)
	prompt(t, s, tr, S, 1, "Write the release notes.")

	code, body, _ := do(t, "POST", s.URL()+"/api/sessions/"+S+"/checkpoints",
		`{"decisions":["ship on Friday"],"constraints":["keep the API stable"],"objective":"Release v2 notes. API-77."}`, nil)
	if code != 200 || body["trigger"] != "agent" || body["session"] != S || !strings.Contains(fmt.Sprint(body["digest"]), "ship on Friday") {
		t.Fatalf("agent checkpoint: %d %v", code, body)
	}
	sess := mustSession(t, s, S)
	if sess.Objective != "Release v2 notes. API-77." || len(sess.Decisions) != 1 || len(sess.Constraints) != 1 {
		t.Fatalf("session: got objective %q decisions %v constraints %v", sess.Objective, sess.Decisions, sess.Constraints)
	}
	code, body, _ = do(t, "POST", s.URL()+"/api/sessions/"+S+"/checkpoints?trigger=explicit", "", nil)
	if code != 200 || body["trigger"] != "explicit" || !strings.Contains(fmt.Sprint(body["digest"]), "keep the API stable") {
		t.Fatalf("explicit checkpoint: %d %v", code, body)
	}
	if cps := checkpoints(t, s, "default", S); len(cps) != 2 {
		t.Fatalf("checkpoints: got %d, want 2", len(cps))
	}
	for _, c := range []struct {
		path, body string
		want       int
	}{
		{"/api/sessions/nope/checkpoints", "", 404},
		{"/api/sessions/" + S + "/checkpoints?trigger=periodic", "", 400},
		{"/api/sessions/" + S + "/checkpoints", `{"bogus":1}`, 400},
	} {
		if code, _, _ := do(t, "POST", s.URL()+c.path, c.body, nil); code != c.want {
			t.Errorf("POST %s %s: got %d, want %d", c.path, c.body, code, c.want)
		}
	}
	if code, _, _ := do(t, "GET", s.URL()+"/api/sessions/"+S+"/checkpoints", "", nil); code != 405 {
		t.Errorf("GET: got %d, want 405", code)
	}
}

func TestStreamCheckpointsAndBlocks(t *testing.T) {
	clk := newClock()
	s := MustOpenServer(t, func(s *proxy.Server) { s.Engine.Now = clk.Now })
	at := func(e adapters.Event) adapters.Event { e.At = clk.Now(); return e }

	// An earlier session of the project left a checkpoint.
	old := at(oc(adapters.KindSessionStart, "ses_O"))
	consume(t, s, old)
	p := at(oc(adapters.KindTurns, "ses_O"))
	p.Turns = []adapters.Turn{{ID: "o1", Role: "user", Text: "Earlier work on the cache. EARLY-31."}}
	consume(t, s, p)
	consume(t, s, at(oc(adapters.KindPreCompact, "ses_O")))
	if cps := checkpoints(t, s, "default", "ses_O"); len(cps) != 1 || cps[0].Trigger != kv.TriggerPreCompaction {
		t.Fatalf("streamed pre-compaction checkpoint: got %+v", cps)
	}

	clk.Add(time.Minute)
	consume(t, s, at(oc(adapters.KindSessionStart, "ses_N")))
	first := at(oc(adapters.KindTurns, "ses_N"))
	first.Turns = []adapters.Turn{{ID: "n1", Role: "user", Text: "Finish the cache. NEW-58. Never drop entries silently."}}
	consume(t, s, first, first) // streamed twice: one prompt
	if sess := mustSession(t, s, "ses_N"); sess.Prompts != 1 {
		t.Fatalf("prompts: got %d, want 1", sess.Prompts)
	}
	// The first model call recovers the project's checkpoint; later ones do not.
	if _, got := getInject(t, s, "harness=opencode&session=ses_N"); !strings.Contains(got, "## Recovered Session Checkpoint") || !strings.Contains(got, "EARLY-31") {
		t.Fatalf("first call: got %q", got)
	}
	if _, got := getInject(t, s, "harness=opencode&session=ses_N"); got != "" {
		t.Fatalf("second call: got %q, want nothing", got)
	}
	// OpenCode's compacting hook writes a pre-compaction checkpoint.
	if _, got := getInject(t, s, "harness=opencode&session=ses_N&purpose=compacting"); !strings.Contains(got, "NEW-58") {
		t.Fatalf("compacting: got %q", got)
	}
	if cps := checkpoints(t, s, "default", "ses_N"); len(cps) != 1 || cps[0].Trigger != kv.TriggerPreCompaction {
		t.Fatalf("compacting checkpoint: got %+v", cps)
	}
	// After the compaction, every model call carries the reinforcement (no history slot).
	consume(t, s, at(oc(adapters.KindCompacted, "ses_N")))
	for i := range 2 {
		_, got := getInject(t, s, "harness=opencode&session=ses_N")
		if !strings.Contains(got, "[Objective Reinforcement]") || !strings.Contains(got, "NEW-58") || strings.Contains(got, "EARLY-31") {
			t.Fatalf("call %d after compaction: got %q", i, got)
		}
	}
}

func TestCheckpointsPruned(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	store := kv.NewStore(dir)
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := store.PutCheckpoint(t.Context(), kv.Checkpoint{Scope: "default", SessionID: S, Trigger: kv.TriggerPeriodic,
			Digest: kv.Digest{Objective: "x"}, CreatedAt: clk.Now().Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	clk.Add(30 * 24 * time.Hour) // all of them past the retention
	s, _ := openAt(t, dir, func(s *proxy.Server) { s.Engine.Now = clk.Now })
	deadline := time.Now().Add(5 * time.Second)
	for len(checkpoints(t, s, "default", S)) != 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if cps := checkpoints(t, s, "default", S); len(cps) != 3 || !cps[2].CreatedAt.Equal(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("after pruning at open: got %d checkpoints, want the newest 3", len(cps))
	}
}

func TestPeriodicByTime(t *testing.T) {
	clk := newClock()
	s := MustOpenServer(t, func(s *proxy.Server) { s.Engine.Now = clk.Now })
	turn := func(id string) {
		e := oc(adapters.KindTurns, "ses_T")
		e.At = clk.Now().Add(-48 * time.Hour) // a session from the harness's history
		e.Turns = []adapters.Turn{{ID: id, Role: "user", Text: "Work on the importer. TIME-12."}}
		consume(t, s, e)
	}
	turn("t1")
	time.Sleep(50 * time.Millisecond)
	if cps := checkpoints(t, s, "default", "ses_T"); len(cps) != 0 {
		t.Fatalf("an old session's first prompt: got %d checkpoints, want none yet", len(cps))
	}
	clk.Add(15 * time.Minute) // 15 minutes of activity since heirloom began watching
	turn("t2")
	if cps := waitCheckpoints(t, s, "ses_T", 1); len(cps) != 1 || cps[0].Trigger != kv.TriggerPeriodic || cps[0].Prompts != 2 {
		t.Fatalf("after 15 minutes: got %+v", cps)
	}
}

func TestPreCompactionReportedTwice(t *testing.T) {
	clk := newClock()
	s := MustOpenServer(t, func(s *proxy.Server) { s.Engine.Now = clk.Now })
	e := oc(adapters.KindTurns, "ses_D")
	e.Harness, e.At = "openclaw", clk.Now()
	e.Turns = []adapters.Turn{{ID: "d1", Role: "user", Text: "Tidy the docs. DUP-3."}}
	pre := oc(adapters.KindPreCompact, "ses_D")
	pre.Harness, pre.At = "openclaw", clk.Now()
	consume(t, s, e, pre) // the Gateway's report
	clk.Add(2 * time.Second)
	consume(t, s, pre) // the plugin's report of the same compaction
	if cps := checkpoints(t, s, "default", "ses_D"); len(cps) != 1 {
		t.Fatalf("one compaction reported twice: got %d checkpoints, want 1", len(cps))
	}
	clk.Add(time.Hour)
	consume(t, s, pre) // a later compaction in the same epoch (the first never finished)
	if cps := checkpoints(t, s, "default", "ses_D"); len(cps) != 2 {
		t.Fatalf("a later compaction: got %d checkpoints, want 2", len(cps))
	}
}
