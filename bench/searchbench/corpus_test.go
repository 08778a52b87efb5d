package main

import (
	"bytes"
	"os"
	"testing"
)

const testFixtures = "../../../shared/fixtures"

func genBytes(t *testing.T, size int64, seed uint64) []byte {
	t.Helper()
	if _, err := os.Stat(testFixtures); err != nil {
		t.Skipf("no recorded transcripts at %s", testFixtures)
	}
	var b bytes.Buffer
	if _, err := generateCorpus(&b, size, seed, testFixtures); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The same seed gives the same corpus, and a larger corpus starts with the smaller one's
// records: the 64 MiB stores hold the first part of the 256 MiB ones.
func TestCorpusDeterministic(t *testing.T) {
	a := genBytes(t, 1<<20, 7)
	if b := genBytes(t, 1<<20, 7); !bytes.Equal(a, b) {
		t.Fatal("two corpora of one seed differ")
	}
	if c := genBytes(t, 1<<20, 8); bytes.Equal(a, c) {
		t.Fatal("two seeds gave the same corpus")
	}
	big := genBytes(t, 2<<20, 7)
	_, small, _ := bytes.Cut(a, []byte("\n")) // the header names the size
	_, rest, _ := bytes.Cut(big, []byte("\n"))
	if !bytes.HasPrefix(rest, small) {
		t.Fatal("the 2 MiB corpus does not start with the 1 MiB one")
	}
}

// Turns are read back as written, and each session's record comes before its turns.
func TestReadCorpus(t *testing.T) {
	data := genBytes(t, 512<<10, 1)
	f := t.TempDir() + "/c.jsonl"
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sessions := map[string]bool{}
	var turns int
	var text int64
	hdr, err := readCorpus(f, func(rec corpusRecord) error {
		if rec.Session != nil {
			sessions[rec.Session.ID] = true
			return nil
		}
		if !sessions[rec.ID] {
			t.Fatalf("turns of %s before its session", rec.ID)
		}
		for _, tt := range rec.Turns {
			turns++
			text += int64(len(tt.indexedText()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Seed != 1 || hdr.Fixtures == 0 || len(sessions) < 2 || turns == 0 || text < 512<<10 {
		t.Fatalf("header %+v, %d sessions, %d turns, %d bytes", hdr, len(sessions), turns, text)
	}
}

func TestSplitClauses(t *testing.T) {
	got := splitClauses(`ledger -test "failed to open" timeout OR deadline compact*`)
	want := []clause{{alts: []string{"ledger"}}, {not: true, alts: []string{"test"}}, {alts: []string{`"failed to open"`}}, {alts: []string{"timeout", "deadline"}}, {alts: []string{"compact*"}}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].not != want[i].not || len(got[i].alts) != len(want[i].alts) || got[i].alts[0] != want[i].alts[0] || got[i].alts[len(got[i].alts)-1] != want[i].alts[len(want[i].alts)-1] {
			t.Fatalf("clause %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
