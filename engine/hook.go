package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// Hook applies one hook event (a harness that calls hooks: Claude Code) and returns heirloom's
// answer for the harness: context for the model ("" for none), and the refusal of a spawn past
// the spawn limits (Answer.Deny, see SpawnRefusal). The work runs under the engine's own
// context, so whatever it writes is finished even when ctx (the hook's deadline) ends first;
// Hook then returns ctx's error and the harness gets no answer: a spawn goes ahead, and a
// refusal it never read is recorded as not delivered (see refusalLost). An event of an unknown
// kind is no error.
func (e *Engine) Hook(ctx context.Context, ev adapters.Event) (adapters.Answer, error) {
	defer e.first.enter()()
	if ev.At.IsZero() {
		ev.At = e.Now()
	}
	e.heard.note(ev.Harness, e.Now())
	var note delivery // written by the work, read only once it answered in time
	a, err := detachLate(ctx, e, func(ctx context.Context) (adapters.Answer, error) {
		return e.hook(ctx, ev, &note)
	}, func(ctx context.Context, a adapters.Answer, err error) {
		if err == nil && a.Deny != "" && ev.Spawn != nil {
			// The harness got {} and spawns: the refusal it never read is no refusal.
			e.refusalLost(ctx, e.harness(ev.Harness), e.Scope, ev.SessionID, ev.Spawn.ToolUseID)
		}
	})
	if err == nil && a.Context != "" {
		// Reported only when answered in time: past the deadline the harness got nothing.
		to := issuerID(ev) // a sub-agent's own event: the block went to the sub-agent
		if ev.Kind == adapters.KindSubagentStart {
			to = note.session // its top-level session may have been inferred
		}
		e.blocksInjected(e.Scope, to, a.Context, string(ev.Kind), ev.Harness, note)
	}
	return a, err
}

// hook is Hook's work. All work for one top-level session runs under that session's lock, so
// parallel sub-agents' hooks cannot race each other's pairing or transcript reads, nor the
// spawns of its tree each other's count against the spawn limits.
func (e *Engine) hook(ctx context.Context, ev adapters.Event, note *delivery) (adapters.Answer, error) {
	if ev.Kind == adapters.KindUnknown {
		return adapters.Answer{}, nil
	}
	h := e.harness(ev.Harness)
	if ev.Kind == adapters.KindSubagentStart {
		return withContext(e.subagentStart(ctx, h, ev, note))
	}
	if ev.SessionID == "" {
		return adapters.Answer{}, nil
	}
	unlock := e.locks.lock(lockKey(e.Scope, ev.SessionID))
	defer unlock()
	sess, ok, err := e.admitSession(ctx, h, ev)
	if err != nil || !ok {
		return adapters.Answer{}, err
	}
	a, err := e.hookSession(ctx, h, ev, sess)
	if err == nil && a.Context == "" && ev.AgentID != "" && reinforcesSubagent(ev.Kind) {
		// A sub-agent that compacted gets no SessionStart (Codex): its objective comes back
		// with its next call whose reply takes context, once per compaction.
		a.Context, err = e.pendingReinforcement(ctx, issuerID(ev))
	}
	return a, err
}

// reinforcesSubagent reports whether a sub-agent's event of kind k may carry its objective
// reinforcement after a compaction: a prompt, or a tool call before or after it runs (not a
// spawn, whose reply may be a refusal).
func reinforcesSubagent(k adapters.Kind) bool {
	return k == adapters.KindPrompt || k == adapters.KindToolUse || k == adapters.KindToolResult
}

