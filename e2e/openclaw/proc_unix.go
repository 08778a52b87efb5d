//go:build unix

package openclaw

import (
	"os/exec"
	"syscall"
	"time"
)

// startGroup makes cmd the leader of a new process group, and makes context
// cancellation kill the whole group (the Gateway and anything it ran: its
// spawn broker, tool and code-mode sub-processes) rather than the Gateway alone.
func startGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
}

// terminateGroup asks cmd's process group to exit.
func terminateGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // ESRCH when nothing is left
}

// killGroup kills whatever is left of cmd's process group.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH when nothing is left
}
