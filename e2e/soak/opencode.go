package soak

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// openCode is a stand-in for `opencode serve` 1.18 on a fixed loopback port: GET /event
// streams server-sent events (server.connected first, a heartbeat every 10 s, and every frame
// the generators publish), and GET /session, /session/{id} and /session/{id}/message answer
// from the state those frames built, as the real server does for a client that resyncs after
// a reconnect. It can be restarted on the same port, cleanly (server.instance.disposed, then
// the end of the stream) or not (connections cut).
//
// The frames are the recorded OpenCode stream (parent, task child, compaction) with new ids
// and new text each time round: see ocTemplate.
type openCode struct {
	addr string
	tmpl *ocTemplate

	conv      atomic.Int64 // conversations started
	framesOut atomic.Int64 // frames written to a connection
	bytesOut  atomic.Int64 // their bytes

	mu    sync.Mutex
	srv   *http.Server
	subs  map[*ocSub]struct{}
	state map[string]*ocSession // by session id
	order []string              // session ids, oldest first, at most ocKeepSessions
}

// ocKeepSessions is how many sessions the stand-in remembers for REST: heirloom's resync reads
// the 20 most recently updated, and memory stays bounded.
const ocKeepSessions = 64

// ocHeartbeat is how often OpenCode sends server.heartbeat.
const ocHeartbeat = 10 * time.Second

type ocSub struct {
	ch   chan string   // frames to write
	gone chan struct{} // closed when the handler returns
	kill chan bool     // receives once to end the stream: true for a clean end
}

type ocSession struct {
	info  string
	msgs  map[string]*ocMessage
	order []string
}

type ocMessage struct {
	info  string
	parts map[string]string
	order []string
}

// newOpenCode loads the recording and starts serving on a free loopback port.
func newOpenCode(recording string) (*openCode, error) {
	tmpl, err := loadOCTemplate(recording)
	if err != nil {
		return nil, err
	}
	o := &openCode{tmpl: tmpl, subs: map[*ocSub]struct{}{}, state: map[string]*ocSession{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o.addr = ln.Addr().String()
	o.serve(ln)
	return o, nil
}

// URL is the server's base URL; it stays the same across restarts.
func (o *openCode) URL() string { return "http://" + o.addr }

func (o *openCode) serve(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /event", o.serveEvent)
	mux.HandleFunc("GET /session", o.serveSessions)
	mux.HandleFunc("GET /session/{id}", o.serveSession)
	mux.HandleFunc("GET /session/{id}/message", o.serveMessages)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	o.mu.Lock()
	o.srv = srv
	o.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// restart stops serving (clean: every stream first gets server.instance.disposed and ends;
// otherwise the connections are cut), stays down for down, then listens on the same port again.
func (o *openCode) restart(ctx context.Context, down time.Duration, clean bool) error {
	o.stop(clean)
	if !sleep(ctx, down) {
		return ctx.Err()
	}
	return o.start()
}

func (o *openCode) stop(clean bool) {
	o.mu.Lock()
	srv := o.srv
	o.srv = nil
	subs := make([]*ocSub, 0, len(o.subs))
	for sub := range o.subs {
		subs = append(subs, sub)
	}
	o.mu.Unlock()
	if clean {
		for _, sub := range subs {
			select {
			case sub.kill <- true:
			default:
			}
		}
		for _, sub := range subs {
			select {
			case <-sub.gone:
			case <-time.After(time.Second):
			}
		}
	}
	if srv != nil {
		_ = srv.Close()
	}
}

func (o *openCode) start() error {
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ln, err = net.Listen("tcp", o.addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("opencode stand-in: listen %s again: %w", o.addr, err)
	}
	o.serve(ln)
	return nil
}

// close stops the server for good.
func (o *openCode) close() { o.stop(false) }

func (o *openCode) serveEvent(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	sub := &ocSub{ch: make(chan string, 256), gone: make(chan struct{}), kill: make(chan bool, 1)}
	o.mu.Lock()
	o.subs[sub] = struct{}{}
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		delete(o.subs, sub)
		o.mu.Unlock()
		close(sub.gone)
	}()
	bw := bufio.NewWriterSize(w, 64<<10)
	send := func(data string) bool {
		_, _ = bw.WriteString("data: ")
		_, _ = bw.WriteString(data)
		_, _ = bw.WriteString("\n\n")
		if bw.Flush() != nil || rc.Flush() != nil {
			return false
		}
		o.framesOut.Add(1)
		o.bytesOut.Add(int64(len(data) + 8))
		return true
	}
	if !send(`{"id":"evt_` + ocStamp() + `","type":"server.connected","properties":{}}`) {
		return
	}
	beat := time.NewTicker(ocHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case clean := <-sub.kill:
			if clean {
				send(`{"id":"evt_` + ocStamp() + `","type":"server.instance.disposed","properties":{"directory":"/work/soak"}}`)
			}
			return
		case <-beat.C:
			if !send(`{"id":"evt_` + ocStamp() + `","type":"server.heartbeat","properties":{}}`) {
				return
			}
		case f := <-sub.ch:
			if !send(f) {
				return
			}
		}
	}
}

// ocStamp is the time part of an OpenCode id: 12 hex digits, then 14 random base62 ones.
func ocStamp() string {
	b := make([]byte, 14)
	for i := range b {
		b[i] = base62[rand.IntN(62)]
	}
	return fmt.Sprintf("%012x%s", time.Now().UnixMicro(), b)
}

func (o *openCode) serveSessions(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	infos := make([]string, 0, len(o.order))
	for _, id := range o.order {
		if s := o.state[id]; s.info != "" {
			infos = append(infos, s.info)
		}
	}
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, "["+strings.Join(infos, ",")+"]")
}

