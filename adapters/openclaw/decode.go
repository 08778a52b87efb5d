package openclaw

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/toolinput"
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
// It returns an error wrapping adapters.ErrMalformed when payload is not a JSON object, or is an
// event listed below without the session key it must carry (sessions.changed and agent events
// may lack one: they then decode to nothing). Fields of an unexpected JSON type are left zero
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
	switch event {
	case eventSessionsChanged:
		return decodeSessionsChanged(payload)
	case eventSessionMessage:
		return decodeSessionMessage(payload)
	case eventSessionTool:
		return decodeSessionTool(payload)
	case eventSessionOperation:
		return decodeSessionOperation(payload)
	case eventTask:
		return decodeTask(payload)
	case eventAgent:
		return decodeAgent(payload)
	}
	return nil, nil
}

// DecodeSessionList turns the result of sessions.list ({sessions: [row, …], …}), or of
// sessions.subscribe called with list parameters ({subscribed, list: {sessions, …}}), into one
// KindSessionStart event per session, named NameSessionsList, with the fields DecodeEvent
// gives a sessions.changed row and At the session's creation time. Parents come before their
// children; otherwise the result's order is kept. Rows that are not objects or have no key are
// skipped. A bare subscription acknowledgement ({subscribed: true}) yields nothing.
//
// It returns an error wrapping adapters.ErrMalformed when result is not a JSON object, or has
// no sessions array.
func DecodeSessionList(result json.RawMessage) ([]adapters.Event, error) {
	var l SessionList
	if err := adapters.DecodeObject(NameSessionsList+" result", result, &l); err != nil {
		return nil, err
	}
	if isNull(l.Sessions) && adapters.IsObject(l.List) {
		var inner SessionList
		adapters.UnmarshalObject(l.List, &inner)
		l.Sessions, l.Ts = inner.Sessions, inner.Ts
	}
	if isNull(l.Sessions) {
		if l.Subscribed {
			return nil, nil
		}
		return nil, adapters.Malformed("%s result: sessions missing", NameSessionsList)
	}
	var elems []json.RawMessage
	if !adapters.IsArray(l.Sessions) || json.Unmarshal(l.Sessions, &elems) != nil {
		return nil, adapters.Malformed("%s result: sessions not an array", NameSessionsList)
	}
	rows := make([]SessionRow, 0, len(elems))
	for _, raw := range elems {
		var row SessionRow
		if adapters.DecodeObject("session", raw, &row) == nil && row.Key != "" {
			rows = append(rows, row)
		}
	}
	parentsFirst(rows)
	evs := make([]adapters.Event, 0, len(rows))
	for _, row := range rows {
		evs = append(evs, sessionEvent(adapters.KindSessionStart, NameSessionsList, row.Key, row,
			cmp.Or(row.CreatedAt, row.UpdatedAt, l.Ts).Time()))
	}
	return evs, nil
}

// DecodeSessionDescribe turns the result of sessions.describe ({session: row}) into the
// session's KindSessionStart event, named NameSessionsDescribe, with the fields DecodeEvent
// gives a sessions.changed row and At the session's creation time. {session: null}, the answer
// for a session the Gateway does not know, yields nothing.
//
// It returns an error wrapping adapters.ErrMalformed when result is not a JSON object, or its
// session is neither null nor an object with a key.
func DecodeSessionDescribe(result json.RawMessage) ([]adapters.Event, error) {
	var d SessionDescription
	if err := adapters.DecodeObject(NameSessionsDescribe+" result", result, &d); err != nil {
		return nil, err
	}
	if isNull(d.Session) {
		return nil, nil
	}
	var row SessionRow
	if err := adapters.DecodeObject(NameSessionsDescribe+" session", d.Session, &row); err != nil {
		return nil, err
	}
	if row.Key == "" {
		return nil, adapters.Malformed("%s session: key missing, empty or not a string", NameSessionsDescribe)
	}
	return []adapters.Event{sessionEvent(adapters.KindSessionStart, NameSessionsDescribe, row.Key, row,
		cmp.Or(row.CreatedAt, row.UpdatedAt).Time())}, nil
}

