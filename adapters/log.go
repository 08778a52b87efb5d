package adapters

// Logger is what the stream clients log through, with a level per line and the details as
// key/value pairs after the message (Info("connected", "protocol", 4)): startup, shutdown,
// connection changes and errors, never one line per event. hashicorp/go-hclog's hclog.Logger
// satisfies it, and main passes one down (named, with the server's URL attached); adapters never
// import hclog themselves.
//
// The levels: Error for what needs the user (the harness refuses heirloom's credentials), Warn for
// what heirloom recovers from on its own but loses time or data over (a connection lost, a resync
// that failed, events the Sink refused), Info for the connection's lifecycle, Debug for bad input
// from the harness, which is skipped and counted in the client's stats.
type Logger interface {
	Debug(msg string, args ...any)
	Info(msg string, args ...any)
	Warn(msg string, args ...any)
	Error(msg string, args ...any)
}
