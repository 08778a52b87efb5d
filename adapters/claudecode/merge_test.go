package claudecode_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
)

// answer is heirloom's answer carrying context alone.
func answer(context string) adapters.Answer { return adapters.Answer{Context: context} }

// ctxReply is the reply Merge builds when the upstream gave no JSON object.
func ctxReply(event, context string) string {
	return `{"hookSpecificOutput":{"hookEventName":` + jsonStr(event) + `,"additionalContext":` + jsonStr(context) + `}}`
}

// jsonStr encodes s as a JSON string without HTML escaping.
func jsonStr(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// additionalContext returns hookSpecificOutput.additionalContext of a reply.
func additionalContext(t *testing.T, reply []byte) string {
	t.Helper()
	var r struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatalf("reply is not JSON: %v: %q", err, reply)
	}
	return r.HookSpecificOutput.AdditionalContext
}

// sections are heirloom's headings, highest priority first, as proxy and the hook shim pass them
// (inject/heading.Priority; adapters do not import inject, so they are spelled out here).
var sections = []string{"[Objective Reinforcement]", "## Inherited from Parent Session", "## Recovered Session Checkpoint"}

// utf16Len is the length of s in UTF-16 code units, each invalid UTF-8 byte counted as the U+FFFD
// it decodes to: how Claude Code measures additionalContext.
func utf16Len(s string) int {
	return len(utf16.Encode([]rune(s)))
}

const (
	objective = "[Objective Reinforcement]\nObjective: ship the release notes for v2"
	inherited = "## Inherited from Parent Session\nParent session: docs\nObjective: write the changelog"
	recovered = "## Recovered Session Checkpoint\nLast checkpoint: drafted sections one and two"
)

