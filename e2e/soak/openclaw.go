package soak

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/openclaw/gatewaytest"
)

// openClaw drives a stand-in OpenClaw Gateway (gatewaytest: the real handshake, token auth,
// sessions.subscribe, sessions.list, chat.history, ticks, restarts on the same port) with the
// recorded Gateway conversation (two parents, one spawning a sub-agent that reports back),
// replayed with new session keys, ids and text each time round. The Gateway's session rows and
// chat histories follow what was emitted, so a client that resyncs after a restart reads them.
type openClaw struct {
	gw   *gatewaytest.Server
	tb   *shimTB
	tmpl *clawTemplate

	mu    sync.Mutex
	rows  map[string]json.RawMessage   // session key → its latest row
	hist  map[string][]json.RawMessage // session key → its transcript messages
	order []string                     // keys, oldest first, at most clawKeepSessions
}

// clawKeepSessions is how many sessions the stand-in remembers for sessions.list and
// chat.history.
const clawKeepSessions = 64

// clawToken is the Gateway's auth token in the soak.
const clawToken = "soak-gateway-token"

func newOpenClaw(recording string) (*openClaw, error) {
	tmpl, err := loadClawTemplate(recording)
	if err != nil {
		return nil, err
	}
	tb := &shimTB{}
	gw, err := tb.run(func() *gatewaytest.Server {
		return gatewaytest.NewServer(tb, gatewaytest.Options{Token: clawToken})
	})
	if err != nil {
		return nil, err
	}
	return &openClaw{gw: gw, tb: tb, tmpl: tmpl, rows: map[string]json.RawMessage{}, hist: map[string][]json.RawMessage{}}, nil
}

// restart stops the Gateway (every connection closed with 1012, as a Gateway restarting),
// stays down for down, and listens on the same port again.
func (c *openClaw) restart(ctx context.Context, down time.Duration) error {
	c.gw.Stop()
	if !sleep(ctx, down) {
		return ctx.Err()
	}
	return c.gw.Start()
}

func (c *openClaw) close() { c.tb.cleanup() }

// generate emits conversations, one frame every pace, until ctx ends; each finished one's
// sub-agent goes to the recent OpenClaw children (for /api/inject).
func (c *openClaw) generate(ctx context.Context, s *soak, r *rand.Rand, pace time.Duration, n func() int64) {
	for ctx.Err() == nil {
		frames, child := c.tmpl.conversation(n(), r, s.cfg.TextScale)
		for _, f := range frames {
			if !sleep(ctx, pace) {
				return
			}
			c.remember(f)
			c.gw.Emit(f.event, f.payload)
			s.ingested.Add(int64(len(f.payload)))
			s.framesSent["openclaw"].Add(1)
		}
		s.recentClawChildren.add(child)
	}
}

// remember keeps what frame f tells of a session for the Gateway's replies to a resync.
func (c *openClaw) remember(f clawFrame) {
	if f.key == "" || (f.row == nil && f.message == nil) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.rows[f.key]; !ok {
		if _, ok := c.hist[f.key]; !ok {
			c.order = append(c.order, f.key)
			if len(c.order) > clawKeepSessions {
				old := c.order[0]
				c.order = slices.Delete(c.order, 0, 1)
				delete(c.rows, old)
				delete(c.hist, old)
				c.gw.SetHistory(old)
			}
		}
	}
	if f.row != nil {
		c.rows[f.key] = f.row
		rows := make([]json.RawMessage, 0, len(c.order))
		for _, k := range c.order {
			if row, ok := c.rows[k]; ok {
				rows = append(rows, row)
			}
		}
		c.gw.SetSessions(rows...)
	}
	if f.message != nil {
		c.hist[f.key] = append(c.hist[f.key], f.message)
		c.gw.SetHistory(f.key, c.hist[f.key]...)
	}
}

// clawTemplate is the recorded Gateway conversation ready to be replayed with new keys, ids and
// texts.
type clawTemplate struct {
	frames []clawFrame
	uuids  []string // distinct UUIDs, in order of appearance
	calls  []string // distinct tool call ids
	texts  []string // texts as JSON string contents, longest first
	child  string   // the sub-agent's key
}

// clawFrame is one event frame: its name, payload, the session key it is about, and the row or
// transcript message it carries.
type clawFrame struct {
	event   string
	payload json.RawMessage
	key     string
	row     json.RawMessage // sessions.changed: payload.session
	message json.RawMessage // session.message: payload.message
}

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	callPattern = regexp.MustCompile(`call_[0-9a-f]{8,}`)
	clawParents = []string{"agent:main:parenta", "agent:main:parentb"}
)

