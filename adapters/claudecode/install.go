package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/internal/atomicfile"
)

// hookEvents are the events heirloom's shim is installed for, with their matcher ("" = every
// tool or source). Only spawning tool calls matter among Pre/PostToolUse.
var hookEvents = []struct{ event, matcher string }{
	{EventSessionStart, ""},
	{EventUserPromptSubmit, ""},
	{EventPreToolUse, ToolAgent + "|" + ToolTask},
	{EventPostToolUse, ToolAgent + "|" + ToolTask},
	{EventSubagentStart, ""},
	{EventSubagentStop, ""},
	{EventPreCompact, ""},
	{EventStop, ""},
	{EventSessionEnd, ""},
}

// shimMarker identifies heirloom's own command hook entries in a settings file, whatever path
// the binary was installed at ("heirloom hook claude-code", "heirloom-hook claude-code").
const shimMarker = "hook claude-code"

// hookPath is the sidecar's endpoint for Claude Code's http hooks; it identifies heirloom's own
// http hook entries.
const hookPath = "/hooks/" + Harness

// Timeouts heirloom writes on its hooks, in seconds. Claude Code waits up to 600 s (30 s for
// UserPromptSubmit) on an http hook that does not answer, so heirloom's http hooks carry a
// short one, past the sidecar's own 1 s hook deadline. SessionEnd gets 1.5 s from Claude Code
// unless the hook says more, as much as the shim itself may take: 3 s leaves room for the
// process to start.
const (
	httpHookTimeout   = 2
	sessionEndTimeout = 3
)

// HTTPHooks says to install http hooks, which cost no process start, for every event but
// SessionStart (Claude Code calls no http hook there) and SessionEnd (which runs as Claude Code
// exits, where a command hook's own short deadline is the safer bound).
type HTTPHooks struct {
	// URL is the sidecar's base URL, e.g. "http://127.0.0.1:7433". Required.
	URL string
	// Token, when set, makes each http hook send "Authorization: Bearer $HEIRLOOM_TOKEN",
	// read by Claude Code from its own environment (the token itself is not written).
	Token bool
}

// InstallOptions says where and how to install heirloom's hooks.
type InstallOptions struct {
	// SettingsPath is the settings file to change (~/.claude/settings.json, or a project's
	// .claude/settings.json). Required. A missing file is created.
	SettingsPath string
	// Command is the hook command to install, e.g. "/usr/local/bin/heirloom-hook claude-code".
	// Required; it must contain "hook claude-code".
	Command string
	// HTTP, when not nil, installs http hooks for the events that take them (see HTTPHooks);
	// nil installs the command hook for every event.
	HTTP *HTTPHooks
	// DryRun computes the change without writing anything.
	DryRun bool
	// Now stamps the backup's name. Nil means time.Now.
	Now func() time.Time
}

// InstallResult says what Install did (or, with DryRun, would do).
type InstallResult struct {
	Path    string // the settings file
	Changed bool   // false: heirloom's hooks were already installed exactly so
	Backup  string // the copy of the previous file; "" when none was made
	Before  []byte // the file's content before (nil when it did not exist)
	After   []byte // the content written (or that would be written)
}

// Install adds heirloom's command hook for every event it uses to a Claude Code settings file,
// keeping every other setting and every other hook. It is idempotent: heirloom's existing entries
// (recognised by "hook claude-code" in their command) are replaced in place, never duplicated.
// An existing file that changes is first copied to a new <file>.bak-<time>[.N]; the file is then
// replaced atomically (see atomicfile.Write). A file that is not a JSON object is an error and is
// left untouched.
func Install(opts InstallOptions) (InstallResult, error) {
	res := InstallResult{Path: opts.SettingsPath}
	if opts.SettingsPath == "" || !strings.Contains(opts.Command, shimMarker) {
		return res, fmt.Errorf("install claude-code: settings path and a command containing %q are required", shimMarker)
	}
	before, err := os.ReadFile(opts.SettingsPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("read %s: %w", opts.SettingsPath, err)
	}
	res.Before = before
	settings := map[string]any{}
	if len(bytes.TrimSpace(before)) > 0 {
		if err := json.Unmarshal(before, &settings); err != nil {
			return res, fmt.Errorf("%s is not a JSON object; fix or move it first: %w", opts.SettingsPath, err)
		}
	}
	if opts.HTTP != nil && !strings.HasPrefix(opts.HTTP.URL, "http://") && !strings.HasPrefix(opts.HTTP.URL, "https://") {
		return res, fmt.Errorf("install claude-code: http hooks need the sidecar's http(s) URL, got %q", opts.HTTP.URL)
	}
	if err := mergeHooks(settings, opts.Command, opts.HTTP); err != nil {
		return res, fmt.Errorf("%s: %w", opts.SettingsPath, err)
	}
	after, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return res, err
	}
	res.After = append(after, '\n')
	if before != nil && jsonEqual(before, res.After) {
		return res, nil
	}
	res.Changed = true
	if opts.DryRun {
		return res, nil
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	mode := fs.FileMode(0o600)
	if before != nil {
		mode = atomicfile.Perm(opts.SettingsPath, mode)
		if res.Backup, err = atomicfile.Backup(opts.SettingsPath, before, mode, now()); err != nil {
			return res, err
		}
	}
	dir := filepath.Dir(opts.SettingsPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, fmt.Errorf("create %s: %w", dir, err)
	}
	if err := atomicfile.Write(opts.SettingsPath, res.After, mode); err != nil {
		return res, err
	}
	return res, nil
}

