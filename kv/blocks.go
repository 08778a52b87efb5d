package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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

// blockMu serialises RecordBlock: each takes the session's next number from the newest record.
var blockMu sync.Mutex

// blocksPrefix is d <scope> 0 <session> 0: every delivery to one session, oldest first; a
// record's key ends with its number in the session (big-endian uint64, from 1).
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
	blockMu.Lock()
	defer blockMu.Unlock()
	// The session's newest record says its number: one seek, whatever the session holds.
	it, err := s.counted(db).NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	var last uint64
	if it.Last() && len(it.Key()) == len(prefix)+8 {
		last = binary.BigEndian.Uint64(it.Key()[len(prefix):])
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("record block for %s/%s: %w", b.Scope, b.SessionID, err)
	}
	n := last + 1
	key := binary.BigEndian.AppendUint64(bytes.Clone(prefix), n)
	batch := db.NewBatch()
	defer batch.Close()
	if err := batch.Set(key, v, nil); err != nil {
		return err
	}
	if n > MaxBlocks {
		// The one that falls out of the newest MaxBlocks goes (numbers are consecutive): a
		// point deletion, so no read ever walks more than the kept records.
		if err := batch.Delete(binary.BigEndian.AppendUint64(bytes.Clone(prefix), n-MaxBlocks), nil); err != nil {
			return err
		}
	}
	// Unsynced, in the group sync's care: a record of what was said, worth no fsync on the reply.
	if err := s.commit(Unsynced(ctx), batch); err != nil {
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
