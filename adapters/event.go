// Package adapters holds the vocabulary every harness adapter speaks: the normalised Event, the
// normalised transcript Turn, and the small interfaces the proxy uses to decode hook calls and
// transcripts without knowing which harness they came from.
//
// Each harness lives in its own sub-package (adapters/claudecode, …) that imports only this
// package. Only main.go imports the sub-packages and hands them to the proxy.
package adapters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind names what a normalised Event means, independent of the harness it came from.
type Kind string

// The event kinds. A harness event that maps to none of them decodes to KindUnknown.
const (
	KindUnknown       Kind = "unknown"        // an event nothing handles; replied to with nothing
	KindSessionStart  Kind = "session_start"  // a session started, resumed, cleared or compacted (see Event.Source)
	KindPrompt        Kind = "prompt"         // the user submitted a prompt (Event.Prompt)
	KindSpawn         Kind = "spawn"          // the session asked for a sub-agent (Event.Spawn); not started yet
	KindSpawnResult   Kind = "spawn_result"   // the spawning tool call returned (Event.Result, Event.Spawn.ToolUseID)
	KindSubagentStart Kind = "subagent_start" // a sub-agent started (Event.AgentID, Event.AgentType)
	KindSubagentStop  Kind = "subagent_stop"  // a sub-agent stopped (Event.Result); see Event.IsCompaction
	KindToolUse       Kind = "tool_use"       // any other tool call, before it runs (Event.Tool)
	KindToolResult    Kind = "tool_result"    // any other tool call, after it ran (Event.Tool)
	KindPreCompact    Kind = "pre_compact"    // compaction is about to run (Event.Trigger, Event.Instructions)
	KindStop          Kind = "stop"           // the session finished a turn
	KindSessionEnd    Kind = "session_end"    // the session ended

	// Kinds from streaming harnesses (OpenCode, OpenClaw), whose events describe state changes.
	KindSessionUpdate  Kind = "session_update"  // a session's title or other metadata changed (Event.Title)
	KindSessionDeleted Kind = "session_deleted" // the harness deleted the session
	KindTurns          Kind = "turns"           // transcript records to upsert by Turn.ID (Event.Turns)
	KindCompacted      Kind = "compacted"       // a compaction finished: a new compaction epoch begins
	KindIdle           Kind = "idle"            // the session finished its work and waits for input
)

// Session start sources, as Claude Code names them in SessionStart.source.
const (
	SourceStartup = "startup"
	SourceResume  = "resume"
	SourceClear   = "clear"
	SourceCompact = "compact"
)

// Event is one harness event, normalised. Fields a kind does not use are zero.
type Event struct {
	Harness string // the harness that sent it: "claude-code", "opencode", "openclaw", "codex"
	// Scope is the memory scope the harness names for the session (OpenClaw: the agentId in its
	// session key). Empty means the configured scope.
	Scope string
	Kind  Kind   // what it means
	Name  string // the harness's own name for the event (Claude Code: hook_event_name)

	// SessionID is the harness-native id of the session the event belongs to. For Claude Code this
	// is always the top-level session, even for events a sub-agent caused.
	SessionID string
	// AgentID is the harness-native id of the sub-agent the event came from (a nested spawn) or is
	// about (SubagentStart/Stop). Empty for events of the top-level session.
	AgentID string
	// AgentType is the sub-agent's type (Claude Code agent_type). Empty with a non-empty AgentID on
	// SubagentStop means the compaction agent; see IsCompaction.
	AgentType string

	Cwd            string // the session's working directory, as the harness reported it
	TranscriptPath string // the session's transcript file, if the harness keeps one
	// AgentTranscriptPath is the sub-agent's own transcript file (SubagentStop).
	AgentTranscriptPath string

	// ParentSessionID is the parent session the harness names explicitly for SessionID
	// (OpenCode parentID, OpenClaw spawnedBy). Set only on session events; it always wins over
	// any pairing heirloom would otherwise do.
	ParentSessionID string
	// Depth is the session's sub-agent depth when the harness states it with ParentSessionID
	// (OpenClaw spawnDepth: 1 for a child of a top-level session); 0 means unknown, and the
	// parent's depth plus one is used.
	Depth     int
	Title     string // a human title for the session, when the harness gives one
	AgentName string // the agent the session runs as (OpenCode agent), when given
	// Turns are transcript records carried by the event itself (KindTurns); a record seen
	// again with the same Turn.ID replaces the earlier version (streamed text grows).
	Turns []Turn

	Source       string    // KindSessionStart: one of the Source* constants
	Prompt       string    // KindPrompt: the prompt text
	Spawn        *Spawn    // KindSpawn, KindSpawnResult: the spawning tool call
	Result       *Result   // KindSubagentStop, KindSpawnResult: what came back
	Tool         *ToolCall // KindToolUse, KindToolResult: the tool call
	Trigger      string    // KindPreCompact: "manual" or "auto"
	Instructions string    // KindPreCompact: the user's custom compaction instructions
	At           time.Time // when the adapter decoded it (zero: unknown)
}

