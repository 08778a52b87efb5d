// Package search is full-text search's logic: how text becomes index terms (Analyzer), how a
// query reads (Parse), and how a query runs over an index (Run): ranking, filters, pages and
// snippets. It stores nothing: the index is kept by package kv, in the batch of the turns it
// indexes, and read through Source, one snapshot per search (engine/search.go joins the two).
//
// # Terms
//
// Text is read in runs: letters, digits, marks and '_' make words, and the connectors
// . / \ : - @ # ' ’ join words into one run; anything else (spaces, brackets, quotes, other
// punctuation, emoji, invalid UTF-8) ends a run. Han, Hiragana and Katakana, written without
// spaces, are runs of their own, indexed as overlapping pairs of characters (東京都 → 東京, 京都).
// For each run the index stores:
//
//   - the parts of each word, case-folded: a word splits at '_', where a lower-case letter or a
//     digit meets an upper-case one, and before the last of several capitals that precede a
//     lower-case letter (parseLedgerHeader, parse_ledger_header, ParseLedgerHeader → parse,
//     ledger, header; HTTPServer → http, server; sha256Sum → sha256, sum). These are the base
//     tokens phrases are matched against (Analyzer.Tokens);
//   - a word of several parts joined, case-folded (parseledgerheader, withcancel);
//   - compounds: two or more words with the connectors between them as written (each word
//     joined and folded) that start at the run's first word or end at its last, and the same
//     within each section of the run between colons (ledger/header.go:42 → ledger/header,
//     ledger/header.go, ledger/header.go:42, header.go:42, go:42, and header.go).
//
// Case folding is Unicode simple folding, plus ß → ss. A term longer than MaxTermLen bytes is
// not stored (never cut), and a run of 64 or more base64 characters with upper case, lower case
// and digits and few separators (base64 data, keys, JWT parts) is not indexed at all.
// Analyzer.Version changes with any rule: the store rebuilds an index made under another.
//
// A query word is looked up as the index stored it (Analyzer.Lookup): as the one term that
// covers it all (WithCancel → withcancel, header.go → header.go), or, when the index keeps no
// such term (f(x), CJK text of three characters or more), as a phrase of its base tokens.
//
// # Queries and ranking
//
// Words are ANDed; `a OR b` takes either and binds tighter than AND; `"a phrase"` wants its base
// tokens next to each other in the turn's text; `-word` and `-"a phrase"` leave turns out;
// `pre*` matches every term that starts with pre (two bytes at least). A query holds at most
// MaxClauses words. Hits are ranked by BM25 (k1 1.2, b 0.75) over the whole scope: each term's
// document frequency and the turns' average length come from every indexed turn, whatever the
// filters, except that a search confined to some sessions (Options.Sessions: a family) counts
// document frequencies over those sessions' turns, the only postings it reads (the number of
// turns and their average length stay the scope's); a prefix's terms
// each count as a term of their own; clauses and matching OR alternatives add up. Equal scores
// go by session, then Seq.
//
// # Pages
//
// A page's cursor holds the first page's collection figures, stamp and document frequencies,
// the last hit handed out, and a hash of the query and its filters. Later pages ignore postings
// stamped after the first page and score with its figures, so pages neither repeat nor skip hits
// while turns are added or deleted; a turn replaced in place keeps its stamp (the store's rule)
// and shows with its new text. A cursor from another query or other filters is refused
// (CursorError).
//
// # Snippets
//
// A hit's snippet is about 200 characters of its text around the window where the most matches
// fall together, on one line, cut between words, with "…" where text was left out and each
// match marked **so** (the part of a word a term matched: context.With**Cancel**). Redaction
// (Options.Clean) runs before any cut, over whole lines around the window and back to the
// BEGIN line of an armored block the window falls in, so that no secret shows in part.
package search
