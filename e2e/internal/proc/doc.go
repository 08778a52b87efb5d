// Package proc runs the harness processes of the e2e drivers (packages
// claude, opencode and openclaw) and prepares what they read.
//
//   - Each process leads a process group of its own (StartGroup), so that
//     cancelling it, or TerminateGroup and KillGroup, reaches everything it
//     started: hooks, tool shells, helper processes. Without process groups
//     (not unix) only the process itself is killed.
//   - A long-running harness server is a Server: Start runs it as a Launch
//     says (the command, a free or fixed port, the readiness check, how a
//     taken port shows), retries a start that lost its port, keeps the last
//     MiB of its output for failure messages (Logs), and stops it when the
//     test ends; Close and Kill stop it earlier.
//   - Its environment is built as a map and handed over as sorted
//     KEY=VALUE pairs (Environ), with a test's overrides applied (Override)
//     and every stray HTTP(S) request sent to a loopback stand-in (SetProxy,
//     ProxyFor). WriteJSON writes a harness's config files.
package proc