func (o *openCode) serveSession(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	s, ok := o.state[r.PathValue("id")]
	info := ""
	if ok {
		info = s.info
	}
	o.mu.Unlock()
	if info == "" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, info)
}

func (o *openCode) serveMessages(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteByte('[')
	o.mu.Lock()
	s, ok := o.state[r.PathValue("id")]
	if ok {
		n := 0
		for _, mid := range s.order {
			m := s.msgs[mid]
			if m.info == "" {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			parts := make([]string, 0, len(m.order))
			for _, pid := range m.order {
				parts = append(parts, m.parts[pid])
			}
			b.WriteString(`{"info":` + m.info + `,"parts":[` + strings.Join(parts, ",") + `]}`)
		}
	}
	o.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	b.WriteByte(']')
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, b.String())
}

// publish records what frame f changes in the REST state and hands it to every connected
// stream. It waits while a stream's buffer is full (the way a slow reader holds back a real
// server's writes), until the stream goes or ctx ends.
func (o *openCode) publish(ctx context.Context, f ocFrame) {
	o.mu.Lock()
	o.apply(f)
	subs := make([]*ocSub, 0, len(o.subs))
	for sub := range o.subs {
		subs = append(subs, sub)
	}
	o.mu.Unlock()
	for _, sub := range subs {
		select {
		case sub.ch <- f.raw:
		case <-sub.gone:
		case <-ctx.Done():
			return
		}
	}
}

// apply updates the REST state with frame f; o.mu is held.
func (o *openCode) apply(f ocFrame) {
	if f.session == "" || (f.info == "" && f.part == "") {
		return
	}
	s := o.state[f.session]
	if s == nil {
		s = &ocSession{msgs: map[string]*ocMessage{}}
		o.state[f.session] = s
		o.order = append(o.order, f.session)
		if len(o.order) > ocKeepSessions {
			delete(o.state, o.order[0])
			o.order = slices.Delete(o.order, 0, 1)
		}
	}
	switch f.typ {
	case "session.created", "session.updated":
		s.info = f.info
	case "message.updated":
		s.message(f.message).info = f.info
	case "message.part.updated":
		m := s.message(f.message)
		if _, ok := m.parts[f.partID]; !ok {
			m.order = append(m.order, f.partID)
		}
		m.parts[f.partID] = f.part
	}
}

func (s *ocSession) message(id string) *ocMessage {
	m := s.msgs[id]
	if m == nil {
		m = &ocMessage{parts: map[string]string{}}
		s.msgs[id] = m
		s.order = append(s.order, id)
	}
	return m
}

// generate publishes conversations, one frame every pace, until ctx ends. Each finished
// conversation's child session goes to the recent OpenCode children (for /api/inject).
func (o *openCode) generate(ctx context.Context, s *soak, r *rand.Rand, pace time.Duration) {
	for ctx.Err() == nil {
		n := o.conv.Add(1)
		frames, child := o.tmpl.conversation(n, r, s.cfg.TextScale)
		for _, f := range frames {
			if !sleep(ctx, pace) {
				return
			}
			o.publish(ctx, f)
			s.ingested.Add(int64(len(f.raw)))
			s.framesSent["opencode"].Add(1)
		}
		s.recentOCChildren.add(child)
	}
}

// ocTemplate is the recorded OpenCode stream, ready to be replayed as new conversations: the
// ids it holds (ses_, msg_, prt_, evt_, call_) and the texts (text parts, deltas, the task
// prompt) to replace each time, and for each frame what it changes in the REST state.
type ocTemplate struct {
	frames []ocFrame
	ids    []string // distinct ids, in order of appearance
	texts  []string // distinct texts, as JSON string contents (escaped, no quotes), longest first
	parent string   // the top-level session's id
	child  string   // the task child's id
	dir    string   // the recorded project directory
}

// ocFrame is one frame of the stream: its data, its type, and the REST state it changes (the
// session or message info, or the part, with their ids).
type ocFrame struct {
	typ     string
	raw     string
	session string
	message string
	partID  string
	info    string
	part    string
}

var ocIDPattern = regexp.MustCompile(`\b(ses|msg|prt|evt|call)_[A-Za-z0-9]{8,}`)