// TestMerge has one case per merge rule whose result is exact.
func TestMerge(t *testing.T) {
	// fullReply exercises every field kind Claude Code reads, plus unknown ones, with odd
	// spacing and key order that must all survive.
	const fullReply = `{ "continue" : false,"stopReason":"upstream says stop",
  "suppressOutput": true, "systemMessage":"from the memory daemon <b>&amp;</b>",
  "decision":"block","reason":"policy",
  "hookSpecificOutput": {"permissionDecision":"deny","hookEventName":"PreToolUse",
     "permissionDecisionReason":"no","additionalContext":  "upstream memory: \u00e9t\u00e9 \"quoted\"",
     "x-unknown":{"nested":[1,2.50,{"z":null}]}},
  "zzz_unknown": [true, false, 1e3]
}
`
	cases := []struct {
		name     string
		event    string
		ours     string
		upstream string
		max      int
		want     string
	}{{
		name:     "PassiveJSONUnchanged",
		event:    "PreToolUse",
		upstream: fullReply,
		want:     fullReply,
	}, {
		name:     "PassivePlainTextUnchanged",
		event:    "SessionStart",
		upstream: "  remember: tabs not spaces\n",
		want:     "  remember: tabs not spaces\n",
	}, {
		name:     "PassiveEmptyUnchanged",
		event:    "SessionStart",
		upstream: "",
		want:     "",
	}, {
		name:     "PassiveWhitespaceOursUnchanged",
		event:    "SessionStart",
		ours:     " \n",
		upstream: `{"b":1,"a":2}`,
		want:     `{"b":1,"a":2}`,
	}, {
		name:     "FieldsKeptContextOursFirst",
		event:    "PreToolUse",
		ours:     inherited,
		upstream: fullReply,
		want: strings.Replace(fullReply, `"upstream memory: \u00e9t\u00e9 \"quoted\""`,
			jsonStr(inherited+"\n\nupstream memory: été \"quoted\""), 1),
	}, {
		name:     "ContextAddedToHookSpecificOutput",
		event:    "PreToolUse",
		ours:     inherited,
		upstream: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"},"x":1}`,
		want:     `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","additionalContext":` + jsonStr(inherited) + `},"x":1}`,
	}, {
		name:     "EventNameAddedWhenMissing",
		event:    "PreToolUse",
		ours:     inherited,
		upstream: `{"hookSpecificOutput":{"permissionDecision":"ask"}}`,
		want:     `{"hookSpecificOutput":{"permissionDecision":"ask","hookEventName":"PreToolUse","additionalContext":` + jsonStr(inherited) + `}}`,
	}, {
		name:     "EmptyHookSpecificOutput",
		event:    "SubagentStart",
		ours:     inherited,
		upstream: `{"hookSpecificOutput": { } }`,
		want:     `{"hookSpecificOutput": { "hookEventName":"SubagentStart","additionalContext":` + jsonStr(inherited) + `} }`,
	}, {
		name:     "HookSpecificOutputAppended",
		event:    "SubagentStart",
		ours:     inherited,
		upstream: "{\"continue\":true, \"systemMessage\":\"hi\"}\n",
		want:     "{\"continue\":true, \"systemMessage\":\"hi\"," + ctxReply("SubagentStart", inherited)[1:len(ctxReply("SubagentStart", inherited))-1] + "}\n",
	}, {
		name:     "EmptyObject",
		event:    "SessionStart",
		ours:     recovered,
		upstream: "{}",
		want:     ctxReply("SessionStart", recovered),
	}, {
		name:     "NullHookSpecificOutput",
		event:    "SessionStart",
		ours:     recovered,
		upstream: `{"hookSpecificOutput":null,"a":1}`,
		want:     `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":` + jsonStr(recovered) + `},"a":1}`,
	}, {
		name:     "NullAdditionalContext",
		event:    "SessionStart",
		ours:     recovered,
		upstream: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":null}}`,
		want:     ctxReply("SessionStart", recovered),
	}, {
		name:     "UpstreamContextTrimmed",
		event:    "SessionStart",
		ours:     recovered,
		upstream: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"\n  theirs  \n"}}`,
		want:     ctxReply("SessionStart", recovered+"\n\ntheirs"),
	}, {
		name:     "DuplicateKeyLastWins",
		event:    "SessionStart",
		ours:     recovered,
		upstream: `{"hookSpecificOutput":{"additionalContext":"first"},"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"second"}}`,
		want:     `{"hookSpecificOutput":{"additionalContext":"first"},"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":` + jsonStr(recovered+"\n\nsecond") + `}}`,
	}, {
		name:     "PlainTextIsContext",
		event:    "UserPromptSubmit",
		ours:     objective,
		upstream: "\n  Memory: the user prefers <short> answers & tables.\n\n",
		want:     ctxReply("UserPromptSubmit", objective+"\n\nMemory: the user prefers <short> answers & tables."),
	}, {
		name:     "PlainTextLookingLikeAScalar",
		event:    "UserPromptSubmit",
		ours:     objective,
		upstream: `"quoted"`,
		want:     ctxReply("UserPromptSubmit", objective+"\n\n\"quoted\""),
	}, {
		name:     "EmptyUpstreamIsNoContext",
		event:    "SessionStart",
		ours:     recovered,
		upstream: "",
		want:     ctxReply("SessionStart", recovered),
	}, {
		name:     "WhitespaceUpstreamIsNoContext",
		event:    "SessionStart",
		ours:     recovered,
		upstream: " \n\t\n",
		want:     ctxReply("SessionStart", recovered),
	}, {
		name:     "OursTrimmed",
		event:    "SessionStart",
		ours:     "\n" + recovered + "\n",
		upstream: "theirs",
		want:     ctxReply("SessionStart", recovered+"\n\ntheirs"),
	}, {
		name:     "ExactlyAtTheCap",
		event:    "SessionStart",
		ours:     recovered,
		upstream: "theirs",
		max:      utf16Len(recovered + "\n\ntheirs"),
		want:     ctxReply("SessionStart", recovered+"\n\ntheirs"),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := claudecode.Merge(tc.event, answer(tc.ours), []byte(tc.upstream), tc.max, sections)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if tc.ours != "" && !json.Valid(got) {
				t.Errorf("merged reply is not JSON: %s", got)
			}
		})
	}
}

