package adapters

import (
	"context"
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
