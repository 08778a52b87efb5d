package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/inject"
)

// MCP: the pull path's tools for agents, on the official go-sdk. Every tool answers through a
// *Client, so /mcp (the sidecar's own routes, in process) and `heirloom mcp` (stdio, the sidecar
// over HTTP) give the same answers as the REST API, redacted as it is. A failure is a tool
// error (IsError, with a message the agent can act on), never a protocol error.

// mcpInstructions is what an MCP client is told about the server as a whole.
const mcpInstructions = `heirloom records every coding-agent session on this machine (Claude Code, OpenCode, OpenClaw, Codex), running or finished: prompts, replies, tool calls, sub-agent runs. Use session_search when you need something your context does not hold: what a parent agent or an earlier session found, decided or ran. A block "## Inherited from Parent Session" names your parent's session key; pass it as "session" to search that session and its sub-agents only.`

// Tool names, as DESIGN §4 lists them.
// They are adapters.MCPTools, named for this package's readers.
const (
	ToolSessionSearch     = "session_search"
	ToolSessionTranscript = "session_transcript"
	ToolSessionLineage    = "session_lineage"
	ToolSessionDigest     = "session_digest"
	ToolSubagentRuns      = "subagent_runs"
)

// Bounds on what one tool call returns, so that a reply cannot flood the agent's context.
const (
	mcpSearchDefault     = 10
	mcpSearchMax         = 50
	mcpTranscriptDefault = 20
	mcpTranscriptMax     = 100
	mcpTurnChars         = 2000  // a turn's text in session_transcript, by default
	mcpTurnCharsMax      = 20000 // the most turn_chars may ask for
	mcpRunsDefault       = 20
	mcpRunsMax           = 100
	mcpRunTextChars      = 1500 // a run's task prompt and result in subagent_runs
	// mcpCastChars is what the casts of the finished runs in one subagent_runs reply share,
	// the hook reply's cap (the blocks' budget); mcpCastRuns how many are cast, the newest.
	mcpCastChars = inject.DefaultMaxChars
	mcpCastRuns  = 6
	// mcpReplyChars bounds one tool reply's text, about 10,000 tokens: a transcript page ends
	// early at it, other texts are cut; a JSON reply over it is refused with what to ask instead.
	mcpReplyChars = 40000
)

// NewMCPServer returns heirloom's MCP server: the five tools, answering through c. version is
// the server's reported version.
func NewMCPServer(c *Client, version string) *mcp.Server {
	if version == "" {
		version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "heirloom", Title: "heirloom: every agent session, searchable", Version: version},
		&mcp.ServerOptions{Instructions: mcpInstructions})
	t := mcpTools{c: c}
	mcp.AddTool(srv, &mcp.Tool{
		Name: ToolSessionSearch,
		Description: `Full-text search over every recorded coding-agent session, running or finished: user prompts, assistant replies, tool calls and results. Words are ANDed; "a OR b"; "\"exact phrase\""; "-word" excludes; "pre*" matches words starting with pre. Code identifiers match by their parts: WithCancel finds context.WithCancel, header finds parse_ledger_header and ledger/header.go. ` +
			`Pass "session" (for example your parent's session key from the inherited block) to search that session and its sub-agents only. ` +
			`Hits come best first (BM25), each with its session, turn number and a snippet, matched words in **bold**; each hit says how to read the turns around it with session_transcript. Secrets are redacted.`,
		Annotations: readOnly("Search agent sessions"),
	}, t.search)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolSessionTranscript,
		Description: `Read a session's transcript in order, a page of turns starting at turn "from" (0 is the first). Use it after session_search to read around a hit (each hit says which "from" to use), or to read what your parent session did. A running session is read as far as it has been recorded. Long turns are cut to turn_chars characters (ask for more to read more), and a page ends early past about 40,000 characters, saying where the next starts. Secrets are redacted.`,
		Annotations: readOnly("Read a session's transcript"),
	}, t.transcript)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolSessionLineage,
		Description: `Show where a session sits among sub-agents: its ancestors from the top-level session down to its parent, and the tree of sub-agents below it, each with the run that spawned it (task, status, result).`,
		Annotations: readOnly("Show a session's lineage"),
	}, t.lineage)
	mcp.AddTool(srv, &mcp.Tool{
		Name: ToolSessionDigest,
		Description: `Write a checkpoint of a session in your own words, so that it survives compaction and a later session in the same project can pick it up: a summary of where the work stands, decisions made, constraints that must keep holding, and next steps. ` +
			`Decisions and constraints add to the session's (they are kept for every later checkpoint); the summary and next steps replace the previous ones. Returns the checkpoint as heirloom will re-inject it.`,
		// Destructive: a new objective replaces the session's, and a summary the previous one.
		Annotations: &mcp.ToolAnnotations{Title: "Checkpoint a session", ReadOnlyHint: false, DestructiveHint: new(true), IdempotentHint: false, OpenWorldHint: new(false)},
	}, t.digest)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolSubagentRuns,
		Description: `List sub-agent runs, newest first: what was delegated (task), to which sub-agent session, its status, and what came back: each finished run's result as a "[Subagent Result: …]" block saying how it ended, the result (condensed when long: the block says how, and how much was left out) and its runtime, turns and tokens. Pass "session" for the runs a session spawned, or "root" for every run in a top-level session's tree. Use it to avoid redoing work a sub-agent already finished.`,
		Annotations: readOnly("List sub-agent runs"),
	}, t.runs)
	return srv
}

