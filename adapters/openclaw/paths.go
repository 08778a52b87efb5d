package openclaw

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Paths are where OpenClaw keeps what Install touches.
type Paths struct {
	// Config is the active config file, resolved as OpenClaw 2026.9 does: $OPENCLAW_CONFIG_PATH
	// when set; else the first that exists of openclaw.json and the legacy clawdbot.json in
	// $OPENCLAW_STATE_DIR (when set), then in ~/.openclaw, then in ~/.clawdbot; else
	// openclaw.json in the state dir (State).
	Config string
	// State is the state dir: $OPENCLAW_STATE_DIR when set; else ~/.openclaw, or the legacy
	// ~/.clawdbot when only that exists.
	State string
	// Extensions is the global plugin root OpenClaw discovers plugin folders in:
	// $OPENCLAW_STATE_DIR/extensions when set; else the config file's dir + /extensions when
	// $OPENCLAW_CONFIG_PATH is set; else ~/.openclaw/extensions.
	Extensions string
}

// ResolvePaths finds OpenClaw's config file, state dir and extensions dir from the environment
// exactly as OpenClaw does. Home is $OPENCLAW_HOME (a leading ~ expanded against $HOME), else
// $HOME, else $USERPROFILE, else the OS's home; a leading ~ in OPENCLAW_STATE_DIR or
// OPENCLAW_CONFIG_PATH means that home, and relative paths are taken from the working dir.
// getenv nil means os.Getenv.
func ResolvePaths(getenv func(string) string) (Paths, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	home, err := openclawHome(env)
	if err != nil {
		return Paths{}, err
	}
	userPath := func(p string) (string, error) {
		if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
			p = home + p[1:]
		}
		return filepath.Abs(p)
	}
	var p Paths
	var stateOverride, configOverride string
	if v := env("OPENCLAW_STATE_DIR"); v != "" {
		if stateOverride, err = userPath(v); err != nil {
			return p, fmt.Errorf("OPENCLAW_STATE_DIR: %w", err)
		}
	}
	if v := env("OPENCLAW_CONFIG_PATH"); v != "" {
		if configOverride, err = userPath(v); err != nil {
			return p, fmt.Errorf("OPENCLAW_CONFIG_PATH: %w", err)
		}
	}
	newDir, legacyDir := filepath.Join(home, ".openclaw"), filepath.Join(home, ".clawdbot")

	switch {
	case stateOverride != "":
		p.State = stateOverride
	case statExists(newDir) || !statExists(legacyDir):
		p.State = newDir
	default:
		p.State = legacyDir
	}

	switch {
	case stateOverride != "":
		p.Extensions = filepath.Join(stateOverride, "extensions")
	case configOverride != "":
		p.Extensions = filepath.Join(filepath.Dir(configOverride), "extensions")
	default:
		p.Extensions = filepath.Join(newDir, "extensions")
	}

	if configOverride != "" {
		p.Config = configOverride
		return p, nil
	}
	var candidates []string
	for _, dir := range []string{stateOverride, newDir, legacyDir} {
		if dir != "" {
			candidates = append(candidates, filepath.Join(dir, "openclaw.json"), filepath.Join(dir, "clawdbot.json"))
		}
	}
	for _, c := range candidates {
		if statExists(c) {
			p.Config = c
			return p, nil
		}
	}
	p.Config = filepath.Join(p.State, "openclaw.json")
	return p, nil
}

// openclawHome is the home dir OpenClaw resolves paths against.
func openclawHome(env func(string) string) (string, error) {
	valid := func(v string) string {
		if v == "undefined" || v == "null" {
			return ""
		}
		return v
	}
	osHome := cmp.Or(valid(env("HOME")), valid(env("USERPROFILE")))
	if osHome == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the home dir OpenClaw uses: set OPENCLAW_HOME or HOME: %w", err)
		}
		osHome = h
	}
	home := valid(env("OPENCLAW_HOME"))
	switch {
	case home == "":
		home = osHome
	case home == "~" || strings.HasPrefix(home, "~/") || strings.HasPrefix(home, `~\`):
		home = osHome + home[1:]
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return "", fmt.Errorf("home dir %s: %w", home, err)
	}
	return abs, nil
}

// statExists reports whether path names anything.
func statExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