// IsCompaction reports whether a SubagentStop belongs to the harness's internal compaction agent,
// which is not a real sub-agent and must not be recorded as one.
func (e Event) IsCompaction() bool {
	return e.Kind == KindSubagentStop && e.AgentID != "" && e.AgentType == ""
}

// Spawn is a request for a sub-agent, as the spawning tool call carried it.
type Spawn struct {
	ToolUseID string // the harness's id for the spawning tool call
	// ChildSessionID is the sub-agent's session when the harness names it in the spawn itself
	// (OpenCode task metadata.sessionId); then no pairing is needed.
	ChildSessionID string
	Description    string // the short description the parent gave
	Prompt         string // the task prompt: the sub-agent's objective
	Type           string // the sub-agent type asked for (Claude Code subagent_type)
}

// Result statuses heirloom sets itself; harnesses may report others ("completed", …).
const (
	StatusFailed      = "failed"      // the spawn or sub-agent failed
	StatusInterrupted = "interrupted" // the user or harness interrupted it
)

// Result is what a sub-agent (or its spawning tool call) returned.
type Result struct {
	AgentID    string // the sub-agent that produced it, when the harness says
	Status     string // the harness's status word ("completed", …); empty when unknown
	Text       string // the sub-agent's final message or tool result text
	Tokens     int64  // total tokens the sub-agent used; 0 when unknown
	DurationMs int64  // how long it ran; 0 when unknown
	// Steps is how many steps the sub-agent took when the harness says (Claude Code: its tool
	// calls, totalToolUseCount); 0 when unknown.
	Steps int
}

// ToolCall is a non-spawning tool call.
type ToolCall struct {
	Name  string   // the tool's name
	UseID string   // the harness's id for the call
	Files []string // file paths the call reads or writes, as given
}

// Turn is one normalised transcript record: a user prompt, an assistant message, or a tool call
// or result.
type Turn struct {
	ID    string    // the harness's id for the record, stable across re-reads; used to deduplicate
	Role  string    // "user", "assistant", "tool" or "system"
	Text  string    // the readable text; may be empty for a bare tool call
	Tool  string    // the tool's name, for tool calls and results
	Files []string  // file paths the record's tool calls touched
	At    time.Time // when the harness wrote it; zero when the record has no time
}

// Hooks decodes one harness's hook calls and encodes its replies.
type Hooks interface {
	// Harness names the harness, as in Event.Harness.
	Harness() string
	// Decode turns one hook call's body into an Event. Bad input returns an error wrapping
	// ErrMalformed; an event the adapter does not know decodes to KindUnknown, not an error.
	Decode(body []byte) (Event, error)
	// Reply encodes heirloom's answer to ev: context for the model, and a refusal of the action
	// ev is about when the event can refuse one. The zero Answer yields the harness's empty
	// reply ("{}" for Claude Code).
	Reply(ev Event, a Answer) []byte
}

// Transcripts parses one harness's transcript files.
type Transcripts interface {
	// ParseTranscript parses complete records from the start of chunk and returns their turns and
	// how many bytes it consumed. A trailing partial record is left unconsumed unless atEOF says the
	// file ends there. Records it does not understand are consumed and skipped; it never fails.
	ParseTranscript(chunk []byte, atEOF bool) (turns []Turn, consumed int)
}

// ParseLines is how a Transcripts adapter of a JSONL transcript parses a chunk: the complete
// lines at its start, each given to parse (without its "\n"), a last line without "\n" only
// when atEOF says the file ends there. It returns the turns parse yielded and the bytes
// consumed. Each line stands alone, so a file parsed in pieces yields the turns of the whole.
func ParseLines(chunk []byte, atEOF bool, parse func(line []byte) (Turn, bool)) ([]Turn, int) {
	var turns []Turn
	consumed := 0
	for consumed < len(chunk) {
		line, next := chunk[consumed:], len(chunk)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], consumed+i+1
		} else if !atEOF {
			break
		}
		consumed = next
		if t, ok := parse(line); ok {
			turns = append(turns, t)
		}
	}
	return turns, consumed
}

// ErrMalformed is wrapped by every decoding error caused by bad input. Bad input is permanent:
// answer, count it, never retry.
var ErrMalformed = errors.New("malformed input")