// readOnly annotates a tool that changes nothing.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: new(false)}
}

// ServeMCPStdio serves heirloom's MCP tools as newline-delimited JSON-RPC on in and out (a
// process's stdin and stdout) until ctx ends or in closes, answering through c (the running
// sidecar). It is `heirloom mcp`.
func ServeMCPStdio(ctx context.Context, c *Client, version string, in io.Reader, out io.Writer) error {
	err := NewMCPServer(c, version).Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// nopWriteCloser is a writer whose Close does nothing: the caller owns stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpHandler serves /mcp: streamable HTTP, stateless (each request stands alone, so a client
// keeps working across sidecar restarts), JSON replies rather than event streams. The tools
// call the server's own routes in process.
func (s *Server) mcpHandler(routes http.Handler) http.Handler {
	c := &Client{URL: "http://heirloom.internal", Timeout: 30 * time.Second, HTTP: &http.Client{
		Transport:     handlerTransport{routes},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	srv := NewMCPServer(c, s.Version)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		MaxRequestBodyBytes: s.MaxBodyBytes,
		// The server's caller checks (loopback Host, origin, token) already ran.
		DisableLocalhostProtection: true,
	})
}

// handlerTransport answers an http.Client's requests with a handler, in process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	w := &bufferWriter{header: http.Header{}, status: http.StatusOK}
	t.h.ServeHTTP(w, r)
	if r.Body != nil {
		r.Body.Close()
	}
	return &http.Response{
		Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.buf), ContentLength: int64(w.buf.Len()), Request: r,
	}, nil
}

// bufferWriter is an http.ResponseWriter that keeps the reply in memory.
type bufferWriter struct {
	header http.Header
	status int
	wrote  bool
	buf    bytes.Buffer
}

func (w *bufferWriter) Header() http.Header { return w.header }

func (w *bufferWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *bufferWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.buf.Write(p)
}

// mcpTools holds the tools' handlers.
type mcpTools struct{ c *Client }

// toolError turns an API or connection error into the message a tool error carries.
func toolError(err error) error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		if apiErr.Code == ECodeUnauthorized {
			return errors.New(apiErr.Message + ": heirloom needs its token (HEIRLOOM_TOKEN in the environment of heirloom mcp, or the Authorization header of this MCP server's entry)")
		}
		return errors.New(apiErr.Message)
	}
	return err
}

// checkKey refuses a session key that cannot name a session in a URL path ("." and "..",
// which a path would resolve).
func checkKey(name, key string) error {
	switch key {
	case "":
		return fmt.Errorf("%s is required: a session key", name)
	case ".", "..":
		return fmt.Errorf("%s %q: not a session key", name, key)
	}
	return nil
}

