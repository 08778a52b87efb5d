package opencode

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/toolinput"
)

// MaxToolText bounds, in bytes, the text of a tool turn. A longer rendering is cut at a rune
// boundary and ends with a marker saying how much was dropped.
const MaxToolText = 4096

// globalDirectory is the directory /global/event gives events that belong to no project instance.
const globalDirectory = "global"

// Header identifies a frame without decoding its properties.
type Header struct {
	// ID is OpenCode's event id ("evt_…"). A /global/event "sync" copy has the id of the event
	// it repeats, so a client reading /global/event drops a frame whose id it has seen.
	ID string
	// Type is the event type; for a sync copy, the repeated event's type without its version
	// suffix ("message.updated", not "message.updated.1").
	Type string
	// Directory is the project instance a /global/event frame names ("global" for none); empty
	// for a frame of GET /event.
	Directory string
	Sync      bool // the frame is a /global/event "sync" copy
}

// DecodeHeader reads a frame's id and type: one SSE data payload of GET /event, or a
// /global/event frame. It fails as DecodeFrame does on input that is not a frame.
func DecodeHeader(data []byte) (Header, error) {
	h, _, err := readFrame(data)
	return h, err
}

// DecodeFrame turns one SSE data payload into zero or more events with Harness "opencode" and
// Name set to the OpenCode event type. data is either a frame of GET /event,
// {"id","type","properties"}, or a frame of GET /global/event, {"directory","project",
// "payload"}: the payload is unwrapped, a "sync" copy decodes as the event it repeats (so it
// yields the same events), and the directory becomes Event.Cwd where the event names none.
//
// It returns an error wrapping adapters.ErrMalformed when data is not a JSON object, has no
// type (or a global frame no payload object), is an event listed below without the object
// or id it must carry, or names an id no record may have (see adapters.CheckIDs). An event type not listed decodes to no events and no error
// (server.connected, server.heartbeat, session.diff, session.error, message.part.delta, …).
// Fields of an unexpected JSON type are left zero rather than failing the frame.
//
//   - session.created → KindSessionStart; session.updated → KindSessionUpdate; session.deleted →
//     KindSessionDeleted. SessionID is info.id, ParentSessionID info.parentID, Title, AgentName
//     info.agent, Cwd info.directory; At is info.time.created (updated for session.updated, zero
//     for session.deleted, which carries no deletion time).
//   - session.compacted → KindCompacted. session.idle, and session.status of type "idle" →
//     KindIdle; other statuses yield nothing. At is zero: these carry no time.
//   - message.part.updated → KindTurns carrying the part's turn, Turn.ID the part id: a text
//     part is a "user" or "assistant" turn, a tool part a "tool" turn (see below). A task tool
//     part also yields KindSpawn (pending, running) or KindSpawnResult (completed, error) after
//     it. Other parts (reasoning, step-start, step-finish, snapshot, patch, file, agent, subtask,
//     retry, compaction) yield nothing. Turn.At is the part's own start time, zero when it has
//     none (a user prompt), so a resync yields the same turn; Event.At falls back to the
//     update's time. A spawn's At is the call's start, a result's its end.
//   - message.updated yields nothing: it carries a message's header, no content.
//
// A text part does not say its message's role, and a pure decoder does not remember the
// message.updated that did. OpenCode stamps time.start on every text part of an assistant
// message when it begins the text, and never on the text of a user prompt, so a text part with a
// time is "assistant" and one without is "user". Text OpenCode wrote into a user message itself
// (synthetic: reminders, file contents, the "Continue…" after a compaction), ignored text and
// blank text yield no turn. DecodeMessages takes the role from the message instead, and agrees.
//
// A tool turn's Text is the call's title, its input as one line of JSON (at most 512 bytes), then
// the output, or "error: " and the error, bounded to MaxToolText; Files are the paths the input
// names (filePath, path, … as toolinput.Files reads them). A compaction's summary is the assistant's text of a message
// in compaction mode, indistinguishable in the stream and kept as an "assistant" turn; the
// compaction part itself is no turn: session.compacted marks the new epoch.
func DecodeFrame(data []byte) ([]adapters.Event, error) {
	h, props, err := readFrame(data)
	if err != nil {
		return nil, err
	}
	evs, err := decodeEvent(h.Type, props)
	if err != nil {
		return nil, err
	}
	if err := adapters.CheckIDs(evs...); err != nil {
		return nil, err // stored as nothing: the client logs and counts the frame as malformed
	}
	if h.Directory != "" && h.Directory != globalDirectory {
		for i := range evs {
			if evs[i].Cwd == "" {
				evs[i].Cwd = h.Directory
			}
		}
	}
	return evs, nil
}

// envelope holds the fields of both frame shapes (they share none), so one pass tells them
// apart.
type envelope struct {
	Frame
	GlobalFrame
}

