package inject

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/inject/textcut"
	"github.com/heirloom-dev/heirloom/kv"
)

// A sub-agent's result, surfaced to a model or a person, is cast (CastRun): a header that names
// the run and says how it ended and how its result was condensed, the result itself, and a
// footer with the run's figures and where the full result is. Results are condensed in three
// levels:
//
//  1. passthrough: the result as it is, when its estimated tokens are within the limit
//     (runs.max_result_tokens) and it fits the room the cast has;
//  2. LLM summary: a summary in labelled sections (summary, conclusions, file paths, action
//     items, errors, key data) an LLM made of a longer result; it is made outside inject
//     (Run.Summary), and is used when there is one;
//  3. head/tail: the first 60% and the last 40% of the room, with a line in between saying
//     how many characters were left out, when there is no summary.
//
// Tokens are estimated, not counted: one token per CharsPerToken UTF-16 units, rounded up.
// That is about right for English prose and code with a modern tokenizer and errs on the long
// side for both; text in scripts without spaces (Chinese, Japanese) runs to about one token per
// character, so such a result passes level 1 up to four times its token limit.

// Condensation levels (Run.Condensation, and a cast's Condensation line).
const (
	LevelPassthrough = 1 // the result as it is
	LevelSummary     = 2 // an LLM's summary in labelled sections
	LevelHeadTail    = 3 // the result's head and tail, the middle left out
)

// DefaultMaxResultTokens is the limit of level 1 when a caller gives none: runs.max_result_tokens'
// default.
const DefaultMaxResultTokens = 4000

// CharsPerToken is how many UTF-16 units EstimateTokens counts as one token.
const CharsPerToken = 4

// MinCastChars is the smallest room a cast is made in: header, footer and a body worth reading.
const MinCastChars = 400

// Caps of a cast's pieces, in UTF-16 units.
const (
	castReasonChars = 300 // the Status line's reason
	minCastBody     = 60  // a body with less room than this is not worth a cast
	headPercent     = 60  // level 3: the head's share of the room; the tail gets the rest
)

// EstimateTokens estimates how many tokens s is to a model: Len(s) / CharsPerToken, rounded up.
func EstimateTokens(s string) int { return tokensOf(Len(s)) }

// tokensOf estimates the tokens of a text of n UTF-16 units.
func tokensOf(n int) int { return (n + CharsPerToken - 1) / CharsPerToken }

// LevelName names a condensation level: "passthrough", "LLM summary", "head/tail"; another
// value reads "unknown".
func LevelName(level int) string {
	switch level {
	case LevelPassthrough:
		return "passthrough"
	case LevelSummary:
		return "LLM summary"
	case LevelHeadTail:
		return "head/tail"
	}
	return "unknown"
}

// Condense returns r's result as it is kept once the full result is swept, and its level: the
// result itself (made valid, redacted, its blank lines squeezed) when its estimated tokens are
// within maxTokens (zero or negative: DefaultMaxResultTokens), else r.Summary when there is
// one, else the result's head and tail (see CastRun), each at most maxTokens·CharsPerToken
// units. A run already swept keeps its result and level; a run with no result gives "" at
// level 1.
func Condense(r kv.Run, maxTokens int) (string, int) {
	return condense3(r, maxTokens, Len(r.Result), 0)
}

// condense3 is Condense for a result of total units (Len(r.Result), measured once by the
// caller: a result may be megabytes), its level-2 and level-3 forms made within roomCap units
// when that is positive and smaller than the limit's (the room a cast has).
func condense3(r kv.Run, maxTokens, total, roomCap int) (string, int) {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxResultTokens
	}
	room := maxTokens * CharsPerToken
	if roomCap > 0 {
		room = min(room, roomCap)
	}
	switch {
	case r.Swept:
		return r.Result, max(r.Condensation, LevelPassthrough)
	case tokensOf(total) <= maxTokens:
		return resultText(r.Result), LevelPassthrough
	case strings.TrimSpace(r.Summary) != "":
		return headTail(r.Summary, room), LevelSummary
	}
	return headTailOf(r.Result, room, total), LevelHeadTail
}