// SearchInput is session_search's input.
type SearchInput struct {
	Query   string `json:"query" jsonschema:"what to find: words (ANDed), a OR b, \"exact phrase\", -excluded, prefix*"`
	Session string `json:"session,omitempty" jsonschema:"search only this session and its sub-agents (a session key, e.g. the parent session key of an inherited block)"`
	Harness string `json:"harness,omitempty" jsonschema:"only sessions of this harness: claude-code, opencode, openclaw or codex"`
	Project string `json:"project,omitempty" jsonschema:"only sessions whose working directory is this absolute path"`
	Role    string `json:"role,omitempty" jsonschema:"only turns of this role: user, assistant, tool or system"`
	Since   string `json:"since,omitempty" jsonschema:"only turns after this: a duration back from now (24h) or a date or RFC 3339 time"`
	Until   string `json:"until,omitempty" jsonschema:"only turns before this: as since"`
	Limit   int    `json:"limit,omitempty" jsonschema:"hits to return, 1 to 50 (default 10)"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"the cursor a previous call returned, for the next page of the same search"`
	Scope   string `json:"scope,omitempty" jsonschema:"the memory scope (an OpenClaw agent id); the sidecar's by default"`
	Format  string `json:"format,omitempty" jsonschema:"text (default) or json (the REST API's reply)"`
}

