//go:build !unix

package hookshim

import "os/exec"

// killProcessGroup leaves cmd as it is: without process groups, cancellation kills the command
// alone.
func killProcessGroup(cmd *exec.Cmd) {}