// CastOptions are the limits a cast is made within.
type CastOptions struct {
	// MaxTokens is the limit of level 1 (runs.max_result_tokens); zero or negative means
	// DefaultMaxResultTokens.
	MaxTokens int
	// MaxChars caps the whole cast, in UTF-16 units (see Len): a body that does not fit is cut
	// to its head and tail (level 3 for a result that would have passed through). Zero or
	// negative: no cap but MaxTokens.
	MaxChars int
	// Full casts the result as it is stored, whatever its size and MaxChars: the full result
	// while it is kept (`heirloom runs show`), the condensed form once it was swept.
	Full bool
	// Retention is runs.result_retention: the footer says until when the full result is kept.
	// Zero: it does not say.
	Retention time.Duration
	// Scope is the memory scope `heirloom runs show` reads by default (the configured one): the
	// footer of a run filed in another (OpenClaw's runs are in their agent's) names its scope,
	// `heirloom runs show --scope <scope> <run id>`. "": the footer names none.
	Scope string
}

// CastRun renders run r as a model or a person reads it, redacted, in at most o.MaxChars units.
// It returns "" when o.MaxChars is under MinCastChars, or leaves the body under 60 units. The
// format, no trailing newline:
//
//	[Subagent Result: <description, else prompt, else type>]
//	Status: <status>[ (end reason: <end reason>)][ — <reason>]
//	Condensation: Level <n> (<name>)
//	<body: the result, condensed (see Condense); "(no result returned)" when it is empty, and
//	"(no result yet: the sub-agent is <status>)" while the run is open>
//	---
//	Runtime: <duration> · Turns: <n> · Tokens: <n>            (each "unknown" when not recorded)
//	Level <n> (<name>) · original <n> characters · shown <n> (<p>%)
//	Full result: <where it is: shown whole above, `heirloom runs show [--scope <scope>] <run id>`
//	(the scope when it is not o.Scope) and until when it is kept, or when it was swept>
//
// The end reason is shown when it is not the status's own word; the body keeps the result's
// line breaks. Numbers over 999 have thousands separators; times are UTC to the minute.
func CastRun(r kv.Run, o CastOptions) string {
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxResultTokens
	}
	if o.MaxChars > 0 && o.MaxChars < MinCastChars && !o.Full {
		return ""
	}
	return castSized(r, o, Len(r.Result))
}

// castSized is CastRun for a result of total units (measured once by the caller).
func castSized(r kv.Run, o CastOptions, total int) string {
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxResultTokens
	}
	if o.MaxChars > 0 && o.MaxChars < MinCastChars && !o.Full {
		return ""
	}
	roomCap := 0
	if o.MaxChars > 0 && !o.Full {
		// What the header and footer leave, so the body is condensed once, to fit.
		bare := cast{level: LevelHeadTail, original: total}
		roomCap = max(minCastBody, o.MaxChars-Len(bare.render(r, o))-16)
	}
	c := castOf(r, o, total, roomCap)
	if o.Full || o.MaxChars <= 0 {
		return c.render(r, o)
	}
	for range 4 {
		out := c.render(r, o)
		over := Len(out) - o.MaxChars
		if over <= 0 {
			return out
		}
		room := Len(c.body) - over - 4 // the marker's digits may grow by a few units
		if room < minCastBody {
			return ""
		}
		c.cut(r, room, total)
	}
	return ""
}

// cast is a run's body as it will be shown, and what the footer says about it.
type cast struct {
	body     string
	level    int
	original int  // the full result's length, in units; 0 when there is none
	whole    bool // body is the whole result
	none     bool // there is no result (yet)
}

// castOf chooses r's body and level (see CastRun), before any cut to fit.
func castOf(r kv.Run, o CastOptions, total, roomCap int) cast {
	switch {
	case r.Open():
		return cast{body: "(no result yet: the sub-agent is " + cmp.Or(oneLine(r.Status, runStatusChars), "running") + ")", level: LevelPassthrough, none: true}
	case strings.TrimSpace(r.Result) == "":
		return cast{body: "(no result returned)", level: LevelPassthrough, none: true}
	}
	c := cast{original: total}
	if r.Swept && r.ResultChars > 0 {
		c.original = r.ResultChars
	}
	switch {
	case o.Full && !r.Swept:
		c.body, c.level = resultText(r.Result), LevelPassthrough
	case o.Full:
		c.body, c.level = resultText(r.Result), max(r.Condensation, LevelPassthrough)
	default:
		c.body, c.level = condense3(r, o.MaxTokens, total, roomCap)
		c.body = resultText(c.body)
	}
	c.whole = c.level == LevelPassthrough
	return c
}

