package kv

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestKeys_RoundTrip(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 11, 1, 12, 0, 0, 123456789, time.UTC),
		time.Unix(0, 0).UTC(),
		time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, math.MaxInt64).UTC(),
		time.Unix(0, math.MinInt64).UTC(),
	}
	for _, tt := range []struct {
		name, scope, id, other string
		seq                    uint64
	}{
		{"Plain", "main", "abc", "def", 0},
		{"SubAgent", "main", "5f0c:agent-a1b2", "toolu_01", 1},
		{"OpenClaw", "ops", "agent:ops:subagent:3e9a", "msg-7", 255},
		{"Unicode", "é", "セッション", "☃", 256},
		{"Bytes", "\x01\xff", "\xff\xff", "\x00\xff", math.MaxUint64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scope, id, err := decodeSessionKey(sessionKey(tt.scope, tt.id))
			if err != nil || scope != tt.scope || id != tt.id {
				t.Errorf("session: got %q %q %v, want %q %q nil", scope, id, err, tt.scope, tt.id)
			}
			for _, ts := range times {
				scope, got, id, err := decodeRecencyKey(recencyKey(tt.scope, ts, tt.id))
				if err != nil || scope != tt.scope || !got.Equal(ts) || id != tt.id {
					t.Errorf("recency: got %q %v %q %v, want %q %v %q nil", scope, got, id, err, tt.scope, ts, tt.id)
				}
				scope, parent, got, id, err := decodeChildKey(childKey(tt.scope, tt.id+"-parent", ts, tt.id))
				if err != nil || scope != tt.scope || parent != tt.id+"-parent" || !got.Equal(ts) || id != tt.id {
					t.Errorf("child: got %q %q %v %q %v, want %q %q %v %q nil",
						scope, parent, got, id, err, tt.scope, tt.id+"-parent", ts, tt.id)
				}
				scope, parent, got, cs, id, err := decodeCrossChildKey(crossChildKey(tt.scope, tt.id+"-parent", ts, "ops", tt.id))
				if err != nil || scope != tt.scope || parent != tt.id+"-parent" || !got.Equal(ts) || cs != "ops" || id != tt.id {
					t.Errorf("cross child: got %q %q %v %q %q %v", scope, parent, got, cs, id, err)
				}
			}
			scope, id, err = decodeCheckpointKey(checkpointKey(tt.scope, tt.id))
			if err != nil || scope != tt.scope || id != tt.id {
				t.Errorf("checkpoint: got %q %q %v, want %q %q nil", scope, id, err, tt.scope, tt.id)
			}
			for _, ts := range times {
				scope, sess, got, id, err := decodeCheckpointSessionKey(checkpointSessionKey(tt.scope, tt.id+"-session", ts, tt.id))
				if err != nil || scope != tt.scope || sess != tt.id+"-session" || !got.Equal(ts) || id != tt.id {
					t.Errorf("checkpoint session: got %q %q %v %q %v, want %q %q %v %q nil",
						scope, sess, got, id, err, tt.scope, tt.id+"-session", ts, tt.id)
				}
				scope, proj, got, id, err := decodeCheckpointProjectKey(checkpointProjectKey(tt.scope, "/p/"+tt.id, ts, tt.id))
				if err != nil || scope != tt.scope || proj != "/p/"+tt.id || !got.Equal(ts) || id != tt.id {
					t.Errorf("checkpoint project: got %q %q %v %q %v, want %q %q %v %q nil",
						scope, proj, got, id, err, tt.scope, "/p/"+tt.id, ts, tt.id)
				}
				scope, got, id, err = decodeCheckpointAgeKey(checkpointAgeKey(tt.scope, ts, tt.id))
				if err != nil || scope != tt.scope || !got.Equal(ts) || id != tt.id {
					t.Errorf("checkpoint age: got %q %v %q %v, want %q %v %q nil", scope, got, id, err, tt.scope, ts, tt.id)
				}
			}
			scope, id, seq, err := decodeTurnKey(turnKey(tt.scope, tt.id, tt.seq))
			if err != nil || scope != tt.scope || id != tt.id || seq != tt.seq {
				t.Errorf("turn: got %q %q %d %v, want %q %q %d nil", scope, id, seq, err, tt.scope, tt.id, tt.seq)
			}
			scope, id, src, err := decodeTurnSourceKey(turnSourceKey(tt.scope, tt.id, tt.other))
			if err != nil || scope != tt.scope || id != tt.id || src != tt.other {
				t.Errorf("turn source: got %q %q %q %v, want %q %q %q nil", scope, id, src, err, tt.scope, tt.id, tt.other)
			}
		})
	}
}

