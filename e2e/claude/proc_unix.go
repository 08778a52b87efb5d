//go:build unix

package claude

import (
	"os/exec"
	"syscall"
	"time"
)

// startGroup makes cmd the leader of a new process group, and makes context
// cancellation kill the whole group (claude, its hooks and their children)
// rather than claude alone.
func startGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
}

// killGroup kills whatever is left of cmd's process group after it exited.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH when nothing is left
	}
}