// cut shortens c's body to room units: the full result, when it is at hand and the body came
// from it, is cut afresh (level 3, one omission line counting what the full result lost); a
// summary or a swept result is cut as it is, keeping its level.
func (c *cast) cut(r kv.Run, room, total int) {
	if c.none {
		c.body = Head(c.body, room)
		return
	}
	if c.level != LevelSummary && !r.Swept {
		c.body, c.level = headTailOf(r.Result, room, total), LevelHeadTail
	} else {
		c.body = headTail(c.body, room)
	}
	c.whole = false
}

// render writes the cast of r with body c.
func (c cast) render(r kv.Run, o CastOptions) string {
	label := runTitle(r.Description, r.Prompt, r.Type)
	if label == "" {
		label = "sub-agent"
	}
	var b strings.Builder
	b.WriteString("[Subagent Result: " + label + "]\n")
	b.WriteString("Status: " + castStatus(r) + "\n")
	fmt.Fprintf(&b, "Condensation: Level %d (%s)\n", c.level, LevelName(c.level))
	b.WriteString(c.body)
	b.WriteString("\n---\n")
	fmt.Fprintf(&b, "Runtime: %s · Turns: %s · Tokens: %s\n", cmp.Or(Runtime(r.DurationMs, r.StartedAt, r.EndedAt), "unknown"), countOf(int64(r.Turns)), countOf(r.Tokens))
	if c.none {
		fmt.Fprintf(&b, "Level %d (%s) · no result to condense\n", c.level, LevelName(c.level))
	} else {
		shown, pct := Len(c.body), 100
		if c.whole { // whitespace trimmed at line ends is not a cut
			shown = c.original
		}
		if shown < c.original {
			pct = shown * 100 / c.original
		}
		ratio := strconv.Itoa(pct) + "%"
		if pct == 0 && shown > 0 {
			ratio = "<1%"
		}
		fmt.Fprintf(&b, "Level %d (%s) · original %s characters · shown %s (%s)\n",
			c.level, LevelName(c.level), thousands(int64(c.original)), thousands(int64(shown)), ratio)
	}
	b.WriteString("Full result: " + c.where(r, o))
	return b.String()
}

// where says where r's full result is.
func (c cast) where(r kv.Run, o CastOptions) string {
	show := "heirloom runs show " + r.ID
	if o.Scope != "" && r.Scope != "" && r.Scope != o.Scope {
		show = "heirloom runs show --scope " + r.Scope + " " + r.ID
	}
	switch {
	case r.Open():
		return "not yet; " + show + " once it ends"
	case c.none:
		return "none was returned"
	case r.Swept && c.whole:
		return "shown whole above (it was within the limit when swept " + utcMinute(r.SweptAt) + ")"
	case r.Swept:
		return "swept " + utcMinute(r.SweptAt) + " after runs.result_retention; this condensed form is what is kept (" + show + ")"
	case c.whole:
		return "shown whole above (also: " + show + ")"
	case o.Retention > 0 && !r.EndedAt.IsZero():
		return show + " (kept until " + utcMinute(r.EndedAt.Add(o.Retention)) + ")"
	}
	return show
}

// castStatus is the Status line's value.
func castStatus(r kv.Run) string {
	s := cmp.Or(oneLine(r.Status, runStatusChars), "unknown")
	if r.EndReason != "" && r.EndReason != r.Status {
		s += " (end reason: " + oneLine(r.EndReason, runStatusChars) + ")"
	}
	if why := oneLine(r.Reason, castReasonChars); why != "" {
		s += " — " + why
	}
	return s
}