// readFrame unwraps a frame of either stream into its header and the event's properties.
func readFrame(data []byte) (Header, json.RawMessage, error) {
	var env envelope
	if err := adapters.DecodeObject("frame", data, &env); err != nil {
		return Header{}, nil, err
	}
	f := env.Frame
	var h Header
	if f.Type == "" && len(env.Payload) > 0 {
		h.Directory = env.Directory
		f = Frame{}
		if err := adapters.DecodeObject("global frame payload", env.Payload, &f); err != nil {
			return Header{}, nil, err
		}
	}
	if f.Type == "" {
		return Header{}, nil, adapters.Malformed("frame: type missing, empty or not a string")
	}
	h.ID, h.Type = f.ID, f.Type
	props := f.Properties
	if f.Type == EventSync {
		se := f.SyncEvent
		if se == nil || se.Type == "" {
			return Header{}, nil, adapters.Malformed("sync frame %s: syncEvent or its type missing", f.ID)
		}
		h.Type, h.Sync, props = unversioned(se.Type), true, se.Data
		if se.ID != "" {
			h.ID = se.ID
		}
	}
	return h, props, nil
}

// unversioned drops the ".<digits>" version a sync event adds to an event type.
func unversioned(typ string) string {
	i := strings.LastIndexByte(typ, '.')
	if i <= 0 || i == len(typ)-1 {
		return typ
	}
	for _, c := range typ[i+1:] {
		if c < '0' || c > '9' {
			return typ
		}
	}
	return typ[:i]
}

// decodeEvent maps one event's properties to events; see DecodeFrame.
func decodeEvent(typ string, props json.RawMessage) ([]adapters.Event, error) {
	switch typ {
	case EventSessionCreated, EventSessionUpdated, EventSessionDeleted:
		var p SessionProps
		if err := adapters.DecodeObject(typ+" properties", props, &p); err != nil {
			return nil, err
		}
		id := cmp.Or(p.Info.ID, p.SessionID)
		if id == "" {
			return nil, adapters.Malformed("%s: info.id missing, empty or not a string", typ)
		}
		return []adapters.Event{sessionEvent(sessionKind(typ), typ, id, p.Info)}, nil
	case EventSessionCompacted, EventSessionIdle:
		var p SessionIDProps
		if err := decodeSessionProps(typ, props, &p, &p.SessionID); err != nil {
			return nil, err
		}
		kind := adapters.KindIdle
		if typ == EventSessionCompacted {
			kind = adapters.KindCompacted
		}
		return []adapters.Event{event(kind, typ, p.SessionID)}, nil
	case EventSessionStatus:
		var p StatusProps
		if err := decodeSessionProps(typ, props, &p, &p.SessionID); err != nil {
			return nil, err
		}
		if p.Status.Type != "idle" {
			return nil, nil
		}
		return []adapters.Event{event(adapters.KindIdle, typ, p.SessionID)}, nil
	case EventPartUpdated:
		var p PartProps
		if err := adapters.DecodeObject(typ+" properties", props, &p); err != nil {
			return nil, err
		}
		sessionID := cmp.Or(p.Part.SessionID, p.SessionID)
		if sessionID == "" || p.Part.ID == "" {
			return nil, adapters.Malformed("%s: part id or session id missing, empty or not a string", typ)
		}
		return partEvents(typ, sessionID, p.Part, "", millis(p.Time)), nil
	}
	return nil, nil
}

// decodeSessionProps decodes the properties of an event that names only a session, which
// must be set.
func decodeSessionProps(typ string, props json.RawMessage, v any, sessionID *string) error {
	if err := adapters.DecodeObject(typ+" properties", props, v); err != nil {
		return err
	}
	if *sessionID == "" {
		return adapters.Malformed("%s: sessionID missing, empty or not a string", typ)
	}
	return nil
}

func sessionKind(typ string) adapters.Kind {
	switch typ {
	case EventSessionUpdated:
		return adapters.KindSessionUpdate
	case EventSessionDeleted:
		return adapters.KindSessionDeleted
	}
	return adapters.KindSessionStart
}

// event returns an event of kind for session id, named name.
func event(kind adapters.Kind, name, sessionID string) adapters.Event {
	return adapters.Event{Harness: Harness, Kind: kind, Name: name, SessionID: sessionID}
}

// sessionEvent describes session id from its info; see DecodeFrame for At.
func sessionEvent(kind adapters.Kind, name, id string, in SessionInfo) adapters.Event {
	ev := event(kind, name, id)
	ev.Title, ev.AgentName, ev.Cwd = in.Title, in.Agent, in.Directory
	if in.ParentID != id {
		ev.ParentSessionID = in.ParentID
	}
	switch kind {
	case adapters.KindSessionStart:
		ev.At = millis(in.Time.Created)
	case adapters.KindSessionUpdate:
		ev.At = millis(cmp.Or(in.Time.Updated, in.Time.Created))
	}
	return ev
}

