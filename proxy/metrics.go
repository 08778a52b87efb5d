package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/engine"
)

// Outcomes of a call forwarded to an upstream hook target: the outcome label of
// heirloom_upstream_requests_total.
const (
	OutcomeOK          = "ok"          // a usable reply, merged with heirloom's context
	OutcomeUnreachable = "unreachable" // no connection, or the connection failed mid-reply
	OutcomeTimeout     = "timeout"     // no complete reply within the upstream's timeout
	OutcomeStatus      = "status"      // a status other than 2xx
	OutcomeInvalid     = "invalid"     // a reply Merge refuses (invalid JSON or UTF-8)
	OutcomeOversized   = "oversized"   // a reply over claudecode.MaxUpstreamBytes
)

// outcomes lists every outcome, for pre-creating the counter's series.
var outcomes = []string{OutcomeOK, OutcomeUnreachable, OutcomeTimeout, OutcomeStatus, OutcomeInvalid, OutcomeOversized}

// Sources and outcomes of heirloom_adapter_events_total: where an event came from, and what
// became of it.
const (
	sourceHook   = "hook"   // a hook call (POST /hooks/{harness} from a hook or the shim)
	sourcePlugin = "plugin" // an event a harness's plugin posted

	outcomeAccepted  = "accepted"  // decoded and applied (an event of an unknown kind is ignored)
	outcomeMalformed = "malformed" // could not be decoded: answered 400, never retried
	outcomeRefused   = "refused"   // not taken: the body was over the size limit
	outcomeFailed    = "failed"    // decoded, but the engine failed or ran past the hook's deadline
)

// metrics are the server's Prometheus collectors. No label holds a session id: every label
// value comes from a fixed set (harness names from the registry, outcomes, event names only
// for events the adapter knows, the configured addresses of the followed harnesses).
type metrics struct {
	upstream *prometheus.CounterVec   // heirloom_upstream_requests_total{harness, outcome}
	events   *prometheus.CounterVec   // heirloom_adapter_events_total{harness, source, outcome}
	hooks    *prometheus.HistogramVec // heirloom_hook_duration_seconds{harness, event}
	feed     *prometheus.CounterVec   // heirloom_feed_disconnects_total{reason}
}

// NamedStream is a stream client, with the harness it follows and the address it follows it
// at, for its metrics.
type NamedStream struct {
	Harness string
	Target  string // the harness's address as configured (no credentials)
	Stream  adapters.Stream
}

// newMetrics registers the server's collectors with reg, the stream clients' counters, the
// engine's spawn refusals and the live feed's among them. A collector already registered there (by another Server on the same
// registry) is shared.
func newMetrics(reg prometheus.Registerer, streams []NamedStream, eng *engine.Engine) (*metrics, error) {
	upstream, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "heirloom_upstream_requests_total",
		Help: "Hook calls forwarded to an upstream hook target, by harness and outcome (ok, unreachable, timeout, status, invalid, oversized). Every outcome but ok replied with heirloom's context alone.",
	}, []string{"harness", "outcome"}))
	if err != nil {
		return nil, err
	}
	ec, err := register(reg, &eventsCollector{
		events:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: eventsName, Help: eventsHelp}, eventsLabels),
		streams: streams,
	})
	if err != nil {
		return nil, err
	}
	events := ec.events
	hooks, err := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "heirloom_hook_duration_seconds",
		Help:    "Time from a hook call's arrival to heirloom's reply, by harness and event (other: an event the adapter does not know).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"harness", "event"}))
	if err != nil {
		return nil, err
	}
	if _, err := register(reg, &spawnCollector{engine: eng}); err != nil {
		return nil, err
	}
	if _, err := register(reg, &engineCollector{engine: eng}); err != nil {
		return nil, err
	}
	// Every series of a registered harness shows from the start, at 0: a dashboard and an
	// alert see a quiet harness as 0, not as absent.
	for _, h := range eng.Harnesses.All() {
		if h.Hooks != nil {
			for _, o := range outcomes {
				upstream.WithLabelValues(h.Name, o)
			}
		}
		for _, src := range []string{sourceHook, sourcePlugin} {
			for _, o := range []string{outcomeAccepted, outcomeMalformed, outcomeRefused, outcomeFailed} {
				ec.events.WithLabelValues(h.Name, src, o)
			}
		}
	}
	fc, err := register(reg, &feedCollector{
		feed: eng.Feed,
		disconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "heirloom_feed_disconnects_total",
			Help: "Live feed (GET /api/events) connections that ended, by reason: client (it closed or went away), slow (dropped for falling behind), unresponsive (no pong, or a write timed out), shutdown.",
		}, []string{"reason"}),
	})
	if err != nil {
		return nil, err
	}
	for _, r := range feedReasons { // every series shows from the start, at 0
		fc.disconnects.WithLabelValues(r)
	}
	return &metrics{upstream: upstream, events: events, hooks: hooks, feed: fc.disconnects}, nil
}

