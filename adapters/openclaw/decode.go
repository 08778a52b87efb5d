package openclaw

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
)

// Harness is OpenClaw's name in adapters.Event.Harness.
const Harness = "openclaw"

// The Gateway events DecodeEvent maps to events. Every other event (agent streams other than
// lifecycle and compaction, chat, tick, health, presence, connect.challenge, …) decodes to none.
const (
	eventSessionsChanged  = "sessions.changed"
	eventSessionMessage   = "session.message"
	eventSessionTool      = "session.tool"
	eventSessionOperation = "session.operation"
	eventTask             = "task"
	eventAgent            = "agent"
)

// Names DecodeSessionList and DecodeSessionDescribe give their events: the methods whose results
// they read.
const (
	NameSessionsList     = "sessions.list"
	NameSessionsDescribe = "sessions.describe"
)

// sessions.changed reasons with a meaning of their own; the Gateway uses many more ("send",
// "patch", "agent.run.started", …), all of which are updates.
const (
	reasonCreate  = "create"
	reasonDelete  = "delete"  // sessions.delete; carries the removed generation's sessionId, no row
	reasonReset   = "reset"   // sessions.reset: a new generation under the same key
	reasonNew     = "new"     // sessions.reset with reason "new"
	reasonCompact = "compact" // sessions.compact finished; compacted says whether it compacted
)

// Tools the decoder looks into.
const (
	toolSessionsSpawn = "sessions_spawn" // starts a sub-agent session
	// toolSearchCall is the tool a model calls under tool search: {"id": <tool>, "args": {…}}.
	toolSearchCall = "tool_call"
	// toolBash names the turn of a command the user ran with "!" (a bashExecution message).
	toolBash = "bash"
)

// spawnAccepted is the status of a sessions_spawn receipt whose child was started.
const spawnAccepted = "accepted"

// MaxToolText bounds, in bytes, the text of a tool turn and of each tool call or result summed
// up in a message's text. A longer rendering is cut at a rune boundary and ends with a marker
// saying how much was dropped.
const MaxToolText = 4096

// injectedHeadings open the blocks heirloom itself gives OpenClaw. The plugin puts them in the
// system prompt, so they should never come back as transcript; a turn that opens with one is
// dropped all the same, so heirloom never records its own text as the session's.
var injectedHeadings = [...]string{
	"## Inherited from Parent Session",
	"[Objective Reinforcement]",
	"## Recovered Session Checkpoint",
}

