// Package proc runs the harness processes of the e2e drivers (packages
// claude, opencode and openclaw) and prepares what they read.
//
//   - Each process leads a process group of its own (StartGroup), so that
//     cancelling it, or TerminateGroup and KillGroup, reaches everything it
//     started: hooks, tool shells, helper processes. Without process groups
//     (not unix) only the process itself is killed.
//   - A long-running server (Start) has its stdout and stderr read line by
//     line into a Tail, the last MiB kept for failure messages; Stop and Kill
//     end it, WaitReady polls it until it answers.
//   - Its environment is built as a map and handed over as sorted
//     KEY=VALUE pairs (Environ), with a test's overrides applied (Override)
//     and every stray HTTP(S) request sent to a loopback stand-in (SetProxy).
//   - FreePort picks a loopback port for a server that cannot pick its own;
//     a start that loses it reports a *PortTakenError. WriteJSON writes a
//     harness's config files.
package proc