// Runtime is how long a run ran, for a person: its reported duration (durationMs), else the
// time from started to ended, to the second (to the millisecond under one); "" when neither is
// known. Casts and `heirloom runs` show it.
func Runtime(durationMs int64, started, ended time.Time) string {
	d := time.Duration(durationMs) * time.Millisecond
	if d <= 0 && !started.IsZero() && ended.After(started) {
		d = ended.Sub(started)
	}
	switch {
	case d <= 0:
		return ""
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// countOf is n with thousands separators, "unknown" for 0.
func countOf(n int64) string {
	if n <= 0 {
		return "unknown"
	}
	return thousands(n)
}

// thousands writes n with a comma every three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// utcMinute is t in UTC to the minute; "at an unknown time" for zero.
func utcMinute(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// resultText is a result made valid, redacted, its line ends trimmed and blank lines squeezed.
func resultText(s string) string { return normalizeLines(Redact(clean(s))) }

// headTail returns the result s in at most limit units: s itself (as resultText makes it) when it
// fits, else its first headPercent% and its last part of the room, each cut at a word
// boundary, around a line saying how many characters were left out:
//
//	<head>
//
//	[… 12,345 characters omitted …]
//
//	<tail>
//
// Each part ends (the head) or starts (the tail) at a line break when one lies within the
// fifth of its room nearest the cut. Only as much of s as the room needs is read, so a huge result costs what is shown. A room too
// small for the omission line and a little of each end yields the head alone, Head-cut.
func headTail(s string, limit int) string { return headTailOf(s, limit, Len(s)) }

// headTailOf is headTail for s of total units (measured once by the caller).
func headTailOf(s string, limit, total int) string {
	if total <= limit {
		if t := resultText(s); Len(t) <= limit {
			return t
		}
	}
	markerRoom := Len(omission(int64(total)))
	room := limit - markerRoom
	if room < 2*minSection {
		return Head(resultText(clipFirst(s, limit)), limit)
	}
	headRoom := room * headPercent / 100
	tailRoom := room - headRoom
	h := strings.TrimSuffix(Head(resultText(clipFirst(s, headRoom)), headRoom+textcut.MarkerLen), textcut.HeadMarker)
	if i := strings.LastIndexByte(h, '\n'); i >= 0 && Len(h[i:]) <= headRoom/5 {
		h = h[:i] // end at a line's end when one is near
	}
	t := strings.TrimPrefix(Tail(resultText(clipLast(s, tailRoom)), tailRoom+textcut.MarkerLen), textcut.TailMarker)
	if i := strings.IndexByte(t, '\n'); i >= 0 && Len(t[:i]) <= tailRoom/5 {
		t = t[i+1:] // start at a line's start when one is near
	}
	omitted := max(total-Len(h)-Len(t), 1)
	return h + omission(int64(omitted)) + t
}

// omission is the line headTail puts where it left n characters out.
func omission(n int64) string { return "\n\n[… " + thousands(n) + " characters omitted …]\n\n" }

// clipFirst and clipLast bound what headTail reads of a result for a part of room units.
func clipFirst(s string, room int) string { c, _ := clipHead(s, rawBudget(room)); return c }
func clipLast(s string, room int) string  { c, _ := clipTail(s, rawBudget(room)); return c }

// castAll casts runs in their order, a blank line between casts, in at most room units in all.
// Each cast gets an even share of the room, and the room a shorter cast leaves goes to the
// longer ones; while a share would be under MinCastChars the first run is left out. "" when no
// run is left.
func castAll(runs []sizedRun, o CastOptions, room int) string {
	const sep = "\n\n"
	for len(runs) > 0 && (room-len(sep)*(len(runs)-1))/len(runs) < MinCastChars {
		runs = runs[1:]
	}
	if len(runs) == 0 {
		return ""
	}
	left := room - len(sep)*(len(runs)-1)
	o.Full = false
	casts := make([]string, len(runs))
	natural := make([]int, len(runs)) // each cast's length with all the room
	order := make([]int, len(runs))
	for i, r := range runs {
		o.MaxChars = left
		casts[i] = castSized(r.Run, o, r.total)
		natural[i], order[i] = Len(casts[i]), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(natural[a], natural[b]) })
	for k, i := range order {
		share := left / (len(order) - k)
		if natural[i] > share {
			o.MaxChars = share
			casts[i] = castSized(runs[i].Run, o, runs[i].total)
		}
		left -= Len(casts[i])
	}
	return strings.Join(slices.DeleteFunc(casts, func(s string) bool { return s == "" }), sep)
}

// sizedRun is a run with its result's length in UTF-16 units, measured once: a result may be
// megabytes, and one cast measures it several times.
type sizedRun struct {
	kv.Run
	total int
}

// sized measures the results of runs.
func sized(runs []kv.Run) []sizedRun {
	out := make([]sizedRun, len(runs))
	for i, r := range runs {
		out[i] = sizedRun{r, Len(r.Result)}
	}
	return out
}

// castable returns the runs of runs a session was told the results of: finished (not open, not
// refused: a refused spawn ran nothing), the n that ended last, oldest first.
func castable(runs []kv.Run, n int) []kv.Run {
	var out []kv.Run
	for _, r := range runs {
		if !r.Open() && r.Status != kv.RunRefused {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b kv.Run) int {
		return cmp.Or(runEnd(a).Compare(runEnd(b)), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out[max(0, len(out)-n):]
}
