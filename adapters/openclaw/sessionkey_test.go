package openclaw_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/openclaw"
)

// keyVector is one entry of testdata/session-keys.json: a session key from OpenClaw's own unit
// tests, what the upstream test expected, and what each parser generation makes of the key.
type keyVector struct {
	Input           string  `json:"input"`
	AgentID         *string `json:"agentId"`
	Rest            *string `json:"rest"`
	IsSubagent      bool    `json:"isSubagent"`
	ParentKey       *string `json:"parentKey"`
	ParentKeySource *string `json:"parentKeySource"`
	Note            string  `json:"note"`
	Test            struct {
		Function string          `json:"function"`
		Expected json.RawMessage `json:"expected"`
		File     string          `json:"file"`
	} `json:"test"`
	// DerivedWith is the generation the top-level fields and Test come from.
	DerivedWith openclaw.Generation                `json:"derivedWith"`
	ByVersion   map[openclaw.Generation]genVersion `json:"byVersion"`
}

// genVersion is what one parser generation makes of a key.
type genVersion struct {
	Parse *struct {
		AgentID string `json:"agentId"`
		Rest    string `json:"rest"`
	} `json:"parse"`
	IsSubagent           bool           `json:"isSubagent"`
	SubagentDepthFromKey int            `json:"subagentDepthFromKey"`
	Shape                openclaw.Shape `json:"shape"` // given for GenApril2026 only
}

var keyGenerations = []openclaw.Generation{openclaw.GenApril2026, openclaw.GenLater2026}

