package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// This file is the only place that builds or parses keys. The layout is described in doc.go;
// every key is one record-type byte, then the memory scope, then the record's own components.
// Variable-length components are separated by a NUL byte (scopes and ids are checked NUL-free
// before a key is built); numbers are fixed-width big-endian, so byte order is the wanted order.

// Record-type prefixes: the first byte of every key.
const (
	prefixMeta       byte = 'm' // m <name>: store metadata
	prefixSession    byte = 's' // s <scope> 0 <id>: a Session
	prefixRecency    byte = 'r' // r <scope> 0 <^updated> <id>: recency index, newest first
	prefixChild      byte = 'c' // c <scope> 0 <parent> 0 <created> <id>: children-by-parent index
	prefixCrossChild byte = 'l' // l <parent scope> 0 <parent> 0 <created> <child scope> 0 <id>: children in another scope
	prefixTurn       byte = 't' // t <scope> 0 <id> 0 <seq>: a Turn
	prefixTurnSource byte = 'i' // i <scope> 0 <id> 0 <source id>: SourceID → Seq index

	prefixRun        byte = 'n' // n <scope> 0 <id>: a Run
	prefixRunRecency byte = 'o' // o <scope> 0 <^created> <id>: runs, newest first
	prefixSpawn      byte = 'p' // p <scope> 0 <root> 0 <created> <id>: pending runs (unpaired spawns) of a root session
	prefixRunChild   byte = 'b' // b <scope> 0 <child id>: the run paired with a sub-agent session; value: run id
	prefixRunRoot    byte = 'u' // u <scope> 0 <root> 0 <^created> <id>: the runs of one top-level session, newest first
	prefixRunParent  byte = 'v' // v <scope> 0 <parent> 0 <^created> <id>: the runs one session asked for, newest first
	prefixRunGuess   byte = 'q' // q <scope> 0 <root> 0 <created> <id>: a root's provisionally paired runs, oldest first
	prefixRunOpen    byte = 'a' // a <scope> 0 <created> <id>: open runs (pending, running), oldest first
	prefixRunActive  byte = 'g' // g <scope> 0 <parent> 0 <id>: one session's open runs (its active children)
	prefixRunResult  byte = 'w' // w <scope> 0 <ended> <id>: finished runs holding their full result, oldest end first

	prefixCheckpoint        byte = 'k' // k <scope> 0 <id>: a Checkpoint
	prefixCheckpointSession byte = 'h' // h <scope> 0 <session> 0 <^created> <^id> ff: a session's checkpoints, newest first
	prefixCheckpointProject byte = 'j' // j <scope> 0 <project> 0 <^created> <^id> ff: a project's checkpoints, newest first; value: session id
	prefixCheckpointAge     byte = 'e' // e <scope> 0 <created> <id>: a scope's checkpoints, oldest first (pruning); value: session id

	prefixPosting    byte = 'x' // x <scope> 0 <term> 0 <session> 0 <seq>: a search posting
	prefixIndexStats byte = 'y' // y <scope>: the scope's search index figures (docs, terms, stamp)

	prefixFacts byte = 'f' // f <scope> 0 <id>: a session's facts ledger
	prefixBlock byte = 'd' // d <scope> 0 <session> 0 <at> <n>: a block of context delivered to a session, oldest first
)

// sep separates variable-length key components.
const sep byte = 0

// Metadata keys. They carry no scope: they describe the whole store.
var (
	schemaKey = []byte{prefixMeta, 's', 'c', 'h', 'e', 'm', 'a'} // JSON number: the schema version
	probeKey  = []byte{prefixMeta, 'p', 'r', 'o', 'b', 'e'}      // JSON string: written by Check
	indexKey  = []byte{prefixMeta, 'i', 'n', 'd', 'e', 'x'}      // JSON indexState: the search index's version and state
)

// errBadKey is wrapped by every decoder when a key does not have the expected shape.
var errBadKey = errors.New("malformed key")

// checkScope reports whether scope can be used as a key component: non-empty and NUL-free.
func checkScope(scope string) error {
	switch {
	case scope == "":
		return fmt.Errorf("scope required")
	case strings.IndexByte(scope, sep) >= 0:
		return fmt.Errorf("scope %q contains NUL", scope)
	}
	return nil
}