// decodeSessionsChanged maps a sessions.changed payload; see DecodeEvent.
func decodeSessionsChanged(payload json.RawMessage) ([]adapters.Event, error) {
	var p SessionsChanged
	if err := adapters.DecodeObject(eventSessionsChanged+" payload", payload, &p); err != nil {
		return nil, err
	}
	row := p.SessionRow
	if p.Session != nil {
		// A nested row is a complete snapshot: where it omits a fact, the fact is gone.
		row = *p.Session
	}
	key := cmp.Or(p.SessionKey, row.Key)
	if key == "" {
		return nil, nil
	}
	name := eventSessionsChanged
	if detail := cmp.Or(p.Reason, p.Phase); detail != "" {
		name += ":" + detail
	}
	ev := sessionEvent(adapters.KindSessionUpdate, name, key, row, p.Ts.Time())
	switch p.Reason {
	case reasonCreate:
		ev.Kind = adapters.KindSessionStart
	case reasonReset, reasonNew:
		ev.Kind, ev.Source = adapters.KindSessionStart, adapters.SourceClear
	case reasonDelete:
		ev.Kind = adapters.KindSessionDeleted
	case reasonCompact:
		if p.Compacted {
			ev.Kind = adapters.KindCompacted
		}
	}
	return []adapters.Event{ev}, nil
}

// decodeSessionMessage maps a session.message payload; see DecodeEvent.
func decodeSessionMessage(payload json.RawMessage) ([]adapters.Event, error) {
	var p SessionMessage
	if err := adapters.DecodeObject(eventSessionMessage+" payload", payload, &p); err != nil {
		return nil, err
	}
	if p.SessionKey == "" {
		return nil, adapters.Malformed("%s: sessionKey missing, empty or not a string", eventSessionMessage)
	}
	var evs []adapters.Event
	if t, ok := messageTurn(p.MessageID, p.Message); ok {
		ev := newEvent(adapters.KindTurns, eventSessionMessage, p.SessionKey, t.At)
		ev.Turns = []adapters.Turn{t}
		evs = append(evs, ev)
	}
	return append(evs, messageSpawns(p.SessionKey, p.Message)...), nil
}

// decodeSessionTool maps a session.tool payload; see DecodeEvent.
func decodeSessionTool(payload json.RawMessage) ([]adapters.Event, error) {
	var p SessionTool
	if err := adapters.DecodeObject(eventSessionTool+" payload", payload, &p); err != nil {
		return nil, err
	}
	d := p.Data
	if p.SessionKey == "" || d.ToolCallID == "" {
		return nil, adapters.Malformed("%s: sessionKey or data.toolCallId missing, empty or not a string", eventSessionTool)
	}
	if d.Phase != "start" && d.Phase != "result" {
		return nil, nil
	}
	name := eventSessionTool + ":" + d.Phase
	tool, args := resolveCall(d.Name, d.Args)
	t := adapters.Turn{ID: d.ToolCallID + ":" + d.Phase, Role: "tool", Tool: tool, At: p.Ts.Time()}
	if d.Phase == "start" {
		t.Text, t.Files = toolinput.Summary(args), toolinput.Files(args)
	} else {
		var r ToolResult
		adapters.UnmarshalObject(d.Result, &r)
		t.Tool = resolveResultName(d.Name, r.Details)
		t.Text = toolResultText(d.Result, d.IsError)
	}
	var evs []adapters.Event
	if d.ParentToolCallID == "" {
		ev := newEvent(adapters.KindTurns, name, p.SessionKey, t.At)
		ev.Turns = []adapters.Turn{t}
		evs = append(evs, ev)
	}
	if d.Phase == "result" && t.Tool == toolSessionsSpawn {
		if r, ok := findReceipt(d.Result, 0); ok {
			evs = append(evs, spawnEvents(name, p.SessionKey, r, SpawnArgs{}, t.At)...)
		}
	}
	return evs, nil
}