// TestMerge_Deny: a refused spawn (PreToolUse) stays refused whatever the upstream said, with
// heirloom's reason first; every other byte of the upstream's reply is kept.
func TestMerge_Deny(t *testing.T) {
	const reason = "heirloom refused this sub-agent: depth 2 exceeds spawn.max_depth 1"
	deny := `"permissionDecision":"deny","permissionDecisionReason":` + jsonStr(reason)
	cases := []struct {
		name, event, context, upstream, want string
	}{{
		name:     "OverAllow",
		event:    "PreToolUse",
		upstream: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"fine by policy"}}`,
		want:     `{"hookSpecificOutput":{"hookEventName":"PreToolUse",` + deny + `}}`,
	}, {
		name:     "BothDeny",
		event:    "PreToolUse",
		upstream: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":" not today "}}`,
		want:     `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":` + jsonStr(reason+"\n\nnot today") + `}}`,
	}, {
		name:     "OverTopLevelApprove",
		event:    "PreToolUse",
		upstream: `{"decision":"approve","reason":"r"}`,
		want:     `{"decision":"approve","reason":"r","hookSpecificOutput":{"hookEventName":"PreToolUse",` + deny + `}}`,
	}, {
		name:     "UpstreamContextKept",
		event:    "PreToolUse",
		upstream: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"memo"}}`,
		want:     `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"memo",` + deny + `}}`,
	}, {
		name:     "EventNameAdded",
		event:    "PreToolUse",
		upstream: `{"hookSpecificOutput":{"permissionDecision":"ask"}}`,
		want:     `{"hookSpecificOutput":{"permissionDecision":"deny","hookEventName":"PreToolUse","permissionDecisionReason":` + jsonStr(reason) + `}}`,
	}, {
		name:     "NullHookSpecificOutput",
		event:    "PreToolUse",
		upstream: `{"hookSpecificOutput":null,"x":1}`,
		want:     `{"hookSpecificOutput":{"hookEventName":"PreToolUse",` + deny + `},"x":1}`,
	}, {
		name:     "PlainText",
		event:    "PreToolUse",
		upstream: "memo\n",
		want:     `{"hookSpecificOutput":{"hookEventName":"PreToolUse",` + deny + `,"additionalContext":"memo"}}`,
	}, {
		name:     "Empty",
		event:    "PreToolUse",
		upstream: "",
		want:     `{"hookSpecificOutput":{"hookEventName":"PreToolUse",` + deny + `}}`,
	}, {
		name:     "WithContext",
		event:    "PreToolUse",
		context:  objective,
		upstream: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"memo"}}`,
		want:     `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":` + jsonStr(objective+"\n\nmemo") + `,` + deny + `}}`,
	}, {
		name:     "OtherEventPassive",
		event:    "SessionStart",
		upstream: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"memo"}}`,
		want:     `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"memo"}}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := claudecode.Merge(tc.event, adapters.Answer{Context: tc.context, Deny: reason}, []byte(tc.upstream), 0, sections)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if a := claudecode.ReplyAnswer(got); tc.event == "PreToolUse" && !strings.HasPrefix(a.Deny, reason) {
				t.Errorf("merged reply reads as %+v: the refusal is lost", a)
			}
		})
	}
}

// TestMergeKeepsEveryOtherValue decodes a merged reply and the upstream's and compares every
// value but additionalContext, with key order at every level.
func TestMergeKeepsEveryOtherValue(t *testing.T) {
	upstream := `{"decision":"approve","continue":true,"stopReason":"s","systemMessage":"m",` +
		`"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",` +
		`"updatedInput":{"command":"ls","b":[1,{"c":"d"}]},"additionalContext":"u"},"unknown":{"k":[null,1.0]}}`
	got, err := claudecode.Merge("PreToolUse", answer(inherited), []byte(upstream), 0, sections)
	if err != nil {
		t.Fatal(err)
	}
	want := orderedTokens(t, []byte(upstream))
	have := orderedTokens(t, got)
	if len(want) != len(have) {
		t.Fatalf("got %d tokens, want %d:\n%q\n%q", len(have), len(want), have, want)
	}
	for i := range want {
		if want[i] == `"u"` {
			if have[i] != jsonStr(inherited+"\n\nu") {
				t.Errorf("additionalContext = %s, want heirloom's then the upstream's", have[i])
			}
			continue
		}
		if have[i] != want[i] {
			t.Errorf("token %d = %s, want %s", i, have[i], want[i])
		}
	}
}