// checkRef reports whether scope and id can be used as key components: both non-empty and
// NUL-free. Public methods call it before building keys from caller input.
func checkRef(scope, id string) error {
	if err := checkScope(scope); err != nil {
		return err
	}
	switch {
	case id == "":
		return fmt.Errorf("id required")
	case strings.IndexByte(id, sep) >= 0:
		return fmt.Errorf("id %q contains NUL", id)
	}
	return nil
}

// sessionKey is s <scope> 0 <id>.
func sessionKey(scope, id string) []byte {
	k := make([]byte, 0, 2+len(scope)+len(id))
	k = append(k, prefixSession)
	k = appendPart(k, scope)
	return append(k, id...)
}

func decodeSessionKey(k []byte) (scope, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixSession)
	scope = r.part()
	id = r.lastPart()
	return scope, id, r.done("session")
}

// recencyPrefix is r <scope> 0: every recency entry of a scope, newest first.
func recencyPrefix(scope string) []byte {
	return appendPart([]byte{prefixRecency}, scope)
}

// recencyKey is r <scope> 0 <^updated> <id>. The timestamp is inverted so the newest entry
// sorts first; ties are broken by id.
func recencyKey(scope string, updated time.Time, id string) []byte {
	k := make([]byte, 0, 10+len(scope)+len(id))
	k = append(k, prefixRecency)
	k = appendPart(k, scope)
	k = binary.BigEndian.AppendUint64(k, ^timeBits(updated))
	return append(k, id...)
}

func decodeRecencyKey(k []byte) (scope string, updated time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixRecency)
	scope = r.part()
	updated = bitsTime(^r.uint64())
	id = r.lastPart()
	return scope, updated, id, r.done("recency")
}

// childrenPrefix is c <scope> 0 <parent> 0: every child link of one parent, oldest first.
func childrenPrefix(scope, parentID string) []byte {
	k := make([]byte, 0, 3+len(scope)+len(parentID))
	k = append(k, prefixChild)
	k = appendPart(k, scope)
	return appendPart(k, parentID)
}

// childKey is c <scope> 0 <parent> 0 <created> <id>, so children list by creation time, then id.
func childKey(scope, parentID string, created time.Time, id string) []byte {
	k := childrenPrefix(scope, parentID)
	k = binary.BigEndian.AppendUint64(k, timeBits(created))
	return append(k, id...)
}

func decodeChildKey(k []byte) (scope, parentID string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixChild)
	scope = r.part()
	parentID = r.part()
	created = bitsTime(r.uint64())
	id = r.lastPart()
	return scope, parentID, created, id, r.done("child")
}

// crossChildrenPrefix is l <scope> 0 <parent> 0: every link of one parent to a child in another
// scope, oldest first.
func crossChildrenPrefix(scope, parentID string) []byte {
	k := make([]byte, 0, 3+len(scope)+len(parentID))
	k = append(k, prefixCrossChild)
	k = appendPart(k, scope)
	return appendPart(k, parentID)
}

// crossChildKey is l <parent scope> 0 <parent> 0 <created> <child scope> 0 <id>: the link lives
// in the parent's scope, where its children are listed, and names the child's.
func crossChildKey(scope, parentID string, created time.Time, childScope, id string) []byte {
	k := crossChildrenPrefix(scope, parentID)
	k = binary.BigEndian.AppendUint64(k, timeBits(created))
	k = appendPart(k, childScope)
	return append(k, id...)
}

func decodeCrossChildKey(k []byte) (scope, parentID string, created time.Time, childScope, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixCrossChild)
	scope = r.part()
	parentID = r.part()
	created = bitsTime(r.uint64())
	childScope = r.part()
	id = r.lastPart()
	return scope, parentID, created, childScope, id, r.done("cross child")
}

// parentLinkKey is the children-index entry of sess, which has a parent: c in its own scope, or
// l in its parent's when that is another.
func parentLinkKey(sess *Session) []byte {
	if sess.ParentScope != "" {
		return crossChildKey(sess.ParentScope, sess.ParentID, sess.CreatedAt, sess.Scope, sess.ID)
	}
	return childKey(sess.Scope, sess.ParentID, sess.CreatedAt, sess.ID)
}

