//go:build !unix

package opencode

import (
	"os/exec"
	"time"
)

// startGroup bounds the wait for cmd's output after it is killed; without
// process groups only opencode itself is killed.
func startGroup(cmd *exec.Cmd) { cmd.WaitDelay = 5 * time.Second }

// terminateGroup kills opencode: there is no portable SIGTERM.
func terminateGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// killGroup kills opencode.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
