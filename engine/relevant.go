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
		Limit:    n + relevantExtra,
		Sessions: slices.Sorted(maps.Keys(fam)),
		Clean:    inject.Redact,
		Plain:    true,
	})
	if err != nil {
		return nil, err
	}
	task := taskWords(child.Objective)
	names := map[string]string{parent.ID: "parent"}
	var out []inject.Passage
	for _, h := range page.Hits {
		if restates(h.Snippet, task) {
			continue // the spawn's own prompt, or the task said again
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

// taskWords are the base tokens of a task, as a set.
func taskWords(task string) map[string]bool {
	out := map[string]bool{}
	search.Analyzer{}.Tokens(task, func(t string) { out[strings.Clone(t)] = true })
	return out
}

// restates reports whether a passage is mostly the task's own words: four in five of its tokens
// (of five at least) are the task's. Such a passage is the spawning call's prompt as the
// parent's transcript recorded it, or the task said again: the child has it already.
func restates(passage string, task map[string]bool) bool {
	in, all := 0, 0
	search.Analyzer{}.Tokens(passage, func(t string) {
		all++
		if task[t] {
			in++
		}
	})
	return all >= 5 && in*5 >= all*4
}