// turnsPrefix is t <scope> 0 <id> 0: every turn of one session, by Seq.
func turnsPrefix(scope, id string) []byte {
	k := make([]byte, 0, 11+len(scope)+len(id))
	k = append(k, prefixTurn)
	k = appendPart(k, scope)
	return appendPart(k, id)
}

// turnKey is t <scope> 0 <id> 0 <seq>.
func turnKey(scope, id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(turnsPrefix(scope, id), seq)
}

func decodeTurnKey(k []byte) (scope, id string, seq uint64, err error) {
	r := keyReader{b: k}
	r.prefix(prefixTurn)
	scope = r.part()
	id = r.part()
	seq = r.uint64()
	return scope, id, seq, r.done("turn")
}

// turnSourceKey is i <scope> 0 <id> 0 <source id>. The source id is the last component, so it
// may hold any bytes, NUL included.
func turnSourceKey(scope, id, sourceID string) []byte {
	k := make([]byte, 0, 3+len(scope)+len(id)+len(sourceID))
	k = append(k, prefixTurnSource)
	k = appendPart(k, scope)
	k = appendPart(k, id)
	return append(k, sourceID...)
}

func decodeTurnSourceKey(k []byte) (scope, id, sourceID string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixTurnSource)
	scope = r.part()
	id = r.part()
	sourceID = r.rest()
	return scope, id, sourceID, r.done("turn source")
}

// runKey is n <scope> 0 <id>.
func runKey(scope, id string) []byte {
	k := appendPart([]byte{prefixRun}, scope)
	return append(k, id...)
}

// runRecencyPrefix is o <scope> 0: every run of a scope, newest first.
func runRecencyPrefix(scope string) []byte {
	return appendPart([]byte{prefixRunRecency}, scope)
}

// runRecencyKey is o <scope> 0 <^created> <id>.
func runRecencyKey(scope string, created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(runRecencyPrefix(scope), ^timeBits(created))
	return append(k, id...)
}

func decodeRunRecencyKey(k []byte) (scope string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixRunRecency)
	scope = r.part()
	created = bitsTime(^r.uint64())
	id = r.lastPart()
	return scope, created, id, r.done("run recency")
}

// spawnsPrefix is p <scope> 0 <root> 0: the pending runs of one root session, oldest first.
func spawnsPrefix(scope, rootID string) []byte {
	return appendPart(appendPart([]byte{prefixSpawn}, scope), rootID)
}

// spawnKey is p <scope> 0 <root> 0 <created> <id>.
func spawnKey(scope, rootID string, created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(spawnsPrefix(scope, rootID), timeBits(created))
	return append(k, id...)
}

func decodeSpawnKey(k []byte) (scope, rootID string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixSpawn)
	scope = r.part()
	rootID = r.part()
	created = bitsTime(r.uint64())
	id = r.lastPart()
	return scope, rootID, created, id, r.done("spawn")
}

// runRootPrefix is u <scope> 0 <root> 0: the runs of one top-level session, newest first.
func runRootPrefix(scope, rootID string) []byte {
	return appendPart(appendPart([]byte{prefixRunRoot}, scope), rootID)
}

// runRootKey is u <scope> 0 <root> 0 <^created> <id>.
func runRootKey(scope, rootID string, created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(runRootPrefix(scope, rootID), ^timeBits(created))
	return append(k, id...)
}

func decodeRunRootKey(k []byte) (scope, rootID string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixRunRoot)
	scope = r.part()
	rootID = r.part()
	created = bitsTime(^r.uint64())
	id = r.lastPart()
	return scope, rootID, created, id, r.done("run root")
}

// runParentPrefix is v <scope> 0 <parent> 0: the runs one session asked for, newest first.
func runParentPrefix(scope, parentID string) []byte {
	return appendPart(appendPart([]byte{prefixRunParent}, scope), parentID)
}

// runParentKey is v <scope> 0 <parent> 0 <^created> <id>.
func runParentKey(scope, parentID string, created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(runParentPrefix(scope, parentID), ^timeBits(created))
	return append(k, id...)
}

