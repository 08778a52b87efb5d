package main_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// doctorEnv is a private HOME with a PATH that holds no harness binary.
func doctorEnv(t *testing.T, extra ...string) []string {
	home := t.TempDir()
	return append([]string{"HOME=" + home, "PATH=/usr/bin:/bin"}, extra...)
}

// TestDoctor_SidecarDown: nothing answers where the sidecar should be: a failure with its fix,
// exit 1; the harnesses' checks still run.
func TestDoctor_SidecarDown(t *testing.T) {
	env := doctorEnv(t, "HEIRLOOM_URL=http://"+freeAddr(t))
	stdout, stderr, code := runCLI(t, env, "doctor")
	if code != 1 || !strings.Contains(stdout, "fail  sidecar      nothing answers at") || !strings.Contains(stdout, "fix: start it: heirloom serve") {
		t.Errorf("sidecar down: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "claude-code\n  warn  binary       claude is not on PATH") {
		t.Errorf("a missing harness is not reported as a warning:\n%s", stdout)
	}
}

// TestDoctor_AllGoodAndStale: with the sidecar up and no harness installed here, only warnings
// (exit 0); an OpenClaw install pointing at another port is a failure naming both addresses,
// with the command that fixes it; --json says the same.
func TestDoctor_AllGoodAndStale(t *testing.T) {
	env := doctorEnv(t)
	s := startServe(t, filepath.Join(t.TempDir(), "data"), env)
	env = append(env, "HEIRLOOM_URL="+s.url)
	stdout, stderr, code := runCLI(t, env, "doctor")
	if code != 0 || !strings.Contains(stdout, "ok    sidecar") || !strings.Contains(stdout, "ok    store") || !strings.Contains(stdout, "no problems") {
		t.Errorf("nothing installed, sidecar up: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, _, code := runCLI(t, env, "install", "openclaw", "--url", "http://127.0.0.1:9"); code != 0 {
		t.Fatal("install openclaw failed")
	}
	stdout, _, code = runCLI(t, env, "doctor")
	if code != 1 || !strings.Contains(stdout, "heirloom's plugin calls http://127.0.0.1:9, the sidecar is at "+s.url) || !strings.Contains(stdout, "fix: heirloom install openclaw --url "+s.url) {
		t.Errorf("a stale OpenClaw install: exit %d\n%s", code, stdout)
	}
	stdout, _, code = runCLI(t, env, "doctor", "--json")
	var r struct {
		OK       bool
		Sections []struct {
			Name     string
			Findings []struct{ Check, Status, Detail, Fix string }
		}
	}
	if code != 1 || json.Unmarshal([]byte(stdout), &r) != nil || r.OK {
		t.Fatalf("doctor --json: exit %d\n%s", code, stdout)
	}
	found := false
	for _, sec := range r.Sections {
		for _, f := range sec.Findings {
			found = found || sec.Name == "openclaw" && f.Check == "config" && f.Status == "fail"
		}
	}
	if !found {
		t.Errorf("doctor --json has no failed openclaw config finding:\n%s", stdout)
	}
}

// TestDoctor_WrongToken: a sidecar that requires a token refuses the one given: a failure
// saying so.
func TestDoctor_WrongToken(t *testing.T) {
	env := doctorEnv(t)
	s := startServe(t, filepath.Join(t.TempDir(), "data"), append(env, "HEIRLOOM_TOKEN=right"))
	stdout, _, code := runCLI(t, append(env, "HEIRLOOM_URL="+s.url, "HEIRLOOM_TOKEN=wrong"), "doctor")
	if code != 1 || !strings.Contains(stdout, "fail  token") {
		t.Errorf("a wrong token: exit %d\n%s", code, stdout)
	}
	stdout, _, _ = runCLI(t, append(env, "HEIRLOOM_URL="+s.url, "HEIRLOOM_TOKEN=right"), "doctor")
	if !strings.Contains(stdout, "ok    token") {
		t.Errorf("the right token:\n%s", stdout)
	}
}