// decodeSessionOperation maps a session.operation payload; see DecodeEvent.
func decodeSessionOperation(payload json.RawMessage) ([]adapters.Event, error) {
	var p SessionOperation
	if err := adapters.DecodeObject(eventSessionOperation+" payload", payload, &p); err != nil {
		return nil, err
	}
	if p.SessionKey == "" {
		return nil, adapters.Malformed("%s: sessionKey missing, empty or not a string", eventSessionOperation)
	}
	if p.Operation != reasonCompact || p.Phase != "start" {
		return nil, nil
	}
	ev := newEvent(adapters.KindPreCompact, eventSessionOperation+":compact.start", p.SessionKey, p.Ts.Time())
	ev.Trigger = "manual"
	return []adapters.Event{ev}, nil
}

// decodeTask maps a task payload; see DecodeEvent.
func decodeTask(payload json.RawMessage) ([]adapters.Event, error) {
	var p TaskEvent
	if err := adapters.DecodeObject(eventTask+" payload", payload, &p); err != nil {
		return nil, err
	}
	if p.Action != "upserted" {
		return nil, nil
	}
	if p.Task == nil {
		return nil, adapters.Malformed("%s: upserted without a task object", eventTask)
	}
	t := *p.Task
	parent, child := cmp.Or(t.SessionKey, t.OwnerKey), t.ChildSessionKey
	if t.Kind != "subagent" && t.Runtime != "subagent" || parent == "" || child == "" || child == parent {
		return nil, nil
	}
	sp := &adapters.Spawn{ToolUseID: child, ChildSessionID: child, Description: t.Title, Prompt: t.Prompt}
	name := eventTask + ":" + t.Status
	var ev adapters.Event
	switch t.Status {
	case "queued", "running":
		ev = newEvent(adapters.KindSpawn, name, parent, cmp.Or(t.StartedAt, t.CreatedAt, t.UpdatedAt).Time())
	case "completed", "failed", "timed_out", "lost", "cancelled":
		ev = newEvent(adapters.KindSpawnResult, name, parent, cmp.Or(t.EndedAt, t.UpdatedAt).Time())
		ev.Result = taskResult(t)
	default:
		return nil, nil
	}
	ev.Spawn = sp
	return []adapters.Event{ev}, nil
}

// taskResult reads what a finished sub-agent task returned.
func taskResult(t TaskSummary) *adapters.Result {
	r := &adapters.Result{AgentID: t.ChildSessionKey, Status: "completed"}
	switch t.Status {
	case "failed", "timed_out", "lost":
		r.Status = adapters.StatusFailed
	case "cancelled":
		r.Status = adapters.StatusInterrupted
	}
	r.Text = t.Result
	if r.Text == "" && !cutSummary(t.ProgressSummary) {
		r.Text = t.ProgressSummary
	}
	if r.Text == "" && r.Status != "completed" {
		r.Text = cmp.Or(t.Error, t.TerminalSummary)
	}
	r.DurationMs = duration(t.StartedAt, t.EndedAt)
	return r
}

// cutSummary reports whether a task summary is one the Gateway cut to 120 characters and marked
// with a trailing "…".
func cutSummary(s string) bool {
	return strings.HasSuffix(s, "…") && utf8.RuneCountInString(s) >= 100
}

// decodeAgent maps an agent payload; see DecodeEvent.
func decodeAgent(payload json.RawMessage) ([]adapters.Event, error) {
	var p AgentEvent
	if err := adapters.DecodeObject(eventAgent+" payload", payload, &p); err != nil {
		return nil, err
	}
	if p.SessionKey == "" {
		return nil, nil
	}
	switch p.Stream {
	case "lifecycle":
		return lifecycleEvents(p), nil
	case "compaction":
		return compactionEvents(p), nil
	}
	return nil, nil
}