func decodeRunParentKey(k []byte) (scope, parentID string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixRunParent)
	scope = r.part()
	parentID = r.part()
	created = bitsTime(^r.uint64())
	id = r.lastPart()
	return scope, parentID, created, id, r.done("run parent")
}

// provisionalPrefix is q <scope> 0 <root> 0: a root session's provisionally paired runs.
func provisionalPrefix(scope, rootID string) []byte {
	return appendPart(appendPart([]byte{prefixRunGuess}, scope), rootID)
}

// provisionalKey is q <scope> 0 <root> 0 <created> <id>.
func provisionalKey(scope, rootID string, created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(provisionalPrefix(scope, rootID), timeBits(created))
	return append(k, id...)
}

func decodeProvisionalKey(k []byte) (scope, rootID string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixRunGuess)
	scope = r.part()
	rootID = r.part()
	created = bitsTime(r.uint64())
	id = r.lastPart()
	return scope, rootID, created, id, r.done("provisional run")
}

// runOpenPrefix is a <scope> 0: a scope's open runs, oldest first.
func runOpenPrefix(scope string) []byte {
	return appendPart([]byte{prefixRunOpen}, scope)
}

// runOpenKey is a <scope> 0 <created> <id>.
func runOpenKey(scope string, created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(runOpenPrefix(scope), timeBits(created))
	return append(k, id...)
}

func decodeRunOpenKey(k []byte) (scope string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixRunOpen)
	scope = r.part()
	created = bitsTime(r.uint64())
	id = r.lastPart()
	return scope, created, id, r.done("open run")
}

// runOpenAllPrefix is a: the open runs of every scope, by scope, then oldest first.
func runOpenAllPrefix() []byte { return []byte{prefixRunOpen} }

// runActivePrefix is g <scope> 0 <parent> 0: one session's open runs.
func runActivePrefix(scope, parentID string) []byte {
	return appendPart(appendPart([]byte{prefixRunActive}, scope), parentID)
}

// runActiveKey is g <scope> 0 <parent> 0 <id>.
func runActiveKey(scope, parentID, id string) []byte {
	return append(runActivePrefix(scope, parentID), id...)
}

// runResultPrefix is w <scope> 0: a scope's finished runs holding their full result.
func runResultPrefix(scope string) []byte {
	return appendPart([]byte{prefixRunResult}, scope)
}

// runResultAllPrefix is w: the finished runs holding their full result, of every scope.
func runResultAllPrefix() []byte { return []byte{prefixRunResult} }

// runResultKey is w <scope> 0 <ended> <id>.
func runResultKey(scope string, ended time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(runResultPrefix(scope), timeBits(ended))
	return append(k, id...)
}

func decodeRunResultKey(k []byte) (scope string, ended time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixRunResult)
	scope = r.part()
	ended = bitsTime(r.uint64())
	id = r.lastPart()
	return scope, ended, id, r.done("run result")
}

// runChildKey is b <scope> 0 <child id>.
func runChildKey(scope, childID string) []byte {
	k := appendPart([]byte{prefixRunChild}, scope)
	return append(k, childID...)
}

// checkpointKey is k <scope> 0 <id>.
func checkpointKey(scope, id string) []byte {
	k := appendPart([]byte{prefixCheckpoint}, scope)
	return append(k, id...)
}

func decodeCheckpointKey(k []byte) (scope, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixCheckpoint)
	scope = r.part()
	id = r.lastPart()
	return scope, id, r.done("checkpoint")
}

// checkpointSessionPrefix is h <scope> 0 <session> 0: one session's checkpoints, newest first.
func checkpointSessionPrefix(scope, sessionID string) []byte {
	return appendPart(appendPart([]byte{prefixCheckpointSession}, scope), sessionID)
}

// checkpointSessionKey is h <scope> 0 <session> 0 <^created> <^id> ff: newest CreatedAt first,
// ties by ID descending, so the order is exactly the reverse of (CreatedAt, ID).
func checkpointSessionKey(scope, sessionID string, created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(checkpointSessionPrefix(scope, sessionID), ^timeBits(created))
	return appendDescending(k, id)
}

