// Package service writes the files that run heirloom at login under the platform's own service
// manager: a systemd user unit on Linux, a launchd agent on macOS. It knows the files and the
// commands that enable and disable them; it runs nothing itself.
package service

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"
)

// Name is the service's name: the systemd unit heirloom.service, the launchd label
// dev.heirloom.sidecar.
const (
	UnitName = "heirloom.service"
	Label    = "dev.heirloom.sidecar"
)

// Unquotable says why path cannot be a service's program, "" when it can: systemd takes no
// quote, backslash or dollar sign in it (nor does a shell-free launchd need them).
func Unquotable(path string) string {
	if strings.ContainsAny(path, "\"'\\$`\n") {
		return "its path holds a quote, a backslash, a $ or a newline, which a service file cannot carry"
	}
	return ""
}

// Spec is what the service runs: heirloom's absolute path and its arguments (serve).
type Spec struct {
	Binary string
	Args   []string
}

// Manager is one platform's service manager.
type Manager struct {
	Kind    string     // "systemd --user" or "launchd"
	Path    string     // the service file
	Unload  [][]string // commands that unload an older copy first; their failure (none loaded) is fine
	Enable  [][]string // commands that load and (re)start the service once the file is written
	Disable [][]string // commands that stop and unload it, before the file goes
	Reload  [][]string // commands to run after the file is gone
	Logs    string     // how to read its log
	file    func(Spec) []byte
}

// File is the service file for spec.
func (m Manager) File(spec Spec) []byte { return m.file(spec) }

// For returns the service manager of goos for a user whose home is home, with configHome
// ($XDG_CONFIG_HOME, "" for home/.config) and uid (launchd's gui/<uid> domain). An unsupported
// platform is an error saying what to do instead.
func For(goos, home, configHome string, uid int) (Manager, error) {
	switch goos {
	case "linux":
		if configHome == "" {
			configHome = filepath.Join(home, ".config")
		}
		return Manager{
			Kind: "systemd --user",
			Path: filepath.Join(configHome, "systemd", "user", UnitName),
			Enable: [][]string{
				{"systemctl", "--user", "daemon-reload"},
				{"systemctl", "--user", "enable", UnitName},
				{"systemctl", "--user", "restart", UnitName}, // a running one takes a changed file
			},
			Disable: [][]string{{"systemctl", "--user", "disable", "--now", UnitName}},
			Reload:  [][]string{{"systemctl", "--user", "daemon-reload"}},
			Logs:    "journalctl --user -u " + UnitName + " -f",
			file:    systemdUnit,
		}, nil
	case "darwin":
		path := filepath.Join(home, "Library", "LaunchAgents", Label+".plist")
		domain := fmt.Sprintf("gui/%d", uid)
		return Manager{
			Kind:    "launchd",
			Path:    path,
			Unload:  [][]string{{"launchctl", "bootout", domain + "/" + Label}},
			Enable:  [][]string{{"launchctl", "bootstrap", domain, path}},
			Disable: [][]string{{"launchctl", "bootout", domain + "/" + Label}},
			Logs:    "tail -f " + filepath.Join(home, "Library", "Logs", "heirloom.log"),
			file:    func(s Spec) []byte { return launchdPlist(s, filepath.Join(home, "Library", "Logs", "heirloom.log")) },
		}, nil
	}
	return Manager{}, fmt.Errorf("no service manager heirloom knows on %s: run `heirloom serve` from your own login scripts", goos)
}

// systemdUnit is the user unit: restarted on failure (not after a clean stop), logging to the
// journal.
func systemdUnit(s Spec) []byte {
	var b bytes.Buffer
	b.WriteString("# Written by `heirloom install service`; `heirloom uninstall service` removes it.\n")
	b.WriteString("[Unit]\nDescription=heirloom: warm starts for sub-agents of AI coding harnesses\n")
	b.WriteString("Documentation=https://github.com/heirloom-dev/heirloom\n\n")
	b.WriteString("[Service]\nType=simple\n")
	fmt.Fprintf(&b, "ExecStart=%s\n", systemdCommand(append([]string{s.Binary}, s.Args...)))
	b.WriteString("Restart=on-failure\nRestartSec=2\n")
	b.WriteString("# Logs go to the journal: journalctl --user -u heirloom.service\n\n")
	b.WriteString("[Install]\nWantedBy=default.target\n")
	return b.Bytes()
}

// systemdCommand quotes a command line for ExecStart: each word in double quotes when it holds
// a space, a quote, a backslash or a specifier.
func systemdCommand(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		w = strings.ReplaceAll(w, "%", "%%")
		if strings.ContainsAny(w, " \t\"'\\$") {
			w = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", "$$").Replace(w) + `"`
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}

// launchdPlist is the launch agent: started at login, kept alive while it exits with a
// failure, its output to logPath.
func launchdPlist(s Spec, logPath string) []byte {
	esc := func(v string) string {
		var b bytes.Buffer
		_ = xml.EscapeText(&b, []byte(v))
		return b.String()
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by heirloom install service; heirloom uninstall service removes it. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>` + Label + `</string>
  <key>ProgramArguments</key>
  <array>
`)
	for _, w := range append([]string{s.Binary}, s.Args...) {
		fmt.Fprintf(&b, "    <string>%s</string>\n", esc(w))
	}
	b.WriteString(`  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>StandardOutPath</key>
  <string>` + esc(logPath) + `</string>
  <key>StandardErrorPath</key>
  <string>` + esc(logPath) + `</string>
</dict>
</plist>
`)
	return b.Bytes()
}