// lifecycleEvents returns the events of a run's terminal lifecycle event: its sub-agent result
// and the session's idleness.
func lifecycleEvents(p AgentEvent) []adapters.Event {
	d := p.Data
	terminal := d.Phase == "end" || d.Phase == "error" && d.ExecutionSettled
	waiting := d.Yielded && d.LivenessState == "paused"
	if !terminal || waiting || d.StopReason == "restart" {
		return nil
	}
	name := eventAgent + ":lifecycle." + d.Phase
	at := cmp.Or(d.EndedAt, p.Ts).Time()
	var evs []adapters.Event
	if parent, child := p.SpawnedBy, p.SessionKey; parent != "" && parent != child {
		ev := newEvent(adapters.KindSpawnResult, name, parent, at)
		ev.Spawn = &adapters.Spawn{ToolUseID: child, ChildSessionID: child}
		ev.Result = &adapters.Result{AgentID: child, Status: lifecycleStatus(d), DurationMs: duration(d.StartedAt, d.EndedAt)}
		if d.TerminalReply.Disposition == "" || d.TerminalReply.Disposition == "visible" {
			ev.Result.Text = d.TerminalReply.Text
		}
		if ev.Result.Text == "" && ev.Result.Status != "completed" {
			ev.Result.Text = d.Error
		}
		evs = append(evs, ev)
	}
	return append(evs, newEvent(adapters.KindIdle, name, p.SessionKey, at))
}

// lifecycleStatus classifies a terminal lifecycle event as OpenClaw does: a timeout or failure
// is adapters.StatusFailed, a cancellation adapters.StatusInterrupted, anything else
// "completed".
func lifecycleStatus(d AgentData) string {
	status := strings.ToLower(d.Status)
	liveness := strings.ToLower(d.LivenessState)
	switch {
	case d.StopReason == "timeout" || d.TimeoutPhase != "" || status == "timeout" || status == "timed_out":
		return adapters.StatusFailed
	case liveness == "blocked":
		return adapters.StatusFailed
	case d.Aborted || d.StopReason == "superseded" || slices.Contains([]string{"cancelled", "canceled", "aborted", "superseded"}, status):
		return adapters.StatusInterrupted
	case d.Phase == "error" || d.StopReason == "error" || status == "error" || status == "failed" || liveness == "abandoned":
		return adapters.StatusFailed
	}
	return "completed"
}

