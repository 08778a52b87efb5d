package search

import (
	"fmt"
	"strings"
	"unicode"
)

// minPrefix is the shortest prefix a query may ask for: shorter ones would walk most of the index.
const minPrefix = 2

// MaxClauses bounds a query: clauses, OR alternatives and phrase words together.
const MaxClauses = 32

// Query is a parsed query: clauses that must all hold, each any of its alternatives (OR), or,
// negated, none of them. Make one with Parse.
type Query struct {
	clauses []clause
}

type clause struct {
	not  bool
	alts []atom
}

// atom is one thing to find: a term, a term prefix, or a phrase of base tokens.
type atom struct {
	term   string
	prefix bool
	phrase []string
}

// String renders q in the query syntax, as Parse read it (terms as the index spells them).
func (q Query) String() string {
	var parts []string
	for _, c := range q.clauses {
		var alts []string
		for _, a := range c.alts {
			alts = append(alts, a.String())
		}
		s := strings.Join(alts, " OR ")
		if c.not {
			s = "-" + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func (a atom) String() string {
	switch {
	case a.phrase != nil:
		return `"` + strings.Join(a.phrase, " ") + `"`
	case a.prefix:
		return a.term + "*"
	}
	return a.term
}

// Parse reads a query: words are ANDed; `a OR b` is either (OR binds tighter than AND);
// `"exact phrase"`; `-word` or `-"phrase"` excludes; `pre*` matches words starting with pre. A
// word is looked up as the analyzer indexed it (Analyzer.Lookup): `WithCancel` finds
// `context.WithCancel`, `header.go` finds `ledger/header.go`. Words with nothing to search
// (punctuation) are dropped. A query needs something to find that is not excluded.
func Parse(q string) (Query, error) {
	toks, err := lex(q)
	if err != nil {
		return Query{}, err
	}
	var out Query
	n := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.or {
			return Query{}, fmt.Errorf("OR at column %d has nothing before it", t.col)
		}
		a, ok, err := t.atom()
		if err != nil {
			return Query{}, err
		}
		c := clause{not: t.not}
		if ok {
			c.alts = append(c.alts, a)
		}
		for i+1 < len(toks) && toks[i+1].or {
			if i+2 >= len(toks) {
				return Query{}, fmt.Errorf("OR at column %d has nothing after it", toks[i+1].col)
			}
			next := toks[i+2]
			if next.not || next.or {
				return Query{}, fmt.Errorf("OR at column %d: the word after it cannot be excluded or another OR", toks[i+1].col)
			}
			if t.not {
				return Query{}, fmt.Errorf("OR at column %d: an excluded word cannot take alternatives", toks[i+1].col)
			}
			b, ok, err := next.atom()
			if err != nil {
				return Query{}, err
			}
			if ok {
				c.alts = append(c.alts, b)
			}
			i += 2
		}
		if len(c.alts) == 0 {
			continue
		}
		for _, a := range c.alts {
			n += max(1, len(a.phrase))
		}
		if n > MaxClauses {
			return Query{}, fmt.Errorf("the query has more than %d words", MaxClauses)
		}
		out.clauses = append(out.clauses, c)
	}
	positive := false
	for _, c := range out.clauses {
		positive = positive || !c.not
	}
	switch {
	case len(out.clauses) == 0:
		return Query{}, fmt.Errorf("the query has no word to search for")
	case !positive:
		return Query{}, fmt.Errorf("the query only excludes: add a word to search for")
	}
	return out, nil
}

// lexeme is one item of a query: a word or a quoted phrase (maybe excluded), or OR.
type lexeme struct {
	text   string
	quoted bool
	not    bool
	or     bool
	col    int // 1-based rune column, for errors
}

func lex(q string) ([]lexeme, error) {
	rs := []rune(q)
	var out []lexeme
	for i := 0; i < len(rs); {
		if unicode.IsSpace(rs[i]) {
			i++
			continue
		}
		l := lexeme{col: i + 1}
		if rs[i] == '-' && i+1 < len(rs) && !unicode.IsSpace(rs[i+1]) {
			l.not = true
			i++
		}
		if rs[i] == '"' {
			end := i + 1
			for end < len(rs) && rs[end] != '"' {
				end++
			}
			if end == len(rs) {
				return nil, fmt.Errorf("the quote at column %d is not closed", i+1)
			}
			l.text, l.quoted = string(rs[i+1:end]), true
			i = end + 1
		} else {
			end := i
			for end < len(rs) && !unicode.IsSpace(rs[end]) && rs[end] != '"' {
				end++
			}
			l.text = string(rs[i:end])
			i = end
			l.or = !l.not && l.text == "OR"
		}
		out = append(out, l)
	}
	return out, nil
}

// atom reads a word or phrase; ok is false when it has nothing to search for.
func (l lexeme) atom() (atom, bool, error) {
	var an Analyzer
	if l.quoted {
		var toks []string
		an.Tokens(l.text, func(t string) { toks = append(toks, strings.Clone(t)) })
		switch len(toks) {
		case 0:
			return atom{}, false, nil
		case 1:
			return atom{term: toks[0]}, true, nil
		}
		return atom{phrase: toks}, true, nil
	}
	word, prefix := l.text, false
	if strings.HasSuffix(word, "*") {
		word, prefix = strings.TrimRight(word, "*"), true
	}
	term, phrase, tooLong := lookup(word)
	switch {
	case tooLong:
		return atom{}, false, fmt.Errorf("the word at column %d is longer than the index keeps (%d bytes a part)", l.col, MaxTermLen)
	case term == "" && phrase == nil:
		if prefix && strings.TrimSpace(word) == "" {
			return atom{}, false, fmt.Errorf("the * at column %d has no word before it", l.col)
		}
		return atom{}, false, nil
	case prefix && term == "":
		return atom{}, false, fmt.Errorf("%s* at column %d: a prefix must be one word", word, l.col)
	case prefix && len(term) < minPrefix:
		return atom{}, false, fmt.Errorf("%s* at column %d: a prefix needs at least %d letters", word, l.col, minPrefix)
	case prefix:
		return atom{term: strings.Clone(term), prefix: true}, true, nil
	case term != "":
		return atom{term: strings.Clone(term)}, true, nil
	}
	return atom{phrase: phrase}, true, nil
}
