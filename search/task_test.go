package search

import (
	"slices"
	"strings"
	"testing"
)

func TestTaskQuery(t *testing.T) {
	tests := []struct {
		task string
		max  int
		want string // the query as String renders it; "" when none
	}{
		{"please look at the code and report back", 0, ""},
		{"", 0, ""},
		{"go to it", 0, ""},
		{"Find why the ledger cache is stale", 0, "ledger OR cache OR stale"},
		// Repeated terms first, then the longest, then the task's order.
		{"the cache: fix the cache eviction in the ledger", 0, "cache OR eviction OR ledger OR fix"},
		{"Investigate parseLedgerHeader in ledger/header.go:42", 4,
			"ledger OR header OR ledger/header.go:42 OR parseledgerheader"},
		// Numbers: a port or an issue number names something; a 2 or 42 does not.
		{"port 8080 refused, retry 3 times, see issue 42", 0, "refused OR retry OR times OR issue OR port OR 8080"},
	}
	for _, tt := range tests {
		q, ok := TaskQuery(tt.task, tt.max)
		got := ""
		if ok {
			got = q.String()
		}
		if got != tt.want {
			t.Errorf("TaskQuery(%q, %d) = %q, want %q", tt.task, tt.max, got, tt.want)
		}
	}
	long := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu ", 3) +
		"omicron sigma tau upsilon phi chi psi omega rho aleph beth gimel daleth vav zayin heth teth yodh kaph lamedh mem"
	q, _ := TaskQuery(long, 100)
	if n := len(q.clauses[0].alts); n != MaxClauses {
		t.Errorf("a long task gave %d terms, want MaxClauses (%d)", n, MaxClauses)
	}
	q, _ = TaskQuery(long, 0)
	if n := len(q.clauses[0].alts); n != MaxTaskTerms {
		t.Errorf("the default keeps %d terms, want %d", n, MaxTaskTerms)
	}
}

// A task's query finds the turns that share its rare words before those that share its common
// ones, and a Plain snippet carries no marks.
func TestTaskQuery_Ranks(t *testing.T) {
	m := newMemSource()
	seed(m, "p",
		"we found that the ledger watermark goes backwards after compaction", // p/0: the finding
		"the ledger is fine",                   // p/1
		"ledger ledger ledger tests pass",      // p/2
		"lunch was good",                       // p/3
		"compaction of the ledger runs at 3am", // p/4
	)
	for i := range 10 {
		seed(m, "p", "the ledger grows") // ledger is common
		_ = i
	}
	q, ok := TaskQuery("Check whether the ledger watermark can go backwards", 0)
	if !ok {
		t.Fatal("no query")
	}
	page, err := Run(t.Context(), m, q, Options{Limit: 3, Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := hitNames(page); len(got) == 0 || got[0] != "p/0" {
		t.Errorf("hits %v: the finding p/0 is not first", got)
	}
	if slices.ContainsFunc(page.Hits, func(h Hit) bool { return strings.Contains(h.Snippet, "**") }) {
		t.Errorf("a plain snippet is marked: %q", page.Hits[0].Snippet)
	}
}