// orderedTokens lists a JSON document's tokens in order, each re-encoded, numbers as written.
func orderedTokens(t *testing.T, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out []string
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatalf("tokens of %s: %v", doc, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			out = append(out, v.String())
		case string:
			out = append(out, jsonStr(v))
		case json.Number:
			out = append(out, v.String())
		default:
			b, _ := json.Marshal(v)
			out = append(out, string(b))
		}
	}
}

// TestMergeErrors has one case per reply Merge refuses, in passive mode too.
func TestMergeErrors(t *testing.T) {
	cases := []struct {
		name     string
		upstream []byte
	}{
		{"Truncated", []byte(`{"hookSpecificOutput":{"additionalContext":"x"`)},
		{"TrailingGarbage", []byte(`{"continue":true} and more`)},
		{"TwoObjects", []byte("{}\n{}")},
		{"Array", []byte(`[{"continue":true}]`)},
		{"BadArray", []byte(`[1,`)},
		{"InvalidUTF8", []byte("plain \xff text")},
		{"InvalidUTF8InJSON", []byte("{\"systemMessage\":\"\xc3\x28\"}")},
		{"Oversized", bytes.Repeat([]byte("a"), claudecode.MaxUpstreamBytes+1)},
		{"HookSpecificOutputNotObject", []byte(`{"hookSpecificOutput":"text"}`)},
		{"AdditionalContextNotString", []byte(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":42}}`)},
	}
	for _, tc := range cases {
		for _, ours := range []string{"", recovered} {
			name := tc.name + "/Passive"
			if ours != "" {
				name = tc.name + "/Merging"
			}
			t.Run(name, func(t *testing.T) {
				got, err := claudecode.Merge("SessionStart", answer(ours), tc.upstream, 0, sections)
				if !errors.Is(err, claudecode.ErrUpstreamReply) {
					t.Fatalf("got %q, %v; want ErrUpstreamReply", got, err)
				}
			})
		}
	}
	t.Run("AtTheLimit", func(t *testing.T) {
		body := bytes.Repeat([]byte("a"), claudecode.MaxUpstreamBytes)
		got, err := claudecode.Merge("SessionStart", answer(""), body, 0, sections)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("got %d bytes, %v; want the body unchanged", len(got), err)
		}
	})
}

// TestMergeCap covers the cut order over the cap: the upstream's part first, then heirloom's
// lowest-priority section, each named in the trailing marker.
func TestMergeCap(t *testing.T) {
	words := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(prefix)
		}
		return b.String()
	}
	upstreamText := words("upstream", 200)                // 1799 units
	recoveredLong := recovered + "\n" + words("rec", 300) // long checkpoint
	ours := objective + "\n\n" + inherited + "\n\n" + recoveredLong

	t.Run("UpstreamShortened", func(t *testing.T) {
		max := utf16Len(ours) + 500
		got, err := claudecode.Merge("SessionStart", answer(ours), []byte(upstreamText), max, sections)
		if err != nil {
			t.Fatal(err)
		}
		ctx := additionalContext(t, got)
		marker := "[heirloom: cut to fit " + itoa(max) + " characters: upstream hook context shortened]"
		if !strings.HasPrefix(ctx, ours+"\n\nupstream upstream") || !strings.HasSuffix(ctx, " […]\n\n"+marker) {
			t.Errorf("got %q", ctx)
		}
		if n := utf16Len(ctx); n > max || n < max-20 {
			t.Errorf("merged length %d, want at most %d and close to it", n, max)
		}
	})
	t.Run("UpstreamDropped", func(t *testing.T) {
		max := utf16Len(ours) + 75 // room for the marker, not for useful upstream text
		got, err := claudecode.Merge("SessionStart", answer(ours), []byte(upstreamText), max, sections)
		if err != nil {
			t.Fatal(err)
		}
		ctx := additionalContext(t, got)
		want := ours + "\n\n[heirloom: cut to fit " + itoa(max) + " characters: upstream hook context dropped]"
		if ctx != want {
			t.Errorf("got %q\nwant %q", ctx, want)
		}
	})
	t.Run("LowestSectionShortened", func(t *testing.T) {
		max := utf16Len(ours) - 500
		got, err := claudecode.Merge("SessionStart", answer(ours), []byte(upstreamText), max, sections)
		if err != nil {
			t.Fatal(err)
		}
		ctx := additionalContext(t, got)
		marker := "[heirloom: cut to fit " + itoa(max) + " characters: upstream hook context dropped; Recovered Session Checkpoint shortened]"
		if !strings.HasPrefix(ctx, objective+"\n\n"+inherited+"\n\n"+recovered+"\nrec rec") || !strings.HasSuffix(ctx, "rec […]\n\n"+marker) {
			t.Errorf("got %q", ctx)
		}
		if strings.Contains(ctx, "upstream upstream") {
			t.Error("upstream context kept while heirloom's was cut")
		}
		if n := utf16Len(ctx); n > max {
			t.Errorf("merged length %d, over %d", n, max)
		}
	})
	t.Run("LowestSectionDropped", func(t *testing.T) {
		inheritedLong := inherited + "\n" + words("inh", 300)
		ours := recoveredLong + "\n\n" + objective + "\n\n" + inheritedLong // sections in any order
		max := utf16Len(objective) + 900
		got, err := claudecode.Merge("SessionStart", answer(ours), []byte("short upstream"), max, sections)
		if err != nil {
			t.Fatal(err)
		}
		ctx := additionalContext(t, got)
		marker := "[heirloom: cut to fit " + itoa(max) + " characters: upstream hook context dropped; Recovered Session Checkpoint dropped; Inherited from Parent Session shortened]"
		if !strings.HasPrefix(ctx, objective+"\n\n"+inherited+"\ninh inh") || !strings.HasSuffix(ctx, "inh […]\n\n"+marker) {
			t.Errorf("got %q", ctx)
		}
		if strings.Contains(ctx, "Recovered Session Checkpoint\n") {
			t.Error("lowest-priority section kept")
		}
		if n := utf16Len(ctx); n > max {
			t.Errorf("merged length %d, over %d", n, max)
		}
	})
	t.Run("HeadingWithoutBodyDropped", func(t *testing.T) {
		// Room for the recovered heading and a few words only: not useful, so it goes.
		ours := objective + "\n\n" + recoveredLong
		marker := "[heirloom: cut to fit 999 characters: Recovered Session Checkpoint shortened]"
		max := utf16Len(objective) + 2 + utf16Len("## Recovered Session Checkpoint\n") + 20 + 2 + utf16Len(marker)
		got, err := claudecode.Merge("SessionStart", answer(ours), nil, max, sections)
		if err != nil {
			t.Fatal(err)
		}
		ctx := additionalContext(t, got)
		want := objective + "\n\n[heirloom: cut to fit " + itoa(max) + " characters: Recovered Session Checkpoint dropped]"
		if ctx != want {
			t.Errorf("got %q\nwant %q", ctx, want)
		}
	})
	t.Run("UTF16Units", func(t *testing.T) {
		// Each emoji is 2 units: a cap in bytes or runes would let this through.
		emoji := strings.Repeat("😀 ", 400) // 1200 units, 400 runes... plus spaces
		max := 600
		got, err := claudecode.Merge("SessionStart", answer(objective), []byte(emoji), max, sections)
		if err != nil {
			t.Fatal(err)
		}
		ctx := additionalContext(t, got)
		if n := utf16Len(ctx); n > max {
			t.Errorf("merged length %d UTF-16 units, over %d", n, max)
		}
		if !strings.HasPrefix(ctx, objective+"\n\n😀") || !utf8.ValidString(ctx) {
			t.Errorf("got %q", ctx)
		}
	})
	t.Run("UnknownTextCutBeforeSections", func(t *testing.T) {
		ours := "loose note " + words("note", 200) + "\n\n" + objective
		max := utf16Len(objective) + 100
		got, err := claudecode.Merge("SessionStart", answer(ours), nil, max, sections)
		if err != nil {
			t.Fatal(err)
		}
		ctx := additionalContext(t, got)
		if !strings.HasSuffix(ctx, objective+"\n\n[heirloom: cut to fit "+itoa(max)+" characters: heirloom context dropped]") {
			t.Errorf("got %q", ctx)
		}
	})
	t.Run("TinyCap", func(t *testing.T) {
		got, err := claudecode.Merge("SessionStart", answer(ours), []byte(upstreamText), 10, sections)
		if err != nil {
			t.Fatal(err)
		}
		if n := utf16Len(additionalContext(t, got)); n > 10 {
			t.Errorf("merged length %d, over 10", n)
		}
	})
}

