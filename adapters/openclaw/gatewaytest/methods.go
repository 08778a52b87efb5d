package gatewaytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// reqFrame is a request frame as a client sends it.
type reqFrame struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Keys OpenClaw's closed objects allow (packages/gateway-protocol/src/schema, 2026.9.6).
var (
	requestKeys = []string{"type", "id", "method", "params", "traceparent", "expectedProfileId"}
	connectKeys = []string{"minProtocol", "maxProtocol", "client", "caps", "commands", "computerUse",
		"workerRuns", "permissions", "pathEnv", "role", "scopes", "modelCatalog", "device", "auth",
		"locale", "userAgent"}
	clientKeys = []string{"id", "displayName", "version", "buildId", "platform", "deviceFamily",
		"modelIdentifier", "timeZone", "mode", "instanceId"}
	authKeys = []string{"token", "bootstrapToken", "deviceToken", "password", "approvalRuntimeToken",
		"agentRuntimeIdentityToken"}
	listKeys = []string{"limit", "offset", "activeMinutes", "activeOnly", "requireLastInteraction",
		"sortBy", "includeGlobal", "includeUnknown", "excludeSubagents", "excludeCron", "excludeSystem",
		"configuredAgentsOnly", "includeDerivedTitles", "includeLastMessage", "includeActivitySummary",
		"label", "projectId", "workspaceDir", "group", "pinned", "boardFace", "hasBoard", "creatorId",
		"ownerId", "ownerFirst", "involvingMe", "profileRelation", "involvingProfileId", "includePeople",
		"spawnedBy", "agentId", "search", "archived"}
	describeKeys = []string{"key", "agentId", "includeDerivedTitles", "includeLastMessage"}
	clientIDs    = []string{"webchat-ui", "openclaw-control-ui", "openclaw-browser-copilot", "openclaw-tui",
		"webchat", "cli", "gateway-client", "openclaw-macos", "openclaw-linux", "openclaw-ios",
		"openclaw-watchos", "openclaw-android", "node-host", "openclaw-worker", "test", "fingerprint",
		"openclaw-probe"}
	clientModes = []string{"webchat", "cli", "ui", "backend", "node", "worker", "probe", "test"}
	historyKeys = []string{"sessionKey", "agentId", "cursor", "limit", "maxBytes", "offset", "pendingBefore",
		"inputRunIds", "messageId", "sessionId", "maxChars"}
)

