package gatewaytest

import (
	"encoding/json"
	"fmt"
	"os"
)

// Recorded is one frame of a recorded Gateway conversation, as the files
// testdata/live/*.all-frames.json hold them: a JSON array of these, in the order they crossed
// the wire.
type Recorded struct {
	Dir   string          `json:"dir"`   // "in": Gateway to client; "out": client to Gateway
	T     int64           `json:"t"`     // when, in milliseconds since the epoch
	Frame json.RawMessage `json:"frame"` // the frame, verbatim
}

// EventFrame is an event frame to send: the event name and its payload, verbatim. Its seq is
// the sending connection's own.
type EventFrame struct {
	Event   string
	Payload json.RawMessage
}

// LoadRecording reads a recorded conversation.
func LoadRecording(path string) ([]Recorded, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load recording: %w", err)
	}
	var rec []Recorded
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("load recording %s: %w", path, err)
	}
	return rec, nil
}

// EventFrames returns the event frames the Gateway sent in rec, in order, without
// connect.challenge (a Server sends its own). Responses and the client's frames are left out.
func EventFrames(rec []Recorded) ([]EventFrame, error) {
	var out []EventFrame
	for i, r := range rec {
		if r.Dir != "in" {
			continue
		}
		var f struct {
			Type    string          `json:"type"`
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(r.Frame, &f); err != nil {
			return nil, fmt.Errorf("recorded frame %d: %w", i, err)
		}
		if f.Type != "event" || f.Event == "connect.challenge" {
			continue
		}
		out = append(out, EventFrame{Event: f.Event, Payload: f.Payload})
	}
	return out, nil
}

// Replay sends frames, in order, to every subscribed connection, each with that connection's
// next seq, and returns how many connections it reached with all of them.
func (s *Server) Replay(frames []EventFrame) int {
	n := 0
	for _, c := range s.snapshot(true) {
		ok := true
		for _, f := range frames {
			if c.sendEvent(f.Event, f.Payload) != nil {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}