// TestMergeSections: the caller's headings decide the cut order, and without headings ours is one
// section.
func TestMergeSections(t *testing.T) {
	ours := "# low\n" + strings.Repeat("low ", 60) + "\n\n# high\n" + strings.Repeat("high ", 60)
	max := utf16Len(ours) - 100
	t.Run("CallersOrder", func(t *testing.T) {
		got, err := claudecode.Merge("SessionStart", answer(ours), nil, max, []string{"# high", "# low"})
		if err != nil {
			t.Fatal(err)
		}
		ctx := additionalContext(t, got)
		if !strings.HasPrefix(ctx, "# low\nlow low") || !strings.Contains(ctx, "\n\n# high\n"+strings.TrimSpace(strings.Repeat("high ", 60))+"\n\n") ||
			!strings.HasSuffix(ctx, "[heirloom: cut to fit "+itoa(max)+" characters: # low shortened]") {
			t.Errorf("got %q; want the low section shortened, the high one whole", ctx)
		}
	})
	t.Run("NoHeadings", func(t *testing.T) {
		got, err := claudecode.Merge("SessionStart", answer(ours), nil, max, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := additionalContext(t, got)
		if !strings.HasPrefix(ctx, ours[:utf16Len(ours)-200]) ||
			!strings.HasSuffix(ctx, "high […]\n\n[heirloom: cut to fit "+itoa(max)+" characters: heirloom context shortened]") {
			t.Errorf("got %q; want ours cut at its end as one section", ctx)
		}
		if n := utf16Len(ctx); n > max {
			t.Errorf("merged length %d, over %d", n, max)
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// FuzzMerge checks Merge's invariants on any input: it never panics, a merged reply is valid
// JSON with additionalContext within the cap and heirloom's text first when that fits, and an
// empty ours returns the upstream unchanged.
func FuzzMerge(f *testing.F) {
	f.Add("SessionStart", recovered, []byte(`{"hookSpecificOutput":{"additionalContext":"x"}}`), 200)
	f.Add("PreToolUse", objective+"\n\n"+inherited, []byte("plain text"), 90)
	f.Add("PreToolUse", objective+"\n\n"+inherited, []byte(strings.Repeat("plain text ", 60)), 600)
	f.Add("SubagentStart", inherited, []byte(`{"a":[1,{"b":null}],"hookSpecificOutput":null}`), 9500)
	f.Add("SessionStart", "", []byte(" {} "), 0)
	f.Add("Stop", "x", []byte(`{"hookSpecificOutput":{}}`), 1)
	f.Fuzz(func(t *testing.T, event, ours string, upstream []byte, max int) {
		if max > 20000 || max < -1 {
			max %= 20000
		}
		if event == "PreToolUse" && utf8.ValidString(ours) && ours != "" {
			// A refusal survives any usable upstream reply.
			got, err := claudecode.Merge(event, adapters.Answer{Deny: ours}, upstream, max, sections)
			if err == nil && !strings.HasPrefix(claudecode.ReplyAnswer(got).Deny, ours) {
				t.Fatalf("Merge of a refusal %q with %q = %q: the refusal is lost", ours, upstream, got)
			}
		}
		got, err := claudecode.Merge(event, answer(ours), upstream, max, sections)
		if err != nil {
			if !errors.Is(err, claudecode.ErrUpstreamReply) {
				t.Fatalf("error %v is not ErrUpstreamReply", err)
			}
			return
		}
		if strings.TrimSpace(ours) == "" {
			if !bytes.Equal(got, upstream) {
				t.Fatalf("passive: got %q, want %q", got, upstream)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("merged reply is not JSON: %q", got)
		}
		var r struct {
			HookSpecificOutput *struct {
				AdditionalContext *string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(got, &r); err != nil || r.HookSpecificOutput == nil || r.HookSpecificOutput.AdditionalContext == nil {
			t.Fatalf("merged reply has no additionalContext: %q (%v)", got, err)
		}
		cap := max
		if cap <= 0 {
			cap = claudecode.DefaultMaxContextChars
		}
		ctx := *r.HookSpecificOutput.AdditionalContext
		if n := utf16Len(ctx); n > cap {
			t.Fatalf("additionalContext is %d units, over %d", n, cap)
		}
		if o := strings.TrimSpace(ours); cap >= 500 && utf8.ValidString(o) && utf16Len(o) <= cap/2 && !strings.HasPrefix(ctx, o) {
			t.Fatalf("additionalContext %q does not start with ours %q", ctx, o)
		}
	})
}

// The inherited block's recent transcript, which takes what room the rest leaves, gives it up to
// a proxied hook's context of up to half the cap, before that context is cut.
func TestMergeTranscriptYields(t *testing.T) {
	head := inherited + "\n\n### Your task\nPort the lexer."
	transcript := "### Recent transcript\n" + strings.TrimSpace(strings.Repeat("[user] old turn words here\n", 300))
	ours := head + "\n\n" + transcript + "\n\n### Active constraints\n- Never touch vendor/."
	theirs := "UPSTREAM: " + strings.Repeat("memory ", 200)
	limit := 9500
	got, err := claudecode.Merge("SubagentStart", answer(ours), []byte(theirs), limit, sections)
	if err != nil {
		t.Fatal(err)
	}
	ctx := additionalContext(t, got)
	if n := utf16Len(ctx); n > limit {
		t.Fatalf("merged length %d, over %d", n, limit)
	}
	if !strings.HasSuffix(ctx, strings.TrimSpace(theirs)) {
		t.Errorf("the upstream's context is not whole at the end: %q", ctx[max(0, len(ctx)-200):])
	}
	if !strings.HasPrefix(ctx, head+"\n\n### Recent transcript\n[…]") || !strings.Contains(ctx, "\n\n### Active constraints\n- Never touch vendor/.\n\n") {
		t.Errorf("want ours with only its transcript's older part cut:\n%.600s", ctx)
	}
	// An upstream context over half the cap is cut to that half, and the transcript gives the
	// room: ours keeps every other section.
	big := "UPSTREAM: " + strings.Repeat("memory ", 1000)
	got, err = claudecode.Merge("SubagentStart", answer(ours), []byte(big), limit, sections)
	if err != nil {
		t.Fatal(err)
	}
	ctx = additionalContext(t, got)
	if n := utf16Len(ctx); n > limit {
		t.Fatalf("merged length %d, over %d", n, limit)
	}
	if !strings.Contains(ctx, "\n\n### Active constraints\n- Never touch vendor/.\n\nUPSTREAM: memory") ||
		!strings.HasSuffix(ctx, "[heirloom: cut to fit 9500 characters: upstream hook context shortened]") {
		t.Errorf("want ours with its constraints, the upstream's context cut to half, the marker:\n%s", ctx)
	}
	// Ours alone over a lower cap (the shim's): the transcript gives the room, nothing else.
	got, err = claudecode.Merge("SubagentStart", answer(ours), nil, 5000, sections)
	if err != nil {
		t.Fatal(err)
	}
	ctx = additionalContext(t, got)
	if utf16Len(ctx) > 5000 || !strings.HasSuffix(ctx, "\n\n### Active constraints\n- Never touch vendor/.") {
		t.Errorf("want ours cut in its transcript only, within 5000:\n%.400s", ctx)
	}
}