// DecodeEvent turns the payload of one Gateway event frame named event into zero or more
// events. Every event has Harness "openclaw", SessionID the session key it belongs to, Scope the
// agentId of that key ("" when the key does not parse), and Name the wire event name, with
// ":"+reason, phase or stream detail where that says more. At is the frame's time when it
// carries one ("ts", else the record's own time), zero otherwise.
//
// It returns an error wrapping adapters.ErrMalformed when payload is not a JSON object, is an
// event listed below without the session key it must carry (sessions.changed and agent events
// may lack one: they then decode to nothing), or names a key or id no record may have (see
// adapters.CheckIDs). Fields of an unexpected JSON type are left zero
// rather than failing the frame. An event not listed decodes to nothing and no error.
//
//   - sessions.changed → KindSessionStart for reason "create" (and, with Source "clear", for
//     "reset" and "new"), KindSessionDeleted for "delete", KindCompacted for "compact" with
//     compacted true, else KindSessionUpdate (lifecycle and transcript receipts, "send",
//     "patch", …). The row is the nested session object, else the top-level fields:
//     ParentSessionID is spawnedBy, else parentSessionKey; Title label, else displayName, else
//     derivedTitle; Cwd workspaceDir, else spawnedCwd, else spawnedWorkspaceDir; AgentName
//     subagentRole. A change without a session key (a list-wide invalidation) yields nothing.
//   - session.message → KindTurns with the message's turn, Turn.ID its messageId (else
//     __openclaw.id, else its idempotencyKey), Turn.At its timestamp: "user", "assistant" (its text, then one line per tool call), "tool" for a
//     toolResult, a bashExecution or a custom message holding tool calls or results, "system"
//     for another custom message and for compaction and branch summaries. Hidden custom messages
//     (display false), thinking, blank messages and heirloom's own blocks yield no turn. A
//     sessions_spawn result in the message also yields the spawn (see below); the custom
//     message OpenClaw writes for a nested call carries call and result, so that spawn has the
//     task (Spawn.Prompt) and label (Spawn.Description) too.
//   - session.tool → KindTurns with a "tool" turn per call start and result, Turn.ID
//     toolCallId+":"+phase; progress updates yield nothing. Turn.Tool is the real tool (the
//     "tool_call" of tool search is looked through); a start's Text is its arguments as one
//     line of JSON, its Files the paths they name; a result's Text is what the tool returned.
//     The call a tool search call makes (parentToolCallId set) yields no turn of its own: the
//     tool search call's turns and the custom message OpenClaw writes for it record it. A
//     sessions_spawn result naming its child, nested or not, also yields the spawn.
//   - task of kind or runtime "subagent" → KindSpawn (queued, running) or KindSpawnResult
//     (completed; failed, timed_out and lost as adapters.StatusFailed; cancelled as
//     adapters.StatusInterrupted) in the requesting session, Spawn.Description the task's
//     title. Result.Text is the task's result, else its progress summary unless the Gateway cut
//     it (then the lifecycle end below has the whole reply), else, for a failure, its error.
//     Other tasks (kind "cli": a session's own run) yield nothing.
//   - agent, stream lifecycle, phase "end" (or a settled "error") → KindIdle for the session,
//     preceded, for a sub-agent (spawnedBy set), by KindSpawnResult in the spawning session
//     with the run's visible final reply and its outcome. A run that paused to wait for its own
//     children, or that a Gateway restart interrupted (it resumes), yields nothing.
//   - agent, stream compaction → KindPreCompact (Trigger "auto") at phase "start",
//     KindCompacted at an "end" that completed: compactions inside a run.
//   - session.operation "compact" → KindPreCompact (Trigger "manual") at phase "start". Its end
//     yields nothing: the sessions.changed "compact" the Gateway sends with it marks the new
//     epoch, so a compaction counts once.
//
// Every spawn follows one convention: Spawn.ToolUseID (the run id) and Spawn.ChildSessionID are
// both the child's session key, and Result.AgentID is too, so the tool call, the task and the
// child's lifecycle all land in the same run. A sessions_spawn receipt yields KindSpawn when its
// status is "accepted", and KindSpawnResult with adapters.StatusFailed when the call failed
// after naming a child ("error", "forbidden"); a receipt without a child yields nothing.
func DecodeEvent(event string, payload json.RawMessage) ([]adapters.Event, error) {
	var decode func(json.RawMessage) ([]adapters.Event, error)
	switch event {
	case eventSessionsChanged:
		decode = decodeSessionsChanged
	case eventSessionMessage:
		decode = decodeSessionMessage
	case eventSessionTool:
		decode = decodeSessionTool
	case eventSessionOperation:
		decode = decodeSessionOperation
	case eventTask:
		decode = decodeTask
	case eventAgent:
		decode = decodeAgent
	default:
		return nil, nil
	}
	evs, err := decode(payload)
	if err != nil {
		return nil, err
	}
	if err := adapters.CheckIDs(evs...); err != nil {
		return nil, err // stored as nothing: the client logs and counts the frame as malformed
	}
	return evs, nil
}

// newEvent returns an event of kind for session key, named name.
func newEvent(kind adapters.Kind, name, key string, at time.Time) adapters.Event {
	return adapters.Event{Harness: Harness, Scope: keyScope(key), Kind: kind, Name: name, SessionID: key, At: at}
}

// keyScope returns the memory scope of a session key: its agentId, "" when it does not parse.
func keyScope(key string) string {
	k, err := ParseSessionKey(key)
	if err != nil {
		return ""
	}
	return k.AgentID
}

// joinLines joins the non-blank strings of ss with newlines.
func joinLines(ss ...string) string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

// firstByte returns b's first non-blank byte, 0 for none.
func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func isString(b []byte) bool { return firstByte(b) == '"' }

// isNull reports whether b is absent or JSON null.
func isNull(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || string(b) == "null"
}
