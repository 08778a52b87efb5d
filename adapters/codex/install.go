package codex

import (
	"bytes"
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

// MCPServerName is the name heirloom's MCP server is registered under ([mcp_servers.heirloom]).
const MCPServerName = "heirloom"

// tokenEnv is the variable Codex reads heirloom's bearer token from, for its MCP server.
const tokenEnv = "HEIRLOOM_TOKEN"

// editAttempts bounds how often an edit is planned again because Codex rewrote the file
// between the read and the write.
const editAttempts = 3

// InstallOptions says where and how to install heirloom into Codex's config.
type InstallOptions struct {
	// CodexHome is Codex's home directory ($CODEX_HOME, else ~/.codex). Required; it and its
	// config.toml are created when missing.
	CodexHome string
	// Command is the hook command, e.g. "/usr/local/bin/heirloom-hook codex". Required; it
	// must contain "hook codex".
	Command string
	// MCPURL is the sidecar's base URL, e.g. "http://127.0.0.1:7433": heirloom's MCP server is
	// registered at MCPURL + "/mcp". "" leaves the MCP server out.
	MCPURL string
	// Token makes Codex send "Authorization: Bearer $HEIRLOOM_TOKEN" to the MCP server, read
	// from Codex's own environment (the token itself is not written).
	Token bool
	// DryRun computes the change without writing anything.
	DryRun bool
	// Now stamps the backup's name. Nil means time.Now.
	Now func() time.Time
}

// InstallResult says what Install did (or, with DryRun, would do).
type InstallResult struct {
	Path    string // the config file written (a link's target when config.toml is a link)
	Changed bool   // false: everything was already installed exactly so
	Backup  string // the copy of the previous file; "" when none was made
	Before  []byte // the file's content before (nil when it did not exist)
	After   []byte // the content written (or that would be written)
}

// Install puts into $CODEX_HOME/config.toml one group per event heirloom uses, each running
// Command, a [hooks.state."<key>"] trust entry for each (Codex never runs an untrusted hook),
// and, unless MCPURL is "", heirloom's MCP server. It edits the text: the user's content,
// comments and formatting stay byte for byte. A heirloom group already there is rewritten in
// place (its index, so its trust key, stays); new ones are appended at the end of the file, so
// no other group's index moves. It is idempotent. A file that is not valid TOML is an error and
// is left untouched, as is one the change would leave invalid; a changed file is first copied
// to <file>.bak-<time>[.N], then replaced atomically.
func Install(opts InstallOptions) (InstallResult, error) {
	res := InstallResult{}
	if opts.CodexHome == "" || !IsShimCommand(opts.Command) {
		return res, fmt.Errorf("install codex: Codex's home and a command that runs heirloom's shim (PATH/heirloom-hook codex, or PATH/heirloom hook codex) are required, got %q", opts.Command)
	}
	if opts.MCPURL != "" && !strings.HasPrefix(opts.MCPURL, "http://") && !strings.HasPrefix(opts.MCPURL, "https://") {
		return res, fmt.Errorf("install codex: the MCP server needs the sidecar's http(s) URL, got %q", opts.MCPURL)
	}
	return editConfig(opts.CodexHome, opts.DryRun, opts.Now, func(src []byte, keyFile string) ([]byte, error) {
		return planInstall(src, keyFile, opts)
	})
}

// editConfig reads the config.toml in codexHome, has change compute its new content, and
// writes that (unless dryRun) when it differs: a backup of the old file first, then an atomic
// replace, through a link to its target. When the file changed meanwhile it starts again.
func editConfig(codexHome string, dryRun bool, now func() time.Time, change func(src []byte, keyFile string) ([]byte, error)) (InstallResult, error) {
	res := InstallResult{Path: filepath.Join(codexHome, configFile)}
	keyFile, err := keyPath(codexHome)
	if err != nil {
		return res, err
	}
	if real, err := filepath.EvalSymlinks(res.Path); err == nil {
		res.Path = real
	}
	if now == nil {
		now = time.Now
	}
	for range editAttempts {
		res.Before, err = os.ReadFile(res.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("read %s: %w", res.Path, err)
		}
		res.After, err = change(res.Before, keyFile)
		if err != nil {
			return res, fmt.Errorf("%s: %w", res.Path, err)
		}
		res.Changed = !bytes.Equal(res.Before, res.After) || res.Before == nil
		if !res.Changed || dryRun {
			return res, nil
		}
		again, err := os.ReadFile(res.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("read %s: %w", res.Path, err)
		}
		if !bytes.Equal(again, res.Before) {
			continue // Codex wrote it meanwhile: read it again
		}
		res.Backup, err = atomicfile.Replace(res.Path, res.Before, res.After, 0o600, now())
		return res, err
	}
	return res, fmt.Errorf("%s: it kept changing while heirloom edited it; try again", res.Path)
}

// planInstall returns src with heirloom installed (see Install), checked by parsing it again.
func planInstall(src []byte, keyFile string, opts InstallOptions) ([]byte, error) {
	d, err := parseDoc(src)
	if err != nil {
		return nil, fmt.Errorf("not valid TOML, so heirloom leaves it alone; fix it first: %w", err)
	}
	var edits []edit
	var tail []string
	removed := map[string][]int{}
	index := map[string]int{} // each event's heirloom group, once installed
	for _, he := range hookEvents {
		groups, headers, err := d.groupsWithHeaders(he.name)
		if err != nil {
			return nil, err
		}
		ours := oursIn(groups)
		if len(ours) == 0 {
			index[he.name] = len(groups)
			tail = append(tail, groupText(he.name, opts.Command))
			continue
		}
		// Rewrite the first in place (its trust key stays); drop any others.
		first := ours[0]
		index[he.name] = first
		if !isWanted(groups[first], he.name, opts.Command) {
			h := headers[first]
			edits = append(edits, edit{at: span{d.exprs[h].start, d.tableEnd(h)}, text: groupText(he.name, opts.Command)})
		}
		for _, i := range ours[1:] {
			h := headers[i]
			edits = append(edits, removal(src, d.exprs[h].start, d.tableEnd(h)))
			removed[he.name] = append(removed[he.name], i)
		}
	}
	rekeyed, err := d.rekey(keyFile, removed)
	if err != nil {
		return nil, err
	}
	edits = append(edits, rekeyed...)
	for _, he := range hookEvents {
		key := TrustKey(keyFile, he.snake, index[he.name], 0)
		hash := TrustHash(he.snake, "", opts.Command, timeoutOf(he.name))
		switch _, exists := d.state()[key]; {
		case d.trustedHash(key) == hash:
		case exists:
			e, err := d.setTrustedHash(key, hash)
			if err != nil {
				return nil, err
			}
			edits = append(edits, e)
		default:
			tail = append(tail, stateText(key, hash))
		}
	}
	if opts.MCPURL != "" {
		url := strings.TrimRight(opts.MCPURL, "/") + "/mcp"
		servers, _ := d.value["mcp_servers"].(map[string]any)
		cur, exists := servers[MCPServerName]
		switch {
		case !exists:
			tail = append(tail, mcpText(url, opts.Token))
		case mcpWanted(cur, url, opts.Token):
		default:
			h := d.header("mcp_servers", MCPServerName)
			if h < 0 {
				return nil, fmt.Errorf("mcp_servers.%s is not written as a [mcp_servers.%s] table; heirloom cannot rewrite it: remove it, or set its url to %s", MCPServerName, MCPServerName, url)
			}
			edits = append(edits, edit{at: span{d.exprs[h].start, d.tableEnd(h)}, text: mcpText(url, opts.Token)})
		}
	}
	if len(tail) > 0 {
		var b strings.Builder
		if len(src) > 0 && src[len(src)-1] != '\n' {
			b.WriteByte('\n')
		}
		for i, t := range tail {
			if i > 0 || len(src) > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t)
		}
		edits = append(edits, edit{at: span{len(src), len(src)}, text: b.String()})
	}
	after, err := apply(src, edits)
	if err != nil {
		return nil, err
	}
	if err := checkInstalled(after, keyFile, opts, index); err != nil {
		return nil, err
	}
	return after, nil
}