// compactionEvents returns the events of a compaction inside a run.
func compactionEvents(p AgentEvent) []adapters.Event {
	name := eventAgent + ":compaction." + p.Data.Phase
	switch {
	case p.Data.Phase == "start":
		ev := newEvent(adapters.KindPreCompact, name, p.SessionKey, p.Ts.Time())
		ev.Trigger = "auto"
		return []adapters.Event{ev}
	case p.Data.Phase == "end" && p.Data.Completed:
		return []adapters.Event{newEvent(adapters.KindCompacted, name, p.SessionKey, p.Ts.Time())}
	}
	return nil
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

// sessionEvent describes session key from its row.
func sessionEvent(kind adapters.Kind, name, key string, row SessionRow, at time.Time) adapters.Event {
	ev := newEvent(kind, name, key, at)
	ev.Title = cmp.Or(row.Label, row.DisplayName, row.DerivedTitle)
	ev.Cwd = cmp.Or(row.WorkspaceDir, row.SpawnedCwd, row.SpawnedWorkspaceDir)
	ev.AgentName = row.SubagentRole
	if parent := rowParent(row); parent != "" && parent != key {
		ev.ParentSessionID, ev.Depth = parent, row.SpawnDepth
	}
	return ev
}

// rowParent is the session that spawned the row's session: spawnedBy. A row's
// parentSessionKey alone is not lineage: OpenClaw also sets it on forks and on the successor
// of a /new rollover (a navigation parent), which inherit nothing from it.
func rowParent(row SessionRow) string {
	return row.SpawnedBy
}

// maxDepth bounds how far parentsFirst follows parent links.
const maxDepth = 64

// parentsFirst orders rows so that a parent comes before its children, keeping the order
// otherwise.
func parentsFirst(rows []SessionRow) {
	parent := make(map[string]string, len(rows))
	for _, r := range rows {
		parent[r.Key] = rowParent(r)
	}
	depth := make(map[string]int, len(rows))
	for _, r := range rows {
		d := 0
		for id := parent[r.Key]; id != "" && id != r.Key && d < maxDepth; id = parent[id] {
			d++
		}
		depth[r.Key] = d
	}
	slices.SortStableFunc(rows, func(a, b SessionRow) int { return depth[a.Key] - depth[b.Key] })
}

// messageTurn returns the transcript turn of a message; ok is false for a message that makes
// none (no id, a role it does not know, hidden, blank, or heirloom's own text).
func messageTurn(id string, m TranscriptMessage) (t adapters.Turn, ok bool) {
	t = adapters.Turn{ID: cmp.Or(id, m.OpenClaw.ID, m.IdempotencyKey), At: m.Timestamp.Time()}
	if t.ID == "" {
		return t, false
	}
	r := renderContent(m.Content)
	switch m.Role {
	case "user":
		t.Role, t.Text = "user", r.text()
	case "assistant":
		t.Role, t.Text, t.Tool, t.Files = "assistant", r.text(), r.tool, r.files
		if t.Text == "" && m.ErrorMessage != "" {
			t.Text = "error: " + m.ErrorMessage
		}
	case "toolResult":
		t.Role, t.Tool = "tool", resolveResultName(m.ToolName, m.Details)
		t.Text = resultSummary(contentText(m.Content), m.IsError)
	case "custom":
		if m.Display != nil && !*m.Display {
			return t, false
		}
		t.Role, t.Text, t.Tool, t.Files = "system", r.text(), r.tool, r.files
		if r.tool != "" {
			t.Role = "tool"
		}
	case "compactionSummary", "branchSummary":
		t.Role, t.Text = "system", m.Summary
	case "bashExecution":
		t.Role, t.Tool = "tool", toolBash
		t.Text = toolinput.Bound(strings.TrimSpace(joinLines("$ "+m.Command, m.Output)), MaxToolText)
	default:
		return t, false
	}
	if strings.TrimSpace(t.Text) == "" && t.Tool == "" || injected(t.Text) {
		return t, false
	}
	return t, true
}

// injected reports whether text opens with one of heirloom's own block headings.
func injected(text string) bool {
	text = strings.TrimLeft(text, " \t\r\n")
	for _, h := range injectedHeadings {
		if strings.HasPrefix(text, h) {
			return true
		}
	}
	return false
}

// rendered is a message's content made readable.
type rendered struct {
	lines []string
	tool  string   // the first tool the content calls or reports on
	files []string // the paths its tool calls name
}

func (r rendered) text() string { return strings.Join(r.lines, "\n") }

// renderContent renders a message's content, a string or an array of parts: text as it is, one
// line per tool call ("[tool call] <tool> <arguments>") and tool result ("[tool result] <tool>:
// <text>"), "[image]" for an image. Thinking is left out.
func renderContent(content json.RawMessage) rendered {
	var r rendered
	var s string
	if isString(content) && json.Unmarshal(content, &s) == nil {
		if strings.TrimSpace(s) != "" {
			r.lines = append(r.lines, s)
		}
		return r
	}
	for _, p := range contentParts(content) {
		switch p.Type {
		case "text":
			if strings.TrimSpace(p.Text) != "" {
				r.lines = append(r.lines, p.Text)
			}
		case "image":
			r.lines = append(r.lines, "[image]")
		case "toolCall":
			tool, args := resolveCall(p.Name, p.Arguments)
			r.tool = cmp.Or(r.tool, tool)
			r.lines = append(r.lines, strings.TrimSpace("[tool call] "+tool+" "+toolinput.Summary(args)))
			r.files = toolinput.AppendFiles(r.files, args)
		case "toolResult":
			tool := resolveResultName(p.ToolName, p.Details)
			r.tool = cmp.Or(r.tool, tool)
			label := "[tool result] "
			if p.IsError {
				label = "[tool error] "
			}
			r.lines = append(r.lines, toolinput.Bound(label+tool+": "+strings.TrimSpace(contentText(p.Content)), MaxToolText))
		}
	}
	return r
}

// contentParts decodes a content array, skipping elements that are not objects; nil for
// anything else.
func contentParts(content json.RawMessage) []ContentPart {
	var elems []json.RawMessage
	if !adapters.IsArray(content) || json.Unmarshal(content, &elems) != nil {
		return nil
	}
	parts := make([]ContentPart, 0, len(elems))
	for _, raw := range elems {
		var p ContentPart
		if adapters.IsObject(raw) {
			adapters.UnmarshalObject(raw, &p)
			parts = append(parts, p)
		}
	}
	return parts
}

// contentText returns the text of a content (a string, or the text parts of an array joined by
// newlines).
func contentText(content json.RawMessage) string {
	var s string
	if isString(content) && json.Unmarshal(content, &s) == nil {
		return s
	}
	var lines []string
	for _, p := range contentParts(content) {
		if p.Type == "text" && p.Text != "" {
			lines = append(lines, p.Text)
		}
	}
	return strings.Join(lines, "\n")
}

// resultSummary renders a tool's result text as a turn's text, bounded to MaxToolText.
func resultSummary(text string, isError bool) string {
	text = strings.TrimSpace(text)
	if isError {
		text = strings.TrimSpace("error: " + text)
	}
	return toolinput.Bound(text, MaxToolText)
}

// toolCallWrapper is the arguments of a tool search "tool_call".
type toolCallWrapper struct {
	ID   string          `json:"id"`   // the tool called
	Args json.RawMessage `json:"args"` // its arguments
}

// wrappedResult is the details of a tool search "tool_call" result: the real tool and its
// result.
type wrappedResult struct {
	Tool struct {
		Name string `json:"name"`
	} `json:"tool"`
	Result json.RawMessage `json:"result"` // a ToolResult
}

// resolveCall looks through a tool search call to the tool it calls and that tool's arguments.
func resolveCall(name string, args json.RawMessage) (string, json.RawMessage) {
	if name == toolSearchCall {
		var w toolCallWrapper
		adapters.UnmarshalObject(args, &w)
		if w.ID != "" {
			return w.ID, w.Args
		}
	}
	return name, args
}

// resolveResultName looks through the result of a tool search call to the tool it called.
func resolveResultName(name string, details json.RawMessage) string {
	if name == toolSearchCall {
		var w wrappedResult
		adapters.UnmarshalObject(details, &w)
		if w.Tool.Name != "" {
			return w.Tool.Name
		}
	}
	return name
}

// toolResultText renders a session.tool result ({content, details}, or a bare string) as the
// text of its turn; for a tool search call, the real tool's result.
func toolResultText(result json.RawMessage, isError bool) string {
	if !adapters.IsObject(result) {
		return resultSummary(contentText(result), isError)
	}
	var r ToolResult
	adapters.UnmarshalObject(result, &r)
	var w wrappedResult
	adapters.UnmarshalObject(r.Details, &w)
	if w.Tool.Name != "" && adapters.IsObject(w.Result) {
		var inner ToolResult
		adapters.UnmarshalObject(w.Result, &inner)
		if contentText(inner.Content) != "" {
			r = inner
		}
	}
	return resultSummary(contentText(r.Content), isError)
}

// maxReceiptDepth bounds how deep findReceipt looks.
const maxReceiptDepth = 5

// findReceipt looks for a sessions_spawn receipt, an object with a childSessionKey, in a tool
// result: in the object itself, its details, its (tool search) result, and the JSON text of its
// content, where the model's copy of the receipt is.
func findReceipt(raw json.RawMessage, depth int) (SpawnReceipt, bool) {
	if depth > maxReceiptDepth {
		return SpawnReceipt{}, false
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case isString(raw):
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return findReceipt(json.RawMessage(s), depth+1)
		}
	case adapters.IsArray(raw):
		for _, p := range contentParts(raw) {
			if p.Type != "text" {
				continue
			}
			if r, ok := findReceipt(json.RawMessage(p.Text), depth+1); ok {
				return r, true
			}
		}
	case adapters.IsObject(raw):
		var o struct {
			SpawnReceipt
			Details json.RawMessage `json:"details"`
			Result  json.RawMessage `json:"result"`
			Content json.RawMessage `json:"content"`
		}
		adapters.UnmarshalObject(raw, &o)
		if o.ChildSessionKey != "" {
			return o.SpawnReceipt, true
		}
		for _, next := range []json.RawMessage{o.Details, o.Result, o.Content} {
			if r, ok := findReceipt(next, depth+1); ok {
				return r, true
			}
		}
	}
	return SpawnReceipt{}, false
}

