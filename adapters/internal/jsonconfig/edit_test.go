package jsonconfig_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters/internal/jsonconfig"
)

var now = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// setServer is the change the installers make: one entry under a top-level object.
func setServer(root *jsonconfig.Object) error {
	servers, err := jsonconfig.Child(root, "mcpServers", "mcpServers")
	if err != nil {
		return err
	}
	servers.Set("heirloom", jsonconfig.Object1("url", "http://127.0.0.1:7433/mcp"))
	return nil
}

func TestEdit(t *testing.T) {
	t.Run("KeepsOrderAndIndent", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.json")
		before := "{\n    \"zeta\": 1,\n    \"alpha\": {\"b\": [1, 2.50, \"x&y\"], \"a\": null},\n    \"mcpServers\": {\"other\": {\"url\": \"u\"}}\n}\n"
		if err := os.WriteFile(path, []byte(before), 0o640); err != nil {
			t.Fatal(err)
		}
		res, err := jsonconfig.Edit(path, false, 0o600, now, setServer)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		want := "{\n    \"zeta\": 1,\n    \"alpha\": {\n        \"b\": [\n            1,\n            2.50,\n            \"x&y\"\n        ],\n        \"a\": null\n    },\n    \"mcpServers\": {\n        \"other\": {\n            \"url\": \"u\"\n        },\n        \"heirloom\": {\n            \"url\": \"http://127.0.0.1:7433/mcp\"\n        }\n    }\n}\n"
		if string(got) != want {
			t.Errorf("file:\n%s\nwant:\n%s", got, want)
		}
		if !res.Changed || !res.Exists || res.Backup == "" {
			t.Errorf("result %+v", res)
		}
		if b, _ := os.ReadFile(res.Backup); string(b) != before {
			t.Errorf("backup holds %q", b)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
		}
		again, err := jsonconfig.Edit(path, false, 0o600, now, setServer)
		if err != nil || again.Changed || again.Backup != "" {
			t.Errorf("second edit: %+v %v, want no change", again, err)
		}
	})
	t.Run("Creates", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "new", "c.json")
		res, err := jsonconfig.Edit(path, false, 0o600, now, setServer)
		if err != nil || !res.Changed || res.Exists || res.Backup != "" {
			t.Fatalf("%+v %v", res, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("new file: %v %v", fi, err)
		}
	})
	t.Run("DryRun", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.json")
		res, err := jsonconfig.Edit(path, true, 0o600, now, setServer)
		if err != nil || !res.Changed || !strings.Contains(string(res.After), "heirloom") {
			t.Fatalf("%+v %v", res, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a dry run wrote the file: %v", err)
		}
	})
	t.Run("FollowsSymlink", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "dotfiles.json")
		os.WriteFile(target, []byte(`{"a": 1}`), 0o600)
		link := filepath.Join(dir, "c.json")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := jsonconfig.Edit(link, false, 0o600, now, setServer); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
			t.Error("the symlink was replaced by a file")
		}
		if b, _ := os.ReadFile(target); !strings.Contains(string(b), "heirloom") {
			t.Errorf("target %s", b)
		}
	})
	t.Run("Refuses", func(t *testing.T) {
		for name, tt := range map[string]struct {
			content string
			isJSON5 bool
		}{
			"comments":  {"{\n  // mine\n  \"a\": 1\n}\n", true},
			"trailing":  {`{"a": 1,}`, true},
			"array":     {`[1, 2]`, false},
			"mcpString": {`{"mcpServers": "x"}`, false},
		} {
			path := filepath.Join(t.TempDir(), "c.json")
			os.WriteFile(path, []byte(tt.content), 0o600)
			_, err := jsonconfig.Edit(path, false, 0o600, now, setServer)
			if err == nil || errors.Is(err, jsonconfig.ErrNotStrictJSON) != tt.isJSON5 || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: error %v", name, err)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Errorf("%s: the file changed to %q", name, b)
			}
			if m, _ := filepath.Glob(path + ".bak*"); len(m) > 0 {
				t.Errorf("%s: a backup was made on an error: %v", name, m)
			}
		}
	})
}

// TestEdit_Races: an empty file (a harness mid-rewrite) is refused, not read as {}; a file its
// harness writes while Edit works is read again and the harness's write kept; a BOM is kept.
func TestEdit_Races(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	os.WriteFile(path, nil, 0o600)
	if _, err := jsonconfig.Edit(path, false, 0o600, now, setServer); !errors.Is(err, jsonconfig.ErrEmptyFile) {
		t.Errorf("empty file: %v, want ErrEmptyFile", err)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("the empty file was written: %q", b)
	}

	os.WriteFile(path, []byte(`{"a": 1}`), 0o600)
	calls := 0
	res, err := jsonconfig.Edit(path, false, 0o600, now, func(root *jsonconfig.Object) error {
		calls++
		if calls == 1 { // the harness writes its own change meanwhile
			os.WriteFile(path, []byte(`{"a": 1, "theirs": true}`), 0o600)
		}
		return setServer(root)
	})
	if err != nil || calls != 2 {
		t.Fatalf("edit racing a write: %v after %d attempts", err, calls)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"theirs": true`) || !strings.Contains(string(b), "heirloom") {
		t.Errorf("after the race the file holds %s: want both changes", b)
	}
	if b, _ := os.ReadFile(res.Backup); string(b) != `{"a": 1, "theirs": true}` {
		t.Errorf("backup %q", b)
	}

	always := 0
	os.WriteFile(path, []byte(`{"a": 1}`), 0o600)
	_, err = jsonconfig.Edit(path, false, 0o600, now, func(root *jsonconfig.Object) error {
		always++
		os.WriteFile(path, []byte(fmt.Sprintf(`{"n": %d}`, always)), 0o600)
		return setServer(root)
	})
	if !errors.Is(err, jsonconfig.ErrChanged) {
		t.Errorf("a file that never stops changing: %v, want ErrChanged", err)
	}

	os.WriteFile(path, []byte("\xef\xbb\xbf{\"a\": 1}"), 0o600)
	if _, err := jsonconfig.Edit(path, false, 0o600, now, setServer); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "\xef\xbb\xbf{") {
		t.Errorf("the BOM was dropped: %q", b[:min(len(b), 10)])
	}
}

func TestObjectDelete(t *testing.T) {
	v, err := jsonconfig.Parse([]byte(`{"a":1,"b":2,"c":3}`))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*jsonconfig.Object)
	o.Delete("b")
	o.Delete("zz")
	if got := string(jsonconfig.Encode(o, "")); got != `{"a":1,"c":3}` || o.Len() != 2 {
		t.Errorf("after Delete: %s", got)
	}
}