// checkInstalled parses after again and checks that each event's heirloom group is where index
// says, alone, and trusted, and that the MCP server is there when asked for.
func checkInstalled(after []byte, keyFile string, opts InstallOptions, index map[string]int) error {
	d, err := parseDoc(after)
	if err != nil {
		return fmt.Errorf("heirloom's change would not be valid TOML (nothing written): %w", err)
	}
	for _, he := range hookEvents {
		groups := d.groups(he.name)
		ours := oursIn(groups)
		i := index[he.name]
		if len(ours) != 1 || ours[0] != i || !isWanted(groups[i], he.name, opts.Command) {
			return fmt.Errorf("heirloom's hook for %s did not come out as planned (nothing written); is hooks.%s written in an unusual way?", he.name, he.name)
		}
		key := TrustKey(keyFile, he.snake, i, 0)
		if d.trustedHash(key) != TrustHash(he.snake, "", opts.Command, timeoutOf(he.name)) {
			return fmt.Errorf("the trust entry of heirloom's hook for %s did not come out as planned (nothing written)", he.name)
		}
	}
	if opts.MCPURL != "" {
		servers, _ := d.value["mcp_servers"].(map[string]any)
		if !mcpWanted(servers[MCPServerName], strings.TrimRight(opts.MCPURL, "/")+"/mcp", opts.Token) {
			return errors.New("heirloom's MCP server did not come out as planned (nothing written)")
		}
	}
	return nil
}