// loadOCTemplate reads a recorded /event stream (data: lines).
func loadOCTemplate(path string) (*ocTemplate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load the OpenCode recording: %w", err)
	}
	t := &ocTemplate{}
	seenID := map[string]bool{}
	seenText := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var f struct {
			Type       string `json:"type"`
			Properties struct {
				SessionID string          `json:"sessionID"`
				Info      json.RawMessage `json:"info"`
				Part      json.RawMessage `json:"part"`
			} `json:"properties"`
		}
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if f.Type == "server.connected" || f.Type == "server.heartbeat" {
			continue // the stand-in sends its own
		}
		fr := ocFrame{typ: f.Type, raw: data, session: f.Properties.SessionID}
		var ids struct {
			ID        string `json:"id"`
			SessionID string `json:"sessionID"`
			MessageID string `json:"messageID"`
			ParentID  string `json:"parentID"`
			Directory string `json:"directory"`
		}
		switch f.Type {
		case "session.created", "session.updated":
			fr.info = string(f.Properties.Info)
			_ = json.Unmarshal(f.Properties.Info, &ids)
			if f.Type == "session.created" {
				if ids.ParentID == "" {
					t.parent, t.dir = ids.ID, ids.Directory
				} else {
					t.child = ids.ID
				}
			}
		case "message.updated":
			fr.info = string(f.Properties.Info)
			_ = json.Unmarshal(f.Properties.Info, &ids)
			fr.message = ids.ID
		case "message.part.updated":
			fr.part = string(f.Properties.Part)
			_ = json.Unmarshal(f.Properties.Part, &ids)
			fr.message, fr.partID = ids.MessageID, ids.ID
		}
		t.frames = append(t.frames, fr)
		for _, id := range ocIDPattern.FindAllString(data, -1) {
			if !seenID[id] {
				seenID[id] = true
				t.ids = append(t.ids, id)
			}
		}
		var v any
		_ = json.Unmarshal([]byte(data), &v)
		collectTexts(v, "", func(s string) {
			if e := jsonContent(s); !seenText[e] {
				seenText[e] = true
				t.texts = append(t.texts, e)
			}
		})
	}
	if t.parent == "" || t.child == "" || len(t.frames) == 0 {
		return nil, fmt.Errorf("%s: no parent and child session in the recording", path)
	}
	slices.SortStableFunc(t.texts, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return t, nil
}

// textKeys are the JSON keys whose string values are conversation text to vary.
var textKeys = map[string]bool{"text": true, "delta": true, "deltaText": true, "prompt": true, "task": true, "content": true}

// collectTexts calls found with every string of v under a text key that reads like text (two
// words or more, 8 bytes or more), not like JSON (a tool's result: the decoders read it).
func collectTexts(v any, key string, found func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			collectTexts(x, k, found)
		}
	case []any:
		for _, x := range v {
			collectTexts(x, key, found)
		}
	case string:
		if textKeys[key] && len(v) >= 8 && strings.Contains(v, " ") && !strings.HasPrefix(v, "{") && !strings.HasPrefix(v, "[") {
			found(v)
		}
	}
}

// jsonContent returns s as it appears inside a JSON string: escaped, without the quotes, and
// without HTML escaping (recordings hold < and > as they are).
func jsonContent(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// conversation returns the recording as conversation n: every id with its last 8 characters
// made from n and the id's index (same length and alphabet, unique per conversation), every
// text replaced by generated prose (scale times the default sizes), and the project folder one
// of eight. It also returns the child session's new id.
func (t *ocTemplate) conversation(n int64, r *rand.Rand, scale float64) ([]ocFrame, string) {
	pairs := make([]string, 0, 2*(len(t.ids)+len(t.texts)+1))
	for i, id := range t.ids {
		pairs = append(pairs, id, renumber(id, n, i))
	}
	for _, text := range t.texts {
		pairs = append(pairs, text, prose(r, int(scale*float64(sizeBetween(r, 100, 3000)))))
	}
	pairs = append(pairs, t.dir, fmt.Sprintf("/work/soak/oc%d", n%8))
	rep := strings.NewReplacer(pairs...)
	out := make([]ocFrame, len(t.frames))
	for i, f := range t.frames {
		out[i] = ocFrame{typ: f.typ, raw: rep.Replace(f.raw), session: rep.Replace(f.session), message: rep.Replace(f.message),
			partID: rep.Replace(f.partID), info: rep.Replace(f.info), part: rep.Replace(f.part)}
	}
	return out, rep.Replace(t.child)
}

// renumber replaces the last 8 characters of id with 6 base62 digits of n and 2 of i.
func renumber(id string, n int64, i int) string {
	if len(id) < 12 {
		return id
	}
	var tail [8]byte
	for k := 5; k >= 0; k-- {
		tail[k] = base62[n%62]
		n /= 62
	}
	tail[6], tail[7] = base62[(i/62)%62], base62[i%62]
	return id[:len(id)-8] + string(tail[:])
}
