// Package kv is heirloom's durable store: the records it keeps (Session, Turn, Run,
// Checkpoint) and Store, which keeps them in a Pebble database. Nothing else in heirloom
// imports Pebble or sees a key.
//
// # Data directory
//
// Store.Dir holds heirloom.lock, whose exclusive flock marks the directory as in use by one
// process, and pebble/, the database, opened at PebbleFormatMajorVersion.
//
// # Keys
//
// Every key starts with one record-type byte, then the memory scope, then the record's own
// components. Scopes and ids are NUL-free (checked before any key is built), so NUL separates
// variable-length components; a component that ends a key needs no separator. Numbers are
// 8-byte big-endian, so byte order is the wanted order: Seq ascending, timestamps as UnixNano
// with the sign bit flipped (ascending), recency timestamps bit-inverted (newest first). An id
// written ^id ff (each byte inverted, then 0xff) sorts in exactly reverse byte order; it must
// end the key. All keys are built and parsed in keys.go.
//
//	prefix  components (0 = NUL)                         value           order within prefix
//	m       "schema"                                     JSON number     the schema version
//	m       "probe"                                      JSON string     written by Store.Check
//	m       "index"                                      JSON            the search index's analyzer version and state
//	s       scope 0 id                                   JSON Session    —
//	r       scope 0 ^updated id                          empty           newest UpdatedAt first
//	c       scope 0 parentID 0 created id                empty           oldest CreatedAt first
//	l       scope 0 parentID 0 created childScope 0 id   empty           a parent's children in other scopes, oldest first
//	t       scope 0 id 0 seq                             JSON Turn       Seq ascending
//	i       scope 0 id 0 sourceID                        JSON number     the turn's Seq
//	n       scope 0 id                                   JSON Run        —
//	o       scope 0 ^created id                          empty           newest run first
//	u       scope 0 rootID 0 ^created id                 empty           a root session's runs, newest first
//	v       scope 0 parentID 0 ^created id               empty           the runs a session asked for, newest first
//	q       scope 0 rootID 0 created id                  empty           a root's provisionally paired runs, oldest first
//	p       scope 0 rootID 0 created id                  empty           pending runs (unpaired spawns), oldest first
//	b       scope 0 childID                              run id          the run paired with a sub-agent
//	a       scope 0 created id                           empty           open runs (pending, running), oldest first
//	g       scope 0 parentID 0 id                        empty           a session's open runs (its active children)
//	w       scope 0 ended id                             empty           finished runs holding their full result, oldest end first
//	k       scope 0 id                                   JSON Checkpoint —
//	h       scope 0 sessionID 0 ^created ^id ff          empty           a session's checkpoints, newest first
//	j       scope 0 projectNorm 0 ^created ^id ff        session id      a project's checkpoints, newest first
//	e       scope 0 created id                           session id      a scope's checkpoints, oldest first
//	x       scope 0 term 0 sessionID 0 seq               posting         a term's turns, by session, then Seq
//	y       scope                                        figures         the scope's indexed turns, their length, the last stamp
//	f       scope 0 id                                   JSON []Fact     a session's facts ledger (Store.Ledger), written with its turns
//	d       scope 0 sessionID 0 at n                     JSON Block      the blocks of context delivered to a session, oldest first (MaxBlocks kept)
//
// r is the recency index and c the children-by-parent index; each has exactly one entry per
// session (c only when it has a parent; l, in the parent's scope, instead of c when the parent
// is in another scope, Session.ParentScope), moved in the same batch as the session when UpdatedAt,
// ParentID or CreatedAt change. i is the per-session SourceID → Seq index used to skip turns
// that were stored already (UpsertTurns overwrites through it instead). A run's o and u entries
// are written once, with the run (CreatedAt and RootID never change); its v entry moves with its
// ParentID; its p entry exists exactly while the run is pending, its b entry while it is paired,
// and its q entry while it is paired by a guess not yet confirmed (Provisional), all moved in
// the run's batch. v makes a session's own runs (its digest, its finished sub-agents) cost what
// that session spawned, not what the scope ever recorded; q does the same for the pairing rule
// that looks for earlier guesses. A run's a and g entries exist exactly while it is open (Run.Open),
// its w entry while it is finished with a full result not yet swept; all move in the run's
// batch (putRunLifecycle). g counts a parent's active children for spawn.max_children, a the
// runs the watchdog and the ghost sweep look at, w those the result-retention sweep condenses:
// each costs what it asks for, not what the scope ever recorded.
// A checkpoint's h and e entries, and its j entry when it has a ProjectNorm, are written in its
// batch and deleted with it (PutCheckpoint moves them when it replaces a checkpoint by ID): h
// finds a session's latest checkpoints, j the latest of any session of a project since some
// time (one seek: the range ends at that time), e the checkpoints old enough to prune. Their
// ties on CreatedAt are broken by ID, newest-first indexes by ID descending.
//
// # Search index
//
// With Store.Index set, every stored turn has one x entry per term its text (and tool name)
// holds, written in the batch that stores, replaces or deletes the turn, so index and turns
// agree after any crash. A posting's value is uvarints: the term's count in the turn, the turn's
// length in terms, its role as one byte, its time (varint Unix seconds; a turn the harness gave no time is dated when it was indexed, so time filters keep it) and the
// scope's stamp when it was first indexed (y's counter: search keeps pages stable with it; a turn
// replaced in place, as a streamed message grows, keeps its first stamp). y holds the
// scope's figures for ranking: turns indexed, their lengths summed, the last stamp. m"index"
// records the Indexer's version and whether the index is whole; Open marks a store whose index
// is not whole under this version as due, and Reindex rebuilds it chunk by chunk (index_build.go)
// while writes go on. A schema version is not needed for it: the rebuild is the migration.
//
// # Values
//
// Values are JSON with explicit snake_case names (codec.go), so renaming a Go field does not
// change what is stored. A turn's Seq and a session's index positions live in keys, not values.
// Readers ignore unknown fields.
//
// # Schema and migrations
//
// The key m"schema" holds the schema version of the layout above, SchemaVersion (3). Open reads
// it: a new, empty database is brought up from 0; a store at an older version is upgraded by
// running migrations[v] (migrate.go) for each version v up to SchemaVersion, each in one synced
// batch together with the new version number; a store at a newer version is refused with
// ErrSchemaTooNew, and a database that holds keys but no version is refused as foreign.
// Adding a record type under prefixes that no stored key uses needs no new version: stores
// written before it simply hold none of its keys. The checkpoint keys (k, h, j, e) came that
// way, at version 1. A new index over existing records does need one: version 2 built the v
// and q entries of every stored run, version 3 the a, g and w entries.
//
// Every released schema version and Pebble format has a store kept in testdata/upgrade, which
// every later release must open and read back whole (TestUpgrade_Fixtures): a version bump
// adds its fixture, and the old ones stay (see SchemaVersion).
//
// # Durability
//
// Every Store method that writes does so in one Pebble batch committed with Sync before it
// returns: a turn, its SourceID entry, its session's new TurnCount and the moved index entries
// land together or not at all, with one timestamp (Store.Now) per batch. So does every
// transaction (Store.Update, Tx): a change that must hold together, such as pairing a run with
// its sub-agent session or correcting a provisional pairing, is one Tx, so a crash or an error
// leaves it whole or absent, never half made. Nothing a method has acknowledged can be lost to
// a crash. The exception is a write whose context is marked Unsynced (events read from a
// harness's stream, delivery records): it is committed to the log without waiting for the disk
// and synced by the group sync (groupsync.go) within SyncEvery, plus the fsync then under way;
// a synced write after it syncs it too, the log being in order. Reads use a Pebble snapshot
// when they touch more than one key, so they never see half a write; View reads a session, its
// newest turns and its latest checkpoint from one snapshot.
//
// A full disk is kept away (space.go): under the reserve, writes fail at once with
// ErrDiskFull, and a write the disk refuses anyway frees the ballast file and is retried.
//
// # Counting
//
// Every read goes through a counting wrapper, and Stats reports reads, records decoded by type
// and commits. Tests take the difference around one operation, so a reply whose cost must not
// grow with what the scope holds fails CI the day it starts reading more.
package kv