// groupsWithHeaders returns event's groups and, for each, the index of its [[hooks.<event>]]
// header in d.exprs. Groups written another way (an inline array) are an error: heirloom
// could neither add a [[hooks.<event>]] table beside them nor tell their indexes apart.
func (d *doc) groupsWithHeaders(event string) ([]map[string]any, []int, error) {
	groups := d.groups(event)
	headers := d.groupHeaders(event)
	if len(groups) != len(headers) {
		return nil, nil, fmt.Errorf("hooks.%s is not written as [[hooks.%s]] tables; heirloom adds its hook as one, so write the others that way too", event, event)
	}
	return groups, headers, nil
}

// oursIn returns the indexes of heirloom's groups among groups.
func oursIn(groups []map[string]any) []int {
	var out []int
	for i, g := range groups {
		if isOurs(g) {
			out = append(out, i)
		}
	}
	return out
}

// IsShimCommand reports whether a hook command runs heirloom's shim for Codex and nothing
// else: a program named heirloom-hook followed by "codex", or heirloom followed by "hook
// codex", wherever installed (the program may be quoted, as a path with spaces must be). A
// command that merely mentions "hook codex" (git-hook codex-notify, a wrapper with "--") is
// not heirloom's.
func IsShimCommand(cmd string) bool {
	args := shellWords(cmd)
	if len(args) == 0 {
		return false
	}
	switch filepath.Base(args[0]) {
	case "heirloom-hook":
		return slices.Equal(args[1:], []string{Harness})
	case "heirloom":
		return slices.Equal(args[1:], []string{"hook", Harness})
	}
	return false
}

// shellWords splits a command line into words as a POSIX shell would for the simple forms a
// hook command takes: blanks separate, '…' and "…" quote (backslash escapes inside "…" and
// outside quotes). It returns nil for an unterminated quote.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	quote, word := byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(s):
				i++
				cur.WriteByte(s[i])
			default:
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, word = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			word = true
		case c == ' ' || c == '\t' || c == '\n':
			if word {
				words = append(words, cur.String())
				cur.Reset()
				word = false
			}
		default:
			cur.WriteByte(c)
			word = true
		}
	}
	if quote != 0 {
		return nil
	}
	if word {
		words = append(words, cur.String())
	}
	return words
}

// isOurs reports whether a hook group is one heirloom installed: every hook in it runs the
// shim. A hook that wraps the user's own command (shim -- CMD) is the user's: not ours.
func isOurs(group map[string]any) bool {
	hs, _ := group["hooks"].([]any)
	if len(hs) == 0 {
		return false
	}
	for _, h := range hs {
		m, _ := h.(map[string]any)
		cmd, _ := m["command"].(string)
		if !IsShimCommand(cmd) {
			return false
		}
	}
	return true
}

// isWanted reports whether group is exactly heirloom's group for event running command.
func isWanted(group map[string]any, event, command string) bool {
	if len(group) != 1 {
		return false
	}
	hs, _ := group["hooks"].([]any)
	if len(hs) != 1 {
		return false
	}
	h, _ := hs[0].(map[string]any)
	timeout, _ := h["timeout"].(int64)
	return len(h) == 3 && h["type"] == "command" && h["command"] == command && timeout == int64(timeoutOf(event))
}

// mcpText is heirloom's [mcp_servers.heirloom] table.
func mcpText(url string, token bool) string {
	s := "[mcp_servers." + MCPServerName + "]\nurl = " + tomlString(url) + "\n"
	if token {
		s += "bearer_token_env_var = " + tomlString(tokenEnv) + "\n"
	}
	return s
}