func loadKeyVectors(tb testing.TB) []keyVector {
	tb.Helper()
	b, err := os.ReadFile("testdata/session-keys.json")
	if err != nil {
		tb.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var vs []keyVector
	if err := dec.Decode(&vs); err != nil {
		tb.Fatalf("decode session-keys.json: %v", err)
	}
	if len(vs) == 0 {
		tb.Fatal("session-keys.json has no vectors")
	}
	return vs
}

// TestParseSessionKeyVectors checks every vector against both parser keyGenerations: parse,
// isSubagent, depth, shape, the thread parent, and the upstream test's own expectation.
func TestParseSessionKeyVectors(t *testing.T) {
	for i, v := range loadKeyVectors(t) {
		for _, gen := range keyGenerations {
			t.Run(fmt.Sprintf("%02d/%s", i, gen), func(t *testing.T) {
				want, ok := v.ByVersion[gen]
				if !ok {
					t.Fatalf("vector %q has no byVersion[%s]", v.Input, gen)
				}
				k, err := openclaw.ParseSessionKeyGen(v.Input, gen)
				checkKeyGeneration(t, v.Input, k, err, want)
				checkKeyThreadParent(t, v, gen, k)
				if gen == v.DerivedWith {
					checkKeyUpstream(t, v, k)
				}
			})
		}
	}
}

// checkKeyGeneration compares a parse with one generation's expectation.
func checkKeyGeneration(t *testing.T, input string, k openclaw.SessionKey, err error, want genVersion) {
	t.Helper()
	if got := k.Raw; got != strings.TrimSpace(input) {
		t.Errorf("Raw = %q, want %q", got, strings.TrimSpace(input))
	}
	switch {
	case want.Parse != nil:
		if err != nil || k.Shape != openclaw.ShapeAgent || k.Legacy {
			t.Fatalf("got shape %q legacy %v err %v, want an agent key", k.Shape, k.Legacy, err)
		}
		if k.AgentID != want.Parse.AgentID || k.Rest != want.Parse.Rest {
			t.Errorf("got agent %q rest %q, want agent %q rest %q", k.AgentID, k.Rest, want.Parse.AgentID, want.Parse.Rest)
		}
	case err != nil:
		if !errors.Is(err, adapters.ErrMalformed) {
			t.Errorf("err = %v, want it to wrap adapters.ErrMalformed", err)
		}
		if k.Shape != openclaw.ShapeMissing && k.Shape != openclaw.ShapeMalformedAgent {
			t.Errorf("shape = %q with an error, want missing or malformed_agent", k.Shape)
		}
		if k.AgentID != "" || k.Rest != "" || k.Canonical() != "" {
			t.Errorf("got agent %q rest %q with an error, want both empty", k.AgentID, k.Rest)
		}
	default: // no agent:<id>:<rest> parse and no error: a legacy key filed under main
		if !k.Legacy || k.Shape != openclaw.ShapeLegacyOrAlias || k.AgentID != openclaw.DefaultAgentID || k.Rest == "" {
			t.Errorf("got %+v, want a legacy key filed under %q", k, openclaw.DefaultAgentID)
		}
	}
	if want.Shape != "" && k.Shape != want.Shape {
		t.Errorf("shape = %q, want %q", k.Shape, want.Shape)
	}
	if got := k.IsSubagent(); got != want.IsSubagent {
		t.Errorf("IsSubagent = %v, want %v", got, want.IsSubagent)
	}
	if got := k.SubagentDepth(); got != want.SubagentDepthFromKey {
		t.Errorf("SubagentDepth = %d, want %d", got, want.SubagentDepthFromKey)
	}
}

// checkKeyThreadParent compares ThreadParent with the vector's parentKey. A parent "derivable from
// key" was written in the form of the vector's own generation (DerivedWith), so it must match
// exactly there and up to case in the other generation (GenApril2026 returns the parent in its
// original case, GenLater2026 canonical). A parent from anywhere else (spawnedBy) is not in the
// key, so ThreadParent must be empty.
func checkKeyThreadParent(t *testing.T, v keyVector, gen openclaw.Generation, k openclaw.SessionKey) {
	t.Helper()
	got := k.ThreadParent()
	switch src := optString(v.ParentKeySource); {
	case strings.HasPrefix(src, "derivable from key"):
		want := optString(v.ParentKey)
		if want == "" {
			t.Fatalf("parentKeySource %q without parentKey", src)
		}
		if gen == v.DerivedWith && got != want || !strings.EqualFold(got, want) {
			t.Errorf("ThreadParent = %q, want %q (derived with %s)", got, want, v.DerivedWith)
		}
	case src != "":
		if got != "" {
			t.Errorf("ThreadParent = %q, want none: the parent comes from %s", got, src)
		}
	}
}

// checkKeyUpstream checks what the upstream unit test itself expected, for the functions heirloom
// implements; the vector's generation is the one that test ran against.
func checkKeyUpstream(t *testing.T, v keyVector, k openclaw.SessionKey) {
	t.Helper()
	fn, exp := v.Test.Function, v.Test.Expected
	switch {
	case fn == "classifySessionKeyShape":
		var want openclaw.Shape
		decodeExpected(t, exp, &want)
		if k.Shape != want {
			t.Errorf("upstream %s: shape %q, want %q", fn, k.Shape, want)
		}
	case fn == "parseAgentSessionKey":
		var want *struct{ AgentID, Rest string }
		decodeExpected(t, exp, &want)
		if want == nil && k.Shape == openclaw.ShapeAgent || want != nil && (k.AgentID != want.AgentID || k.Rest != want.Rest) {
			t.Errorf("upstream %s: got %q/%q, want %+v", fn, k.AgentID, k.Rest, want)
		}
	case fn == "isSubagentSessionKey":
		var want bool
		decodeExpected(t, exp, &want)
		if k.IsSubagent() != want {
			t.Errorf("upstream %s: %v, want %v", fn, k.IsSubagent(), want)
		}
	case fn == "getSubagentDepth":
		var want int
		decodeExpected(t, exp, &want)
		if k.SubagentDepth() != want {
			t.Errorf("upstream %s: %d, want %d", fn, k.SubagentDepth(), want)
		}
	case strings.HasPrefix(fn, "parseThreadSessionSuffix"):
		var want struct {
			BaseSessionKey string  `json:"baseSessionKey"`
			ThreadID       *string `json:"threadId"`
		}
		decodeExpected(t, exp, &want)
		if parent := k.ThreadParent(); want.ThreadID == nil && parent != "" || want.ThreadID != nil && parent != want.BaseSessionKey {
			t.Errorf("upstream %s: ThreadParent %q, want base %q thread %v", fn, parent, want.BaseSessionKey, want.ThreadID)
		}
	case strings.HasPrefix(fn, "toAgentStoreSessionKey"), strings.HasPrefix(fn, "sessions.resolve"),
		strings.HasPrefix(fn, "sessions.patch"), fn == "normalizeSessionKeyPreservingOpaquePeerIds":
		// The key OpenClaw stores the session under: a string, or {"key": …}.
		var want string
		if json.Unmarshal(exp, &want) != nil {
			var obj struct{ Key string }
			decodeExpected(t, exp, &obj)
			want = obj.Key
		}
		if k.Canonical() != want {
			t.Errorf("upstream %s: Canonical %q, want %q", fn, k.Canonical(), want)
		}
	}
}

// TestParseSessionKeyRules covers heirloom's own rules and the corners the vectors do not.
func TestParseSessionKeyRules(t *testing.T) {
	tests := []struct {
		name, key   string
		gen         openclaw.Generation
		shape       openclaw.Shape
		agent, rest string
		parent      string
		depth       int
		sub         bool
	}{
		{"UppercaseAgent", "AGENT:Ops:Main", openclaw.GenLater2026, openclaw.ShapeAgent, "ops", "main", "", 0, false},
		{"BlankAroundAgent", " agent: ops :main ", openclaw.GenLater2026, openclaw.ShapeAgent, "ops", "main", "", 0, false},
		{"AgentIDWithSpace", "agent:my agent:main", openclaw.GenLater2026, openclaw.ShapeMalformedAgent, "", "", "", 0, false},
		{"AgentIDLeadingDash", "agent:-ops:main", openclaw.GenLater2026, openclaw.ShapeMalformedAgent, "", "", "", 0, false},
		{"AgentID64", "agent:" + strings.Repeat("a", 64) + ":main", openclaw.GenLater2026, openclaw.ShapeAgent, strings.Repeat("a", 64), "main", "", 0, false},
		{"AgentID65", "agent:" + strings.Repeat("a", 65) + ":main", openclaw.GenLater2026, openclaw.ShapeMalformedAgent, "", "", "", 0, false},
		{"AgentIDApril", "agent:a.b:main", openclaw.GenApril2026, openclaw.ShapeMalformedAgent, "", "", "", 0, false},
		{"InvalidUTF8", "agent:main:\xff", openclaw.GenLater2026, openclaw.ShapeMalformedAgent, "", "", "", 0, false},
		{"InvalidUTF8Legacy", "x\xff", openclaw.GenLater2026, openclaw.ShapeMalformedAgent, "", "", "", 0, false},
		{"LegacyLeadingColon", ":foo", openclaw.GenLater2026, openclaw.ShapeMalformedAgent, "", "", "", 0, false},
		{"LegacyLeadingColonApril", ":foo", openclaw.GenApril2026, openclaw.ShapeLegacyOrAlias, "main", "foo", "", 0, false},
		{"LegacySubagentLeadingColonApril", ":subagent:x", openclaw.GenApril2026, openclaw.ShapeLegacyOrAlias, "main", "subagent:x", "", 1, false},
		{"LegacyThread", "Discord:Channel:X:Thread:1", openclaw.GenLater2026, openclaw.ShapeLegacyOrAlias, "main", "discord:channel:x:thread:1", "agent:main:discord:channel:x", 0, false},
		{"LegacyThreadApril", "Discord:Channel:X:Thread:1", openclaw.GenApril2026, openclaw.ShapeLegacyOrAlias, "main", "discord:channel:x:thread:1", "Discord:Channel:X", 0, false},
		{"ThreadBlankID", "agent:main:slack:c1:thread: ", openclaw.GenLater2026, openclaw.ShapeAgent, "main", "slack:c1:thread:", "", 0, false},
		{"ThreadAtRestStart", "agent:main:thread:1", openclaw.GenLater2026, openclaw.ShapeAgent, "main", "thread:1", "", 0, false},
		{"ThreadLastMarker", "agent:main:a:thread:1:thread:2", openclaw.GenLater2026, openclaw.ShapeAgent, "main", "a:thread:1:thread:2", "agent:main:a:thread:1", 0, false},
		{"MatrixGroupParentCanonical", "agent:main:matrix:group:!R:Thread:S:Thread:E", openclaw.GenLater2026, openclaw.ShapeAgent, "main", "matrix:group:!R:Thread:S:thread:E", "agent:main:matrix:group:!R:thread:S", 0, false},
		{"MatrixWrappers", "agent:a:Agent:B::Matrix:Channel:!R", openclaw.GenLater2026, openclaw.ShapeAgent, "a", "agent:b::matrix:channel:!R", "", 0, false},
		{"SignalSegmentTrimmed", "agent:ops:signal:group: AbC :x:Y", openclaw.GenLater2026, openclaw.ShapeAgent, "ops", "signal:group:AbC:x:y", "", 0, false},
		{"SignalLegacy", "signal:group:AbC", openclaw.GenLater2026, openclaw.ShapeLegacyOrAlias, "main", "signal:group:AbC", "", 0, false},
		{"DottedI", "agent:main:s\u0130gnal:group:AbC", openclaw.GenLater2026, openclaw.ShapeAgent, "main", "si\u0307gnal:group:abc", "", 0, false},
		{"SubagentDoubleColon", "agent:main:subagent::subagent:x", openclaw.GenLater2026, openclaw.ShapeAgent, "main", "subagent::subagent:x", "", 2, true},
		{"SubagentDoubleColonApril", "agent:main:subagent::subagent:x", openclaw.GenApril2026, openclaw.ShapeAgent, "main", "subagent:subagent:x", "", 2, true},
		{"ZeroWidthNoBreakTrimmed", "\ufeffagent:main:main\ufeff", openclaw.GenLater2026, openclaw.ShapeAgent, "main", "main", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := openclaw.ParseSessionKeyGen(tt.key, tt.gen)
			malformed := tt.shape == openclaw.ShapeMissing || tt.shape == openclaw.ShapeMalformedAgent
			if malformed != (err != nil) || err != nil && !errors.Is(err, adapters.ErrMalformed) {
				t.Errorf("err = %v, want malformed %v", err, malformed)
			}
			if k.Shape != tt.shape || k.AgentID != tt.agent || k.Rest != tt.rest {
				t.Errorf("got %q %q %q, want %q %q %q", k.Shape, k.AgentID, k.Rest, tt.shape, tt.agent, tt.rest)
			}
			if got := k.ThreadParent(); got != tt.parent {
				t.Errorf("ThreadParent = %q, want %q", got, tt.parent)
			}
			if got := k.SubagentDepth(); got != tt.depth {
				t.Errorf("SubagentDepth = %d, want %d", got, tt.depth)
			}
			if got := k.IsSubagent(); got != tt.sub {
				t.Errorf("IsSubagent = %v, want %v", got, tt.sub)
			}
		})
	}
}