// pendingReinforcement returns the objective reinforcement of session id when it compacted
// since it last got one, and records it given; "" otherwise. A sub-agent gets it with its next
// call whose reply takes context; a top-level session with its SessionStart (see sessionStart).
func (e *Engine) pendingReinforcement(ctx context.Context, id string) (string, error) {
	due := false
	sess, err := e.Store.UpdateSession(ctx, e.Scope, id, func(s *kv.Session, exists bool) error {
		if !exists || s.Compactions <= s.ReinforcedEpoch {
			return errUnchanged
		}
		s.ReinforcedEpoch, due = s.Compactions, true
		return nil
	})
	if errors.Is(err, errUnchanged) || err == nil && !due {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	block, err := e.reinforcement(ctx, sess)
	return inject.Join(e.Config.MaxContextChars, block), err
}

// hookSession is hook's work for an event of top-level session sess, as admitSession wrote it.
func (e *Engine) hookSession(ctx context.Context, h adapters.Registration, ev adapters.Event, sess kv.Session) (adapters.Answer, error) {
	switch ev.Kind {
	case adapters.KindSessionStart:
		return withContext(e.sessionStart(ctx, h, ev, sess))
	case adapters.KindPrompt:
		if ev.AgentID != "" {
			// A sub-agent's prompt (Codex: its task, or a message sent to it): the sub-agent's
			// transcript is read. It gets no context: its SubagentStart gave the inherited block.
			_, err := e.ingestID(ctx, h, issuerID(ev), sess.ID)
			return adapters.Answer{}, err
		}
		// The prompt is counted once its transcript record is stored (see kv.Session.Prompts).
		in, err := e.ingest(ctx, h, sess, ev.SessionID)
		if err != nil {
			return adapters.Answer{}, err
		}
		e.maybeCheckpoint(in.Session)
		return adapters.Answer{}, nil
	case adapters.KindPreCompact:
		if id := issuerID(ev); id != sess.ID {
			// A sub-agent compacts (Codex): its own checkpoint.
			if _, err := e.ingestID(ctx, h, id, sess.ID); err != nil {
				e.warn("sub-agent transcript not read before compaction", err, "session", id)
			}
			return adapters.Answer{}, e.preCompactionCheckpoint(ctx, e.Scope, id, ev.Instructions, nil)
		}
		in, err := e.ingest(ctx, h, sess, ev.SessionID)
		if err != nil {
			e.warn("transcript not read before compaction", err, "session", ev.SessionID)
		}
		var recent []kv.Turn
		if in.Behind {
			recent = e.recentFromFile(h, sess, e.Config.HookReadBytes)
		}
		return adapters.Answer{}, e.preCompactionCheckpoint(ctx, e.Scope, ev.SessionID, ev.Instructions, recent)
	case adapters.KindCompacted:
		// A compaction finished (Codex PostCompact): a new epoch, whose reinforcement the
		// SessionStart(compact) that follows gives (a repeat within SameCompaction counts once).
		_, err := e.Store.UpdateSession(ctx, e.Scope, issuerID(ev), func(s *kv.Session, exists bool) error {
			if !exists {
				return errUnchanged
			}
			countCompaction(s, ev.At)
			return nil
		})
		if errors.Is(err, errUnchanged) {
			err = nil
		}
		return adapters.Answer{}, err
	case adapters.KindStop, adapters.KindSessionEnd:
		_, err := e.ingest(ctx, h, sess, ev.SessionID)
		return adapters.Answer{}, err
	case adapters.KindSpawn:
		return e.spawn(ctx, h, ev, sess)
	case adapters.KindSpawnResult:
		return adapters.Answer{}, e.spawnResult(ctx, h, ev)
	case adapters.KindSubagentStop:
		return adapters.Answer{}, e.subagentStop(ctx, h, ev, sess)
	}
	return adapters.Answer{}, nil
}

// withContext is the answer carrying text as context.
func withContext(text string, err error) (adapters.Answer, error) {
	return adapters.Answer{Context: text}, err
}

// sessionStart answers a SessionStart. After a compaction (source compact) it counts the
// compaction epoch and gives the objective reinforcement once per epoch: a repeated
// SessionStart in the same epoch gets nothing. At startup, resume or clear it gives the
// recovered checkpoint (see recovered).
func (e *Engine) sessionStart(ctx context.Context, h adapters.Registration, ev adapters.Event, sess kv.Session) (string, error) {
	switch ev.Source {
	case adapters.SourceCompact:
		due := false
		sess, err := e.Store.UpdateSession(ctx, e.Scope, ev.SessionID, func(sess *kv.Session, _ bool) error {
			countCompaction(sess, ev.At)
			if due = sess.Compactions > sess.ReinforcedEpoch; due {
				sess.ReinforcedEpoch = sess.Compactions
			}
			return nil
		})
		if err != nil || !due {
			return "", err
		}
		block, err := e.reinforcement(ctx, sess)
		return inject.Join(e.Config.MaxContextChars, block), err
	case adapters.SourceStartup, adapters.SourceResume, adapters.SourceClear:
		in, err := e.ingest(ctx, h, sess, ev.SessionID)
		if err != nil {
			e.warn("transcript not read at session start", err, "session", ev.SessionID)
		}
		// A compaction heirloom counted and has not answered yet (Codex compacts a resumed
		// session first: PostCompact, then SessionStart resume, then compact, all before the
		// next request): its reinforcement, which carries the pre-compaction checkpoint, in
		// place of the recovered one, so the objective comes once.
		if text, err := e.pendingReinforcement(ctx, ev.SessionID); err != nil || text != "" {
			return text, err
		}
		block, err := e.recovered(ctx, in.Session, ev.Source == adapters.SourceResume)
		return inject.Join(e.Config.MaxContextChars, block), err
	}
	return "", nil
}

// startsSession reports whether a harness sends an event of kind k when a session starts or
// resumes, or when its user begins a turn: the events by which heirloom learns of a session.
// Claude Code calls no http hook at SessionStart, so a prompt is the first call heirloom may get.
func startsSession(k adapters.Kind) bool {
	return k == adapters.KindSessionStart || k == adapters.KindPrompt
}

// admitSession records ev's top-level session as touchSession does and returns it, unless
// heirloom never saw the session and ev does not start one (a Stop, a spawn, a SubagentStart…):
// then the session is recorded only when its transcript shows the harness really runs it
// (heirloom started while it was running, or on a new data dir). A stray call naming a session
// no harness started stores nothing, and ok is false. A known session costs what touchSession
// costs: the transcript is looked at only for an unknown one.
func (e *Engine) admitSession(ctx context.Context, h adapters.Registration, ev adapters.Event) (sess kv.Session, ok bool, err error) {
	sess, err = e.touchSession(ctx, ev, startsSession(ev.Kind))
	if !errors.Is(err, errUnseen) {
		return sess, err == nil, err
	}
	if !e.transcriptShows(h, ev.TranscriptPath) {
		e.Logger.Debug("an event for a session heirloom never saw, and no transcript turns: not recorded",
			"harness", ev.Harness, "event", ev.Name, "session", ev.SessionID)
		return kv.Session{}, false, nil
	}
	sess, err = e.touchSession(ctx, ev, true)
	return sess, err == nil, err
}

// transcriptShows reports whether the transcript at path, under the transcript roots, holds a
// turn: evidence that the harness runs the session it belongs to. It reads at most
// Config.HookReadBytes, from the file's end.
func (e *Engine) transcriptShows(h adapters.Registration, path string) bool {
	return len(e.recentFromFile(h, kv.Session{Transcript: kv.TranscriptPos{Path: path}}, e.Config.HookReadBytes)) > 0
}

// errUnseen aborts touchSession for a session not stored when it may not create one.
var errUnseen = errors.New("session not seen before")

// touchSession records that ev's top-level session exists and is active (or ended), filling in
// what the event tells about it. The write is synced before the hook is answered. It returns
// the session as written. A session not stored is created only when create is true; otherwise
// nothing is written and the error wraps errUnseen.
func (e *Engine) touchSession(ctx context.Context, ev adapters.Event, create bool) (kv.Session, error) {
	sess, err := e.Store.UpdateSession(ctx, e.Scope, ev.SessionID, func(sess *kv.Session, exists bool) error {
		if !exists {
			if !create {
				return errUnseen
			}
			sess.Harness = ev.Harness
			sess.NativeID = ev.SessionID
			sess.CreatedAt = ev.At
		}
		if sess.Project == "" && ev.Cwd != "" {
			sess.Project = ev.Cwd
			sess.ProjectNorm = normaliseProject(ev.Cwd)
		}
		if sess.Transcript.Path == "" {
			sess.Transcript.Path = ev.TranscriptPath
		}
		if sess.Objective == "" && ev.Kind == adapters.KindPrompt && ev.AgentID == "" {
			sess.Objective = ev.Prompt
		}
		sess.Status = kv.StatusActive
		if ev.Kind == adapters.KindSessionEnd {
			sess.Status = kv.StatusEnded
		}
		return nil
	})
	if err != nil {
		return kv.Session{}, fmt.Errorf("record session %s: %w", ev.SessionID, err)
	}
	return sess, nil
}

// childID is heirloom's id for sub-agent agentID of top-level session rootID.
func childID(rootID, agentID string) string { return rootID + ":" + agentID }

// issuerID is the session that sent ev: the sub-agent named by ev.AgentID, else the top-level
// session.
func issuerID(ev adapters.Event) string {
	if ev.AgentID != "" {
		return childID(ev.SessionID, ev.AgentID)
	}
	return ev.SessionID
}

// normaliseProject resolves symlinks in a project path so two spellings of one directory group
// together. A path that cannot be resolved (gone, unreadable) is only cleaned.
func normaliseProject(dir string) string {
	if dir == "" {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		return resolved
	}
	return filepath.Clean(dir)
}
