package kv

// Change is one record a committed write created or changed, as Store.OnCommit reports it:
// exactly one of its fields is set.
type Change struct {
	Session    *SessionChange
	Run        *RunChange
	Checkpoint *Checkpoint // a checkpoint written
}

// SessionChange is a session as it was (Old, when Existed) and as the write left it (New).
type SessionChange struct {
	Old     Session
	Existed bool
	New     Session
}

// RunChange is a run as it was (Old, when Existed) and as the write left it (New).
type RunChange struct {
	Old     Run
	Existed bool
	New     Run
}

// observe reports changes to OnCommit, if set; the caller has committed them and holds s.mu.
func (s *Store) observe(changes []Change) {
	if s.OnCommit != nil && len(changes) > 0 {
		s.OnCommit(changes)
	}
}

// observing reports whether changes are to be collected for OnCommit.
func (s *Store) observing() bool { return s.OnCommit != nil }