// messageSpawns returns the spawns a message reports: a sessions_spawn toolResult message, or
// the tool calls and results of one message (the custom message OpenClaw writes for a nested
// call holds both, so its spawn has the call's task and label).
func messageSpawns(key string, m TranscriptMessage) []adapters.Event {
	at := m.Timestamp.Time()
	if m.Role == "toolResult" {
		if resolveResultName(m.ToolName, m.Details) != toolSessionsSpawn {
			return nil
		}
		r, ok := findReceipt(m.Details, 0)
		if !ok {
			r, ok = findReceipt(m.Content, 0)
		}
		if !ok {
			return nil
		}
		return spawnEvents(eventSessionMessage, key, r, SpawnArgs{}, at)
	}
	parts := contentParts(m.Content)
	calls := map[string]SpawnArgs{}
	for _, p := range parts {
		if p.Type != "toolCall" {
			continue
		}
		if tool, args := resolveCall(p.Name, p.Arguments); tool == toolSessionsSpawn && p.ID != "" {
			var a SpawnArgs
			adapters.UnmarshalObject(args, &a)
			calls[p.ID] = a
		}
	}
	var evs []adapters.Event
	for _, p := range parts {
		if p.Type != "toolResult" {
			continue
		}
		args, called := calls[p.ToolCallID]
		if !called && resolveResultName(p.ToolName, p.Details) != toolSessionsSpawn {
			continue
		}
		r, ok := findReceipt(p.Details, 0)
		if !ok {
			r, ok = findReceipt(p.Content, 0)
		}
		if ok {
			evs = append(evs, spawnEvents(eventSessionMessage, key, r, args, at)...)
		}
	}
	return evs
}

// spawnEvents returns the event of a sessions_spawn receipt in session parent: KindSpawn when
// the child was started, KindSpawnResult (failed) when the call failed after naming a child;
// none without a child.
func spawnEvents(name, parent string, r SpawnReceipt, a SpawnArgs, at time.Time) []adapters.Event {
	child := r.ChildSessionKey
	if child == "" || child == parent {
		return nil
	}
	sp := &adapters.Spawn{ToolUseID: child, ChildSessionID: child, Description: a.Label, Prompt: a.Task, Type: a.AgentID}
	kind := adapters.KindSpawn
	if r.Status != "" && r.Status != spawnAccepted {
		kind = adapters.KindSpawnResult
	}
	ev := newEvent(kind, name, parent, at)
	ev.Spawn = sp
	if kind == adapters.KindSpawnResult {
		ev.Result = &adapters.Result{AgentID: child, Status: adapters.StatusFailed, Text: cmp.Or(r.Error, r.Status)}
	}
	return []adapters.Event{ev}
}

// duration returns end-start in milliseconds; 0 unless both are set and in order.
func duration(start, end Millis) int64 {
	if start <= 0 || end < start {
		return 0
	}
	return int64(end - start)
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
