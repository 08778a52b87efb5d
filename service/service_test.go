package service_test

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/service"
)

// TestSystemdUnit: the user unit runs heirloom serve, restarts it on failure, is wanted by the
// user's default target, and systemd's own verifier (systemd-analyze, when the machine has it)
// finds nothing wrong with it; a path with a space is quoted.
func TestSystemdUnit(t *testing.T) {
	m, err := service.For("linux", "/home/u", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if m.Path != "/home/u/.config/systemd/user/heirloom.service" {
		t.Errorf("path %s", m.Path)
	}
	unit := string(m.File(service.Spec{Binary: "/opt/my tools/heirloom", Args: []string{"serve"}}))
	for _, want := range []string{`ExecStart="/opt/my tools/heirloom" serve`, "Restart=on-failure", "WantedBy=default.target"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q:\n%s", want, unit)
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Logf("no systemd-analyze here: the unit is not verified by systemd")
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, service.UnitName)
	if err := os.WriteFile(path, m.File(service.Spec{Binary: "/bin/true", Args: []string{"serve"}}), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestLaunchdPlist: the launch agent is well-formed XML naming heirloom serve, run at load,
// kept alive after a failure, logging to ~/Library/Logs.
func TestLaunchdPlist(t *testing.T) {
	m, err := service.For("darwin", "/Users/u", "", 501)
	if err != nil {
		t.Fatal(err)
	}
	if m.Path != "/Users/u/Library/LaunchAgents/dev.heirloom.sidecar.plist" || m.Enable[0][2] != "gui/501" {
		t.Errorf("path %s, enable %v", m.Path, m.Enable)
	}
	plist := m.File(service.Spec{Binary: "/usr/local/bin/heirloom", Args: []string{"serve"}})
	dec := xml.NewDecoder(bytes.NewReader(plist))
	dec.Strict = true
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("the plist is not well-formed XML: %v\n%s", err, plist)
			}
			break
		}
	}
	for _, want := range []string{"<string>/usr/local/bin/heirloom</string>\n    <string>serve</string>", "<key>SuccessfulExit</key>\n    <false/>", "<key>RunAtLoad</key>\n  <true/>", "/Users/u/Library/Logs/heirloom.log"} {
		if !strings.Contains(string(plist), want) {
			t.Errorf("the plist lacks %q:\n%s", want, plist)
		}
	}
	if _, err := service.For("windows", "C:/u", "", 0); err == nil {
		t.Error("windows: no error")
	}
}

func TestUnquotable(t *testing.T) {
	for path, bad := range map[string]bool{"/opt/my tools/heirloom": false, `/opt/a"b/heirloom`: true, "/opt/$x/heirloom": true, `/opt/a\b`: true, "/opt/100%/heirloom": false} {
		if got := service.Unquotable(path) != ""; got != bad {
			t.Errorf("Unquotable(%q): %v, want %v", path, got, bad)
		}
	}
}
