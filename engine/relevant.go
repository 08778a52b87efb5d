package engine

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/search"
)

// relevantExtra is how many more hits than passages a task's search asks for: the block leaves
// out those its transcript section already shows, and the engine those that only restate the task.
const relevantExtra = 6

// relevantMaxDocFreq leaves out of a task's search the terms found in more turns of the family
// than this (search.Options.MaxDocFreq): in a family that large they rank next to nothing, and
// reading them would make the child's first call wait (tens of milliseconds at 10 MB).
const relevantMaxDocFreq = 2048

// relevant returns the passages of parent's family (the parent and its sub-agents, child left
// out) most relevant to child's task, best first: a search of the index for the task's
// distinctive terms (search.TaskQuery), reading the family's postings only. Nothing when the
// section is off, the child has no task (a guessed pairing), or the store has no index.
func (e *Engine) relevant(ctx context.Context, parent, child kv.Session) ([]inject.Passage, error) {
	n := e.Config.RelevantPassages
	if n == 0 || strings.TrimSpace(child.Objective) == "" || !e.Store.IndexStatus().Enabled {
		return nil, nil
	}
	q, ok := search.TaskQuery(child.Objective, 0)
	if !ok {
		return nil, nil
	}
	x, err := e.Store.IndexReader(ctx, parent.Scope)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	fam, err := descendants(ctx, x, parent.ID, child.ID)
	if err != nil {
		return nil, err
	}
	page, err := search.Run(ctx, indexSource{x: x}, q, search.Options{
		Limit:      n + relevantExtra,
		Sessions:   slices.Sorted(maps.Keys(fam)),
		MaxDocFreq: relevantMaxDocFreq,
		Clean:      inject.Redact,
		Plain:      true,
	})
	if err != nil {
		return nil, err
	}
	task := tokens(child.Objective)
	objective := strings.Join(tokens(parent.Objective), " ")
	names := map[string]string{parent.ID: "parent"}
	var out []inject.Passage
	for _, h := range page.Hits {
		words := tokens(h.Snippet)
		if restates(words, task) {
			continue // the spawn's own call (its prompt), or the task said again
		}
		if h.Doc.Session == parent.ID && len(words) > 0 && strings.Contains(" "+objective+" ", " "+strings.Join(words, " ")+" ") {
			continue // the block's Objective line says it
		}
		from, ok := names[h.Doc.Session]
		if !ok {
			from = "sub-agent " + h.Doc.Session
			if s, err := x.Session(ctx, h.Doc.Session); err == nil && s.Title != "" {
				from = "sub-agent " + s.Title
			}
			names[h.Doc.Session] = from
		}
		out = append(out, inject.Passage{Session: h.Doc.Session, From: from, Turn: h.Doc.Seq, Role: h.Role, Text: h.Snippet})
	}
	return out, nil
}

// tokens are text's base tokens, in order.
func tokens(text string) []string {
	var out []string
	search.Analyzer{}.Tokens(text, func(t string) { out = append(out, strings.Clone(t)) })
	return out
}

// restates reports whether a passage (its tokens) only says the task again: four in five of its
// tokens (of five at least) are the task's; or at least half of them are and it holds eight of
// the task's tokens in a row, as the spawning call's input does (the prompt among its other
// fields). The child has the task already. A finding the task quotes, with more to say, stays.
func restates(passage, task []string) bool {
	in := map[string]bool{}
	for _, t := range task {
		in[t] = true
	}
	n := 0
	for _, t := range passage {
		if in[t] {
			n++
		}
	}
	if len(passage) >= 5 && n*5 >= len(passage)*4 {
		return true
	}
	const run = 8
	if len(task) < run || n*2 < len(passage) {
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+run <= len(task); i++ {
		seen[strings.Join(task[i:i+run], " ")] = true
	}
	for i := 0; i+run <= len(passage); i++ {
		if seen[strings.Join(passage[i:i+run], " ")] {
			return true
		}
	}
	return false
}
