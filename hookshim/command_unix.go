//go:build unix

package hookshim

import (
	"os/exec"
	"syscall"
)

// killProcessGroup starts cmd in a process group of its own and makes its cancellation kill the
// whole group, so a shell's children die with it.
func killProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