// handshake answers the connect request in data; false when it refused the connection, after
// sending the error and the close frame.
func (c *conn) handshake(data []byte) bool {
	var req reqFrame
	if err := json.Unmarshal(data, &req); err != nil || req.Type != "req" || req.Method != "connect" || req.ID == "" {
		c.closeWith(ClosePolicy, "invalid-handshake")
		return false
	}
	c.s.log(c.n, req)
	refuse := func(closeCode int, e *Error) bool {
		c.reply(req.ID, nil, e)
		c.closeWith(closeCode, truncateReason(e.Message))
		return false
	}
	invalid := func(format string, args ...any) bool {
		return refuse(ClosePolicy, &Error{Code: "INVALID_REQUEST", Message: "invalid connect params: " + fmt.Sprintf(format, args...)})
	}
	if err := closedObject(data, requestKeys); err != nil {
		return invalid("request frame: %v", err)
	}
	if err := closedObject(req.Params, connectKeys); err != nil {
		return invalid("%v", err)
	}
	var p struct {
		MinProtocol *int            `json:"minProtocol"`
		MaxProtocol *int            `json:"maxProtocol"`
		Client      json.RawMessage `json:"client"`
		Role        *string         `json:"role"`
		Scopes      []string        `json:"scopes"`
		Auth        json.RawMessage `json:"auth"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return invalid("%v", err)
	}
	if p.MinProtocol == nil || p.MaxProtocol == nil || *p.MinProtocol < 1 || *p.MaxProtocol < 1 {
		return invalid("minProtocol and maxProtocol must be integers >= 1")
	}
	if err := closedObject(p.Client, clientKeys); err != nil {
		return invalid("client: %v", err)
	}
	var client struct{ ID, Version, Platform, Mode string }
	if err := json.Unmarshal(p.Client, &client); err != nil {
		return invalid("client: %v", err)
	}
	switch {
	case !slices.Contains(clientIDs, client.ID):
		return invalid("client.id %q is not a known client id", client.ID)
	case !slices.Contains(clientModes, client.Mode):
		return invalid("client.mode %q is not a known mode", client.Mode)
	case client.Version == "" || client.Platform == "":
		return invalid("client.version and client.platform must not be empty")
	}
	var auth struct{ Token string }
	if len(p.Auth) > 0 {
		if err := closedObject(p.Auth, authKeys); err != nil {
			return invalid("auth: %v", err)
		}
		if err := json.Unmarshal(p.Auth, &auth); err != nil {
			return invalid("auth: %v", err)
		}
	}

	proto := c.s.opts.Protocol
	if minP, maxP := *p.MinProtocol, *p.MaxProtocol; maxP < proto || minP > proto {
		return refuse(CloseProtocolMismatch, &Error{
			Code:    "INVALID_REQUEST",
			Message: "protocol mismatch",
			Details: map[string]any{
				"code": "PROTOCOL_MISMATCH", "clientMinProtocol": minP, "clientMaxProtocol": maxP,
				"expectedProtocol": proto, "minimumProbeProtocol": 3,
			},
		})
	}
	role := "operator"
	if p.Role != nil {
		role = *p.Role
	}
	if role != "operator" && role != "node" {
		return refuse(ClosePolicy, &Error{Code: "INVALID_REQUEST", Message: "invalid role"})
	}
	if want := c.s.opts.Token; want != "" && auth.Token != want {
		reason, code, msg := "token_mismatch", "AUTH_TOKEN_MISMATCH", "unauthorized: gateway token mismatch (provide gateway auth token)"
		if auth.Token == "" {
			reason, code, msg = "token_missing", "AUTH_TOKEN_MISSING", "unauthorized: gateway token missing (provide gateway auth token)"
		}
		return refuse(ClosePolicy, &Error{Code: "INVALID_REQUEST", Message: msg, Details: map[string]any{
			"code": code, "authReason": reason, "canRetryWithDeviceToken": false,
			"recommendedNextStep": "update_auth_credentials",
		}})
	}

	authMode := "none"
	if c.s.opts.Token != "" {
		authMode = "token"
	}
	scopes := p.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	c.s.mu.Lock()
	c.s.connects++
	uptime := time.Since(c.s.startedAt).Milliseconds()
	c.s.mu.Unlock()
	hello := map[string]any{
		"type":     "hello-ok",
		"protocol": proto,
		"server":   map[string]any{"version": c.s.opts.Version, "connId": "conn-" + strconv.Itoa(c.n)},
		"features": map[string]any{
			"methods": []string{"health", "sessions.list", "sessions.subscribe", "sessions.describe"},
			"events":  []string{"connect.challenge", "tick", "shutdown", "health", "sessions.changed", "session.message", "session.tool", "session.operation", "task", "agent", "chat"},
		},
		"snapshot": map[string]any{
			"presence":     []any{},
			"health":       map[string]any{"ok": true, "ts": time.Now().UnixMilli()},
			"stateVersion": map[string]any{"presence": 0, "health": 0},
			"uptimeMs":     uptime,
			"authMode":     authMode,
		},
		"auth": map[string]any{"method": authMode, "role": role, "scopes": scopes},
		"policy": map[string]any{
			"maxPayload":       c.s.opts.MaxPayload,
			"maxBufferedBytes": 2 * c.s.opts.MaxPayload,
			"tickIntervalMs":   c.s.opts.TickInterval.Milliseconds(),
		},
	}
	c.helloed.Store(true)
	c.reply(req.ID, hello, nil)
	return true
}

// request answers one request frame after the handshake.
func (c *conn) request(data []byte) {
	var req reqFrame
	if err := json.Unmarshal(data, &req); err != nil || req.Type != "req" || req.ID == "" || req.Method == "" {
		return // not a request: OpenClaw drops it too
	}
	c.s.log(c.n, req)
	if err := closedObject(data, requestKeys); err != nil {
		c.reply(req.ID, nil, &Error{Code: "INVALID_REQUEST", Message: "invalid request frame: " + err.Error()})
		return
	}
	c.s.mu.Lock()
	h := c.s.handlers[req.Method]
	c.s.mu.Unlock()
	if h != nil {
		result, err := h(req.Params)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				e = &Error{Code: "UNAVAILABLE", Message: err.Error()}
			}
			c.reply(req.ID, nil, e)
			return
		}
		c.reply(req.ID, result, nil)
		if req.Method == "sessions.subscribe" {
			c.subscribed.Store(true)
		}
		return
	}
	result, e := c.s.serveMethod(req.Method, req.Params)
	if e == nil && req.Method == "sessions.subscribe" {
		c.subscribed.Store(true)
	}
	c.reply(req.ID, result, e)
}

// serveMethod answers the built-in methods.
func (s *Server) serveMethod(method string, params json.RawMessage) (any, *Error) {
	invalid := func(err error) *Error {
		return &Error{Code: "INVALID_REQUEST", Message: fmt.Sprintf("invalid %s params: %v", method, err)}
	}
	switch method {
	case "connect":
		return nil, &Error{Code: "INVALID_REQUEST", Message: "connect is only valid as the first request"}
	case "sessions.subscribe":
		if err := closedObject(params, listKeys); err != nil {
			return nil, invalid(err)
		}
		if isEmptyObject(params) {
			return map[string]any{"subscribed": true}, nil
		}
		list, err := s.list(params)
		if err != nil {
			return nil, invalid(err)
		}
		return map[string]any{"subscribed": true, "list": list}, nil
	case "sessions.list":
		if err := closedObject(params, listKeys); err != nil {
			return nil, invalid(err)
		}
		list, err := s.list(params)
		if err != nil {
			return nil, invalid(err)
		}
		return list, nil
	case "sessions.describe":
		if err := closedObject(params, describeKeys); err != nil {
			return nil, invalid(err)
		}
		var p struct{ Key string }
		if err := json.Unmarshal(params, &p); err != nil || p.Key == "" {
			return nil, invalid(errors.New("key is required"))
		}
		return map[string]any{"session": s.row(p.Key)}, nil
	case "chat.history":
		if err := closedObject(params, historyKeys); err != nil {
			return nil, invalid(err)
		}
		h, err := s.history(params)
		if err != nil {
			return nil, invalid(err)
		}
		return h, nil
	default:
		return nil, &Error{Code: "INVALID_REQUEST", Message: "unknown method: " + method}
	}
}

// list builds a sessions.list result from the rows: limit and offset apply; other filters are
// accepted and ignored.
func (s *Server) list(params json.RawMessage) (map[string]any, error) {
	var p struct {
		Limit  *int `json:"limit"`
		Offset *int `json:"offset"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
	}
	if p.Limit != nil && *p.Limit < 1 {
		return nil, errors.New("limit must be >= 1")
	}
	if p.Offset != nil && *p.Offset < 0 {
		return nil, errors.New("offset must be >= 0")
	}
	s.mu.Lock()
	rows := append([]json.RawMessage(nil), s.sessions...)
	s.mu.Unlock()
	total := len(rows)
	from := 0
	if p.Offset != nil {
		from = min(*p.Offset, total)
	}
	to := total
	if p.Limit != nil {
		to = min(from+*p.Limit, total)
	}
	var next any
	if to < total {
		next = to
	}
	var limit any
	if p.Limit != nil {
		limit = *p.Limit
	}
	page := rows[from:to]
	if page == nil {
		page = []json.RawMessage{}
	}
	return map[string]any{
		"ts": time.Now().UnixMilli(), "path": "(gatewaytest)", "count": len(page), "totalCount": total,
		"limitApplied": limit, "nextOffset": next, "hasMore": to < total, "owners": []any{},
		"sessions": page,
	}, nil
}