// Malformed returns an error wrapping ErrMalformed that says what was wrong.
func Malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// MaxIDBytes bounds a session or agent id a harness sends: every id heirloom has seen is well
// under it (a Claude Code session id is 36 bytes, an OpenClaw key under 150).
const MaxIDBytes = 512

// CheckID says what is wrong with a session or agent id a harness sent, as an error wrapping
// ErrMalformed naming field; nil for a usable one, and for "" (whether one is needed is the
// caller's to say). See IDProblem.
func CheckID(field, id string) error {
	if why := IDProblem(id); why != "" {
		return Malformed("%s: %s", field, why)
	}
	return nil
}

// IDProblem says what keeps id from being a session, agent or run id, "" when nothing does (and
// for ""): an id must be valid UTF-8 (no U+FFFD either, the mark of bytes that were not), at
// most MaxIDBytes, and hold no control character. heirloom keys its records by it and shows it
// in tables.
func IDProblem(id string) string {
	switch {
	case id == "":
		return ""
	case !utf8.ValidString(id) || strings.ContainsRune(id, utf8.RuneError):
		// A JSON decoder turns invalid UTF-8 into U+FFFD: no id a harness makes holds one.
		return "not valid UTF-8"
	case len(id) > MaxIDBytes:
		return fmt.Sprintf("%d bytes, over the %d an id may have", len(id), MaxIDBytes)
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return "holds a control character"
	}
	return ""
}

// CheckIDs checks every id the events name with CheckID: each one's session, sub-agent and
// parent, the spawning call and child a spawn names, and the sub-agent a result names; it
// returns the first problem. heirloom keys sessions and runs by these ids, so an event naming
// one no record may have is dropped whole, however it arrived (a stream is no request: its
// client logs and counts the drop).
func CheckIDs(evs ...Event) error {
	for _, ev := range evs {
		ids := [...]struct{ field, id string }{
			{"session id", ev.SessionID}, {"agent id", ev.AgentID}, {"parent session id", ev.ParentSessionID},
			{"spawn call id", spawnField(ev.Spawn, false)}, {"spawn child session id", spawnField(ev.Spawn, true)},
			{"result agent id", resultAgent(ev.Result)},
		}
		for _, f := range ids {
			if err := CheckID(ev.Name+": "+f.field, f.id); err != nil {
				return err
			}
		}
	}
	return nil
}

func spawnField(s *Spawn, child bool) string {
	switch {
	case s == nil:
		return ""
	case child:
		return s.ChildSessionID
	}
	return s.ToolUseID
}

func resultAgent(r *Result) string {
	if r == nil {
		return ""
	}
	return r.AgentID
}

// SubagentMeta is what a harness records about a sub-agent beside the sub-agent's transcript
// (Claude Code: agent-<id>.meta.json). It appears during the run, not at its start.
type SubagentMeta struct {
	AgentType   string // the sub-agent's type
	Description string // the spawn's description
	ToolUseID   string // the spawning tool call's id: confirms which spawn started this sub-agent
	SpawnDepth  int    // 1 for a child of a top-level session, 2 for a grandchild, …
	// ParentID is the harness-native id of the thread that spawned the sub-agent, when the
	// harness records it (Codex: session_meta's parent_thread_id, the root's id for a child of
	// the root); "" when it does not. It is exact, and wins over any pairing.
	ParentID string
	// ThreadID is the sub-agent's own harness-native id as the metadata names it, "" when it
	// does not: a metadata file naming another sub-agent than the one asked about is ignored.
	ThreadID string
}

// SubagentMetas reads the sub-agent metadata files a harness keeps.
type SubagentMetas interface {
	// SubagentMetaPath returns where the metadata of the sub-agent whose transcript is at
	// agentTranscriptPath lives; "" when the harness keeps none.
	SubagentMetaPath(agentTranscriptPath string) string
	// ParseSubagentMeta decodes a metadata file. Bad input returns an error wrapping ErrMalformed.
	ParseSubagentMeta(b []byte) (SubagentMeta, error)
	// SubagentTranscriptPath returns where the harness writes the transcript of sub-agent agentID
	// of the session whose transcript is at transcriptPath; "" when it cannot say.
	SubagentTranscriptPath(transcriptPath, agentID string) string
}

// Sink takes the events a streaming adapter decodes (OpenCode's SSE stream, OpenClaw's gateway).
// Consume returns when the event is durable; an error is logged by the caller and the stream
// goes on (the next resync repairs what was lost).
type Sink interface {
	Consume(ctx context.Context, ev Event) error
}