// TestSessionKeyZeroGen checks that a SessionKey built by hand, with no Gen, behaves as
// GenLater2026.
func TestSessionKeyZeroGen(t *testing.T) {
	k := openclaw.SessionKey{Raw: "subagent:a:subagent:b", AgentID: "main", Rest: "subagent:a:subagent:b", Shape: openclaw.ShapeLegacyOrAlias, Legacy: true}
	if got := k.SubagentDepth(); got != 2 {
		t.Errorf("SubagentDepth = %d, want 2", got)
	}
	if got := k.Canonical(); got != "agent:main:subagent:a:subagent:b" {
		t.Errorf("Canonical = %q", got)
	}
}

var agentIDRegexp = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// FuzzParseSessionKey checks that parsing never panics, that errors are malformed-input errors,
// and that a successful parse round-trips through Canonical, in both keyGenerations.
func FuzzParseSessionKey(f *testing.F) {
	for _, v := range loadKeyVectors(f) {
		f.Add(v.Input)
	}
	for _, s := range []string{":", "agent:", "agent::", "agent:a:", "agent:a::b", "\u0130", "\u212a", "matrix:channel:",
		"agent:x:agent:y::matrix:group:!A:B:thread:C", "signal:group: x :signal:group:Y", "Subagent:subagent::subagent:", "agen :"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		for _, gen := range keyGenerations {
			k, err := openclaw.ParseSessionKeyGen(key, gen)
			depth := k.SubagentDepth()
			if depth < 0 {
				t.Fatalf("%s: SubagentDepth %d", gen, depth)
			}
			if err != nil {
				if !errors.Is(err, adapters.ErrMalformed) {
					t.Fatalf("%s: err %v does not wrap ErrMalformed", gen, err)
				}
				if k.Shape != openclaw.ShapeMissing && k.Shape != openclaw.ShapeMalformedAgent || k.AgentID != "" || k.Rest != "" || k.ThreadParent() != "" {
					t.Fatalf("%s: error %v with %+v", gen, err, k)
				}
				continue
			}
			if !agentIDRegexp.MatchString(k.AgentID) || k.Rest == "" {
				t.Fatalf("%s: %q parsed to agent %q rest %q", gen, key, k.AgentID, k.Rest)
			}
			if k.Legacy != (k.Shape == openclaw.ShapeLegacyOrAlias) || k.Legacy && k.AgentID != openclaw.DefaultAgentID ||
				!k.Legacy && k.Shape != openclaw.ShapeAgent {
				t.Fatalf("%s: %q parsed to %+v", gen, key, k)
			}
			again, err := openclaw.ParseSessionKeyGen(k.Canonical(), gen)
			if again.Raw != k.Canonical() && gen == openclaw.GenApril2026 {
				continue // April keeps blanks before a dropped empty segment ("agent:a:b :"): trimmed again
			}
			if err != nil || again.AgentID != k.AgentID || again.Rest != k.Rest || again.Shape != openclaw.ShapeAgent {
				t.Fatalf("%s: %q -> %q re-parsed to %q %q (%v)", gen, key, k.Canonical(), again.AgentID, again.Rest, err)
			}
			if gen != openclaw.GenLater2026 {
				continue
			}
			if k.IsSubagent() && depth < 1 {
				t.Fatalf("%s: %q is a sub-agent key at depth %d", gen, key, depth)
			}
			if p := k.ThreadParent(); p != "" {
				pk, err := openclaw.ParseSessionKey(p)
				if err != nil || pk.Canonical() != p || pk.AgentID != k.AgentID || len(p) >= len(k.Canonical()) {
					t.Fatalf("%q: ThreadParent %q re-parsed to %q (%v)", key, p, pk.Canonical(), err)
				}
			}
		}
	})
}

func optString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func decodeExpected(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}