func (t mcpTools) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, any, error) {
	if err := checkFormat(in.Format); err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(in.Query) == "" {
		return nil, nil, errors.New(`query is required: the words to find`)
	}
	limit, err := bounded("limit", in.Limit, mcpSearchDefault, mcpSearchMax)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	req := SearchRequest{Query: in.Query, Scope: in.Scope, Session: in.Session, Harness: in.Harness, Project: in.Project, Role: in.Role, Limit: limit, Cursor: in.Cursor}
	if req.Since, err = ParseWhen(in.Since, now); err != nil {
		return nil, nil, fmt.Errorf("since: %w", err)
	}
	if req.Until, err = ParseWhen(in.Until, now); err != nil {
		return nil, nil, fmt.Errorf("until: %w", err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	var reply SearchReply
	raw, err := t.c.Post(ctx, "/api/sessions/search", nil, body, &reply)
	if err != nil {
		return nil, nil, toolError(err)
	}
	return textResult(ToolSessionSearch, in.Format, raw, func() (string, error) { return renderHits(in.Query, reply), nil })
}

// TranscriptInput is session_transcript's input.
type TranscriptInput struct {
	Session   string `json:"session" jsonschema:"the session key"`
	From      int64  `json:"from,omitempty" jsonschema:"the first turn to read (0 is the first turn of the session)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"turns to read, 1 to 100 (default 20)"`
	TurnChars int    `json:"turn_chars,omitempty" jsonschema:"cut each turn's text to this many characters, 100 to 20000 (default 2000)"`
	Scope     string `json:"scope,omitempty" jsonschema:"the memory scope; the sidecar's by default"`
	Format    string `json:"format,omitempty" jsonschema:"text (default) or json (the REST API's reply: turns uncut, refused past 40000 characters in all)"`
}

func (t mcpTools) transcript(ctx context.Context, _ *mcp.CallToolRequest, in TranscriptInput) (*mcp.CallToolResult, any, error) {
	if err := checkFormat(in.Format); err != nil {
		return nil, nil, err
	}
	if err := checkKey("session", in.Session); err != nil {
		return nil, nil, err
	}
	if in.From < 0 {
		return nil, nil, fmt.Errorf("from %d: want a turn number from 0", in.From)
	}
	limit, err := bounded("limit", in.Limit, mcpTranscriptDefault, mcpTranscriptMax)
	if err != nil {
		return nil, nil, err
	}
	chars := in.TurnChars
	if chars == 0 {
		chars = mcpTurnChars
	}
	if chars < 100 || chars > mcpTurnCharsMax {
		return nil, nil, fmt.Errorf("turn_chars %d: want 100 to %d", chars, mcpTurnCharsMax)
	}
	q := url.Values{"from": {strconv.FormatInt(in.From, 10)}, "limit": {strconv.Itoa(limit)}}
	if in.Scope != "" {
		q.Set("scope", in.Scope)
	}
	var reply TranscriptReply
	raw, err := t.c.Get(ctx, "/api/sessions/"+url.PathEscape(in.Session)+"/transcript", q, &reply)
	if err != nil {
		return nil, nil, toolError(err)
	}
	return textResult(ToolSessionTranscript, in.Format, raw, func() (string, error) { return renderTranscript(in.Session, uint64(in.From), reply, chars), nil })
}

// SessionInput is session_lineage's input.
type SessionInput struct {
	Session string `json:"session" jsonschema:"the session key"`
	Scope   string `json:"scope,omitempty" jsonschema:"the memory scope; the sidecar's by default"`
	Format  string `json:"format,omitempty" jsonschema:"text (default) or json (the REST API's reply)"`
}

func (t mcpTools) lineage(ctx context.Context, _ *mcp.CallToolRequest, in SessionInput) (*mcp.CallToolResult, any, error) {
	if err := checkFormat(in.Format); err != nil {
		return nil, nil, err
	}
	if err := checkKey("session", in.Session); err != nil {
		return nil, nil, err
	}
	var reply LineageReply
	raw, err := t.c.Get(ctx, "/api/sessions/"+url.PathEscape(in.Session)+"/lineage", scopeQuery(in.Scope), &reply)
	if err != nil {
		return nil, nil, toolError(err)
	}
	return textResult(ToolSessionLineage, in.Format, raw, func() (string, error) { return renderLineage(reply), nil })
}

// DigestInput is session_digest's input.
type DigestInput struct {
	Session     string   `json:"session" jsonschema:"the session to checkpoint: your own session key"`
	Summary     string   `json:"summary,omitempty" jsonschema:"where the work stands, in a few sentences"`
	Decisions   []string `json:"decisions,omitempty" jsonschema:"decisions made, one per item"`
	Constraints []string `json:"constraints,omitempty" jsonschema:"constraints that must keep holding, one per item"`
	NextSteps   []string `json:"next_steps,omitempty" jsonschema:"what comes next, in order, one per item"`
	Objective   string   `json:"objective,omitempty" jsonschema:"replaces the session's objective, when it has changed"`
	Scope       string   `json:"scope,omitempty" jsonschema:"the memory scope; the sidecar's by default"`
	Format      string   `json:"format,omitempty" jsonschema:"text (default) or json (the REST API's reply)"`
}

func (t mcpTools) digest(ctx context.Context, _ *mcp.CallToolRequest, in DigestInput) (*mcp.CallToolResult, any, error) {
	if err := checkFormat(in.Format); err != nil {
		return nil, nil, err
	}
	if err := checkKey("session", in.Session); err != nil {
		return nil, nil, err
	}
	body, err := json.Marshal(CheckpointRequest{
		Decisions: in.Decisions, Constraints: in.Constraints, Objective: in.Objective,
		Summary: in.Summary, NextSteps: in.NextSteps,
	})
	if err != nil {
		return nil, nil, err
	}
	var reply APICheckpoint
	raw, err := t.c.Post(ctx, "/api/sessions/"+url.PathEscape(in.Session)+"/checkpoints", scopeQuery(in.Scope), body, &reply)
	if err != nil {
		return nil, nil, toolError(err)
	}
	return textResult(ToolSessionDigest, in.Format, raw, func() (string, error) {
		return fmt.Sprintf("Checkpoint %s written for session %s. After a compaction, and for a new session in its project, heirloom re-injects it as:\n\n%s",
			reply.ID, reply.Session, reply.Digest), nil
	})
}

// RunsInput is subagent_runs' input.
type RunsInput struct {
	Session string `json:"session,omitempty" jsonschema:"the runs this session spawned (a session key)"`
	Root    string `json:"root,omitempty" jsonschema:"every run in the tree of this top-level session"`
	Status  string `json:"status,omitempty" jsonschema:"only runs with this status: pending, running, completed, failed, refused"`
	Limit   int    `json:"limit,omitempty" jsonschema:"runs to list, 1 to 100 (default 20)"`
	Scope   string `json:"scope,omitempty" jsonschema:"the memory scope; the sidecar's by default"`
	Format  string `json:"format,omitempty" jsonschema:"text (default) or json (the REST API's reply, uncut)"`
}

func (t mcpTools) runs(ctx context.Context, _ *mcp.CallToolRequest, in RunsInput) (*mcp.CallToolResult, any, error) {
	if err := checkFormat(in.Format); err != nil {
		return nil, nil, err
	}
	if in.Session == "" && in.Root == "" {
		return nil, nil, errors.New(`session or root is required: whose runs to list`)
	}
	limit, err := bounded("limit", in.Limit, mcpRunsDefault, mcpRunsMax)
	if err != nil {
		return nil, nil, err
	}
	q := scopeQuery(in.Scope)
	q.Set("limit", strconv.Itoa(limit))
	for name, v := range map[string]string{"parent": in.Session, "root": in.Root, "status": in.Status} {
		if v != "" {
			q.Set(name, v)
		}
	}
	var reply RunsReply
	raw, err := t.c.Get(ctx, "/api/runs", q, &reply)
	if err != nil {
		return nil, nil, toolError(err)
	}
	return textResult(ToolSubagentRuns, in.Format, raw, func() (string, error) {
		return renderRuns(in, reply, t.casts(ctx, in.Scope, reply.Runs)), nil
	})
}

// casts returns, by run id, the casts of the newest finished runs of runs (at most mcpCastRuns),
// sharing mcpCastChars among them (GET /api/runs/{id}?chars=…). A cast that cannot be read is
// left out: the run is then listed with a line of its result.
func (t mcpTools) casts(ctx context.Context, scope string, runs []APIRun) map[string]string {
	var ids []string
	for _, r := range runs {
		if len(ids) < mcpCastRuns && finishedRun(r) {
			ids = append(ids, r.ID)
		}
	}
	out := map[string]string{}
	if len(ids) == 0 {
		return out
	}
	q := scopeQuery(scope)
	q.Set("chars", strconv.Itoa(mcpCastChars/len(ids)))
	for _, id := range ids {
		var reply RunReply
		if _, err := t.c.Get(ctx, "/api/runs/"+url.PathEscape(id), q, &reply); err == nil && reply.Cast != "" {
			out[id] = reply.Cast
		}
	}
	return out
}

// finishedRun reports whether r ended with a result to cast: not open, not refused.
func finishedRun(r APIRun) bool {
	switch r.Status {
	case "pending", "running", "refused":
		return false
	}
	return true
}

// bounded returns n, def when n is 0, or an error naming the parameter when n is outside 1..max.
func bounded(name string, n, def, max int) (int, error) {
	if n == 0 {
		return def, nil
	}
	if n < 1 || n > max {
		return 0, fmt.Errorf("%s %d: want 1 to %d", name, n, max)
	}
	return n, nil
}

// scopeQuery is the query of a request in scope ("" leaves it to the sidecar).
func scopeQuery(scope string) url.Values {
	q := url.Values{}
	if scope != "" {
		q.Set("scope", scope)
	}
	return q
}

// checkFormat accepts a tool's format: "", "text" or "json".
func checkFormat(format string) error {
	switch format {
	case "", "text", "json":
		return nil
	}
	return fmt.Errorf("format %q: want text or json", format)
}

// textResult is a tool's reply: the API's raw JSON with format "json", else text (checkFormat
// accepted format), within mcpReplyChars.
//
// Every text reply starts with adapters.ToolReplyMark and the tool's name, so that the copy a
// harness keeps of it in a transcript is known as heirloom's own and left out of the index.
func textResult(tool, format string, raw []byte, text func() (string, error)) (*mcp.CallToolResult, any, error) {
	out := string(bytes.TrimSpace(raw))
	if format == "json" && len(out) > mcpReplyChars {
		return nil, nil, fmt.Errorf("the JSON reply is %d bytes, more than a tool reply may hold (%d): ask for fewer (limit), or use format text", len(out), mcpReplyChars)
	}
	if format != "json" {
		s, err := text()
		if err != nil {
			return nil, nil, err
		}
		if inject.Len(s) > mcpReplyChars {
			s = inject.Head(s, mcpReplyChars-80) + "\n(The reply was cut here: ask for fewer, with limit.)"
		}
		out = adapters.ToolReplyMark + tool + "] " + s
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil, nil
}
