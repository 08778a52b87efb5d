package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// memSource is a Source over turns held in memory, indexed as the store indexes them: one posting
// per term and turn with the term's count, the turn's length in terms, its role, time and stamp;
// the scope's figures summed over every indexed turn. Postings come in a random order each walk,
// since the contract promises none. Each Run sees it as it is when called, as a store snapshot.
type memSource struct {
	docs  map[Doc]*memDoc
	order []Doc // in indexing order
	stats Stats
	texts int // Text calls
}

type memDoc struct {
	text  string
	role  string
	at    time.Time
	stamp uint64
	len   int
	tf    map[string]int
}

func newMemSource() *memSource { return &memSource{docs: map[Doc]*memDoc{}} }

// add indexes one turn; a turn without terms is stored but not indexed, as the store does.
func (m *memSource) add(session string, seq uint64, role string, at time.Time, text string) Doc {
	d := Doc{Session: session, Seq: seq}
	if _, ok := m.docs[d]; ok {
		panic(fmt.Sprintf("%v added twice", d))
	}
	md := &memDoc{text: text, role: role, at: at, tf: map[string]int{}}
	Analyzer{}.Terms(text, func(t string) {
		md.tf[strings.Clone(t)]++
		md.len++
	})
	m.docs[d] = md
	m.order = append(m.order, d)
	if md.len > 0 {
		m.stats.Stamp++
		m.stats.Docs++
		m.stats.Terms += uint64(md.len)
		md.stamp = m.stats.Stamp
	}
	return d
}

// remove deletes a turn and its postings, as the store does when a session is deleted.
func (m *memSource) remove(d Doc) {
	md, ok := m.docs[d]
	if !ok {
		panic(fmt.Sprintf("no turn %v", d))
	}
	delete(m.docs, d)
	if md.len > 0 {
		m.stats.Docs--
		m.stats.Terms -= uint64(md.len)
	}
}

func (m *memSource) Stats(ctx context.Context) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	return m.stats, nil
}

func (m *memSource) Postings(ctx context.Context, term string, prefix bool, fn func(Posting) error) error {
	var ps []Posting
	for d, md := range m.docs {
		if md.len == 0 {
			continue
		}
		for t, tf := range md.tf {
			if t == term || prefix && strings.HasPrefix(t, term) {
				ps = append(ps, Posting{Doc: d, Term: t, TF: tf, Len: md.len, Role: md.role, At: md.at, Stamp: md.stamp})
			}
		}
	}
	rand.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	for _, p := range ps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

func (m *memSource) Text(ctx context.Context, d Doc) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.texts++
	md, ok := m.docs[d]
	if !ok {
		return "", fmt.Errorf("no turn %v", d)
	}
	return md.text, nil
}

// memSessionSource is a memSource that is also a SessionSource; it counts the postings it reads.
type memSessionSource struct {
	*memSource
	read int
}

func (m *memSessionSource) SessionPostings(ctx context.Context, term string, sessions []string, fn func(Posting) error) error {
	in := map[string]bool{}
	for _, s := range sessions {
		in[s] = true
	}
	return m.Postings(ctx, term, false, func(p Posting) error {
		if !in[p.Doc.Session] {
			return nil
		}
		m.read++
		return fn(p)
	})
}
