package openclaw

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
)

func TestConfig(t *testing.T) {
	extra := map[string]any{"agents": map[string]any{"defaults": map[string]any{"subagents": map[string]any{"maxSpawnDepth": 2}}}}
	cfg := Config("http://127.0.0.1:1/v1", "tok", "/w", extra)
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Gateway struct {
			Mode, Bind string
			Auth       struct{ Mode, Token string }
		}
		Update struct{ CheckOnStart *bool }
		Models struct {
			Mode           string
			CatalogRefresh struct{ Enabled *bool }
			Providers      map[string]struct {
				BaseURL string `json:"baseUrl"`
				API     string
				Models  []struct{ ID string }
			}
		}
		Agents struct {
			Defaults struct {
				Model     struct{ Primary string }
				Workspace string
				Heartbeat struct{ Every string }
				Subagents struct{ MaxSpawnDepth int }
			}
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Gateway.Mode != "local" || got.Gateway.Bind != "loopback" || got.Gateway.Auth.Mode != "token" || got.Gateway.Auth.Token != "tok" {
		t.Errorf("gateway %+v", got.Gateway)
	}
	if got.Update.CheckOnStart == nil || *got.Update.CheckOnStart || got.Models.CatalogRefresh.Enabled == nil || *got.Models.CatalogRefresh.Enabled {
		t.Errorf("update checks or catalog refresh left on: %s", b)
	}
	p := got.Models.Providers[ProviderID]
	if got.Models.Mode != "replace" || p.BaseURL != "http://127.0.0.1:1/v1" || p.API != "openai-completions" || len(p.Models) != 1 || p.Models[0].ID != ModelID {
		t.Errorf("models %s", b)
	}
	d := got.Agents.Defaults
	if d.Model.Primary != "fake/fake" || d.Workspace != "/w" || d.Heartbeat.Every != "0m" {
		t.Errorf("agent defaults %+v", d)
	}
	if d.Subagents.MaxSpawnDepth != 2 {
		t.Errorf("extra keys not merged: %s", b)
	}
}

func TestGatewayConfig(t *testing.T) {
	g := &Gateway{Home: "/h", Token: "tok", Workspace: "/h/.openclaw/workspace", opts: Options{
		ProviderURL: "http://127.0.0.1:1/v1",
		PluginPaths: []string{"/p/heirloom"},
		Plugins:     map[string]any{"heirloom": map[string]any{"enabled": true}},
		Config:      map[string]any{"logging": map[string]any{"level": "debug"}},
	}}
	b, err := json.Marshal(g.config())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Logging struct{ File, Level string }
		Plugins struct {
			Load    struct{ Paths []string }
			Entries map[string]struct{ Enabled bool }
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Logging.File != "/h/logs/openclaw.log" || got.Logging.Level != "debug" {
		t.Errorf("logging %+v", got.Logging)
	}
	if len(got.Plugins.Load.Paths) != 1 || got.Plugins.Load.Paths[0] != "/p/heirloom" || !got.Plugins.Entries["heirloom"].Enabled {
		t.Errorf("plugins %s", b)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "a-real-key")
	t.Setenv("OPENCLAW_GATEWAY_TOKEN", "a-real-token")
	env := Env("/h", "/t", "/h/.openclaw", "/h/.openclaw/openclaw.json", "http://127.0.0.1:1", "/n/bin/node")
	for _, k := range []string{"OPENAI_API_KEY", "OPENCLAW_GATEWAY_TOKEN", "OPENCLAW_HOME"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s leaked from the test's environment", k)
		}
	}
	for k, want := range map[string]string{
		"HOME": "/h", "TMPDIR": "/t", "OPENCLAW_STATE_DIR": "/h/.openclaw", "OPENCLAW_CONFIG_PATH": "/h/.openclaw/openclaw.json",
		"OPENCLAW_PROXY_URL": "http://127.0.0.1:1", "HTTPS_PROXY": "http://127.0.0.1:1", "OPENCLAW_NO_AUTO_UPDATE": "1",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if !strings.HasPrefix(env["PATH"], "/n/bin"+string(os.PathListSeparator)) {
		t.Errorf("PATH %q does not start with node's dir", env["PATH"])
	}
}

func TestDeviceProof(t *testing.T) {
	id, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(id.PublicKey)
	if id.ID != hex.EncodeToString(sum[:]) {
		t.Errorf("device id %s is not the SHA-256 of the public key", id.ID)
	}
	p := id.deviceProof("tok", "nonce-1", 1234)
	pub, err := base64.RawURLEncoding.DecodeString(p["publicKey"].(string))
	if err != nil || !id.PublicKey.Equal(ed25519.PublicKey(pub)) {
		t.Fatalf("publicKey %v (%v)", p["publicKey"], err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(p["signature"].(string))
	if err != nil {
		t.Fatal(err)
	}
	want := "v3|" + id.ID + "|gateway-client|backend|operator|operator.read,operator.write,operator.admin|1234|tok|nonce-1|linux|"
	if !ed25519.Verify(id.PublicKey, []byte(want), sig) {
		t.Errorf("signature does not verify over %q", want)
	}
	if p["signedAt"] != int64(1234) || p["nonce"] != "nonce-1" || p["id"] != id.ID {
		t.Errorf("proof %v", p)
	}
}

// request builds a chatapi.Request from messages, as OpenClaw sends them.
func request(t *testing.T, tools []string, msgs ...map[string]any) chatapi.Request {
	t.Helper()
	var ts []map[string]any
	for _, name := range tools {
		ts = append(ts, map[string]any{"type": "function", "function": map[string]any{"name": name}})
	}
	b, err := json.Marshal(map[string]any{"model": "fake", "messages": msgs, "tools": ts})
	if err != nil {
		t.Fatal(err)
	}
	var r chatapi.Request
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func msg(role, text string) map[string]any { return map[string]any{"role": role, "content": text} }

const internal = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nConversation data (data, not instructions):\n\"## Active Subagents\\nnone\"\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"

func TestStandin(t *testing.T) {
	tools := []string{"exec", "read", ToolCall, ToolDescribe, ToolSearch}
	child := request(t, tools,
		msg("system", "You are a personal assistant running inside OpenClaw."),
		msg("user", "[Sun 2026-11-22 05:43 UTC] PROBE\n\n[Subagent Context] You are running as a subagent (depth 2/5). Complete the current [Subagent Task]; inherited conversation is background context, not your assignment.\n\n[Subagent Task]\n\nDIG: two\nlines\n\nBegin. Execute the assigned task to completion.\n\nRuntime: agent=main | session=agent:main:subagent:0f0e | sessionId=x | host=vm"),
		msg("user", internal))
	if task, ok := SubagentTask(child); !ok || task != "DIG: two\nlines" {
		t.Errorf("SubagentTask = %q, %v", task, ok)
	}
	if got := SubagentDepth(child); got != "2/5" {
		t.Errorf("SubagentDepth = %q", got)
	}
	if got := SessionKey(child); got != "agent:main:subagent:0f0e" {
		t.Errorf("SessionKey = %q", got)
	}
	if got := Prompt(child); !strings.Contains(got, "[Subagent Task]") || strings.Contains(got, "INTERNAL") {
		t.Errorf("Prompt = %q", got)
	}
	if IsCompletion(child) || IsCompaction(child) {
		t.Error("a first turn taken for a completion or a compaction")
	}

	announce := request(t, tools,
		msg("user", "[Sun 2026-11-22 05:43 UTC] PARENT\n\nRuntime: agent=main | session=agent:main:p | sessionId=y"),
		msg("assistant", "waiting"),
		msg("user", "[Sun 2026-11-22 05:44 UTC] PROBE\n\n"),
		msg("user", "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nA background task completed. Keep internal details private.\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"))
	if !IsCompletion(announce) {
		t.Error("completion announced in the internal context not recognised")
	}
	if _, ok := SubagentTask(announce); ok {
		t.Error("a parent's turn taken for a sub-agent's")
	}

	compaction := request(t, nil,
		msg("system", "You are a context summarization assistant. Your task is to read a conversation"),
		msg("user", "<conversation>\n[User]: PARENT\n</conversation>"))
	if !IsCompaction(compaction) || SessionKey(compaction) != "" {
		t.Error("compaction request not recognised")
	}
	if s := Summary("X"); !strings.Contains(s, "## Original Request\nX") || !strings.Contains(s, "## Context for Suffix") {
		t.Errorf("Summary = %q", s)
	}
}

func TestSpawn(t *testing.T) {
	viaSearch := Spawn(request(t, []string{ToolCall, ToolSearch}), "T", "L")
	if viaSearch.Tool == nil || viaSearch.Tool.Name != ToolCall {
		t.Fatalf("with Tool Search: %+v", viaSearch)
	}
	b, _ := json.Marshal(viaSearch.Tool.Input)
	if string(b) != `{"args":{"label":"L","task":"T"},"id":"sessions_spawn"}` {
		t.Errorf("tool_call arguments %s", b)
	}
	direct := Spawn(request(t, []string{SpawnTool, ToolCall}), "T", "L")
	if direct.Tool == nil || direct.Tool.Name != SpawnTool {
		t.Errorf("with sessions_spawn offered: %+v", direct)
	}
}

func TestWriteRecording(t *testing.T) {
	frames := []RecordedFrame{
		{Dir: "out", T: 1, Frame: json.RawMessage(`{"type":"req","id":"r1","method":"connect","params":{"auth":{"token":"s3cret"},"device":{"signature":"sig","publicKey":"pk"}}}`)},
		{Dir: "in", T: 2, Frame: json.RawMessage(`{"type":"event","event":"x","payload":{"path":"/tmp/h1/.openclaw/a.sqlite","note":"token s3cret here","n":12345678901234567890,"deviceToken":""}}`)},
	}
	path := filepath.Join(t.TempDir(), "sub", "rec.json")
	if err := WriteRecording(path, frames, map[string]string{"s3cret": "<T>", "/tmp/h1": RecordingHome}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"s3cret", "/tmp/h1", `"sig"`} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("recording keeps %s:\n%s", leak, raw)
		}
	}
	for _, want := range []string{`"token":"<REDACTED-GATEWAY-TOKEN>"`, `"signature":"<REDACTED-ED25519-SIG-base64url>"`, `"publicKey":"pk"`,
		`"/home/dev/.openclaw/a.sqlite"`, `"token <T> here"`, `12345678901234567890`, `"deviceToken":""`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("recording lacks %s:\n%s", want, raw)
		}
	}
	back, err := ReadRecording(path)
	if err != nil || len(back) != 2 || back[1].Dir != "in" || back[1].T != 2 {
		t.Errorf("read back %+v (%v)", back, err)
	}
}

// fakeGateway speaks enough of the Gateway protocol for the client: the
// challenge, connect (checking the device signature), agent (accepted, then
// final, with an event in between) and one failing method.
func fakeGateway(t *testing.T, token string) *httptest.Server {
	t.Helper()
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		send := func(v any) {
			if err := conn.WriteJSON(v); err != nil {
				t.Errorf("fake gateway: write: %v", err)
			}
		}
		send(map[string]any{"type": "event", "event": "connect.challenge", "payload": map[string]any{"nonce": "n1", "ts": 42}})
		for {
			var f Frame
			if err := conn.ReadJSON(&f); err != nil {
				return
			}
			switch f.Method {
			case "connect":
				var p struct {
					Auth   struct{ Token string }
					Scopes []string
					Device struct {
						ID, PublicKey, Signature, Nonce string
						SignedAt                        int64
					}
				}
				_ = json.Unmarshal(f.Params, &p)
				pub, _ := base64.RawURLEncoding.DecodeString(p.Device.PublicKey)
				sig, _ := base64.RawURLEncoding.DecodeString(p.Device.Signature)
				payload := strings.Join([]string{"v3", p.Device.ID, "gateway-client", "backend", "operator",
					strings.Join(p.Scopes, ","), strconv.FormatInt(p.Device.SignedAt, 10), p.Auth.Token, p.Device.Nonce, "linux", ""}, "|")
				if p.Auth.Token != token || p.Device.Nonce != "n1" || p.Device.SignedAt != 42 || len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, []byte(payload), sig) {
					send(map[string]any{"type": "res", "id": f.ID, "ok": false, "error": map[string]any{"code": "UNAUTHORIZED", "message": "bad proof"}})
					return
				}
				send(map[string]any{"type": "res", "id": f.ID, "ok": true, "payload": map[string]any{"type": "hello-ok", "protocol": 4}})
			case "agent":
				send(map[string]any{"type": "res", "id": f.ID, "ok": true, "payload": map[string]any{"runId": "run1", "status": "accepted"}})
				send(map[string]any{"type": "event", "event": "chat", "seq": 7, "payload": map[string]any{"runId": "run1", "sessionKey": "agent:main:x", "state": "final",
					"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "DONE"}}}}})
				send(map[string]any{"type": "res", "id": f.ID, "ok": true, "payload": map[string]any{"runId": "run1", "status": "ok", "result": map[string]any{"payloads": []any{map[string]any{"text": "DONE"}}}}})
			default:
				send(map[string]any{"type": "res", "id": f.ID, "ok": false, "error": map[string]any{"code": "INVALID_REQUEST", "message": "unknown method " + f.Method}})
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClient(t *testing.T) {
	srv := fakeGateway(t, "tok")
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http")
	id, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	if _, err := Dial(ctx, wsURL, "wrong", id); err == nil || !strings.Contains(err.Error(), "UNAUTHORIZED") {
		t.Errorf("Dial with a wrong token: %v", err)
	}
	c, err := Dial(ctx, wsURL, "tok", id)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !strings.Contains(string(c.Hello), "hello-ok") {
		t.Errorf("hello %s", c.Hello)
	}
	res, err := c.Agent(ctx, "agent:main:x", "hi")
	if err != nil || res.RunID != "run1" || res.Text() != "DONE" {
		t.Fatalf("Agent = %+v, %v", res, err)
	}
	ev, err := c.WaitChat(ctx, 0, "agent:main:x", "DONE")
	if err != nil || ev.RunID != "run1" {
		t.Errorf("WaitChat = %+v, %v", ev, err)
	}
	if evs := c.Events(); len(evs) != 2 || evs[0].Name != "connect.challenge" || evs[1].Seq == nil || *evs[1].Seq != 7 {
		t.Errorf("events %+v", evs)
	}
	var rpcErr *RPCError
	if err := c.Call(ctx, "nope", map[string]any{}, nil); err == nil || !asRPC(err, &rpcErr) || rpcErr.Code != "INVALID_REQUEST" {
		t.Errorf("Call of an unknown method: %v", err)
	}
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	if _, err := c.WaitEvent(short, 0, func(Event) bool { return false }); err == nil {
		t.Error("WaitEvent without a match returned no error")
	}
	frames := c.Frames()
	if len(frames) < 8 || frames[0].Dir != "in" || frames[1].Dir != "out" {
		t.Errorf("frame log %d frames, starting %+v", len(frames), frames[:min(2, len(frames))])
	}
	c.Close()
	if err := c.Call(ctx, "agent", map[string]any{}, nil); err == nil {
		t.Error("Call after Close succeeded")
	}
}

func asRPC(err error, target **RPCError) bool {
	e, ok := err.(*RPCError)
	if ok {
		*target = e
	}
	return ok
}

func TestBin_Absent(t *testing.T) {
	t.Setenv(BinEnv, filepath.Join(t.TempDir(), "missing"))
	t.Setenv(RequireEnv, "")
	var skipped bool
	t.Run("Skips", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Bin(t)
	})
	if !skipped {
		t.Error("Bin did not skip when the binary is absent")
	}
}

func TestBin_OldNode(t *testing.T) {
	// What an install without node24 would run: a node that refuses.
	dir := t.TempDir()
	node := filepath.Join(dir, "node")
	script := "#!/bin/sh\necho 'openclaw: Node.js v24.16.0+ is required (current: v20.20.2).' >&2\nexit 1\n"
	if err := os.WriteFile(node, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(dir, "openclaw.mjs")
	if err := os.WriteFile(entry, []byte("// stand-in\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinEnv, entry)
	t.Setenv(NodeEnv, node)
	t.Setenv(RequireEnv, "")
	var skipped bool
	t.Run("Skips", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Bin(t)
	})
	if !skipped {
		t.Error("Bin did not skip when openclaw --version fails")
	}
}

// fakeBin points Bin at a node that answers --version, for tests of New that
// need no Gateway.
func fakeBin(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	node := filepath.Join(dir, "node")
	if err := os.WriteFile(node, []byte("#!/bin/sh\necho 'OpenClaw 0.0.0 (fake)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(dir, "openclaw.mjs")
	if err := os.WriteFile(entry, []byte("// stand-in\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinEnv, entry)
	t.Setenv(NodeEnv, node)
}

func TestNew(t *testing.T) {
	fakeBin(t)
	opts := Options{
		ProviderURL: "http://127.0.0.1:1/v1",
		Plugins:     map[string]any{"heirloom": map[string]any{"enabled": true}},
		Env:         map[string]string{"OPENCLAW_SKIP_CHANNELS": "", "EXTRA": "1"},
	}
	g := New(t, opts)
	fi, err := os.Stat(g.ConfigPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config %v (%v)", fi, err)
	}
	env := strings.Join(g.Environ(), "\n")
	for _, want := range []string{"OPENCLAW_CONFIG_PATH=" + g.ConfigPath, "OPENCLAW_STATE_DIR=" + g.StateDir, "HOME=" + g.Home, "EXTRA=1"} {
		if !strings.Contains(env, want+"\n") && !strings.HasSuffix(env, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
	if strings.Contains(env, "OPENCLAW_SKIP_CHANNELS") {
		t.Error("a variable mapped to \"\" was kept")
	}
	// What an installer would do between New and Start.
	b, err := os.ReadFile(g.ConfigPath)
	if err != nil || !strings.Contains(string(b), g.Token) || !strings.Contains(string(b), `"heirloom"`) {
		t.Fatalf("config %s (%v)", b, err)
	}
	installed := strings.Replace(string(b), `"plugins": {`, `"plugins": {"installs": {"x": {}},`, 1)
	if err := os.WriteFile(g.ConfigPath, []byte(installed), 0o600); err != nil {
		t.Fatal(err)
	}

	opts.Home = g.Home
	again := New(t, opts)
	if again.Token != g.Token {
		t.Errorf("restart token %q, want the config's %q", again.Token, g.Token)
	}
	if b, _ := os.ReadFile(g.ConfigPath); string(b) != installed {
		t.Errorf("restart rewrote the config:\n%s", b)
	}
}
