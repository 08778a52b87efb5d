package inject_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// facts renders what DetectFacts finds as "kind: text" lines.
func facts(role, text string) []string {
	var out []string
	for _, f := range inject.DetectFacts(role, text) {
		out = append(out, f.Kind+": "+f.Text)
	}
	return out
}

func TestDetectFacts_User(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		// Constraints, with and without the trigger words the old detector knew.
		{"Never touch vendor/.", []string{"constraint: Never touch vendor/."}},
		{"Leave the vendored code alone.", []string{"constraint: Leave the vendored code alone."}},
		{"The v1 API has to stay backwards compatible", []string{"constraint: The v1 API has to stay backwards compatible"}},
		{"keep the public API stable please", []string{"constraint: keep the public API stable please"}},
		{"No new dependencies.", []string{"constraint: No new dependencies."}},
		{"The migrations folder is off limits.", []string{"constraint: The migrations folder is off limits."}},
		{"make sure the tests still pass on Windows", []string{"constraint: make sure the tests still pass on Windows"}},
		{"don't commit anything yet", []string{"constraint: don't commit anything yet"}},
		{"Port it to Go. You must not change the wire format.", []string{"constraint: You must not change the wire format."}},
		{"- always run gofmt\n- avoid global state", []string{"constraint: always run gofmt", "constraint: avoid global state"}},
		// Decisions.
		{"We'll use SQLite from now on.", []string{"decision: We'll use SQLite from now on."}},
		{"Let's go with the streaming parser.", []string{"decision: Let's go with the streaming parser."}},
		{"agreed: errors are wrapped with %w", []string{"decision: agreed: errors are wrapped with %w"}},
		{"Decision: one binary, no plugins", []string{"decision: Decision: one binary, no plugins"}},
		{"We decided to vendor the protobufs.", []string{"decision: We decided to vendor the protobufs."}},
		{"pgx, not database/sql.", []string{"decision: pgx, not database/sql."}},
		{"use zerolog instead of logrus", []string{"decision: use zerolog instead of logrus"}},
		{"stick with the v2 client", []string{"decision: stick with the v2 client"}},
		// Changes of plan.
		{"Change of plan: ship the CLI first.", []string{"plan: Change of plan: ship the CLI first."}},
		{"Scratch that, we keep the old schema.", []string{"plan: Scratch that, we keep the old schema."}},
		{"Actually, let's do the migration in Go.", []string{"plan: Actually, let's do the migration in Go."}},
		{"switch from Postgres to SQLite", []string{"plan: switch from Postgres to SQLite"}},
		{"we no longer use the v1 client", []string{"plan: we no longer use the v1 client"}},
		{"Forget the cache layer.", []string{"plan: Forget the cache layer."}},
		// Not facts: questions, hypotheses, code, logs, shell, quotes, plain requests.
		{"Should we use SQLite?", nil},
		{"must we keep it?", nil},
		{"If we use SQLite the tests get faster.", nil},
		{"fix the failing test in ledger/header.go", nil},
		{"run the tests again", nil},
		{"```go\n// never call this from a goroutine\nfunc f() { must(x) }\n```", nil},
		{"    if err != nil { return errors.New(\"must not be nil\") }", nil},
		{"2026-11-27T08:00:01Z ERROR must reconnect: never got a pong", nil},
		{"panic: must not happen", nil},
		{"$ rm -rf vendor # never do this", nil},
		{"> never trust the cache", nil},
		{`the log said "never retry after a 4xx"`, nil},
		{"at ledger.(*Store).Compact(0xc000010000)", nil},
		{"Error: you must specify a target", nil},
		{"WARNING: never use this in production", nil},
		{"TypeError: must be str, not int", nil},
		{"FAIL: TestFoo must return nil", nil},
		{"npm ERR! must not be empty", nil},
		{"It's a bug in the parser, not the lexer.", nil},
		{"It fails on Linux, not macOS.", nil},
		{"Yes, not now.", nil},
		{"Please switch to the feature branch.", nil},
		{"Wait, do you see the error", nil},
		{"Actually, use the other terminal.", nil},
		{"Forget it, just run the tests.", nil},
		{"Never mind.", nil},
		{"The build must have broken after the merge.", nil},
		{"I never saw this error before.", nil},
		{"I always forget the flag.", nil},
		{"keep going until the tests are passing", nil},
		{"Agreed, that looks wrong.", nil},
		// Prose that merely starts like a log line is still prose.
		{"Error handling must stay in one place.", []string{"constraint: Error handling must stay in one place."}},
		{"* Never touch vendor/", []string{"constraint: Never touch vendor/"}},
		{"Agreed, the retry budget lives in the config.", []string{"decision: Agreed, the retry budget lives in the config."}},
		// Punctuation that is not ASCII starts a word, as the patterns' \b sees it; spacing
		// does not matter.
		{"Important—never edit vendor/.", []string{"constraint: Important—never edit vendor/."}},
		{"Important…never edit vendor/.", []string{"constraint: Important…never edit vendor/."}},
		{"Going forward—we'll use SQLite.", []string{"decision: Going forward—we'll use SQLite."}},
		{"The migrations folder is off  limits.", []string{"constraint: The migrations folder is off limits."}},
		{"The API has to be kept stable.", []string{"constraint: The API has to be kept stable."}},
		{"SQLite,not Postgres.", []string{"decision: SQLite,not Postgres."}},
	}
	for _, tt := range tests {
		got := facts("user", tt.text)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("DetectFacts(user, %q)\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
}

func TestDetectFacts_Assistant(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"I'll use the streaming decoder from now on, it halves the memory.", []string{"decision: I'll use the streaming decoder from now on, it halves the memory."}},
		{"Decision: the cache stays in-process.", []string{"decision: Decision: the cache stays in-process."}},
		{"Change of plan: I'll port the lexer before the parser.", []string{"plan: Change of plan: I'll port the lexer before the parser."}},
		{"I'm going with pgx, not database/sql.", []string{"decision: I'm going with pgx, not database/sql."}},
		// The assistant's rules, its narration and its reading are not facts.
		{"You must never call Close twice.", nil},
		{"I'll read the file first.", nil},
		{"Let me run the tests.", nil},
		{"The function uses a mutex instead of a channel.", nil},
		{"I'll use grep to find the call sites.", nil},
		{"I'll use the Edit tool to fix the typo.", nil},
		{"I'll switch to the repo root and rerun the tests.", nil},
		{"Simple fix—I'll use a mutex from now on.", []string{"decision: Simple fix—I'll use a mutex from now on."}},
	}
	for _, tt := range tests {
		got := facts("assistant", tt.text)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("DetectFacts(assistant, %q)\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
	if got := facts("tool", "Never touch vendor/. We'll use SQLite from now on."); got != nil {
		t.Errorf("a tool turn stated %q", got)
	}
}

func TestDetectFacts_Redacted(t *testing.T) {
	got := facts("user", "never paste api_key=sk-live-0123456789abcdefghijklmnop into the logs")
	if len(got) != 1 || strings.Contains(got[0], "sk-live") || !strings.Contains(got[0], "[REDACTED]") {
		t.Errorf("got %q, want the constraint with the key redacted", got)
	}
}

// ledger plays texts as turns 0, 1, … (user turns unless prefixed "A:") through the Ledger and
// renders it as "seq kind text [replaced at N] [replaces: …]".
func ledger(texts ...string) []string {
	var l []kv.Fact
	for i, text := range texts {
		role := "user"
		if rest, ok := strings.CutPrefix(text, "A:"); ok {
			role, text = "assistant", rest
		}
		l = noteTurn(l, &kv.Turn{Seq: uint64(i), Role: role, Text: text})
	}
	var out []string
	for _, f := range l {
		s := fmt.Sprintf("%d %s %s", f.Seq, f.Kind, f.Text)
		if f.Replaced {
			s += fmt.Sprintf(" [replaced at %d]", f.ReplacedAt)
		}
		if f.Replaces != "" {
			s += " [replaces: " + f.Replaces + "]"
		}
		out = append(out, s)
	}
	return out
}

func TestLedger(t *testing.T) {
	tests := []struct {
		name  string
		turns []string
		want  []string
	}{
		{"a named replacement supersedes",
			[]string{"We'll use Postgres from now on.", "ok", "switch from Postgres to SQLite"},
			[]string{"0 decision We'll use Postgres from now on. [replaced at 2]", "2 plan switch from Postgres to SQLite [replaces: We'll use Postgres from now on.]"}},
		{"X, not Y supersedes a decision naming Y",
			[]string{"Let's go with logrus.", "A:I'll use zerolog, not logrus."},
			[]string{"0 decision Let's go with logrus. [replaced at 1]", "1 decision I'll use zerolog, not logrus. [replaces: Let's go with logrus.]"}},
		{"a change of plan naming nothing supersedes the previous one",
			[]string{"Change of plan: the CLI first.", "Change of plan: the API first after all."},
			[]string{"0 plan Change of plan: the CLI first. [replaced at 1]", "1 plan Change of plan: the API first after all. [replaces: Change of plan: the CLI first.]"}},
		{"a restatement keeps its first turn",
			[]string{"Never touch vendor/.", "fine", "never touch vendor/"},
			[]string{"0 constraint Never touch vendor/."}},
		{"a change within one turn supersedes what the same turn said first",
			[]string{"We'll use Postgres from now on. Actually, let's switch from Postgres to SQLite."},
			[]string{"0 decision We'll use Postgres from now on. [replaced at 0]", "0 plan Actually, let's switch from Postgres to SQLite. [replaces: We'll use Postgres from now on.]"}},
		{"a change of plan naming nothing and saying nothing of itself supersedes nothing",
			[]string{"Change of plan: the CLI first.", "Actually, let's do the API first."},
			[]string{"0 plan Change of plan: the CLI first.", "1 plan Actually, let's do the API first."}},
		{"constraints are never superseded by a decision",
			[]string{"Never touch vendor/.", "We'll use the vendor/ copy instead of the module."},
			[]string{"0 constraint Never touch vendor/.", "1 decision We'll use the vendor/ copy instead of the module."}},
	}
	for _, tt := range tests {
		if got := ledger(tt.turns...); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// A streamed message replaced in place as it grows takes back what it stated, and what it
// superseded holds again until the new text supersedes it anew.
func TestLedger_ReplacedTurn(t *testing.T) {
	var l []kv.Fact
	note := func(seq uint64, text string) {
		l = noteTurn(l, &kv.Turn{Seq: seq, Role: "user", Text: text})
	}
	note(0, "We'll use Postgres from now on.")
	note(1, "switch from Postgres to SQL")
	note(1, "switch from Postgres to SQLite. Never touch vendor/.")
	var got []string
	for _, f := range l {
		got = append(got, fmt.Sprintf("%d %s %q %v", f.Seq, f.Kind, f.Text, f.Replaced))
	}
	want := []string{`0 decision "We'll use Postgres from now on." true`, `1 plan "switch from Postgres to SQLite." false`, `1 constraint "Never touch vendor/." false`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// The ledger stays bounded, keeping the newest facts of each group.
func TestLedger_Bounded(t *testing.T) {
	var l []kv.Fact
	for i := range 100 {
		l = noteTurn(l, &kv.Turn{Seq: uint64(i), Role: "user", Text: fmt.Sprintf("Never touch dir%d/.", i)})
	}
	if len(l) != 16 || l[0].Text != "Never touch dir84/." || l[15].Text != "Never touch dir99/." {
		t.Errorf("got %d facts, %q … %q; want the newest 16", len(l), l[0].Text, l[len(l)-1].Text)
	}
}

// A turn stored again stays superseded by the later turn that superseded it, and a restated
// fact survives the restating turn being stored again (review findings).
func TestLedger_StoredAgain(t *testing.T) {
	note := func(l []kv.Fact, seq uint64, role, text string) []kv.Fact {
		return noteTurn(l, &kv.Turn{Seq: seq, Role: role, Text: text})
	}
	var l []kv.Fact
	l = note(l, 3, "assistant", "I'll use Postgres for the store.")
	l = note(l, 5, "user", "Use SQLite instead of Postgres.")
	l = note(l, 3, "assistant", "I'll use Postgres for the store. Starting now.")
	if inForce := inject.InForce(l, kv.FactDecision, kv.FactPlan); len(inForce) != 1 || !strings.Contains(inForce[0].Text, "SQLite") {
		t.Errorf("after turn 3 is stored again, in force: %+v; want the SQLite decision alone", inForce)
	}

	l = nil
	l = note(l, 3, "user", "Never touch vendor/.")
	l = note(l, 7, "user", "never touch vendor/")
	l = note(l, 7, "user", "never touch vendor/ unless the build breaks")
	var got []string
	for _, f := range inject.InForce(l, kv.FactConstraint) {
		got = append(got, fmt.Sprintf("%d %s", f.Seq, f.Text))
	}
	if want := []string{"3 Never touch vendor/.", "7 never touch vendor/ unless the build breaks"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("constraints: %q, want %q", got, want)
	}
}

// BenchmarkDetectFacts measures the ledger's work on one turn as ingest does it, under the
// store's write lock: a 32 KB prompt of prose, one of the same size with a fact in every tenth
// sentence, and an 8 KB reply.
func BenchmarkDetectFacts(b *testing.B) {
	prose := strings.Repeat("The parser reads each token and returns a node for the caller; the tests pass. ", 400)
	var withFacts strings.Builder
	for i := range 400 {
		if i%10 == 0 {
			withFacts.WriteString("Leave the vendored code alone. ")
			continue
		}
		withFacts.WriteString("The parser reads each token and returns a node for the caller. ")
	}
	reply := strings.Repeat("I read parse.go and the tests; the lexer keeps its state in a struct. ", 110)
	for _, c := range []struct{ name, role, text string }{
		{"prompt=32KB", "user", prose},
		{"prompt=32KB,facts", "user", withFacts.String()},
		{"reply=8KB", "assistant", reply},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				inject.DetectFacts(c.role, c.text)
			}
		})
	}
}

// noteTurn is what the store does with one stored turn: Detect, then Note.
func noteTurn(ledger []kv.Fact, t *kv.Turn) []kv.Fact {
	return inject.Ledger{}.Note(ledger, t, inject.Ledger{}.Detect(t))
}

// The files a tool changed are file facts, the latest change of each counting; FilesFirst puts
// them, most recently changed first, before the files only read.
func TestLedger_Files(t *testing.T) {
	var l []kv.Fact
	for i, turn := range []kv.Turn{
		{Role: "tool", Tool: "Edit", Files: []string{"a.go"}},
		{Role: "tool", Tool: "Read", Files: []string{"r.go"}},
		{Role: "tool", Tool: "write", Files: []string{"b.go", " "}},
		// An assistant turn with several calls names the first call's tool: not taken.
		{Role: "assistant", Tool: "Edit", Files: []string{"x.go", "y.go"}},
		{Role: "tool", Tool: "Bash", Text: "never touch vendor/", Files: []string{"c.go"}},
		{Role: "tool", Tool: "MultiEdit", Files: []string{"a.go"}},
		// A decision naming a file it replaces does not hide the file.
		{Role: "user", Text: "We'll use just from now on, instead of the b.go."},
	} {
		turn.Seq = uint64(i)
		l = noteTurn(l, &turn)
	}
	var got []string
	for _, f := range l {
		got = append(got, fmt.Sprintf("%d %s %s", f.Seq, f.Kind, f.Text))
	}
	if want := []string{"2 file b.go", "5 file a.go", "6 decision We'll use just from now on, instead of the b.go."}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ledger %q, want %q", got, want)
	}
	if got, want := inject.FilesFirst(l, []string{"r.go", "a.go"}), []string{"a.go", "b.go", "r.go", "a.go"}; !slices.Equal(got, want) {
		t.Errorf("FilesFirst = %q, want %q", got, want)
	}
}
