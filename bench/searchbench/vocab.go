package main

import "strings"

// englishWords are common English words, most frequent first: the prose of prompts and replies
// draws them with a Zipf distribution over this order.
var englishWords = strings.Fields(`
the to of and a in is it that for you this with on be not are as was have I can but
at if we so do or by from will an there what all just now about one when which would
then they need should more like also here up out has no so it's there's let's into only some
use how than other new its been first because don't see make sure check way still time may
change test file code run case call again same each any both after before where why look
fix add already could back right value set update since without while work line instead
through these those then them their our your my over under between next last every
function return error errors function type field method package import struct string
values keys key map list slice pointer nil empty true false found missing wrong broken
works passes fails failing failed passed output input read write open close start stop
build builds built running ran runs tests tested config option options flag default path
directory files name names old new now never always already once twice because reason
problem issue bug cause fixed changes changed change version order count number size length
small large whole part rest single multiple first second third last previous following
above below inside outside before after during between across around against along
I'll I've we'll we're that's it's doesn't isn't can't won't didn't wasn't here's
good better best fine clean simple simpler clear clearer safe safer fast faster slow slower
look looks looked see seen show shows shown try tried trying keep kept keeps leave left
done doing does did make makes made take takes took give gives gave get gets got
want wants wanted think thought know known mean means meant seems seemed expect expected
note notes says said tell told ask asked answer answers point points step steps
plan plans idea approach approaches way ways thing things place places side sides
user users caller callers client clients server servers request requests response responses
message messages event events stream streams record records entry entries item items
loop loops branch branches condition conditions result results state states status
`)

// domainNouns name the things code transcripts talk about; identifiers, paths and package
// names are made of them.
var domainNouns = strings.Fields(`
ledger header session token cache index store batch segment shard replica leader follower
snapshot manifest compaction compactor watermark checkpoint cursor page block frame buffer
queue worker scheduler job task lease lock mutex channel signal timer deadline timeout
retry backoff budget quota limit rate window bucket counter gauge metric histogram span
trace logger config option flag schema migration table column row key value record entry
payload envelope message event stream subscriber publisher broker topic partition offset
consumer producer handler router middleware request response client server conn pool
dialer listener socket packet codec encoder decoder parser lexer token scanner reader
writer file path dir tree node edge graph vertex walker visitor builder factory registry
plugin adapter bridge proxy gateway transport session credential secret digest hash
signature cert policy rule filter matcher selector query plan cost estimator optimizer
executor operator aggregator reducer mapper splitter merger joiner sorter heap stack
arena allocator slab chunk region extent inode volume disk journal wal log tail head
cluster member peer gossip vote term epoch round proposal commit abort rollback ticket
invoice account balance transfer payment charge refund order cart item price currency
tenant user group role permission grant audit report export import archive bundle
`)

// domainVerbs start function names.
var domainVerbs = strings.Fields(`
parse load read write open close flush sync apply commit merge split compact rebuild reindex
encode decode marshal unmarshal validate check verify resolve lookup find scan seek walk
visit build make new init start stop run drain handle dispatch route serve dial accept
register unregister subscribe publish emit collect gather count sum reduce filter sort
rank score match split join trim normalize fold hash sign seal unseal wrap unwrap
retry backoff acquire release lease renew expire evict prune purge reset restore replay
append truncate rotate snapshot checkpoint recover migrate upgrade compare diff patch render
format print log trace measure record report export import fetch pull push send receive
`)

// goKeywordsAndIdents are tokens of Go code that are not the project's own names.
var goStdIdents = strings.Fields(`
ctx context.Context err error nil fmt.Errorf errors.Is errors.As io.Reader io.Writer
bytes.Buffer strings.Builder sync.Mutex sync.WaitGroup time.Duration time.Now time.Since
json.Marshal json.Unmarshal os.Open os.ReadFile filepath.Join binary.BigEndian len cap
append make copy delete close panic recover t.Fatal t.Fatalf t.Errorf t.Run b.Loop
context.WithCancel context.WithTimeout http.Handler http.ResponseWriter http.Request
slices.Sort slices.Contains maps.Keys strconv.Itoa strconv.ParseInt bufio.NewReader
`)

// errorTexts are error messages as programs print them.
var errorTexts = []string{
	"no such file or directory",
	"permission denied",
	"context deadline exceeded",
	"context canceled",
	"connection refused",
	"connection reset by peer",
	"unexpected EOF",
	"i/o timeout",
	"broken pipe",
	"file already closed",
	"invalid argument",
	"resource temporarily unavailable",
	"index out of range",
	"nil pointer dereference",
	"failed to open",
	"failed to decode",
	"checksum mismatch",
	"short buffer",
	"malformed record",
	"lock held by another process",
	"too many open files",
	"address already in use",
	"TLS handshake timeout",
	"certificate signed by unknown authority",
	"database is locked",
	"no space left on device",
	"not found",
	"already exists",
	"version mismatch",
	"deadlock detected",
}

// toolNames are the tools a Claude Code session calls, most frequent first.
var toolNames = []string{"Read", "Bash", "Edit", "Grep", "Glob", "Write", "TodoWrite", "Agent", "WebFetch"}

// userOpeners start a user's prompt.
var userOpeners = []string{
	"fix the failing test in %s",
	"why does %s return an error when the %s is empty?",
	"can you look at %s and tell me what %s does",
	"add a %s to %s so that we stop retrying forever",
	"the build is broken after my last change to %s",
	"refactor %s: it does too much, split the %s part out",
	"write tests for %s, especially the %s edge cases",
	"rename %s to something clearer and update the callers in %s",
	"%s is slow on large inputs, profile it and make it faster",
	"we get a panic in %s in production, here is the trace",
	"review the diff to %s before I commit",
	"explain how %s and %s fit together",
	"make %s handle a %s that was already closed",
	"port %s to the new %s API",
	"document %s in the README",
}

// userShort are short follow-ups.
var userShort = []string{
	"continue", "yes, do that", "looks good, commit it", "run the tests again", "go on",
	"no, keep the old behaviour for now", "that's wrong, the header comes first", "ok",
	"try again with the race detector", "what about the error path?", "ship it",
	"revert that last change", "can you make it shorter?", "good, now the docs",
}
