//go:build !unix

package claude

import (
	"os/exec"
	"time"
)

// startGroup bounds the wait for cmd's output after it is killed; without
// process groups only claude itself is killed on cancellation.
func startGroup(cmd *exec.Cmd) { cmd.WaitDelay = 5 * time.Second }

// killGroup is a no-op without process groups.
func killGroup(*exec.Cmd) {}