func loadClawTemplate(path string) (*clawTemplate, error) {
	rec, err := gatewaytest.LoadRecording(path)
	if err != nil {
		return nil, err
	}
	evs, err := gatewaytest.EventFrames(rec)
	if err != nil {
		return nil, err
	}
	t := &clawTemplate{}
	seen := map[string]bool{}
	add := func(list *[]string, s string) {
		if !seen[s] {
			seen[s] = true
			*list = append(*list, s)
		}
	}
	for _, ev := range evs {
		if ev.Event == "tick" || ev.Event == "health" {
			continue // the stand-in ticks itself; health says nothing of sessions
		}
		var b bytes.Buffer
		if err := json.Compact(&b, ev.Payload); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var p struct {
			SessionKey string          `json:"sessionKey"`
			Session    json.RawMessage `json:"session"`
			Message    json.RawMessage `json:"message"`
		}
		_ = json.Unmarshal(b.Bytes(), &p)
		f := clawFrame{event: ev.Event, payload: b.Bytes(), key: p.SessionKey}
		switch ev.Event {
		case "sessions.changed":
			f.row = p.Session
		case "session.message":
			f.message = p.Message
		}
		if strings.HasPrefix(p.SessionKey, "agent:main:subagent:") {
			t.child = p.SessionKey
		}
		t.frames = append(t.frames, f)
		for _, u := range uuidPattern.FindAllString(b.String(), -1) {
			add(&t.uuids, u)
		}
		for _, c := range callPattern.FindAllString(b.String(), -1) {
			add(&t.calls, c)
		}
		var v any
		_ = json.Unmarshal(b.Bytes(), &v)
		collectTexts(v, "", func(s string) {
			if !strings.Contains(s, "[Subagent") { // the child's framing: heirloom reads its task from it
				add(&t.texts, jsonContent(s))
			}
		})
	}
	if t.child == "" {
		return nil, fmt.Errorf("%s: no sub-agent in the recording", path)
	}
	slices.SortStableFunc(t.texts, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return t, nil
}

// conversation returns the recording as conversation n: the parents' keys agent:main:soakNa and
// …b (and their display names), every UUID with its last 12 hex digits made from n and its index, every tool call id
// renumbered, every text replaced by prose. It also returns the sub-agent's new key.
func (t *clawTemplate) conversation(n int64, r *rand.Rand, scale float64) ([]clawFrame, string) {
	var pairs []string
	for i, p := range clawParents {
		name := fmt.Sprintf("soak%d%c", n, 'a'+i)
		pairs = append(pairs, p, "agent:main:"+name, `"`+strings.TrimPrefix(p, "agent:main:")+`"`, `"`+name+`"`)
	}
	for i, u := range t.uuids {
		pairs = append(pairs, u, fmt.Sprintf("%s%08x%04x", u[:24], uint32(n), i&0xffff))
	}
	for i, c := range t.calls {
		pairs = append(pairs, c, renumber(c, n, i))
	}
	for _, text := range t.texts {
		pairs = append(pairs, text, prose(r, int(scale*float64(sizeBetween(r, 100, 3000)))))
	}
	rep := strings.NewReplacer(pairs...)
	re := func(b json.RawMessage) json.RawMessage {
		if b == nil {
			return nil
		}
		return json.RawMessage(rep.Replace(string(b)))
	}
	out := make([]clawFrame, len(t.frames))
	for i, f := range t.frames {
		out[i] = clawFrame{event: f.event, payload: re(f.payload), key: rep.Replace(f.key), row: re(f.row), message: re(f.message)}
	}
	return out, rep.Replace(t.child)
}

// shimTB is the testing.TB gatewaytest needs, outside a test: Cleanup collects functions for
// cleanup to run, Errorf and Logf are kept, and Fatalf ends the call run makes. The embedded
// interface is nil: a method gatewaytest might call that is not defined here panics, loudly.
type shimTB struct {
	testing.TB

	mu       sync.Mutex
	cleanups []func()
	errs     []string
}

type shimFatal struct{ msg string }

func (t *shimTB) Helper()             {}
func (t *shimTB) Cleanup(f func())    { t.mu.Lock(); t.cleanups = append(t.cleanups, f); t.mu.Unlock() }
func (t *shimTB) Logf(string, ...any) {}
func (t *shimTB) Errorf(format string, args ...any) {
	t.mu.Lock()
	t.errs = append(t.errs, fmt.Sprintf(format, args...))
	t.mu.Unlock()
}
func (t *shimTB) Fatalf(format string, args ...any) { panic(shimFatal{fmt.Sprintf(format, args...)}) }
func (t *shimTB) Fatal(args ...any)                 { panic(shimFatal{fmt.Sprint(args...)}) }

// run calls f and turns a Fatalf inside it into an error.
func (t *shimTB) run(f func() *gatewaytest.Server) (s *gatewaytest.Server, err error) {
	defer func() {
		if p := recover(); p != nil {
			fatal, ok := p.(shimFatal)
			if !ok {
				panic(p)
			}
			err = fmt.Errorf("gateway stand-in: %s", fatal.msg)
		}
	}()
	return f(), nil
}

// cleanup runs the collected cleanups, last first.
func (t *shimTB) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// errors returns what Errorf reported.
func (t *shimTB) errors() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.errs)
}
