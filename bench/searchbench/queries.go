package main

// benchQuery is one query of the fixed set, in each engine's syntax.
type benchQuery struct {
	Name     string // what it exercises
	Heirloom string // heirloom's syntax (search.Parse)
	FTS5     string // the same question in FTS5's MATCH syntax
}

// queries are the fixed query set. Their words were chosen from the generated corpus (seed 1)
// by how many turns hold them: the rare identifier is in 14 of the 67,314 turns of 64 MiB, the
// common word in about a quarter. `searchbench run` reports each one's matches on both sides.
var queries = []benchQuery{
	{Name: "rare term", Heirloom: "dispatchExecutorSnapshot", FTS5: "dispatchExecutorSnapshot"},
	{Name: "common term", Heirloom: "error", FTS5: "error"},
	{Name: "two-term AND", Heirloom: "ledger header", FTS5: "ledger header"},
	{Name: "OR", Heirloom: "timeout OR deadline", FTS5: "timeout OR deadline"},
	{Name: "phrase", Heirloom: `"failed to open"`, FTS5: `"failed to open"`},
	{Name: "prefix", Heirloom: "compact*", FTS5: "compact*"},
	{Name: "exclusion", Heirloom: "ledger -test", FTS5: "ledger NOT test"},
}
