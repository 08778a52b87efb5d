package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// CommandHooks returns a settings.json "hooks" object that runs, for each
// event name in commands, its command line as a command hook matching every
// tool ("matcher": "").
func CommandHooks(commands map[string]string) map[string]any {
	hooks := make(map[string]any, len(commands))
	for event, command := range commands {
		hooks[event] = []any{map[string]any{
			"matcher": "",
			"hooks":   []any{map[string]any{"type": "command", "command": command}},
		}}
	}
	return hooks
}

// HookRecorder is a command hook, a small shell script in a temp dir, that
// appends every call (event name and the JSON payload from stdin) to a log
// and prints a canned reply per event, `{}` by default.
type HookRecorder struct {
	dir string
}

// HookCall is one recorded hook call.
type HookCall struct {
	Event string
	// Payload is the JSON Claude Code wrote to the hook's stdin.
	Payload json.RawMessage
}

// Field returns the string field name of the payload, "" when absent or not
// a string.
func (c HookCall) Field(name string) string {
	var m map[string]any
	if json.Unmarshal(c.Payload, &m) != nil {
		return ""
	}
	s, _ := m[name].(string)
	return s
}

const recorderScript = `#!/bin/sh
# Test hook: logs "EVENT<TAB>payload" as one line, prints reply-EVENT.json or {}.
d=$(dirname "$0")
p=$(tr '\n' ' ')
printf '%s\t%s\n' "$1" "$p" >> "$d/calls.log"
if [ -f "$d/reply-$1.json" ]; then cat "$d/reply-$1.json"; else printf '{}\n'; fi
`

var eventName = regexp.MustCompile(`^[A-Za-z]+$`)

// NewHookRecorder writes the hook script into a new temp dir of tb. replies
// maps event names to the JSON the hook prints for them.
func NewHookRecorder(tb testing.TB, replies map[string]string) *HookRecorder {
	tb.Helper()
	h := &HookRecorder{dir: tb.TempDir()}
	if err := os.WriteFile(filepath.Join(h.dir, "hook.sh"), []byte(recorderScript), 0o755); err != nil {
		tb.Fatalf("write hook script: %v", err)
	}
	for event, reply := range replies {
		if !eventName.MatchString(event) {
			tb.Fatalf("hook event name %q: want letters only", event)
		}
		if !json.Valid([]byte(reply)) {
			tb.Fatalf("reply for hook %s is not JSON: %s", event, reply)
		}
		if err := os.WriteFile(filepath.Join(h.dir, "reply-"+event+".json"), []byte(reply+"\n"), 0o644); err != nil {
			tb.Fatalf("write reply for hook %s: %v", event, err)
		}
	}
	return h
}

// Command returns the command line that records a call of event.
func (h *HookRecorder) Command(event string) string {
	return "/bin/sh " + shellQuote(filepath.Join(h.dir, "hook.sh")) + " " + shellQuote(event)
}

// Settings returns a settings.json object whose hooks record each of events.
func (h *HookRecorder) Settings(events ...string) map[string]any {
	commands := make(map[string]string, len(events))
	for _, e := range events {
		commands[e] = h.Command(e)
	}
	return map[string]any{"hooks": CommandHooks(commands)}
}

// Calls returns the recorded calls in the order they happened; nil before
// the first. It fails tb on an unreadable log.
func (h *HookRecorder) Calls(tb testing.TB) []HookCall {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(h.dir, "calls.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		tb.Fatalf("read hook log: %v", err)
	}
	var calls []HookCall
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		event, payload, ok := strings.Cut(sc.Text(), "\t")
		if !ok || !json.Valid([]byte(payload)) {
			tb.Fatalf("hook log line %d is not EVENT<TAB>JSON: %.200q", len(calls)+1, sc.Text())
		}
		calls = append(calls, HookCall{Event: event, Payload: json.RawMessage(payload)})
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("scan hook log: %v", err)
	}
	return calls
}

// Events returns the event names of calls, in order.
func Events(calls []HookCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Event
	}
	return out
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
