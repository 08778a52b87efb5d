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
	} {
		_, _, err1 := decodeSessionKey(k)
		_, _, _, err2 := decodeTurnKey(k)
		_, _, _, err3 := decodeRecencyKey(k)
		_, _, _, _, err4 := decodeChildKey(k)
		for _, err := range []error{err1, err2, err3, err4} {
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
	})
}
