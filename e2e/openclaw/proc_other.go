//go:build !unix

package openclaw

import (
	"os/exec"
	"time"
)

// startGroup bounds the wait for cmd's output after it is killed; without
// process groups only the Gateway itself is killed.
func startGroup(cmd *exec.Cmd) { cmd.WaitDelay = 5 * time.Second }

// terminateGroup kills the Gateway: there is no portable SIGTERM.
func terminateGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// killGroup kills the Gateway.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