func TestKeys_Order(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	before1970 := time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)
	less := func(name string, a, b []byte) {
		t.Helper()
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("%s: got %q >= %q, want less", name, a, b)
		}
	}
	less("turn seq", turnKey("s", "x", 1), turnKey("s", "x", 256))
	less("turn seq max", turnKey("s", "x", 0), turnKey("s", "x", math.MaxUint64))
	less("recency newest first", recencyKey("s", t0.Add(time.Nanosecond), "z"), recencyKey("s", t0, "a"))
	less("recency before 1970", recencyKey("s", t0, "a"), recencyKey("s", before1970, "a"))
	less("recency tie by id", recencyKey("s", t0, "a"), recencyKey("s", t0, "b"))
	less("child oldest first", childKey("s", "p", t0, "z"), childKey("s", "p", t0.Add(time.Nanosecond), "a"))
	less("child before 1970", childKey("s", "p", before1970, "z"), childKey("s", "p", t0, "a"))
	less("child tie by id", childKey("s", "p", t0, "a"), childKey("s", "p", t0, "b"))

	// Checkpoint indexes: newest first, and on a tie the greater id first, exactly the reverse
	// of (created, id), a longer id before its own prefix included.
	for name, key := range map[string]func(time.Time, string) []byte{
		"checkpoint session": func(ts time.Time, id string) []byte { return checkpointSessionKey("s", "x", ts, id) },
		"checkpoint project": func(ts time.Time, id string) []byte { return checkpointProjectKey("s", "/p", ts, id) },
	} {
		less(name+" newest first", key(t0.Add(time.Nanosecond), "a"), key(t0, "z"))
		less(name+" before 1970", key(t0, "z"), key(before1970, "a"))
		less(name+" tie by id descending", key(t0, "b"), key(t0, "a"))
		less(name+" tie longer id first", key(t0, "ab"), key(t0, "a"))
		less(name+" tie high bytes", key(t0, "\xfe"), key(t0, "\x01"))
		less(name+" tie empty id last", key(t0, "\x01"), key(t0, ""))
		less(name+" assigned ids", key(t0, "1-00000001"), key(t0, "1-00000000"))
	}
	less("checkpoint age oldest first", checkpointAgeKey("s", t0, "z"), checkpointAgeKey("s", t0.Add(time.Nanosecond), "a"))
	less("checkpoint age before 1970", checkpointAgeKey("s", before1970, "z"), checkpointAgeKey("s", t0, "a"))
	// The since bound: entries created at since are inside, those a nanosecond earlier outside.
	end := checkpointProjectSinceEnd("s", "/p", t0)
	less("since bound includes since", checkpointProjectKey("s", "/p", t0, "\x01"), end)
	less("since bound excludes earlier", end, checkpointProjectKey("s", "/p", t0.Add(-time.Nanosecond), "\xff"))
	less("since bound within project", end, prefixEnd(checkpointProjectPrefix("s", "/p")))
}