// historyMax is chat.history's largest limit (CHAT_HISTORY_MAX_ENTRIES).
const historyMax = 1000

// history builds a chat.history result from the messages SetHistory set for the key: the
// latest limit of them (200 when unsaid) before the offset latest, oldest first, with hasMore,
// nextOffset and totalMessages as OpenClaw sends them. A key without messages answers an empty
// page, as OpenClaw does for a session it does not know. Other params are accepted and ignored.
func (s *Server) history(params json.RawMessage) (map[string]any, error) {
	var p struct {
		SessionKey string `json:"sessionKey"`
		Limit      *int   `json:"limit"`
		Offset     *int   `json:"offset"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionKey == "" {
		return nil, errors.New("sessionKey is required")
	}
	limit, offset := 200, 0
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > historyMax {
			return nil, fmt.Errorf("limit must be between 1 and %d", historyMax)
		}
		limit = *p.Limit
	}
	if p.Offset != nil {
		if *p.Offset < 0 {
			return nil, errors.New("offset must be >= 0")
		}
		offset = *p.Offset
	}
	s.mu.Lock()
	all := append([]json.RawMessage(nil), s.histories[p.SessionKey]...)
	s.mu.Unlock()
	total := len(all)
	to := max(total-offset, 0)
	from := max(to-limit, 0)
	page := all[from:to]
	if page == nil {
		page = []json.RawMessage{}
	}
	res := map[string]any{
		"sessionKey": p.SessionKey, "messages": page, "pendingInputs": map[string]any{"items": []any{}, "total": 0},
		"hasMore": from > 0, "totalMessages": total,
		"sessionInfo": map[string]any{"key": p.SessionKey, "hasActiveRun": false, "activeRunIds": []any{}},
	}
	if from > 0 {
		res["nextOffset"] = total - from
	}
	return res, nil
}

// row returns the row sessions.describe answers for key: SetDescribe's, else the session row
// with that key, else nil.
func (s *Server) row(key string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if row, ok := s.describe[key]; ok {
		return row
	}
	for _, row := range s.sessions {
		var r struct{ Key string }
		if json.Unmarshal(row, &r) == nil && r.Key == key {
			return row
		}
	}
	return nil
}

func (s *Server) log(n int, req reqFrame) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Conn: n, ID: req.ID, Method: req.Method, Params: bytes.Clone(req.Params)})
	s.mu.Unlock()
}

// closedObject fails when raw is not a JSON object or has a property outside allowed. Absent
// (empty) raw is an empty object.
func closedObject(raw json.RawMessage, allowed []string) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("at root: must be object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("at root: unexpected property '%s'", k)
		}
	}
	return nil
}

func isEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(bytes.TrimSpace(raw)) == 0 || (json.Unmarshal(raw, &m) == nil && len(m) == 0)
}
