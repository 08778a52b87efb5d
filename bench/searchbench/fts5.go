package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver, with FTS5
)

// fts5File is the database file in an FTS5 store's directory.
const fts5File = "turns.db"

// fts5Schema is the comparison's table: the same indexed text as heirloom's (tool name and
// text), the unicode61 tokenizer with its defaults (case-folded, diacritics removed, every
// character that is not a letter, digit or private-use character separates tokens: it has no
// notion of camelCase, snake_case or paths), and the turn's session, seq, role and time stored
// beside it unindexed. Sessions have a table of their own, as heirloom's do.
const fts5Schema = `
CREATE VIRTUAL TABLE turns USING fts5(text, session UNINDEXED, seq UNINDEXED, role UNINDEXED, at UNINDEXED, tokenize = 'unicode61');
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent TEXT, harness TEXT, project TEXT, title TEXT, objective TEXT, created INTEGER);
CREATE INDEX sessions_parent ON sessions(parent);
`

// fts5Query is what a search asks of SQLite: the 20 best turns by bm25 (FTS5's rank, which
// sorts the matches inside the virtual table), each with a snippet of up to 32 tokens around its
// best match (matches marked **so**, cuts marked …), then their sessions' descriptions, which a
// hit carries in heirloom's API too.
const fts5Query = `
SELECT t.session, t.seq, t.score, t.snip, s.harness, s.project, s.title FROM (
  SELECT session, seq, role, at, rank AS score, snippet(turns, 0, '**', '**', '…', 32) AS snip
  FROM turns WHERE turns MATCH ?1 ORDER BY rank LIMIT 20
) AS t JOIN sessions AS s ON s.id = t.session`

// openFTS5 opens (creating when asked) the database in dir: WAL journal with synchronous=FULL,
// so that a commit is on disk before it returns, as heirloom's Sync commits are; one
// connection.
func openFTS5(dir string, create bool) (*sql.DB, error) {
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	dsn := "file:" + filepath.Join(dir, fts5File) + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	if create {
		if _, err := db.Exec(fts5Schema); err != nil {
			db.Close()
			return nil, fmt.Errorf("create schema: %w", err)
		}
	}
	return db, nil
}

// loadFTS5 stores the corpus as heirloom's load does: each session in its own commit, each
// exchange's turns in one transaction.
func loadFTS5(ctx context.Context, db *sql.DB, corpus string) (time.Duration, loadCounts, error) {
	var spent time.Duration
	var n loadCounts
	insSession, err := db.PrepareContext(ctx, `INSERT INTO sessions (id, parent, harness, project, title, objective, created) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return 0, n, err
	}
	defer insSession.Close()
	insTurn, err := db.PrepareContext(ctx, `INSERT INTO turns (text, session, seq, role, at) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return 0, n, err
	}
	defer insTurn.Close()
	seqs := map[string]int64{}
	_, err = readCorpus(corpus, func(rec corpusRecord) error {
		if rec.Session != nil {
			cs := rec.Session
			start := time.Now()
			_, err := insSession.ExecContext(ctx, cs.ID, cs.Parent, cs.Harness, cs.Project, cs.Title, cs.Objective, cs.Start)
			spent += time.Since(start)
			n.Sessions++
			return err
		}
		for _, t := range rec.Turns {
			n.Bytes += int64(len(t.indexedText()))
		}
		n.Batches++
		start := time.Now()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		stmt := tx.StmtContext(ctx, insTurn)
		for _, t := range rec.Turns {
			seq := seqs[rec.ID]
			seqs[rec.ID] = seq + 1
			if _, err := stmt.ExecContext(ctx, t.indexedText(), rec.ID, seq, t.Role, t.At); err != nil {
				tx.Rollback()
				return err
			}
			n.Turns++
		}
		err = tx.Commit()
		spent += time.Since(start)
		return err
	})
	return spent, n, err
}

// checkpointFTS5 moves the WAL into the database file and truncates it.
func checkpointFTS5(db *sql.DB) error {
	_, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// compactFTS5 merges the FTS5 index's segments into one ('optimize'), checkpoints, and
// rebuilds the file without free pages (VACUUM).
func compactFTS5(db *sql.DB) error {
	for _, q := range []string{`INSERT INTO turns(turns) VALUES('optimize')`, `PRAGMA wal_checkpoint(TRUNCATE)`, `VACUUM`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// fts5Search runs the comparison query and reads every row.
func fts5Search(ctx context.Context, stmt *sql.Stmt, q string) ([]hitSummary, error) {
	rows, err := stmt.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []hitSummary
	for rows.Next() {
		var h hitSummary
		var harness, project, title string
		if err := rows.Scan(&h.Session, &h.Seq, &h.Score, &h.Snippet, &harness, &project, &title); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// fts5Count counts the turns a query matches (untimed, for the report).
func fts5Count(ctx context.Context, db *sql.DB, q string) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE turns MATCH ?`, q).Scan(&n)
	return n, err
}
