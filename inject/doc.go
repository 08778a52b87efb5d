// Package inject assembles the deterministic text blocks heirloom hands to a harness: the
// inherited block for a sub-agent (InheritedBlock), the objective reinforcement after a
// compaction (ObjectiveBlock) and the recovered checkpoint at session start or resume
// (RecoveredBlock), joined under the harness's cap (Join). A checkpoint's digest is built from
// stored records by BuildDigest and rendered into these blocks by RenderDigest. A sub-agent's
// result is cast (CastRun: its header, its result condensed at level 1 or 3, or an LLM's
// level-2 summary made elsewhere, and its footer) wherever it is surfaced: in the objective
// reinforcement, the recovered block, and the runs API.
//
// Everything here is a pure function: stored records, a budget and (where a block needs one) the
// current time go in, a string comes out. Nothing reads a clock, a file, the network or a store,
// and no output depends on map iteration order, so the same input always gives the same bytes.
//
// Budgets are counted the way the harness counts them: Claude Code measures additionalContext
// with JavaScript string length, in UTF-16 code units (see Len). Every budget in this package is
// in those units.
//
// Every block is redacted (see Redact) before it is measured or cut, so a cut can never expose the
// middle of a secret that a whole-text redaction would have caught.
//
// Invalid UTF-8 in any input is replaced, byte for byte, with U+FFFD in every block and in every
// string a cut returns; a harness's JSON encoder would do the same, and the UTF-16 length is
// unchanged by it.
package inject
