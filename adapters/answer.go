package adapters

// Answer is heirloom's answer to one hook call, for a harness's Hooks.Reply to encode: context
// for the model, and whether the action the call is about is refused. The zero Answer adds
// nothing and refuses nothing: the harness's empty reply.
type Answer struct {
	// Context is text for the model; "" for none.
	Context string
	// Deny, when not "", refuses the action the hook call is about (a spawn past heirloom's
	// limits) with this text, which the model reads as the tool call's error. Only a call made
	// before the action (Claude Code's PreToolUse) can refuse it; other replies leave it out.
	Deny string
}