func decodeCheckpointSessionKey(k []byte) (scope, sessionID string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixCheckpointSession)
	scope = r.part()
	sessionID = r.part()
	created = bitsTime(^r.uint64())
	id = r.descending()
	return scope, sessionID, created, id, r.done("checkpoint session")
}

// checkpointProjectPrefix is j <scope> 0 <project> 0: the checkpoints of every session of one
// normalised project, newest first.
func checkpointProjectPrefix(scope, projectNorm string) []byte {
	return appendPart(appendPart([]byte{prefixCheckpointProject}, scope), projectNorm)
}

// checkpointProjectKey is j <scope> 0 <project> 0 <^created> <^id> ff, ordered like
// checkpointSessionKey.
func checkpointProjectKey(scope, projectNorm string, created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(checkpointProjectPrefix(scope, projectNorm), ^timeBits(created))
	return appendDescending(k, id)
}

// checkpointProjectSinceEnd is the exclusive upper bound of the project's entries created at
// or after since: they sort before every entry created earlier.
func checkpointProjectSinceEnd(scope, projectNorm string, since time.Time) []byte {
	return prefixEnd(binary.BigEndian.AppendUint64(checkpointProjectPrefix(scope, projectNorm), ^timeBits(since)))
}

func decodeCheckpointProjectKey(k []byte) (scope, projectNorm string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixCheckpointProject)
	scope = r.part()
	projectNorm = r.part()
	created = bitsTime(^r.uint64())
	id = r.descending()
	return scope, projectNorm, created, id, r.done("checkpoint project")
}

// checkpointAgePrefix is e <scope> 0: a scope's checkpoints, oldest first.
func checkpointAgePrefix(scope string) []byte {
	return appendPart([]byte{prefixCheckpointAge}, scope)
}

// checkpointAgeAllPrefix is e: the checkpoints of every scope, by scope, then oldest first.
func checkpointAgeAllPrefix() []byte {
	return []byte{prefixCheckpointAge}
}

// checkpointAgeKey is e <scope> 0 <created> <id>.
func checkpointAgeKey(scope string, created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(checkpointAgePrefix(scope), timeBits(created))
	return append(k, id...)
}

func decodeCheckpointAgeKey(k []byte) (scope string, created time.Time, id string, err error) {
	r := keyReader{b: k}
	r.prefix(prefixCheckpointAge)
	scope = r.part()
	created = bitsTime(r.uint64())
	id = r.lastPart()
	return scope, created, id, r.done("checkpoint age")
}

// Times a key can hold: UnixNano must fit an int64 (years 1677 to 2262).
var (
	minKeyTime = time.Unix(0, math.MinInt64).UTC()
	maxKeyTime = time.Unix(0, math.MaxInt64).UTC()
)

// keyTimeOK reports whether t is within [minKeyTime, maxKeyTime], so a key holds it exactly.
func keyTimeOK(t time.Time) bool {
	return !t.Before(minKeyTime) && !t.After(maxKeyTime)
}

// clampKeyTime returns t moved into [minKeyTime, maxKeyTime].
func clampKeyTime(t time.Time) time.Time {
	switch {
	case t.Before(minKeyTime):
		return minKeyTime
	case t.After(maxKeyTime):
		return maxKeyTime
	}
	return t
}

// prefixEnd returns the smallest key greater than every key that starts with p, for use as an
// exclusive upper bound; nil when there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// appendPart appends a variable-length component and its separator.
func appendPart(k []byte, s string) []byte {
	return append(append(k, s...), sep)
}

// appendDescending appends a NUL-free id as its bitwise complement followed by 0xff, so ids
// sort in exactly the reverse of their byte order: the complement reverses every byte
// comparison, and the terminator (which no complemented byte of a NUL-free id can equal)
// puts a longer id before its own prefix. It must end the key.
func appendDescending(k []byte, id string) []byte {
	for i := 0; i < len(id); i++ {
		k = append(k, ^id[i])
	}
	return append(k, 0xff)
}

// timeBits maps t to a uint64 whose unsigned order is t's order (UnixNano with the sign bit
// flipped), so times before 1970 still sort correctly.
func timeBits(t time.Time) uint64 {
	return uint64(t.UnixNano()) ^ 1<<63
}

