//go:build unix

package proc

import (
	"os/exec"
	"syscall"
	"time"
)

// StartGroup makes cmd, not yet started and made by exec.CommandContext,
// the leader of a new process group, and makes the cancellation of its
// context kill the whole group rather than cmd alone. It bounds the wait
// for cmd's output after the kill to five seconds.
func StartGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
}

// TerminateGroup asks cmd's process group to exit (SIGTERM). It does
// nothing when cmd was not started.
func TerminateGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // ESRCH when nothing is left
	}
}

// KillGroup kills whatever is left of cmd's process group (SIGKILL), cmd
// itself included; after cmd exited, what it left behind. It does nothing
// when cmd was not started.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH when nothing is left
	}
}