// The live feed's metrics, read from the engine's Feed when scraped.
var (
	feedSubscribers = prometheus.NewDesc("heirloom_feed_subscribers", "Subscribers of the live event feed now: GET /api/events clients, plus heirloom's own level-2 condenser (one, while condense.url is set).", nil, nil)
	feedSent        = prometheus.NewDesc("heirloom_feed_events_sent_total", "Events handed to live feed subscribers, summed over subscribers (the condenser's included).", nil, nil)
	feedDropped     = prometheus.NewDesc("heirloom_feed_dropped_total", "Live feed subscribers dropped for falling behind: the feed never waits for one.", nil, nil)
)

// feedCollector serves the live feed's metrics: the engine's Feed counters, and the
// connections the server closed, by reason.
type feedCollector struct {
	feed        *engine.Feed
	disconnects *prometheus.CounterVec
}

func (c *feedCollector) Describe(ch chan<- *prometheus.Desc) {
	c.disconnects.Describe(ch)
	ch <- feedSubscribers
	ch <- feedSent
	ch <- feedDropped
}

func (c *feedCollector) Collect(ch chan<- prometheus.Metric) {
	c.disconnects.Collect(ch)
	if c.feed == nil {
		return
	}
	st := c.feed.Stats()
	ch <- prometheus.MustNewConstMetric(feedSubscribers, prometheus.GaugeValue, float64(st.Subscribers))
	ch <- prometheus.MustNewConstMetric(feedSent, prometheus.CounterValue, float64(st.Sent))
	ch <- prometheus.MustNewConstMetric(feedDropped, prometheus.CounterValue, float64(st.Dropped))
}

// heirloom_spawn_refused_total, read from the engine's counters when scraped.
var spawnRefused = prometheus.NewDesc("heirloom_spawn_refused_total",
	"Spawns over a spawn limit, by harness, limit (max_depth, max_children) and enforced (false: spawn.mode observe let it go ahead). A call asked about again counts once.",
	[]string{"harness", "limit", "enforced"}, nil)

// spawnCollector serves the engine's spawn refusals (engine.Engine.SpawnRefusals).
type spawnCollector struct{ engine *engine.Engine }

func (c *spawnCollector) Describe(ch chan<- *prometheus.Desc) { ch <- spawnRefused }

func (c *spawnCollector) Collect(ch chan<- prometheus.Metric) {
	if c.engine == nil {
		return
	}
	for _, r := range c.engine.SpawnRefusals() {
		ch <- prometheus.MustNewConstMetric(spawnRefused, prometheus.CounterValue, float64(r.Count), r.Harness, r.Limit, strconv.FormatBool(r.Enforced))
	}
}

// feedClosed counts a live feed connection that ended for reason.
func (m *metrics) feedClosed(reason string) {
	m.feed.WithLabelValues(reason).Inc()
}

// heirloom_adapter_events_total counts hook and plugin events as they are served, and the
// stream clients' events from their own counters (source stream): one metric, one collector.
const (
	eventsName = "heirloom_adapter_events_total"
	eventsHelp = "Events each adapter received, by harness, source (hook, plugin, stream) and outcome: accepted, malformed (could not be decoded), refused (not taken: over the size limit; for a stream, a connection dropped over a frame it could not take), failed (the engine failed, refused it or ran past the hook's deadline)."
)

