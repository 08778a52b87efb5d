package jsonconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUnedit(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	add := func(root *Object) error {
		servers, err := Child(root, "mcpServers", "mcpServers")
		if err != nil {
			return err
		}
		servers.Set("heirloom", Object1("url", "http://127.0.0.1:7433/mcp"))
		return nil
	}
	remove := func(root *Object) error { RemovePath(root, "mcpServers", "heirloom"); return nil }
	original := "{\n    \"theme\": \"dark\",\n    \"numStartups\": 3\n}\n" // four spaces, the user's order

	t.Run("RoundTrip", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.json")
		if err := os.WriteFile(path, []byte(original), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Edit(path, false, 0o600, t0, add); err != nil {
			t.Fatal(err)
		}
		res, err := Unedit(path, false, t0.Add(time.Second), remove)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != original || res.Restored == "" || res.Backup == "" {
			t.Errorf("after install and uninstall:\n%s\nwant the original bytes\n%s(restored %q, backup %q)", got, original, res.Restored, res.Backup)
		}
		again, err := Unedit(path, false, t0.Add(2*time.Second), remove)
		if err != nil || again.Changed {
			t.Errorf("a second uninstall: changed %v, %v; want nothing to do", again.Changed, err)
		}
	})
	t.Run("ChangedSince", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.json")
		if err := os.WriteFile(path, []byte(original), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Edit(path, false, 0o600, t0, add); err != nil {
			t.Fatal(err)
		}
		if _, err := Edit(path, false, 0o600, t0.Add(time.Second), func(root *Object) error { root.Set("numStartups", 4); return nil }); err != nil {
			t.Fatal(err)
		}
		res, err := Unedit(path, false, t0.Add(2*time.Second), remove)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		want := "{\n    \"theme\": \"dark\",\n    \"numStartups\": 4\n}\n"
		if string(got) != want || res.Restored != "" {
			t.Errorf("uninstall after a change of the user's:\n%s\nwant their change kept, heirloom's entry gone:\n%s", got, want)
		}
	})
	t.Run("MadeByInstall", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.json")
		if _, err := Edit(path, false, 0o600, t0, add); err != nil {
			t.Fatal(err)
		}
		res, err := Unedit(path, false, t0.Add(time.Second), remove)
		if _, statErr := os.Stat(path); err != nil || !res.Removed || !os.IsNotExist(statErr) {
			t.Errorf("a file install made: removed %v, %v, stat %v; want it gone", res.Removed, err, statErr)
		}
	})
	t.Run("ExactNumbers", func(t *testing.T) {
		// A value changed since the install in a digit float64 cannot hold: not the backup's.
		path := filepath.Join(t.TempDir(), "c.json")
		if err := os.WriteFile(path, []byte(`{"n": 12345678901234567890}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Edit(path, false, 0o600, t0, add); err != nil {
			t.Fatal(err)
		}
		if _, err := Edit(path, false, 0o600, t0.Add(time.Second), func(root *Object) error { root.Set("n", json.Number("12345678901234567891")); return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := Unedit(path, false, t0.Add(2*time.Second), remove); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); !strings.Contains(string(got), "12345678901234567891") {
			t.Errorf("the user's number was restored from a stale backup:\n%s", got)
		}
	})
	t.Run("EmptyObjectKept", func(t *testing.T) {
		// The user's file held an empty object remove would prune: it is given back as it was,
		// never deleted.
		path := filepath.Join(t.TempDir(), "[odd] c.json")
		const mine = "{\"mcpServers\": {}}\n"
		if err := os.WriteFile(path, []byte(mine), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Edit(path, false, 0o600, t0, add); err != nil {
			t.Fatal(err)
		}
		res, err := Unedit(path, false, t0.Add(time.Second), remove)
		got, _ := os.ReadFile(path)
		if err != nil || res.Removed || string(got) != mine {
			t.Errorf("removed %v, %v, file %q; want the user's %q back", res.Removed, err, got, mine)
		}
	})
	t.Run("CreatedKeys", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.json")
		if _, err := Edit(path, false, 0o600, t0, func(root *Object) error { root.Set("$schema", "x"); return add(root) }); err != nil {
			t.Fatal(err)
		}
		res, err := Unedit(path, false, t0.Add(time.Second), remove, "$schema")
		if _, statErr := os.Stat(path); err != nil || !res.Removed || !os.IsNotExist(statErr) {
			t.Errorf("a file install made with a $schema: removed %v, %v", res.Removed, err)
		}
	})
	t.Run("DryRun", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.json")
		if _, err := Edit(path, false, 0o600, t0, add); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(path)
		res, err := Unedit(path, true, t0.Add(time.Second), remove)
		after, _ := os.ReadFile(path)
		if err != nil || !res.Changed || string(before) != string(after) {
			t.Errorf("dry run: changed %v, %v, file touched %v", res.Changed, err, string(before) != string(after))
		}
	})
}
