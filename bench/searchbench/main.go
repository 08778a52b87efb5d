// Command searchbench compares heirloom's full-text search with SQLite FTS5 over the same
// transcript turns: load time, disk, peak memory and query latency. Each engine runs in a child
// process of its own, so that peak RSS is its own. See README.md.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runBench(os.Args[2:])
	case "gen":
		err = genCorpus(os.Args[2:])
	case "child":
		err = runChild(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  searchbench run [-size MiB] [-seed N] [-work DIR] [-load-rounds N] [-query-rounds N] [-reps N] [-profile] [-keep]
  searchbench gen [-size MiB] [-seed N] [-o FILE]`)
	os.Exit(2)
}

// genCorpus writes a corpus file and prints its figures.
func genCorpus(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	size := fs.Int("size", 64, "MiB of turn text")
	seed := fs.Uint64("seed", 1, "seed")
	out := fs.String("o", "corpus.jsonl", "output file")
	fixtures := fs.String("fixtures", "../../../shared/fixtures", "the recorded transcripts")
	fs.Parse(args)
	return writeCorpus(*out, int64(*size)<<20, *seed, *fixtures)
}
