package kv

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// factsKey is f <scope> 0 <id>: a session's facts ledger.
func factsKey(scope, id string) []byte {
	k := make([]byte, 0, 2+len(scope)+len(id))
	k = append(k, prefixFacts)
	k = appendPart(k, scope)
	return append(k, id...)
}

func decodeFacts(b []byte) ([]Fact, error) {
	var out []Fact
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode facts: %w", err)
	}
	return nilIfEmpty(out), nil
}

// getFacts reads a session's facts ledger; none when it has none.
func getFacts(r pebble.Reader, scope, id string) ([]Fact, error) {
	facts, _, err := getRecord(r, factsKey(scope, id), decodeFacts)
	return facts, err
}

// Facts returns session (scope, id)'s facts ledger, oldest first; none when the store keeps no
// ledger or the session's turns stated nothing.
func (s *Store) Facts(ctx context.Context, scope, id string) ([]Fact, error) {
	if err := checkRef(scope, id); err != nil {
		return nil, fmt.Errorf("read facts: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("read facts %s/%s: %w", scope, id, err)
	}
	defer s.release()
	facts, err := getFacts(s.counted(db), scope, id)
	if err != nil {
		return nil, fmt.Errorf("read facts %s/%s: %w", scope, id, err)
	}
	return facts, nil
}

// factsWriter keeps one session's ledger while a batch stores its turns: the ledger is read
// once, and only when a turn states something or is stored again in place.
type factsWriter struct {
	f         FactFinder
	r         pebble.Reader
	scope, id string
	ledger    []Fact
	loaded    bool
	dirty     bool
}

// note brings the ledger up to date with t, stored new or (again) in place.
func (w *factsWriter) note(t *Turn, again bool) error {
	if w.f == nil || t.Unindexed {
		return nil
	}
	found := w.f.Detect(t)
	if len(found) == 0 && !again {
		return nil
	}
	if !w.loaded {
		ledger, err := getFacts(w.r, w.scope, w.id)
		if err != nil {
			return err
		}
		w.ledger, w.loaded = ledger, true
	}
	if len(found) == 0 && !stated(w.ledger, t.Seq) {
		return nil
	}
	w.ledger, w.dirty = w.f.Note(w.ledger, t, found), true
	return nil
}

// stated reports whether the ledger holds something turn seq stated or superseded.
func stated(ledger []Fact, seq uint64) bool {
	for _, f := range ledger {
		if f.Seq == seq || f.Replaced && f.ReplacedAt == seq {
			return true
		}
	}
	return false
}

// flush puts the ledger in b when it changed.
func (w *factsWriter) flush(b *pebble.Batch) error {
	if !w.dirty {
		return nil
	}
	if len(w.ledger) == 0 {
		return b.Delete(factsKey(w.scope, w.id), nil)
	}
	v, err := json.Marshal(w.ledger)
	if err != nil {
		return fmt.Errorf("encode facts %s/%s: %w", w.scope, w.id, err)
	}
	return b.Set(factsKey(w.scope, w.id), v, nil)
}