var eventsLabels = []string{"harness", "source", "outcome"}

// eventsDesc describes the stream clients' series of heirloom_adapter_events_total.
var eventsDesc = prometheus.NewDesc(eventsName, eventsHelp, eventsLabels, nil)

// Descriptions of the stream clients' own metrics, by harness and target.
var (
	streamLabels       = []string{"harness", "target"}
	streamConnected    = prometheus.NewDesc("heirloom_stream_connected", "1 while heirloom's connection to a followed harness (OpenCode server, OpenClaw Gateway) is up.", streamLabels, nil)
	streamConnects     = prometheus.NewDesc("heirloom_stream_connects_total", "Connections made to a followed harness, the first included.", streamLabels, nil)
	streamReconnects   = prometheus.NewDesc("heirloom_stream_reconnects_total", "Connections made to a followed harness after the first.", streamLabels, nil)
	streamFrames       = prometheus.NewDesc("heirloom_stream_frames_total", "Frames received from a followed harness, keepalives included.", streamLabels, nil)
	streamIdle         = prometheus.NewDesc("heirloom_stream_idle_timeouts_total", "Connections to a followed harness dropped because nothing arrived for the idle window.", streamLabels, nil)
	streamResyncs      = prometheus.NewDesc("heirloom_stream_resyncs_total", "Resyncs that read a followed harness's sessions back after a connect.", streamLabels, nil)
	streamResyncErrors = prometheus.NewDesc("heirloom_stream_resync_errors_total", "Requests of a resync that failed (retried later).", streamLabels, nil)
)

// eventsCollector serves heirloom_adapter_events_total and the stream clients' metrics.
type eventsCollector struct {
	events  *prometheus.CounterVec
	streams []NamedStream
}

func (c *eventsCollector) Describe(ch chan<- *prometheus.Desc) {
	c.events.Describe(ch)
	for _, d := range []*prometheus.Desc{streamConnected, streamConnects, streamReconnects, streamFrames, streamIdle, streamResyncs, streamResyncErrors} {
		ch <- d
	}
}

func (c *eventsCollector) Collect(ch chan<- prometheus.Metric) {
	c.events.Collect(ch)
	if len(c.streams) == 0 {
		return
	}
	// Several clients of one harness (OpenCode servers) add up in the events metric.
	type key struct{ harness, outcome string }
	sums := map[key]int64{}
	for _, s := range c.streams {
		st := s.Stream.StreamStats()
		sums[key{s.Harness, outcomeAccepted}] += st.Events
		sums[key{s.Harness, outcomeMalformed}] += st.Malformed
		sums[key{s.Harness, outcomeRefused}] += st.Dropped
		sums[key{s.Harness, outcomeFailed}] += st.SinkErrors
		connected := 0.0
		if st.Connected {
			connected = 1
		}
		labels := []string{s.Harness, s.Target}
		ch <- prometheus.MustNewConstMetric(streamConnected, prometheus.GaugeValue, connected, labels...)
		for d, v := range map[*prometheus.Desc]int64{streamConnects: st.Connects, streamReconnects: st.Reconnects, streamFrames: st.Frames,
			streamIdle: st.IdleTimeouts, streamResyncs: st.Resyncs, streamResyncErrors: st.ResyncErrors} {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
		}
	}
	for k, v := range sums {
		ch <- prometheus.MustNewConstMetric(eventsDesc, prometheus.CounterValue, float64(v), k.harness, "stream", k.outcome)
	}
}

// register registers c with reg, or returns the equal collector registered before.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			return c, err
		}
		existing, ok := already.ExistingCollector.(C)
		if !ok {
			return c, err
		}
		return existing, nil
	}
	return c, nil
}

// event counts one event of harness from source with outcome.
func (m *metrics) event(harness, source, outcome string) {
	m.events.WithLabelValues(harness, source, outcome).Inc()
}

