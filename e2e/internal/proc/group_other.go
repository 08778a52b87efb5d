//go:build !unix

package proc

import (
	"os/exec"
	"time"
)

// StartGroup bounds the wait for cmd's output after it is killed to five
// seconds; without process groups only cmd itself is killed.
func StartGroup(cmd *exec.Cmd) { cmd.WaitDelay = 5 * time.Second }

// TerminateGroup kills cmd: there is no portable SIGTERM. It does nothing
// when cmd was not started.
func TerminateGroup(cmd *exec.Cmd) { KillGroup(cmd) }

// KillGroup kills cmd. It does nothing when cmd was not started.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill() // os.ErrProcessDone once it exited
	}
}