// TestKeys_Prefixes checks that a prefix scan sees exactly its own records, even when one
// scope, id or parent is a prefix of another.
func TestKeys_Prefixes(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		prefix []byte
		in     [][]byte
		out    [][]byte
	}{
		{"Recency", recencyPrefix("a"),
			[][]byte{recencyKey("a", t0, "x")},
			[][]byte{recencyKey("ab", t0, "x"), sessionKey("a", "x"), childKey("a", "x", t0, "y")}},
		{"Children", childrenPrefix("s", "p"),
			[][]byte{childKey("s", "p", t0, "c")},
			[][]byte{childKey("s", "pp", t0, "c"), childKey("sp", "p", t0, "c")}},
		{"CheckpointSession", checkpointSessionPrefix("s", "x"),
			[][]byte{checkpointSessionKey("s", "x", t0, "c")},
			[][]byte{checkpointSessionKey("s", "xy", t0, "c"), checkpointSessionKey("sx", "x", t0, "c"),
				checkpointProjectKey("s", "x", t0, "c"), checkpointKey("s", "x")}},
		{"CheckpointProject", checkpointProjectPrefix("s", "/p"),
			[][]byte{checkpointProjectKey("s", "/p", t0, "c")},
			[][]byte{checkpointProjectKey("s", "/p/q", t0, "c"), checkpointProjectKey("s", "/", t0, "c"),
				checkpointProjectKey("s/", "p", t0, "c"), checkpointSessionKey("s", "/p", t0, "c")}},
		{"CheckpointAge", checkpointAgePrefix("s"),
			[][]byte{checkpointAgeKey("s", t0, "c")},
			[][]byte{checkpointAgeKey("sx", t0, "c"), checkpointAgeKey("", t0, "c")}},
		{"CheckpointAgeAllScopes", checkpointAgeAllPrefix(),
			[][]byte{checkpointAgeKey("s", t0, "c"), checkpointAgeKey("\xff", t0, "c")},
			[][]byte{checkpointKey("s", "c"), checkpointSessionKey("s", "c", t0, "c")}},
		{"Turns", turnsPrefix("s", "x"),
			[][]byte{turnKey("s", "x", 0), turnKey("s", "x", math.MaxUint64)},
			[][]byte{turnKey("s", "xy", 0), turnKey("sx", "x", 0), turnSourceKey("s", "x", "")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			end := prefixEnd(tt.prefix)
			inRange := func(k []byte) bool {
				return bytes.Compare(k, tt.prefix) >= 0 && bytes.Compare(k, end) < 0
			}
			for _, k := range tt.in {
				if !inRange(k) {
					t.Errorf("%q: got out of range [%q, %q), want in", k, tt.prefix, end)
				}
			}
			for _, k := range tt.out {
				if inRange(k) {
					t.Errorf("%q: got in range [%q, %q), want out", k, tt.prefix, end)
				}
			}
		})
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, tt := range []struct{ in, want []byte }{
		{[]byte("a\x00"), []byte("a\x01")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("\xff\xff"), nil},
	} {
		if got := prefixEnd(tt.in); !bytes.Equal(got, tt.want) {
			t.Errorf("prefixEnd(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestKeys_Malformed(t *testing.T) {
	for _, k := range [][]byte{
		nil,
		{},
		[]byte("x"),
		[]byte("s"),            // no separator after the scope
		[]byte("sa\x00b\x00c"), // NUL in the id
		[]byte("ta\x00b\x00"),  // no seq
		[]byte("ta\x00b\x001234567"),
		[]byte("ta\x00b\x00123456789"), // a byte too many
		[]byte("ra\x001234"),
		[]byte("ka\x00b\x00c"),        // NUL in a checkpoint id
		[]byte("ha\x00b\x0012345678"), // no id terminator
		[]byte("ha\x00b\x0012345678\x9e\xff\xff"), // a complemented NUL in the id
		[]byte("ja\x00/p\x001234567\xff"),         // short timestamp
		[]byte("ea\x0012345678b\x00"),             // NUL in the id
	} {
		_, _, err1 := decodeSessionKey(k)
		_, _, _, err2 := decodeTurnKey(k)
		_, _, _, err3 := decodeRecencyKey(k)
		_, _, _, _, err4 := decodeChildKey(k)
		_, _, err5 := decodeCheckpointKey(k)
		_, _, _, _, err6 := decodeCheckpointSessionKey(k)
		_, _, _, _, err7 := decodeCheckpointProjectKey(k)
		_, _, _, err8 := decodeCheckpointAgeKey(k)
		for _, err := range []error{err1, err2, err3, err4, err5, err6, err7, err8} {
			if !errors.Is(err, errBadKey) {
				t.Errorf("%q: got %v, want errBadKey", k, err)
			}
		}
	}
}

func TestCheckRef(t *testing.T) {
	for _, tt := range []struct {
		scope, id string
		ok        bool
	}{
		{"main", "x", true},
		{"", "x", false},
		{"main", "", false},
		{"ma\x00in", "x", false},
		{"main", "x\x00", false},
	} {
		if err := checkRef(tt.scope, tt.id); (err == nil) != tt.ok {
			t.Errorf("checkRef(%q, %q): got %v, want ok=%v", tt.scope, tt.id, err, tt.ok)
		}
	}
}

// FuzzKeys checks that every key decodes to what built it, and that decoding arbitrary bytes
// never panics and accepts only keys an encoder would build.
func FuzzKeys(f *testing.F) {
	f.Add("main", "abc", "src", uint64(7), int64(1_700_000_000_000_000_000), []byte("smain\x00abc"))
	f.Add("", "", "", uint64(0), int64(-1), []byte{})
	f.Add("é", "a:b", "\x00", uint64(math.MaxUint64), int64(math.MinInt64), []byte("t\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Add("main", "ab", "a", uint64(1), int64(0), []byte("hmain\x00s\x00\x7f\xff\xff\xff\xff\xff\xff\xff\x9e\xff"))
	f.Add("main", "\xff", "\x01", uint64(2), int64(-5), []byte("jmain\x00/p\x00\x80\x00\x00\x00\x00\x00\x00\x00\xff"))
	f.Add("s", "id", "", uint64(3), int64(9), []byte("es\x00\x80\x00\x00\x00\x00\x00\x00\x09id"))
	f.Fuzz(func(t *testing.T, scope, id, other string, seq uint64, nanos int64, raw []byte) {
		ts := time.Unix(0, nanos)
		if !strings.ContainsRune(scope, 0) && !strings.ContainsRune(id, 0) {
			if s, i, err := decodeSessionKey(sessionKey(scope, id)); err != nil || s != scope || i != id {
				t.Errorf("session %q %q: got %q %q %v", scope, id, s, i, err)
			}
			if s, tm, i, err := decodeRecencyKey(recencyKey(scope, ts, id)); err != nil || s != scope || tm.UnixNano() != nanos || i != id {
				t.Errorf("recency %q %d %q: got %q %d %q %v", scope, nanos, id, s, tm.UnixNano(), i, err)
			}
			if s, i, q, err := decodeTurnKey(turnKey(scope, id, seq)); err != nil || s != scope || i != id || q != seq {
				t.Errorf("turn %q %q %d: got %q %q %d %v", scope, id, seq, s, i, q, err)
			}
			if s, i, o, err := decodeTurnSourceKey(turnSourceKey(scope, id, other)); err != nil || s != scope || i != id || o != other {
				t.Errorf("turn source %q %q %q: got %q %q %q %v", scope, id, other, s, i, o, err)
			}
			if s, i, err := decodeCheckpointKey(checkpointKey(scope, id)); err != nil || s != scope || i != id {
				t.Errorf("checkpoint %q %q: got %q %q %v", scope, id, s, i, err)
			}
			if s, tm, i, err := decodeCheckpointAgeKey(checkpointAgeKey(scope, ts, id)); err != nil || s != scope || tm.UnixNano() != nanos || i != id {
				t.Errorf("checkpoint age %q %d %q: got %q %d %q %v", scope, nanos, id, s, tm.UnixNano(), i, err)
			}
			if !strings.ContainsRune(other, 0) {
				s, o, tm, i, err := decodeCheckpointSessionKey(checkpointSessionKey(scope, other, ts, id))
				if err != nil || s != scope || o != other || tm.UnixNano() != nanos || i != id {
					t.Errorf("checkpoint session %q %q %d %q: got %q %q %d %q %v", scope, other, nanos, id, s, o, tm.UnixNano(), i, err)
				}
				s, o, tm, i, err = decodeCheckpointProjectKey(checkpointProjectKey(scope, other, ts, id))
				if err != nil || s != scope || o != other || tm.UnixNano() != nanos || i != id {
					t.Errorf("checkpoint project %q %q %d %q: got %q %q %d %q %v", scope, other, nanos, id, s, o, tm.UnixNano(), i, err)
				}
				// Newest first, ties by id descending: the reverse of (nanos, id) vs (nanos, other).
				a, b := checkpointSessionKey(scope, "x", ts, id), checkpointSessionKey(scope, "x", ts, other)
				if want := -strings.Compare(id, other); bytes.Compare(a, b) != want {
					t.Errorf("checkpoint session order of ids %q, %q: got %d, want %d", id, other, bytes.Compare(a, b), want)
				}
			}
			if !strings.ContainsRune(other, 0) {
				s, p, tm, i, err := decodeChildKey(childKey(scope, other, ts, id))
				if err != nil || s != scope || p != other || tm.UnixNano() != nanos || i != id {
					t.Errorf("child %q %q %d %q: got %q %q %d %q %v", scope, other, nanos, id, s, p, tm.UnixNano(), i, err)
				}
			}
		}

		// Arbitrary bytes: no panic, and whatever decodes re-encodes to the same bytes.
		if s, i, err := decodeSessionKey(raw); err == nil && !bytes.Equal(sessionKey(s, i), raw) {
			t.Errorf("session key %q decoded to %q %q, which encodes differently", raw, s, i)
		}
		if s, tm, i, err := decodeRecencyKey(raw); err == nil && !bytes.Equal(recencyKey(s, tm, i), raw) {
			t.Errorf("recency key %q decoded to %q %v %q, which encodes differently", raw, s, tm, i)
		}
		if s, p, tm, i, err := decodeChildKey(raw); err == nil && !bytes.Equal(childKey(s, p, tm, i), raw) {
			t.Errorf("child key %q decoded to %q %q %v %q, which encodes differently", raw, s, p, tm, i)
		}
		if s, i, q, err := decodeTurnKey(raw); err == nil && !bytes.Equal(turnKey(s, i, q), raw) {
			t.Errorf("turn key %q decoded to %q %q %d, which encodes differently", raw, s, i, q)
		}
		if s, i, o, err := decodeTurnSourceKey(raw); err == nil && !bytes.Equal(turnSourceKey(s, i, o), raw) {
			t.Errorf("turn source key %q decoded to %q %q %q, which encodes differently", raw, s, i, o)
		}
		if s, i, err := decodeCheckpointKey(raw); err == nil && !bytes.Equal(checkpointKey(s, i), raw) {
			t.Errorf("checkpoint key %q decoded to %q %q, which encodes differently", raw, s, i)
		}
		if s, o, tm, i, err := decodeCheckpointSessionKey(raw); err == nil && !bytes.Equal(checkpointSessionKey(s, o, tm, i), raw) {
			t.Errorf("checkpoint session key %q decoded to %q %q %v %q, which encodes differently", raw, s, o, tm, i)
		}
		if s, p, tm, i, err := decodeCheckpointProjectKey(raw); err == nil && !bytes.Equal(checkpointProjectKey(s, p, tm, i), raw) {
			t.Errorf("checkpoint project key %q decoded to %q %q %v %q, which encodes differently", raw, s, p, tm, i)
		}
		if s, tm, i, err := decodeCheckpointAgeKey(raw); err == nil && !bytes.Equal(checkpointAgeKey(s, tm, i), raw) {
			t.Errorf("checkpoint age key %q decoded to %q %v %q, which encodes differently", raw, s, tm, i)
		}
	})
}

// CheckpointKeys returns how many keys s holds under each checkpoint prefix ('k' records, 'h',
// 'j' and 'e' index entries), for tests outside the package. It fails tb unless the keys
// agree: every record has exactly the index entries (and values) PutCheckpoint writes for it,
// and every index entry belongs to a stored record, so no orphan remains.
func CheckpointKeys(tb testing.TB, s *Store) map[byte]int {
	tb.Helper()
	db, err := s.acquire(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	defer s.release()
	counts := map[byte]int{}
	index := map[string]string{} // index key → value, as stored
	want := map[string]string{}  // index key → value, derived from the records
	it, err := db.NewIter(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		switch k[0] {
		case prefixCheckpoint:
			c, err := decodeCheckpoint(it.Value())
			if err != nil {
				tb.Fatalf("record %q: %v", k, err)
			}
			if !bytes.Equal(checkpointKey(c.Scope, c.ID), k) {
				tb.Errorf("record %q holds checkpoint %s/%s", k, c.Scope, c.ID)
			}
			want[string(checkpointSessionKey(c.Scope, c.SessionID, c.CreatedAt, c.ID))] = ""
			want[string(checkpointAgeKey(c.Scope, c.CreatedAt, c.ID))] = c.SessionID
			if c.ProjectNorm != "" {
				want[string(checkpointProjectKey(c.Scope, c.ProjectNorm, c.CreatedAt, c.ID))] = c.SessionID
			}
		case prefixCheckpointSession, prefixCheckpointProject, prefixCheckpointAge:
			index[string(k)] = string(it.Value())
		default:
			continue
		}
		counts[k[0]]++
	}
	if err := it.Error(); err != nil {
		tb.Fatal(err)
	}
	for k, v := range index {
		if w, ok := want[k]; !ok {
			tb.Errorf("orphan index entry %q", k)
		} else if v != w {
			tb.Errorf("index entry %q: got value %q, want %q", k, v, w)
		}
	}
	for k := range want {
		if _, ok := index[k]; !ok {
			tb.Errorf("missing index entry %q", k)
		}
	}
	return counts
}
