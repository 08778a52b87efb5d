package codex

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/atomicfile"
	"github.com/heirloom-dev/heirloom/adapters/internal/textdiff"
)

var _ adapters.Uninstaller = Installer{}

// UninstallUsage is the synopsis of `heirloom uninstall codex`.
func (Installer) UninstallUsage() string {
	return "codex [--codex-home DIR] [--dry-run]"
}

// Uninstall takes heirloom's hooks, their trust entries and its MCP server out of Codex's
// config.toml (see Remove), saying what it did on env.Stdout.
func (Installer) Uninstall(_ context.Context, args []string, env adapters.InstallEnv) error {
	var home *string
	dryRun, err := env.ParseFlags("uninstall codex", args, "print the change as a diff; change nothing", func(fs *flag.FlagSet) {
		home = fs.String("codex-home", "", "Codex's home directory, holding config.toml (default: $CODEX_HOME, else ~/.codex)")
	})
	if err != nil {
		return err
	}
	dir, err := codexHome(*home, env.Getenv)
	if err != nil {
		return fmt.Errorf("uninstall codex: %w", err)
	}
	res, err := Remove(dir, dryRun, time.Now())
	if err != nil {
		return err
	}
	const what = "heirloom's hooks, their trust entries and its MCP server"
	switch {
	case !res.Changed:
		fmt.Fprintf(env.Stdout, "codex: no %s in %s\n", "heirloom hooks or MCP server", res.Path)
	case dryRun:
		verb := "would take " + what + " out of"
		switch {
		case res.Restored != "":
			verb = "would restore, as it was before the install (" + res.Restored + "),"
		case res.Removed:
			verb = "would delete (it holds only " + what + ")"
		}
		fmt.Fprintf(env.Stdout, "codex: %s %s\n", verb, res.Path)
		textdiff.Unified(env.Stdout, res.Path, res.Before, res.After)
	case res.Restored != "":
		fmt.Fprintf(env.Stdout, "codex: took %s out of %s: restored it as it was before the install, from %s (the file before: %s)\n", what, res.Path, res.Restored, res.Backup)
	case res.Removed:
		fmt.Fprintf(env.Stdout, "codex: deleted %s, which held only %s (kept as %s)\n", res.Path, what, res.Backup)
	default:
		fmt.Fprintf(env.Stdout, "codex: took %s out of %s (the file before: %s)\n", what, res.Path, res.Backup)
	}
	if res.Changed && !dryRun {
		fmt.Fprintln(env.Stdout, "Codex reads config.toml when it starts: sessions running now keep heirloom's hooks until they end.")
	}
	return nil
}

// RemoveResult says what Remove did (or, with dryRun, would do).
type RemoveResult struct {
	InstallResult
	// Restored is the backup whose bytes were written back: the file as it was before the
	// install, whose value is the file's without heirloom's entries. "" when the file was
	// edited instead.
	Restored string
	// Removed says the file was deleted: it held nothing but heirloom's entries, and no backup
	// says it existed before.
	Removed bool
}

// Remove takes out of the config.toml in codexHome exactly what Install adds: heirloom's hook
// groups (any event), their [hooks.state] trust entries and [mcp_servers.heirloom]. When a
// group of the user's comes after a removed group of the same event, its index moves down, so
// its trust entry is re-keyed to match and it stays trusted. Where it can, the file comes back
// as the user had it: when a backup (<file>.bak-*, the newest first) holds the same TOML value
// as the edited file, that backup's bytes are written back, so an install followed by an
// uninstall gives back the very file; otherwise the edited text is written, so changes made
// since the install stay. A file with no backup that holds nothing else is deleted. The
// current file is backed up first. A missing file, or one with nothing of heirloom's, is left
// alone (Changed false); so is one that is not valid TOML (an error).
func Remove(codexHome string, dryRun bool, now time.Time) (RemoveResult, error) {
	var res RemoveResult
	keyFile, err := keyPath(codexHome)
	if err != nil {
		return res, err
	}
	res.Path = filepath.Join(codexHome, configFile)
	if real, err := filepath.EvalSymlinks(res.Path); err == nil {
		res.Path = real
	}
	for range editAttempts {
		res.Before, err = os.ReadFile(res.Path)
		if errors.Is(err, os.ErrNotExist) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("read %s: %w", res.Path, err)
		}
		res.After, err = planRemove(res.Before, keyFile)
		if err != nil {
			return res, fmt.Errorf("%s: %w", res.Path, err)
		}
		if res.Changed = string(res.After) != string(res.Before); !res.Changed {
			return res, nil
		}
		backups, err := atomicfile.Backups(res.Path)
		if err != nil {
			return res, err
		}
		res.Restored = ""
		for _, b := range backups {
			if old, err := os.ReadFile(b); err == nil && sameText(old, res.After) {
				res.Restored, res.After = b, old
				break
			}
		}
		res.Removed = res.Restored == "" && len(backups) == 0 && sameValue(res.After, nil)
		if res.Removed {
			res.After = nil
		}
		if dryRun {
			return res, nil
		}
		again, err := os.ReadFile(res.Path)
		if err != nil || string(again) != string(res.Before) {
			continue // Codex wrote it meanwhile: read it again
		}
		res.Backup, err = atomicfile.Replace(res.Path, res.Before, res.After, 0o600, now)
		return res, err
	}
	return res, fmt.Errorf("%s: it kept changing while heirloom edited it; try again", res.Path)
}

// planRemove returns src without heirloom's groups, their trust entries and its MCP server,
// the user's later groups' trust entries re-keyed, checked by parsing it again.
func planRemove(src []byte, keyFile string) ([]byte, error) {
	d, err := parseDoc(src)
	if err != nil {
		return nil, fmt.Errorf("not valid TOML, so heirloom leaves it alone; fix it first: %w", err)
	}
	hooks, _ := d.value["hooks"].(map[string]any)
	var edits []edit
	removed := map[string][]int{}
	for event := range hooks {
		if event == "state" {
			continue
		}
		groups := d.groups(event)
		ours := oursIn(groups)
		if len(ours) == 0 {
			continue
		}
		_, headers, err := d.groupsWithHeaders(event)
		if err != nil {
			return nil, err
		}
		for _, i := range ours {
			h := headers[i]
			edits = append(edits, removal(src, d.exprs[h].start, d.tableEnd(h)))
		}
		removed[event] = ours
	}
	rekeyed, err := d.rekey(keyFile, removed)
	if err != nil {
		return nil, err
	}
	edits = append(edits, rekeyed...)
	servers, _ := d.value["mcp_servers"].(map[string]any)
	if _, ok := servers[MCPServerName]; ok {
		h := d.header("mcp_servers", MCPServerName)
		if h < 0 {
			return nil, fmt.Errorf("mcp_servers.%s is not written as a [mcp_servers.%s] table; heirloom cannot take it out: remove it by hand", MCPServerName, MCPServerName)
		}
		edits = append(edits, removal(src, d.exprs[h].start, d.tableEnd(h)))
	}
	after, err := apply(src, edits)
	if err != nil {
		return nil, err
	}
	d2, err := parseDoc(after)
	if err != nil {
		return nil, fmt.Errorf("taking heirloom out would not leave valid TOML (nothing written): %w", err)
	}
	for event := range removed {
		if len(oursIn(d2.groups(event))) != 0 || len(d2.groups(event)) != len(d.groups(event))-len(removed[event]) {
			return nil, fmt.Errorf("taking heirloom's hook out of %s did not come out as planned (nothing written)", event)
		}
	}
	return after, nil
}