// mcpWanted reports whether an mcp_servers entry points at url with the token as asked.
func mcpWanted(entry any, url string, token bool) bool {
	m, _ := entry.(map[string]any)
	got, _ := m["bearer_token_env_var"].(string)
	return m["url"] == url && (got == tokenEnv) == token && (token || m["bearer_token_env_var"] == nil)
}

// rekey returns the edits that keep [hooks.state] right when the groups removed (by event,
// their indexes) go: their trust entries are taken out, and the entries of the file's later
// groups of the same event take the index their group moves to, so they stay trusted.
func (d *doc) rekey(keyFile string, removed map[string][]int) ([]edit, error) {
	var edits []edit
	for key := range d.state() {
		snake, g, h, ok := parseTrustKey(key, keyFile)
		if !ok {
			continue
		}
		gone := removed[eventOf(snake)]
		if len(gone) == 0 {
			continue
		}
		if slices.Contains(gone, g) {
			e, err := d.removeEntry(key)
			if err != nil {
				return nil, err
			}
			edits = append(edits, e...)
			continue
		}
		shift := 0
		for _, i := range gone {
			if i < g {
				shift++
			}
		}
		if shift > 0 {
			e, err := d.renameEntry(key, TrustKey(keyFile, snake, g-shift, h))
			if err != nil {
				return nil, err
			}
			edits = append(edits, e...)
		}
	}
	return edits, nil
}

// eventOf returns the config.toml name of a snake_case event name ("session_start" →
// "SessionStart").
func eventOf(snake string) string {
	var b strings.Builder
	for _, w := range strings.Split(snake, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// entryExprs returns the indexes in d.exprs of the expressions that spell the state entry
// key's name: its [hooks.state."<key>"] header, or key/values naming it under [hooks.state] or
// [hooks] (not those inside its own table).
func (d *doc) entryExprs(key string) []int {
	prefix := []string{"hooks", "state", key}
	var out []int
	for i, e := range d.exprs {
		if hasPrefix(e.path, prefix) && len(e.path)-e.own <= 2 {
			out = append(out, i)
		}
	}
	return out
}

// removeEntry returns the edits that take the state entry key out.
func (d *doc) removeEntry(key string) ([]edit, error) {
	var edits []edit
	for _, i := range d.entryExprs(key) {
		e := d.exprs[i]
		end := e.end
		if e.isHeader() {
			end = d.tableEnd(i)
		}
		edits = append(edits, removal(d.src, e.start, end))
	}
	if len(edits) == 0 {
		return nil, fmt.Errorf("the trust entry %q is written in a way heirloom cannot take out (inside an inline table): move it to a [hooks.state.%s] table", key, tomlString(key))
	}
	return edits, nil
}

// renameEntry returns the edits that give the state entry old the key new.
func (d *doc) renameEntry(old, new string) ([]edit, error) {
	var edits []edit
	for _, i := range d.entryExprs(old) {
		e := d.exprs[i]
		part := 2 - (len(e.path) - e.own)
		edits = append(edits, edit{at: e.parts[part], text: tomlString(new)})
	}
	if len(edits) == 0 {
		return nil, fmt.Errorf("the trust entry %q is written in a way heirloom cannot re-key (inside an inline table): move it to a [hooks.state.%s] table", old, tomlString(old))
	}
	return edits, nil
}

// setTrustedHash returns the edit that makes the existing state entry key trust hash.
func (d *doc) setTrustedHash(key, hash string) (edit, error) {
	want := []string{"hooks", "state", key, "trusted_hash"}
	for _, e := range d.exprs {
		if e.isHeader() || !slices.Equal(e.path, want) {
			continue
		}
		return edit{at: e.value, text: tomlString(hash)}, nil
	}
	if h := d.header("hooks", "state", key); h >= 0 {
		e := d.exprs[h]
		text := "trusted_hash = " + tomlString(hash) + "\n"
		if e.end == 0 || d.src[e.end-1] != '\n' {
			text = "\n" + text
		}
		return edit{at: span{e.end, e.end}, text: text}, nil
	}
	return edit{}, fmt.Errorf("the trust entry %q is written in a way heirloom cannot change (inside an inline table): move it to a [hooks.state.%s] table", key, tomlString(key))
}
