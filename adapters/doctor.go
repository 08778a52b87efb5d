package adapters

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Finding is one thing `heirloom doctor` checked, and what to do when it is wrong.
type Finding struct {
	Check  string `json:"check"`  // what was checked: "binary", "hooks", "mcp", "plugin", …
	Status string `json:"status"` // StatusOK, StatusWarn or StatusFail
	Detail string `json:"detail"` // what was found
	Fix    string `json:"fix,omitempty"`
}

// Finding statuses. A warning is worth knowing (a harness not installed here, a version heirloom
// was not verified with); a failure is something broken (a stale install, a sidecar down).
const (
	StatusOK   = "ok"
	StatusWarn = "warn"
	StatusFail = "fail"
)

// Inspector reports on a harness's installation on this machine against the running sidecar at
// sidecarURL ("" when none answers): its binary and version, and each of heirloom's entries
// install writes, whether present and pointing at that sidecar. Installers implement it.
type Inspector interface {
	Inspect(ctx context.Context, env InstallEnv, sidecarURL string) []Finding
}

// versionPattern finds a version number in a --version line.
var versionPattern = regexp.MustCompile(`\d+\.\d+(\.\d+)?`)

// BinaryFinding finds name on PATH and runs it with --version (within a few seconds): ok with
// the version when it is one of verified, a warning naming the versions heirloom was verified
// with when it is not, a warning when name is absent (the harness is not installed here).
func BinaryFinding(ctx context.Context, name string, verified []string) Finding {
	f := Finding{Check: "binary"}
	path, err := exec.LookPath(name)
	if err != nil {
		f.Status, f.Detail = StatusWarn, name+" is not on PATH (not installed here, or not on this PATH)"
		return f
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	version := versionPattern.FindString(string(out))
	switch {
	case err != nil || version == "":
		f.Status, f.Detail = StatusWarn, path+": --version did not say its version"
		if err != nil {
			f.Detail += " (" + err.Error() + ")"
		}
	case slices.Contains(verified, version):
		f.Status, f.Detail = StatusOK, path+" "+version+" (a version heirloom was verified with)"
	default:
		f.Status, f.Detail = StatusWarn, path+" "+version+": heirloom was verified with "+strings.Join(verified, ", ")
		f.Fix = "it may work; if a sub-agent gets nothing, this is the first thing to suspect"
	}
	return f
}

// SameURL reports whether two sidecar URLs reach the same server: scheme, port and path alike,
// localhost and 127.0.0.1 (and ::1) alike, a trailing slash or none.
func SameURL(a, b string) bool {
	norm := func(s string) string {
		u, err := url.Parse(strings.TrimRight(strings.TrimSpace(s), "/"))
		if err != nil {
			return s
		}
		host := u.Hostname()
		if host == "localhost" || host == "::1" {
			host = "127.0.0.1"
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		return u.Scheme + "://" + host + ":" + port + u.Path
	}
	return norm(a) == norm(b)
}

// CommandProgram returns the program a hook command line runs: its first word, unquoted, after
// any VAR=value assignments; "" when it cannot say (a shell expansion, an unclosed quote).
func CommandProgram(cmd string) string {
	s := strings.TrimSpace(cmd)
	for {
		var word string
		switch {
		case s == "":
			return ""
		case s[0] == '"' || s[0] == '\'':
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				return ""
			}
			word, s = s[1:1+end], strings.TrimSpace(s[2+end:])
		default:
			i := strings.IndexAny(s, " \t")
			if i < 0 {
				i = len(s)
			}
			word, s = s[:i], strings.TrimSpace(s[i:])
		}
		if eq := strings.IndexByte(word, '='); eq > 0 && !strings.ContainsAny(word[:eq], "/\"") {
			continue // an environment assignment before the program
		}
		if strings.ContainsAny(word, "$`~*?") {
			return ""
		}
		return word
	}
}

// MCPFinding is the finding on heirloom's MCP entry in a harness's config at path, read as err
// says: entryURL when found, which must be the sidecar's /mcp. fix is the install command that
// writes it.
func MCPFinding(path string, entryURL string, found bool, err error, sidecarURL, fix string) Finding {
	f := Finding{Check: "mcp"}
	switch want := strings.TrimRight(sidecarURL, "/") + "/mcp"; {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		f.Status, f.Detail = StatusWarn, path+": "+err.Error()+" (not read here)"
	case !found:
		f.Status, f.Detail, f.Fix = StatusWarn, "heirloom's MCP server is not registered in "+path+" (agents cannot call session_search)", fix
	case sidecarURL != "" && !SameURL(entryURL, want):
		f.Status, f.Detail, f.Fix = StatusFail, path+": heirloom's MCP server points at "+entryURL+", the sidecar is at "+want, fix+" --url "+sidecarURL
	default:
		f.Status, f.Detail = StatusOK, "heirloom's MCP server in "+path+" → "+entryURL
	}
	return f
}