// partEvents returns the events one part yields in session sessionID: a KindTurns event with
// its turn, then, for a task call, its spawn or result. role is the part's message role when
// known, "" to infer it. fallback is the event's At when the part has no time of its own.
func partEvents(name, sessionID string, p Part, role string, fallback time.Time) []adapters.Event {
	t, ok := partTurn(p, role)
	if !ok {
		return nil
	}
	ev := event(adapters.KindTurns, name, sessionID)
	ev.Turns = []adapters.Turn{t}
	ev.At = t.At
	if ev.At.IsZero() {
		ev.At = fallback
	}
	evs := []adapters.Event{ev}
	if sp, ok := taskEvent(name, sessionID, p, fallback); ok {
		evs = append(evs, sp)
	}
	return evs
}

// partTurn returns the transcript turn of a text or tool part; ok is false for a part that is
// none. role is the message's role, "" when unknown.
func partTurn(p Part, role string) (t adapters.Turn, ok bool) {
	t.ID = p.ID
	switch p.Type {
	case PartText:
		if p.Synthetic || p.Ignored || strings.TrimSpace(p.Text) == "" {
			return t, false
		}
		if role != "user" && role != "assistant" {
			role = "user"
			if p.Time.Start != 0 || p.Time.End != 0 {
				role = "assistant"
			}
		}
		t.Role, t.Text, t.At = role, p.Text, millis(cmp.Or(p.Time.Start, p.Time.End))
		return t, true
	case PartTool:
		t.Role, t.Tool, t.Text = "tool", p.Tool, toolText(p.State)
		t.Files = toolinput.Files(p.State.Input)
		t.At = millis(cmp.Or(p.State.Time.Start, p.State.Time.End))
		return t, true
	}
	return t, false
}

// taskEvent returns the KindSpawn (pending, running) or KindSpawnResult (completed, error) event
// of a task tool part; ok is false for any other part, and for a call without an id.
func taskEvent(name, sessionID string, p Part, fallback time.Time) (ev adapters.Event, ok bool) {
	if p.Type != PartTool || p.Tool != ToolTask || p.CallID == "" {
		return ev, false
	}
	var in TaskInput
	adapters.UnmarshalObject(p.State.Input, &in)
	var md TaskMetadata
	adapters.UnmarshalObject(p.State.Metadata, &md)
	sp := &adapters.Spawn{
		ToolUseID:      p.CallID,
		ChildSessionID: md.SessionID,
		Description:    in.Description,
		Prompt:         in.Prompt,
		Type:           in.SubagentType,
	}
	switch p.State.Status {
	case ToolPending, ToolRunning:
		ev = event(adapters.KindSpawn, name, sessionID)
		ev.At = millis(p.State.Time.Start)
	case ToolCompleted, ToolError:
		ev = event(adapters.KindSpawnResult, name, sessionID)
		ev.Result = taskResult(p.State, md)
		if sp.ChildSessionID == "" {
			sp.ChildSessionID = ev.Result.AgentID
		}
		ev.At = millis(cmp.Or(p.State.Time.End, p.State.Time.Start))
	default:
		return ev, false
	}
	ev.Spawn = sp
	if ev.At.IsZero() {
		ev.At = fallback
	}
	return ev, true
}

// OpenCode's own error texts for a task call it stopped because the run was aborted.
var abortErrors = []string{"Tool execution aborted", "Cancelled"}

// taskResult reads what a finished task call returned. A completed call's text is the inner
// text of the <task_result> its output wraps (the output itself when not wrapped); its status
// is "completed", or failed when the wrapper says state="error". A failed call's text is its
// error; its status interrupted when OpenCode marked it so, else failed.
func taskResult(st ToolState, md TaskMetadata) *adapters.Result {
	out := parseTaskOutput(st.Output)
	r := &adapters.Result{AgentID: cmp.Or(md.SessionID, out.id), Status: ToolCompleted, Text: out.text}
	if out.state == ToolError {
		r.Status = adapters.StatusFailed
	}
	if st.Status == ToolError {
		r.Status = adapters.StatusFailed
		if md.Interrupted || slices.Contains(abortErrors, st.Error) {
			r.Status = adapters.StatusInterrupted
		}
		r.Text = cmp.Or(st.Error, out.text)
	}
	if st.Time.Start > 0 && st.Time.End >= st.Time.Start {
		r.DurationMs = st.Time.End - st.Time.Start
	}
	return r
}

// toolText renders a tool call's state as the text of its turn: title, input, then output or
// error, one per line, bounded to MaxToolText.
func toolText(st ToolState) string {
	var lines []string
	for _, s := range []string{st.Title, toolinput.Summary(st.Input)} {
		if s = strings.TrimSpace(s); s != "" {
			lines = append(lines, s)
		}
	}
	switch st.Status {
	case ToolCompleted:
		if s := strings.TrimSpace(st.Output); s != "" {
			lines = append(lines, s)
		}
	case ToolError:
		if s := strings.TrimSpace(st.Error); s != "" {
			lines = append(lines, "error: "+s)
		}
	}
	return toolinput.Bound(strings.Join(lines, "\n"), MaxToolText)
}

// millis converts an OpenCode timestamp (ms since the epoch) to a time; zero when absent.
func millis(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
