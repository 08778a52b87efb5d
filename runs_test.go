package main_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// TestRunsCommand seeds a data dir with runs of two harnesses, one swept by the watchdog and
// one with a long result, then reads them through serve, the API and the CLI: the filters, the
// end reason in the table, and `runs show` by full and by shortened id.
func TestRunsCommand(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	ctx := t.Context()
	store := kv.NewStore(dataDir)
	if err := store.Open(); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	long := "LONG-HEAD " + strings.Repeat("a line of the sub-agent's report.\n", 1500) + "LONG-TAIL"
	for _, r := range []kv.Run{
		{ID: "toolu_01LONGLONGLONGLONGLONG", Harness: "claude-code", RootID: sessionID, ParentID: sessionID, ChildID: sessionID + ":a1",
			Type: "Explore", Description: "survey the parser", Status: kv.RunCompleted, EndReason: kv.EndCompleted, Result: long,
			Turns: 12, Tokens: 48210, DurationMs: 252_000, CreatedAt: now.Add(-2 * time.Hour), EndedAt: now.Add(-2 * time.Hour)},
		{ID: "toolu_01WATCHWATCHWATCHWATCH", Harness: "claude-code", RootID: sessionID, ParentID: sessionID + ":a1", ChildID: sessionID + ":a2",
			Type: "general-purpose", Description: "dig deeper", Status: kv.RunFailed, EndReason: kv.EndWatchdogTimeout,
			Reason: "ran longer than runs.watchdog_timeout (30m0s)", CreatedAt: now.Add(-time.Hour), EndedAt: now},
		{ID: "call_ses_oc", Harness: "opencode", RootID: "ses_P", ParentID: "ses_P", ChildID: "ses_c", Type: "general",
			Description: "opencode task", Status: kv.RunCompleted, EndReason: kv.EndCompleted, Result: "done", CreatedAt: now.Add(-48 * time.Hour), EndedAt: now},
	} {
		r.Scope = "default"
		if _, err := store.UpdateRun(ctx, "default", r.ID, func(stored *kv.Run, _ bool) error { *stored = r; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, dataDir, baseEnv(t))
	env := append(baseEnv(t), "HEIRLOOM_URL="+s.url)
	run := func(args ...string) string {
		t.Helper()
		stdout, stderr, code := runCLI(t, env, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}

	table := run("runs")
	t.Logf("runs:\n%s", table)
	if !regexp.MustCompile(`(?m)^toolu_01WATCHW +general-purpose +failed \(watchdog_timeout\) +49bc4f7b:a2 +.* dig deeper$`).MatchString(table) {
		t.Errorf("the table does not show the watchdog's end:\n%s", table)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--session", sessionID}, []string{"toolu_01WATCHW", "toolu_01LONGLO"}},         // a top-level session: its tree
		{[]string{"--session", sessionID + ":a1"}, []string{"toolu_01WATCHW"}},                   // a sub-agent: what it spawned
		{[]string{"--harness", "opencode"}, []string{"call_ses_oc"}},                             //
		{[]string{"--type", "Explore"}, []string{"toolu_01LONGLO"}},                              //
		{[]string{"--since", "3h"}, []string{"toolu_01WATCHW", "toolu_01LONGLO"}},                // the opencode run is two days old
		{[]string{"--status", "failed", "--harness", "claude-code"}, []string{"toolu_01WATCHW"}}, //
	} {
		out := run(append([]string{"runs"}, tc.args...)...)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			got = append(got, strings.Fields(line)[0])
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("runs %v: got %v, want %v", tc.args, got, tc.want)
		}
	}
	if out := run("runs", "--type", "Plan"); firstLineOf(out) != "no runs match" {
		t.Errorf("runs --type Plan: %q", out)
	}

	// runs show: the whole result while it is kept, by the table's shortened id too.
	shown := run("runs", "show", "toolu_01LONGLO")
	for _, want := range []string{"[Subagent Result: survey the parser]\nStatus: completed\nCondensation: Level 1 (passthrough)\nLONG-HEAD", long, "Runtime: 4m12s · Turns: 12 · Tokens: 48,210", "---\n"} {
		if !strings.Contains(shown, want) {
			t.Errorf("runs show lacks %.80q:\n%.600s", want, shown)
		}
	}
	if shown := run("runs", "show", "toolu_01WATCHWATCHWATCHWATCH"); !strings.Contains(shown, "Status: failed (end reason: watchdog_timeout) — ran longer than runs.watchdog_timeout (30m0s)") {
		t.Errorf("runs show of the watchdog's run:\n%s", shown)
	}
	var reply struct {
		Run  map[string]any `json:"run"`
		Cast string         `json:"cast"`
	}
	if err := json.Unmarshal([]byte(run("runs", "show", "--json", "call_ses_oc")), &reply); err != nil || reply.Run["id"] != "call_ses_oc" || reply.Run["end_reason"] != "completed" || !strings.Contains(reply.Cast, "done") {
		t.Errorf("runs show --json: %v, %+v", err, reply)
	}
	for _, tc := range []struct{ id, want string }{
		{"nope", "heirloom: run nope not found\n"},
		{"toolu_01", "heirloom: toolu_01 names 2 runs"},
	} {
		if _, stderr, code := runCLI(t, env, "runs", "show", tc.id); code != 1 || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("runs show %s: exit %d, %q; want 1 and %q", tc.id, code, stderr, tc.want)
		}
	}
	if _, _, code := runCLI(t, env, "runs", "show"); code != 2 {
		t.Errorf("runs show without an id: exit %d, want 2", code)
	}
}