// bitsTime inverts timeBits; the result is in UTC.
func bitsTime(v uint64) time.Time {
	return time.Unix(0, int64(v^1<<63)).UTC()
}

// keyReader takes a key apart component by component. The first mismatch is remembered and
// every later call returns zero values, so decoders read straight through and check done once.
type keyReader struct {
	b   []byte
	bad bool
}

func (r *keyReader) prefix(p byte) {
	if r.bad || len(r.b) == 0 || r.b[0] != p {
		r.bad = true
		return
	}
	r.b = r.b[1:]
}

// part reads a component up to and including its separator.
func (r *keyReader) part() string {
	if r.bad {
		return ""
	}
	i := bytes.IndexByte(r.b, sep)
	if i < 0 {
		r.bad = true
		return ""
	}
	s := string(r.b[:i])
	r.b = r.b[i+1:]
	return s
}

// partLike reads a component as part does, returning prev itself when the bytes are equal: no
// allocation for a component that repeats from one key to the next.
func (r *keyReader) partLike(prev string) string {
	if r.bad {
		return ""
	}
	i := bytes.IndexByte(r.b, sep)
	if i < 0 {
		r.bad = true
		return ""
	}
	s := prev
	if string(r.b[:i]) != prev {
		s = string(r.b[:i])
	}
	r.b = r.b[i+1:]
	return s
}

// lastPart reads the final component, which must be NUL-free (it is a scope-checked id).
func (r *keyReader) lastPart() string {
	if r.bad {
		return ""
	}
	if bytes.IndexByte(r.b, sep) >= 0 {
		r.bad = true
		return ""
	}
	return r.rest()
}

// rest reads whatever is left, any bytes allowed.
func (r *keyReader) rest() string {
	if r.bad {
		return ""
	}
	s := string(r.b)
	r.b = nil
	return s
}

// descending reads the final component written by appendDescending: complemented bytes, none
// 0xff, then one 0xff.
func (r *keyReader) descending() string {
	if r.bad {
		return ""
	}
	n := len(r.b) - 1
	if n < 0 || r.b[n] != 0xff || bytes.IndexByte(r.b[:n], 0xff) >= 0 {
		r.bad = true
		return ""
	}
	id := make([]byte, n)
	for i, c := range r.b[:n] {
		id[i] = ^c
	}
	r.b = nil
	return string(id)
}

func (r *keyReader) uint64() uint64 {
	if r.bad || len(r.b) < 8 {
		r.bad = true
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// done reports whether the whole key was read without a mismatch.
func (r *keyReader) done(kind string) error {
	if r.bad || len(r.b) != 0 {
		return fmt.Errorf("%s key: %w", kind, errBadKey)
	}
	return nil
}

// termPrefix is x <scope> 0 <term>: with a NUL after it, one term's postings; without, every
// term that starts with term.
func termPrefix(scope, term string) []byte {
	k := make([]byte, 0, 12+len(scope)+len(term))
	k = append(k, prefixPosting)
	k = appendPart(k, scope)
	return append(k, term...)
}

// postingKey is x <scope> 0 <term> 0 <session> 0 <seq>: postings of a term by session, then Seq.
func postingKey(scope, term, id string, seq uint64) []byte {
	k := appendPart(termPrefix(scope, term), "")
	k = appendPart(k, id)
	return binary.BigEndian.AppendUint64(k, seq)
}

// postingKeys decodes a run of posting keys (sorted by term, then session), reusing the
// previous key's term and session strings where they repeat.
type postingKeys struct{ scope, term, id string }

func (d *postingKeys) decode(k []byte) (term, id string, seq uint64, err error) {
	r := keyReader{b: k}
	r.prefix(prefixPosting)
	d.scope = r.partLike(d.scope)
	d.term = r.partLike(d.term)
	d.id = r.partLike(d.id)
	seq = r.uint64()
	return d.term, d.id, seq, r.done("posting")
}

// indexStatsKey is y <scope>.
func indexStatsKey(scope string) []byte {
	return append([]byte{prefixIndexStats}, scope...)
}
