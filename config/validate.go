package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
)

// scopePattern is what a memory scope may look like; it is used in store
// keys and URLs.
var scopePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// headerNamePattern is an HTTP header name (an RFC 9110 token).
var headerNamePattern = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")

// Validate reports every invalid value in c, as *Error values joined with
// errors.Join, or nil when c is valid. Each error names the key and the bad
// value; Source is empty (Load fills it in).
func (c *Config) Validate() error {
	problems := c.problems()
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// problems lists the invalid values of c in key order.
func (c *Config) problems() []*Error {
	var errs []*Error
	bad := func(key string, value any, msg string) {
		errs = append(errs, &Error{Key: key, Value: value, Msg: msg})
	}

	if msg := checkListen(c.Listen, c.Token != ""); msg != "" {
		bad("listen", c.Listen, msg)
	}
	switch {
	case c.DataDir == "":
		bad("data_dir", nil, "must not be empty (set it, or HOME or XDG_DATA_HOME)")
	case strings.HasPrefix(c.DataDir, "~"):
		bad("data_dir", c.DataDir, "cannot be expanded: the home directory is unknown")
	}
	if !scopePattern.MatchString(c.Scope) {
		bad("scope", c.Scope, "is not a valid scope: use 1-64 of a-z, 0-9, '_' and '-', starting with a letter or digit")
	}
	switch c.Log.Level {
	case "trace", "debug", "info", "warn", "error":
	default:
		bad("log.level", c.Log.Level, "is not one of trace, debug, info, warn, error")
	}
	switch c.Log.Format {
	case "auto", "text", "json":
	default:
		bad("log.format", c.Log.Format, "is not one of auto, text, json")
	}
	if c.Server.MaxBodyBytes <= 0 {
		bad("server.max_body_bytes", c.Server.MaxBodyBytes, "must be greater than 0")
	}
	if c.Server.HookTimeout <= 0 {
		bad("server.hook_timeout", c.Server.HookTimeout, "must be greater than 0")
	}
	if c.Server.ShutdownTimeout <= 0 {
		bad("server.shutdown_timeout", c.Server.ShutdownTimeout, "must be greater than 0")
	}
	if c.Inherit.TailChars < 0 {
		bad("inherit.tail_chars", c.Inherit.TailChars, "must not be negative")
	}
	if c.Inherit.RelevantPassages < 0 {
		bad("inherit.relevant_passages", c.Inherit.RelevantPassages, "must not be negative")
	}
	for _, s := range c.Inherit.CrossScope {
		if strings.TrimSpace(s) == "" || strings.ContainsRune(s, 0) {
			bad("inherit.cross_scope", s, "is not a scope name; list scope names, or \"*\" for every scope")
			break
		}
	}
	if c.Checkpoints.EveryPrompts <= 0 {
		bad("checkpoints.every_prompts", c.Checkpoints.EveryPrompts, "must be greater than 0")
	}
	if c.Checkpoints.Every <= 0 {
		bad("checkpoints.every", c.Checkpoints.Every, "must be greater than 0")
	}
	if c.Checkpoints.Retention <= 0 {
		bad("checkpoints.retention", c.Checkpoints.Retention, "must be greater than 0")
	}
	if c.Checkpoints.Keep < 0 {
		bad("checkpoints.keep", c.Checkpoints.Keep, "must not be negative")
	}
	if c.Recovery.Window <= 0 {
		bad("recovery.window", c.Recovery.Window, "must be greater than 0")
	}

	cc := c.Adapters.ClaudeCode
	if cc.MaxContextChars < adapters.MaxContextCharsMin || cc.MaxContextChars > adapters.MaxContextCharsMax {
		bad("adapters.claude_code.max_context_chars", cc.MaxContextChars,
			fmt.Sprintf("is not within %d..%d (Claude Code replaces additionalContext over %d characters)",
				adapters.MaxContextCharsMin, adapters.MaxContextCharsMax, adapters.MaxContextCharsMax))
	}
	if len(cc.TranscriptRoots) == 0 {
		bad("adapters.claude_code.transcript_roots", nil, "must list at least one directory")
	}
	for _, root := range cc.TranscriptRoots {
		switch {
		case strings.HasPrefix(root, "~"):
			bad("adapters.claude_code.transcript_roots", root, "cannot be expanded: the home directory is unknown")
		case !filepath.IsAbs(root):
			bad("adapters.claude_code.transcript_roots", root, "is not an absolute path")
		}
	}
	for _, root := range c.Adapters.Codex.TranscriptRoots {
		switch {
		case strings.HasPrefix(root, "~"):
			bad("adapters.codex.transcript_roots", root, "cannot be expanded: the home directory is unknown")
		case !filepath.IsAbs(root):
			bad("adapters.codex.transcript_roots", root, "is not an absolute path")
		}
	}
	if cc.HookReadBytes <= 0 {
		bad("adapters.claude_code.hook_read_bytes", cc.HookReadBytes, "must be greater than 0")
	}
	if cc.MaxReadBytes <= 0 || cc.MaxReadBytes < cc.HookReadBytes {
		bad("adapters.claude_code.max_read_bytes", cc.MaxReadBytes, "must be greater than 0 and at least hook_read_bytes")
	}
	if up := cc.Upstream; up.URL != "" {
		if u, err := url.Parse(up.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("adapters.claude_code.upstream.url", up.URL, "is not an http(s) URL with a host")
		}
	}
	if cc.Upstream.Timeout <= 0 {
		bad("adapters.claude_code.upstream.timeout", cc.Upstream.Timeout, "must be greater than 0")
	}
	for _, name := range slices.Sorted(maps.Keys(cc.Upstream.Headers)) {
		switch {
		case !headerNamePattern.MatchString(name):
			bad("adapters.claude_code.upstream.headers", name, "is not a valid header name")
		case strings.ContainsAny(cc.Upstream.Headers[name], "\r\n\x00"):
			bad("adapters.claude_code.upstream.headers", name, "has a value with a line break or NUL")
		}
	}
	if strings.ContainsAny(cc.Upstream.Token, "\r\n\x00 ") {
		bad("adapters.claude_code.upstream.token", nil, "must not contain spaces, line breaks or NUL")
	}
	for _, srv := range c.Adapters.OpenCode.Servers {
		if u, err := url.Parse(srv.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("adapters.opencode.servers", srv.URL, "is not an http(s) URL with a host")
		}
	}
	if oc := c.Adapters.OpenClaw; oc.URL != "" {
		if u, err := url.Parse(oc.URL); err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			bad("adapters.openclaw.url", oc.URL, "is not a ws(s) URL with a host")
		}
	}
	if c.Adapters.OpenClaw.DescribeWait < 0 {
		bad("adapters.openclaw.describe_wait", c.Adapters.OpenClaw.DescribeWait, "must not be negative")
	}
	if c.Spawn.MaxDepth < 0 {
		bad("spawn.max_depth", c.Spawn.MaxDepth, "must not be negative")
	}
	if c.Spawn.MaxChildren < 0 {
		bad("spawn.max_children", c.Spawn.MaxChildren, "must not be negative")
	}
	switch c.Spawn.Mode {
	case engine.SpawnEnforce, engine.SpawnObserve:
	default:
		bad("spawn.mode", c.Spawn.Mode, "is not one of enforce, observe")
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"runs.watchdog_timeout", c.Runs.WatchdogTimeout},
		{"runs.ghost_grace", c.Runs.GhostGrace},
		{"runs.result_retention", c.Runs.ResultRetention},
		{"condense.timeout", c.Condense.Timeout},
	} {
		if d.v <= 0 {
			bad(d.key, d.v, "must be greater than 0")
		}
	}
	if c.Runs.MaxResultTokens <= 0 {
		bad("runs.max_result_tokens", c.Runs.MaxResultTokens, "must be greater than 0")
	}
	if cd := c.Condense; cd.URL != "" {
		if u, err := url.Parse(cd.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("condense.url", cd.URL, "is not an http(s) URL with a host")
		}
		if strings.TrimSpace(cd.Model) == "" {
			bad("condense.model", nil, "must be set with condense.url")
		}
	}
	if strings.ContainsAny(c.Condense.Token, "\r\n\x00 ") {
		bad("condense.token", nil, "must not contain spaces, line breaks or NUL")
	}
	return errs
}

// checkListen returns what is wrong with listen, or "" if nothing is. A
// host that is not loopback is allowed only when a token is set.
func checkListen(listen string, haveToken bool) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "is not host:port"
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "does not have a numeric port (0-65535)"
	}
	if !haveToken && !isLoopback(host) {
		return "is not a loopback address: set token (HEIRLOOM_TOKEN) before binding it"
	}
	return ""
}

// isLoopback reports whether host is localhost or a loopback IP
// (127.0.0.0/8, ::1). An empty host means every interface, so it is not.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
