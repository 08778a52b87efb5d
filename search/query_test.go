package search

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		query string
		want  string // the parsed query as Query.String renders it
	}{
		{"deploy", "deploy"},
		{"  Deploy   KEY ", "deploy key"},
		{"deploy key rotation", "deploy key rotation"},
		// OR binds tighter than AND.
		{"vendor OR supplier", "vendor OR supplier"},
		{"a1 b2 OR c3 d4", "a1 b2 OR c3 d4"},
		{"a1 OR b2 OR c3 d4", "a1 OR b2 OR c3 d4"},
		{"a1 or b2", "a1 or b2"}, // only upper-case OR is the operator
		{`a1 "OR" b2`, "a1 or b2"},
		// Phrases.
		{`"exact phrase"`, `"exact phrase"`},
		{`"Exact  Phrase"  here`, `"exact phrase" here`},
		{`"single"`, "single"},
		{`"context.WithCancel(ctx)"`, `"context with cancel ctx"`},
		{`"" word`, "word"},
		{`x1 "phrase one" OR "phrase two"`, `x1 "phrase one" OR "phrase two"`},
		{`before"quoted"after`, `before quoted after`},
		// Exclusions.
		{"deploy -staging", "deploy -staging"},
		{`deploy -"dry run"`, `deploy -"dry run"`},
		{"deploy - staging", "deploy staging"}, // a lone dash excludes nothing
		{"deploy -", "deploy"},
		{"-staging deploy", "-staging deploy"},
		// Prefixes.
		{"depl*", "depl*"},
		{"parse_ledger*", "parseledger*"},
		{"context.With*", "context.with*"},
		{"WithCanc*", "withcanc*"},
		{"ab*", "ab*"},
		{"東京*", "東京*"},
		// Words as the index spells them.
		{"context.WithCancel", "context.withcancel"},
		{"ParseLedgerHeader", "parseledgerheader"},
		{"f(x)", `"f x"`},
		{"東京都", `"東京 京都"`},
		// Punctuation alone has nothing to find and is dropped.
		{"deploy ... !!", "deploy"},
		{"deploy OR ...", "deploy"},
		{"... OR deploy", "deploy"},
	}
	for _, tt := range tests {
		q, err := Parse(tt.query)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.query, err)
			continue
		}
		if got := q.String(); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.query, got, tt.want)
		}
		// What String renders parses back to the same query.
		again, err := Parse(q.String())
		if err != nil || again.String() != q.String() {
			t.Errorf("Parse(%q) = %s, which parses back to %s, %v", tt.query, q, again, err)
		}
	}
}

func TestParse_Structure(t *testing.T) {
	q, err := Parse(`a1 OR "b2 c3" -d4 e5*`)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.clauses) != 3 {
		t.Fatalf("clauses: %d, want 3", len(q.clauses))
	}
	c := q.clauses[0]
	if c.not || len(c.alts) != 2 || c.alts[0].term != "a1" || strings.Join(c.alts[1].phrase, " ") != "b2 c3" {
		t.Errorf("first clause: %+v, want a1 OR the phrase b2 c3", c)
	}
	if c := q.clauses[1]; !c.not || len(c.alts) != 1 || c.alts[0].term != "d4" {
		t.Errorf("second clause: %+v, want -d4", c)
	}
	if c := q.clauses[2]; c.not || !c.alts[0].prefix || c.alts[0].term != "e5" {
		t.Errorf("third clause: %+v, want the prefix e5", c)
	}
}

func TestParse_Errors(t *testing.T) {
	many := strings.Repeat("w ", MaxClauses) + "x"
	manyOr := "a" + strings.Repeat(" OR a", MaxClauses)
	longPhrase := `"` + strings.Repeat("w ", MaxClauses+1) + `"`
	tests := []struct {
		query string
		want  string // a part of the message
	}{
		{"", "no word to search for"},
		{"   ", "no word to search for"},
		{"... !!", "no word to search for"},
		{`"unclosed`, "the quote at column 1 is not closed"},
		{`deploy "unclosed phrase`, "the quote at column 8 is not closed"},
		{`déjà "x`, "the quote at column 6 is not closed"}, // columns count runes
		{"OR deploy", "OR at column 1 has nothing before it"},
		{"deploy OR", "OR at column 8 has nothing after it"},
		{"a OR OR b", "OR at column 3: the word after it cannot be excluded or another OR"},
		{"a OR -b", "the word after it cannot be excluded"},
		{"-a OR b", "an excluded word cannot take alternatives"},
		{"-staging", "only excludes"},
		{`-"dry run" -staging`, "only excludes"},
		{many, fmt.Sprintf("more than %d words", MaxClauses)},
		{manyOr, fmt.Sprintf("more than %d words", MaxClauses)},
		{longPhrase, fmt.Sprintf("more than %d words", MaxClauses)},
		{"a*", "a* at column 1: a prefix needs at least 2 letters"},
		{"x A*", "a prefix needs at least 2 letters"},
		{"*", "the * at column 1 has no word before it"},
		{"deploy **", "the * at column 8 has no word before it"},
		{"f(x*", "a prefix must be one word"},
		{strings.Repeat("z", MaxTermLen+1), "longer than the index keeps"},
	}
	for _, tt := range tests {
		q, err := Parse(tt.query)
		if err == nil {
			t.Errorf("Parse(%.40q) = %s, want an error with %q", tt.query, q, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%.40q): %q, want it to say %q", tt.query, err, tt.want)
		}
	}
	// Exactly MaxClauses words is allowed.
	if _, err := Parse(strings.Repeat("w ", MaxClauses)); err != nil {
		t.Errorf("%d words: %v", MaxClauses, err)
	}
}
