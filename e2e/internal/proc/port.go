package proc

import (
	"fmt"
	"net"
)

// FreePort returns a loopback TCP port that was free a moment ago, for a
// server that cannot pick one itself. Another process may take it before
// the server listens: the caller detects that and reports a
// *PortTakenError.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// PortTakenError reports a start that failed because its port was taken.
type PortTakenError struct {
	Port int
}

func (e *PortTakenError) Error() string { return fmt.Sprintf("port %d already in use", e.Port) }
