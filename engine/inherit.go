package engine

import (
	"context"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// The inherited block's transcript comes from the parent's newest turns. Its own budget
// (Config.TailChars, by default the whole reply: the tail takes what the other sections leave)
// decides how much of them reaches the child; the window read is the newest tailTurnsMin turns,
// widened to tailTurnsMax when their text is under one and a half times the budget (many short
// turns).
const (
	tailTurnsMin = 40
	tailTurnsMax = 200
)

// tailWindow is the window of a parent's newest turns its child's block is built from.
func (e *Engine) tailWindow() kv.TailWindow {
	if e.Config.Passive {
		return kv.TailWindow{}
	}
	return kv.TailWindow{MinTurns: tailTurnsMin, MaxTurns: tailTurnsMax, TextBytes: 3 * e.Config.TailChars / 2}
}

// inherit returns the inherited block for child, a child of the parent view was read of, or ""
// when the blocks are off or the parent has nothing to hand down yet. It first reads what the
// parent's transcript gained (Claude Code; root is the top-level session whose lock the caller
// holds) and adds those turns to the window read with the parent; when the transcript is too far
// ahead to read now, the window comes from the file's end instead.
func (e *Engine) inherit(ctx context.Context, h adapters.Registration, view kv.View, root string, child kv.Session) (string, error) {
	if e.Config.Passive {
		return "", nil
	}
	in, err := e.ingest(ctx, h, view.Session, root)
	if err != nil {
		e.warn("parent transcript not read; inheriting what is stored", err, "parent", view.Session.ID)
	}
	w := e.tailWindow()
	turns := append(view.Tail, in.Added...)
	switch {
	case in.Behind:
		turns = e.recentFromFile(h, in.Session, e.Config.HookReadBytes)
	case !w.Complete(turns, in.Session.TurnCount):
		// The turns just appended moved the window past what was read with the parent: read
		// the window again (rare: they hold little text and pushed the text that filled it out).
		again, err := e.Store.View(ctx, in.Session.Scope, in.Session.ID, kv.ViewOptions{Tail: w})
		if err != nil {
			return "", err
		}
		turns = again.Tail
	}
	facts := view.Facts
	if len(in.Added) > 0 {
		// The turns just read may have stated something, or superseded what the view holds.
		if facts, err = e.Store.Facts(ctx, in.Session.Scope, in.Session.ID); err != nil {
			return "", err
		}
	}
	return e.inheritedBlock(ctx, in.Session, facts, w.Cut(turns), view.Checkpoint, child), nil
}

// inheritedBlock renders the block from the parent, its facts ledger, its tail window and its
// latest checkpoint:
// the checkpoint's digest without its objective (the block's own line) and its open runs (the
// starting child is one of them, not yet told apart from its siblings); and from child, the
// spawn packet (see packet) and the passages of the parent's family relevant to its task (see
// relevant; a failed search leaves them out, logged).
func (e *Engine) inheritedBlock(ctx context.Context, parent kv.Session, facts []kv.Fact, tail []kv.Turn, cp *kv.Checkpoint, child kv.Session) string {
	cp, tail = sinceReset(parent, cp, tail)
	if e.Config.TailChars == 0 {
		tail = nil // configured off
	}
	// Constraints and decisions get sections of their own, said once (inject.Stated).
	var d kv.Digest
	if cp != nil {
		d = cp.Digest
	}
	constraints, decisions, rest := inject.Stated(parent, facts, d)
	var digest string
	if cp != nil {
		rest.Objective, rest.OpenRuns = "", nil
		digest = inject.RenderDigest(rest, inject.DefaultDigestChars)
	}
	passages, err := e.relevant(ctx, parent, child)
	if err != nil {
		e.warn("passages relevant to the sub-agent's task not searched", err, "parent", parent.ID)
	}
	// The ledger holds the prompts' constraints; the objective may be no turn (a task).
	block := inject.InheritedBlock(inject.Inherited{
		Parent:      parent,
		Digest:      digest,
		Tail:        tail,
		Files:       inject.FilesFirst(facts, parent.Files),
		Constraints: append(constraints, inject.InferConstraints([]string{parent.Objective})...),
		Decisions:   decisions,
		SearchTool:  SearchTool,
		SearchScope: otherScope(parent.Scope, e.Scope),
		Packet:      e.packet(child),
		Relevant:    passages,
		RelevantMax: e.Config.RelevantPassages,
	}, inject.Budget{TailChars: e.Config.TailChars, MaxChars: e.Config.MaxContextChars})
	return inject.Join(e.Config.MaxContextChars, block)
}

// packet is what a sub-agent is told of itself in its inherited block: its task (its objective,
// which the objective reinforcement keeps), the files the task names, its workspace, and its
// depth against spawn.max_depth.
func (e *Engine) packet(child kv.Session) inject.Packet {
	return inject.Packet{
		Task: child.Objective, Files: inject.TaskFiles(child.Objective), Workspace: child.Project,
		Depth: child.Depth, MaxDepth: e.Config.Spawn.MaxDepth,
	}
}

// guessedTask is a sub-agent paired with its spawn by a guess (a provisional pairing) as its
// packet may show it: without a task, since it may be serving a sibling's spawn; its own prompt
// says which.
func guessedTask(child kv.Session) kv.Session {
	child.Objective = ""
	return child
}

// SearchTool is the MCP tool the inherited block points a sub-agent to for the rest of its
// parent's transcript.
const SearchTool = "session_search"

// sinceReset leaves out of a session's checkpoint and turns what belongs to the conversation
// before the harness last reset it under its key (kv.Session.ResetSeq): a checkpoint that
// covers no turn after the reset, and the turns before it.
func sinceReset(sess kv.Session, cp *kv.Checkpoint, turns []kv.Turn) (*kv.Checkpoint, []kv.Turn) {
	if sess.ResetSeq == 0 {
		return cp, turns
	}
	if cp != nil && cp.TurnSeq <= sess.ResetSeq {
		cp = nil
	}
	i := 0
	for i < len(turns) && turns[i].Seq < sess.ResetSeq {
		i++
	}
	return cp, turns[i:]
}
