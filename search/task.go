package search

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxTaskTerms is how many of a task's terms TaskQuery keeps by default.
const MaxTaskTerms = 24

// TaskQuery returns the query that finds the turns most relevant to a task (a sub-agent's
// prompt): any of the task's distinctive terms (one clause of alternatives, so BM25 ranks a turn
// by how many of them it holds, how often and how rare they are). The terms are the task's index
// terms (Analyzer.Terms: word parts, joined identifiers, paths), less stop words and terms under
// three bytes; at most maxTerms of them (≤ 0: MaxTaskTerms, and never more than MaxClauses), the
// ones the task repeats most first, then the longest (a path or a whole identifier names more
// than a word part does), then in the task's order. ok is false when no term is left.
func TaskQuery(task string, maxTerms int) (q Query, ok bool) {
	if maxTerms <= 0 {
		maxTerms = MaxTaskTerms
	}
	maxTerms = min(maxTerms, MaxClauses)
	type cand struct {
		term  string
		count int
		first int
	}
	byTerm := map[string]*cand{}
	var order []*cand
	Analyzer{}.Terms(task, func(t string) {
		if c := byTerm[t]; c != nil {
			c.count++
			return
		}
		if len(t) < 3 || stopWords[t] || allDigits(t) && len(t) < 4 {
			return
		}
		c := &cand{term: strings.Clone(t), count: 1, first: len(order)}
		byTerm[c.term] = c
		order = append(order, c)
	})
	slices.SortFunc(order, func(x, y *cand) int {
		if c := cmp.Compare(y.count, x.count); c != 0 {
			return c
		}
		if c := cmp.Compare(utf8.RuneCountInString(y.term), utf8.RuneCountInString(x.term)); c != 0 {
			return c
		}
		return cmp.Compare(x.first, y.first)
	})
	var alts []atom
	for _, c := range order[:min(len(order), maxTerms)] {
		alts = append(alts, atom{term: c.term})
	}
	if len(alts) == 0 {
		return Query{}, false
	}
	return Query{clauses: []clause{{alts: alts}}}, true
}

func allDigits(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// stopWords are left out of a task's query: English function words and the words any task to a
// coding agent is made of ("please look at the code and report back"), which name nothing.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a about above after again against all also am an and any are aren't as at be because been
		before being below between both but by can cannot could did didn't do does doesn't doing
		don't down during each either else even ever every few for from further get gets got had
		has hasn't have haven't having he her here hers herself him himself his how however i if
		in into is isn't it it's its itself just let let's like may me might more most much must
		my myself no nor not now of off on once one only or other ought our ours ourselves out over
		own same shall she should so some such than that that's the their theirs them themselves
		then there there's these they this those though through thus to too under until up upon us
		very via was wasn't we were weren't what when where whether which while who whom whose why
		will with within without won't would yet you your yours yourself yourselves
		able already always another anything back come done else etc good great instead keep know
		last least less lot make makes making many maybe new next nothing ok okay once others please
		put quite rather really right said say see seem seems since something soon still sure take
		tell thank thanks thing things think try trying two use used uses using want way well went
		look looks find found check give given go going goes need needs needed report return
		returns summary summarize task tasks work works working job step steps thing whole part
		answer question questions help file files code line lines text word words call called
		don doesn didn isn aren wasn weren won haven hasn hadn shouldn wouldn couldn can't
	`) {
		m[w] = true
	}
	return m
}()