// hookDone observes how long the hook call ev of harness took.
func (m *metrics) hookDone(harness string, ev adapters.Event, d time.Duration) {
	name := ev.Name
	if ev.Kind == adapters.KindUnknown || name == "" {
		name = "other"
	}
	m.hooks.WithLabelValues(harness, name).Observe(d.Seconds())
}

// handleMetrics serves the registry in the Prometheus text format.
func (s *Server) handleMetrics() http.Handler {
	return promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{
		ErrorLog:      promLogger{s},
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// promLogger passes promhttp's errors to the server's logger.
type promLogger struct{ s *Server }

func (l promLogger) Println(v ...any) { l.s.Logger.Error("serve metrics", "error", fmt.Sprint(v...)) }

// The engine's own counts and the store's figures, read when scraped.
var (
	blocksDelivered = prometheus.NewDesc("heirloom_blocks_delivered_total", "Blocks of context delivered to sessions (the text handed to the harness, answered in time), by harness and block: inherited, reinforcement, recovered, compaction (the objective a plugin hands a compaction summary).", []string{"harness", "block"}, nil)
	blockChars      = prometheus.NewDesc("heirloom_block_chars", "Sizes of the blocks delivered, in the harness's characters (UTF-16 units; the cap is 9,500 by default), by harness and block.", []string{"harness", "block"}, nil)
	runsEnded       = prometheus.NewDesc("heirloom_runs_ended_total", "Sub-agent runs that ended, by harness and end reason: completed, failed, killed, watchdog_timeout, ghost_sweep.", []string{"harness", "end_reason"}, nil)
	storeBytes      = prometheus.NewDesc("heirloom_store_bytes", "The store's files on disk (Pebble's, the WAL included), search index included.", nil, nil)
	storeCompacts   = prometheus.NewDesc("heirloom_store_compactions_total", "Compactions of the store since the sidecar started.", nil, nil)
	indexVersion    = prometheus.NewDesc("heirloom_index_version", "The search index's analyzer version; 0 without an index.", nil, nil)
	indexBuilding   = prometheus.NewDesc("heirloom_index_building", "1 while the search index is being rebuilt (searches see the turns indexed so far).", nil, nil)
	indexRebuild    = prometheus.NewDesc("heirloom_index_rebuild_turns", "Turns a running index rebuild has indexed (state done) and has to index (state total).", []string{"state"}, nil)
)

// engineCollector serves the engine's counts (blocks delivered, runs ended) and the store's
// size, compactions and search index state.
type engineCollector struct{ engine *engine.Engine }

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{blocksDelivered, blockChars, runsEnded, storeBytes, storeCompacts, indexVersion, indexBuilding, indexRebuild} {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	if c.engine == nil {
		return
	}
	for _, d := range c.engine.DeliveryStats() {
		ch <- prometheus.MustNewConstMetric(blocksDelivered, prometheus.CounterValue, float64(d.Count), d.Harness, d.Block)
		buckets := map[float64]uint64{}
		for i, b := range engine.BlockCharBuckets {
			buckets[b] = d.Buckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(blockChars, d.Count, float64(d.Chars), buckets, d.Harness, d.Block)
	}
	for _, r := range c.engine.RunEnds() {
		ch <- prometheus.MustNewConstMetric(runsEnded, prometheus.CounterValue, float64(r.Count), r.Harness, r.EndReason)
	}
	st := c.engine.Store
	if st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if h, err := st.Health(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(storeBytes, prometheus.GaugeValue, float64(h.DiskBytes))
		ch <- prometheus.MustNewConstMetric(storeCompacts, prometheus.CounterValue, float64(h.Compactions))
	}
	ix := st.IndexStatus()
	ch <- prometheus.MustNewConstMetric(indexVersion, prometheus.GaugeValue, float64(ix.Version))
	ch <- prometheus.MustNewConstMetric(indexBuilding, prometheus.GaugeValue, b2f(ix.Building))
	ch <- prometheus.MustNewConstMetric(indexRebuild, prometheus.GaugeValue, float64(ix.Done), "done")
	ch <- prometheus.MustNewConstMetric(indexRebuild, prometheus.GaugeValue, float64(ix.Total), "total")
}

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
