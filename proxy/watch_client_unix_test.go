//go:build unix

package proxy_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/heirloom-dev/heirloom/proxy"
)

// TestClientWatchNotRunning: nothing listening at the URL is a NotRunningError saying to start
// heirloom.
func TestClientWatchNotRunning(t *testing.T) {
	c := &proxy.Client{URL: "http://" + refusedAddr(t)}
	err := c.Watch(t.Context(), proxy.WatchOptions{}, nil)
	var nr *proxy.NotRunningError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "heirloom serve") {
		t.Errorf("got %v, want a NotRunningError", err)
	}
}

// refusedAddr returns a loopback address that refuses connections until the end of the test:
// its port is bound but not listening, so no other test can listen there meanwhile (a port
// closed after use could be taken by a test running in parallel).
func refusedAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
