package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountSmallDisk mounts a tmpfs of size MiB at a new directory and returns it, unmounted when
// the test ends. It needs root (CI runs as root); elsewhere the test is skipped, or fails under
// HEIRLOOM_E2E_REQUIRE.
func mountSmallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("cannot mount a size-limited tmpfs (root needed): %v %s", err, out)
		if os.Getenv("HEIRLOOM_E2E_REQUIRE") != "" && os.Geteuid() == 0 {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file at path until the filesystem refuses more (ENOSPC).
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// TestServeOnAFullDisk (issue 16, item 3): heirloom's data dir on a real size-limited
// filesystem that another program fills to the last byte. heirloom stays up; hooks are
// answered at once (fail open, {}), nothing of them stored; /readyz and doctor say the disk is
// full; the log says so once, not per request; and when space returns work resumes by itself,
// with nothing acknowledged before lost.
func TestServeOnAFullDisk(t *testing.T) {
	disk := mountSmallDisk(t, 160)
	s := startServe(t, filepath.Join(disk, "data"), baseEnv(t))
	if _, err := os.Stat(filepath.Join(disk, "data", "heirloom.ballast")); err != nil {
		t.Fatalf("no ballast: %v", err)
	}
	before, during, after := "0b8f1d9c-0000-4000-8000-000000000001", "0b8f1d9c-0000-4000-8000-000000000002", "0b8f1d9c-0000-4000-8000-000000000003"
	if status, body := postHook(t, s.url, sessionStart(before, "/work/app")); status != http.StatusOK {
		t.Fatalf("before: %d %s", status, body)
	}

	mark := len(s.logs.String())
	fill(t, filepath.Join(disk, "filler"))
	var slowest time.Duration
	for i := range 20 {
		start := time.Now()
		status, body := postHook(t, s.url, fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":"/work/app","hook_event_name":"UserPromptSubmit","prompt":"prompt %d"}`, during, i))
		slowest = max(slowest, time.Since(start))
		if status != http.StatusOK || strings.TrimSpace(body) != "{}" {
			t.Fatalf("hook %d on a full disk: %d %s, want 200 {}", i, status, body)
		}
		time.Sleep(100 * time.Millisecond) // across the guard's readings
	}
	t.Logf("slowest of 20 hooks on a full disk: %v", slowest)
	if slowest > 2*time.Second {
		t.Errorf("a hook on a full disk took %v: fail open means fast", slowest)
	}
	ready, why := get(t, s.url+"/readyz")
	if ready != http.StatusServiceUnavailable || !strings.Contains(why, "disk full") || !strings.Contains(why, "reserve") {
		t.Fatalf("/readyz on a full disk: %d %s", ready, why)
	}
	stdout, _, code := runCLI(t, append(baseEnv(t), "HEIRLOOM_URL="+s.url), "doctor", "--json")
	if code != 1 || !strings.Contains(stdout, "disk full") {
		t.Errorf("doctor on a full disk: exit %d\n%s", code, stdout)
	}
	if n := strings.Count(s.logs.String(), "writes refused since the last message"); n != 1 {
		t.Errorf("the full disk was logged %d times, want once:\n%s", n, s.logs.String())
	}
	// Nothing else says it again, per call: only the store's lines are above debug.
	for _, line := range strings.Split(s.logs.String()[mark:], "\n") {
		if (strings.Contains(line, `"@level":"warn"`) || strings.Contains(line, `"@level":"error"`)) && !strings.Contains(line, `"@module":"heirloom.store"`) {
			t.Errorf("logged on a full disk: %s", line)
		}
	}
	select {
	case err := <-s.done:
		t.Fatalf("heirloom died on a full disk: %v\n%s", err, s.logs.String())
	default:
	}

	if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for status, _ := get(t, s.url+"/readyz"); status != http.StatusOK; status, _ = get(t, s.url+"/readyz") {
		if time.Now().After(deadline) {
			t.Fatal("not ready 10 s after space returned")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status, body := postHook(t, s.url, sessionStart(after, "/work/app")); status != http.StatusOK {
		t.Fatalf("after: %d %s", status, body)
	}
	_, list := get(t, s.url+"/api/sessions")
	var reply struct {
		Sessions []struct {
			ID      string `json:"id"`
			Prompts int    `json:"prompts"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(list), &reply); err != nil {
		t.Fatalf("%v: %s", err, list)
	}
	var ids []string
	for _, sess := range reply.Sessions {
		ids = append(ids, sess.ID)
		// The guard reads the free space every second: the prompts before its first reading
		// after the disk filled may be stored (the ballast makes room for them), the rest not.
		if sess.ID == during && sess.Prompts > 10 {
			t.Errorf("%d of the 20 prompts on a full disk were stored", sess.Prompts)
		}
	}
	got := strings.Join(ids, " ")
	if !strings.Contains(got, before) || !strings.Contains(got, after) {
		t.Fatalf("sessions after the disk was full: %v, want %s and %s", ids, before, after)
	}
	t.Logf("log:\n%s", s.logs.String())
	if !strings.Contains(s.logs.String(), "writes resume") {
		t.Errorf("the log does not say writes resumed:\n%s", s.logs.String())
	}
}

// get returns GET url's status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
