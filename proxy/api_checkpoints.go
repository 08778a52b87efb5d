package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// CheckpointRequest is the optional body of POST /api/sessions/{key}/checkpoints: statements
// to keep on the session before the checkpoint is taken. Every field may be left out.
type CheckpointRequest struct {
	Decisions   []string `json:"decisions,omitempty"`   // decisions the agent or user made
	Constraints []string `json:"constraints,omitempty"` // constraints that must keep holding
	Objective   string   `json:"objective,omitempty"`   // sets the session's objective
	Summary     string   `json:"summary,omitempty"`     // where the session stands, in the agent's words
	NextSteps   []string `json:"next_steps,omitempty"`  // what the agent does next
}

// APICheckpoint is a checkpoint as the API shows it; Digest is rendered as text.
type APICheckpoint struct {
	ID        string    `json:"id"`
	Scope     string    `json:"scope"`
	Session   string    `json:"session"`
	Harness   string    `json:"harness,omitempty"`
	Project   string    `json:"project,omitempty"`
	Trigger   string    `json:"trigger"`
	Epoch     int       `json:"epoch"`
	Prompts   int       `json:"prompts"`
	TurnSeq   uint64    `json:"turn_seq"`
	CreatedAt time.Time `json:"created_at"`
	Digest    string    `json:"digest"`
}

func apiCheckpoint(c kv.Checkpoint) APICheckpoint {
	return APICheckpoint{
		ID: c.ID, Scope: c.Scope, Session: c.SessionID, Harness: c.Harness, Project: c.Project,
		Trigger: c.Trigger, Epoch: c.Epoch, Prompts: c.Prompts, TurnSeq: c.TurnSeq,
		CreatedAt: c.CreatedAt, Digest: inject.RenderDigest(c.Digest, 0),
	}
}

// postCheckpoint serves POST /api/sessions/{key}/checkpoints: it keeps the body's statements on
// the session (its objective replaced when one is given) and writes a checkpoint with trigger
// agent, or explicit with ?trigger=explicit (the CLI's heirloom checkpoint). It replies with the
// checkpoint; 404 when the session is not known.
func (s *Server) postCheckpoint(r *http.Request) (any, error) {
	key, err := pathKey(r)
	if err != nil {
		return nil, err
	}
	p, err := parseParams(r, "scope", "trigger")
	if err != nil {
		return nil, err
	}
	trigger := kv.TriggerAgent
	switch p["trigger"] {
	case "", kv.TriggerAgent:
	case kv.TriggerExplicit:
		trigger = kv.TriggerExplicit
	default:
		return nil, Errorf(ECodeInvalid, fmt.Sprintf("trigger: got %q, want %s or %s", p["trigger"], kv.TriggerAgent, kv.TriggerExplicit))
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.MaxBodyBytes))
	if err != nil {
		return nil, err
	}
	var req CheckpointRequest
	if strings.TrimSpace(string(body)) != "" {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return nil, Errorf(ECodeInvalid, "body: "+err.Error())
		}
	}
	c, err := s.Engine.Checkpoint(r.Context(), p.scope(s.scope()), key, trigger, engine.Statements{
		Decisions: req.Decisions, Constraints: req.Constraints, Objective: req.Objective,
		Summary: req.Summary, NextSteps: req.NextSteps,
	})
	if err != nil {
		return nil, notFound(err, "session "+key)
	}
	return apiCheckpoint(c), nil
}
