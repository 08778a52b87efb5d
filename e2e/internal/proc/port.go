package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

// freePort returns a loopback TCP port that was free a moment ago, for a
// server that cannot pick one itself. Another process may take it before
// the server listens: the caller detects that and reports a
// *portTakenError.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// portTakenError reports a start that failed because its port was taken.
type portTakenError struct{ port int }

func (e *portTakenError) Error() string { return fmt.Sprintf("port %d already in use", e.port) }

// Attempts of startOnPort: on a new free port, and on a fixed port that is
// taken (a killed server's may take a moment to free), how often and how far
// apart.
const (
	freePortAttempts  = 3
	fixedPortAttempts = 10
	fixedPortRetry    = 500 * time.Millisecond
)

// startOnPort calls start with port, or with a free one (freePort) when port
// is 0, until start succeeds. A start that fails with a *portTakenError is
// tried again: on a new free port, three attempts in all; on a fixed port,
// the same port every half second while deadline has not passed, ten
// attempts in all, never another. Each retry is logged to tb as "name:
// error; retrying ...". startOnPort returns start's last error, or ctx's
// cause when ctx ends while it waits.
func startOnPort(tb testing.TB, ctx context.Context, name string, port int, deadline time.Time, start func(port int) error) error {
	for attempt := 1; ; attempt++ {
		p := port
		if p == 0 {
			var err error
			if p, err = freePort(); err != nil {
				return err
			}
		}
		err := start(p)
		var taken *portTakenError
		switch {
		case err == nil || !errors.As(err, &taken):
			return err
		case port == 0 && attempt < freePortAttempts:
			tb.Logf("%s: %v; retrying on another port", name, err)
		case port != 0 && attempt < fixedPortAttempts && time.Now().Before(deadline):
			tb.Logf("%s: %v; retrying on the same port", name, err)
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(fixedPortRetry):
			}
		default:
			return err
		}
	}
}