// mergeHooks puts one heirloom hook group per event into settings["hooks"], replacing heirloom's
// previous entries (command or http) and keeping everything else.
func mergeHooks(settings map[string]any, command string, web *HTTPHooks) error {
	hooks, _ := settings["hooks"].(map[string]any)
	if settings["hooks"] != nil && hooks == nil {
		return errors.New(`"hooks" is not an object`)
	}
	if hooks == nil {
		hooks = map[string]any{}
	}
	for _, he := range hookEvents {
		groups, _ := hooks[he.event].([]any)
		if hooks[he.event] != nil && groups == nil {
			return fmt.Errorf("hooks.%s is not a list", he.event)
		}
		ours := map[string]any{"hooks": []any{ourHook(he.event, command, web)}}
		if he.matcher != "" {
			ours["matcher"] = he.matcher
		}
		// An event whose hook the user wrapped with the shim reaches heirloom already: a group
		// of heirloom's own beside it would answer twice.
		placed := slices.ContainsFunc(groups, wraps)
		kept := make([]any, 0, len(groups)+1)
		for _, g := range groups {
			if isOurs(g) {
				if !placed {
					kept = append(kept, ours)
					placed = true
				}
				continue
			}
			kept = append(kept, g)
		}
		if !placed {
			kept = append(kept, ours)
		}
		hooks[he.event] = kept
	}
	settings["hooks"] = hooks
	return nil
}

// ourHook is heirloom's hook for event: an http hook when web says so and the event takes one,
// else the command hook.
func ourHook(event, command string, web *HTTPHooks) map[string]any {
	if web != nil && event != EventSessionStart && event != EventSessionEnd {
		h := map[string]any{"type": "http", "url": strings.TrimRight(web.URL, "/") + hookPath, "timeout": httpHookTimeout}
		if web.Token {
			h["headers"] = map[string]any{"Authorization": "Bearer $HEIRLOOM_TOKEN"}
			h["allowedEnvVars"] = []any{"HEIRLOOM_TOKEN"}
		}
		return h
	}
	h := map[string]any{"type": "command", "command": command}
	if event == EventSessionEnd {
		h["timeout"] = sessionEndTimeout
	}
	return h
}

// isOurs reports whether a hook group is one heirloom installed: every hook in it runs the shim
// or posts to the sidecar's Claude Code endpoint. A hook that wraps the user's own command
// (shim -- CMD) is the user's, with heirloom in front: not ours.
func isOurs(group any) bool {
	hs := groupHooks(group)
	if len(hs) == 0 {
		return false
	}
	for _, h := range hs {
		if role, _ := hookRole(h); role != roleOurs {
			return false
		}
	}
	return true
}

// wraps reports whether a hook group holds a hook that wraps the user's own command with the
// shim: that event reaches heirloom already.
func wraps(group any) bool {
	for _, h := range groupHooks(group) {
		if role, _ := hookRole(h); role == roleWrapper {
			return true
		}
	}
	return false
}

// groupHooks returns a hook group's hooks; nil when it is not a group.
func groupHooks(group any) []any {
	g, _ := group.(map[string]any)
	hs, _ := g["hooks"].([]any)
	return hs
}

// Roles of a hook in a settings file.
const (
	roleUser    = iota // the user's own
	roleOurs           // heirloom's: the shim, or an http hook to the sidecar's endpoint
	roleWrapper        // the user's own command behind the shim: "heirloom-hook claude-code -- CMD"
)

// hookRole says whose hook h is; for a wrapper, inner is the user's command it wraps.
func hookRole(h any) (role int, inner string) {
	m, ok := h.(map[string]any)
	if !ok {
		return roleUser, ""
	}
	if url, _ := m["url"].(string); strings.HasSuffix(url, hookPath) {
		return roleOurs, ""
	}
	cmd, _ := m["command"].(string)
	_, after, ok := strings.Cut(cmd, shimMarker)
	if !ok {
		return roleUser, ""
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(after), "--"); ok && strings.TrimSpace(rest) != "" {
		return roleWrapper, strings.TrimSpace(rest)
	}
	return roleOurs, ""
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
