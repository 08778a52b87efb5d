package kv

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Block is one delivery of context to a session: the text heirloom handed the harness for it
// (one or more blocks: inherited, reinforcement, recovered), when, through what, and for a
// sub-agent's inherited block, from which parent and how that pairing stood. What `heirloom
// explain` and GET /api/sessions/{key}/blocks show.
type Block struct {
	Scope     string
	SessionID string
	At        time.Time
	// Via is what carried it: a hook event's kind ("subagent_start", "session_start", …) or a
	// plugin's call ("inject", "inject:compacting").
	Via      string
	Harness  string
	Headings []string // the blocks it holds, by heading, in order
	Chars    int      // its length in the harness's characters (UTF-16 units)
	// ParentID and ParentScope name the parent whose context an inherited block carries; ""
	// for other blocks. ParentScope is "" when the parent is in Scope.
	ParentID    string
	ParentScope string
	// Provisional says the sub-agent was paired with its spawn by a guess not yet confirmed
	// when the block was built (its task was left out of the block).
	Provisional bool
	Cut         string // the block's "(cut to fit: …)" note: what was left out for the cap; "" when nothing
	Text        string
}

// MaxBlocks is how many deliveries a session keeps, the newest; older ones are dropped as new
// ones are recorded.
const MaxBlocks = 32

// blockValue is the stored form of a Block.
type blockValue struct {
	At          time.Time `json:"at"`
	Via         string    `json:"via,omitempty"`
	Harness     string    `json:"harness,omitempty"`
	Headings    []string  `json:"headings,omitempty"`
	Chars       int       `json:"chars"`
	ParentID    string    `json:"parent_id,omitempty"`
	ParentScope string    `json:"parent_scope,omitempty"`
	Provisional bool      `json:"provisional,omitempty"`
	Cut         string    `json:"cut,omitempty"`
	Text        string    `json:"text"`
}

// blockSeq tells apart deliveries recorded in the same nanosecond.
var blockSeq atomic.Uint32

// blocksPrefix is d <scope> 0 <session> 0: every delivery to one session, oldest first.
func blocksPrefix(scope, id string) []byte {
	k := append([]byte{prefixBlock}, scope...)
	k = append(k, sep)
	k = append(k, id...)
	return append(k, sep)
}

// RecordBlock stores a delivery of context to session (b.Scope, b.SessionID) and drops that
// session's oldest beyond MaxBlocks, in one batch. It is not synced: a delivery is a record for
// the user to look at, and a crash may lose the last ones, never anything else.
func (s *Store) RecordBlock(ctx context.Context, b Block) error {
	if err := checkRef(b.Scope, b.SessionID); err != nil {
		return fmt.Errorf("record block: %w", err)
	}
	if b.At.IsZero() {
		b.At = s.now()
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return fmt.Errorf("record block for %s/%s: %w", b.Scope, b.SessionID, err)
	}
	defer s.release()
	v, err := json.Marshal(blockValue{At: b.At.UTC(), Via: b.Via, Harness: b.Harness, Headings: b.Headings, Chars: b.Chars,
		ParentID: b.ParentID, ParentScope: b.ParentScope, Provisional: b.Provisional, Cut: b.Cut, Text: b.Text})
	if err != nil {
		return fmt.Errorf("record block: %w", err)
	}
	prefix := blocksPrefix(b.Scope, b.SessionID)
	key := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), timeBits(b.At))
	key = binary.BigEndian.AppendUint32(key, blockSeq.Add(1))
	batch := db.NewBatch()
	defer batch.Close()
	if err := batch.Set(key, v, nil); err != nil {
		return err
	}
	// The oldest beyond MaxBlocks-1 already stored go: with the new one, MaxBlocks remain.
	var keys [][]byte
	if err := scanPrefix(ctx, s.counted(db), prefix, func(k []byte) (bool, error) {
		keys = append(keys, append([]byte(nil), k...))
		return true, nil
	}); err != nil {
		return fmt.Errorf("record block for %s/%s: %w", b.Scope, b.SessionID, err)
	}
	for i := 0; i+MaxBlocks-1 < len(keys); i++ {
		if err := batch.Delete(keys[i], nil); err != nil {
			return err
		}
	}
	s.counts.commits.Add(1)
	if err := batch.Commit(pebble.NoSync); err != nil {
		s.counts.commits.Add(-1)
		return fmt.Errorf("record block for %s/%s: %w", b.Scope, b.SessionID, err)
	}
	return nil
}

// Blocks returns the deliveries recorded for session (scope, id), newest first, at most limit
// (0 or less: all kept). A session with none, or not stored, gives an empty list.
func (s *Store) Blocks(ctx context.Context, scope, id string, limit int) ([]Block, error) {
	if err := checkRef(scope, id); err != nil {
		return nil, fmt.Errorf("blocks: %w", err)
	}
	db, err := s.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("blocks of %s/%s: %w", scope, id, err)
	}
	defer s.release()
	prefix := blocksPrefix(scope, id)
	it, err := s.counted(db).NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	out := []Block{}
	for ok := it.Last(); ok && (limit <= 0 || len(out) < limit); ok = it.Prev() {
		var v blockValue
		if err := json.Unmarshal(it.Value(), &v); err != nil {
			return nil, fmt.Errorf("blocks of %s/%s: decode: %w", scope, id, err)
		}
		out = append(out, Block{Scope: scope, SessionID: id, At: v.At, Via: v.Via, Harness: v.Harness, Headings: v.Headings,
			Chars: v.Chars, ParentID: v.ParentID, ParentScope: v.ParentScope, Provisional: v.Provisional, Cut: v.Cut, Text: v.Text})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("blocks of %s/%s: %w", scope, id, err)
	}
	return out, nil
}
