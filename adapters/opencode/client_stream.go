package opencode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/r3labs/sse/v2"
	"gopkg.in/cenkalti/backoff.v1"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/internal/follow"
)

// How r3labs/sse/v2 (v2.10.0) is contained here. The library parses the SSE framing; everything
// around one connection is ours:
//   - It never reconnects after a clean EOF and ignores the context while it waits between its
//     own retries: its retries are switched off (backoff.StopBackOff, so each Subscribe call is
//     one attempt) and Client.run does the reconnecting, waiting on a timer that ctx can stop.
//   - It drops frames over 64 KiB: ClientMaxBufferSize(MaxEventBytes); a frame over even that
//     ends the attempt with bufio.ErrTooLong, which is counted, and the resync repairs it.
//   - Its read goroutine leaks when a channel subscription is unsubscribed: only the callback
//     form (SubscribeWithContext) is used, whose read goroutine always hands its final error to
//     Subscribe before Subscribe returns; canceling the attempt's context closes the body, so
//     that final error always comes.
//   - It has no read timeout: the response body is wrapped so that every read that returns
//     bytes feeds our watchdog, which cancels the attempt's context when the stream goes quiet.
//   - It dispatches the unfinished frame it holds when the connection ends (the SSE spec says
//     to drop it): frames that arrive after we canceled the attempt are dropped; a server that
//     cuts a frame short costs one frame counted as malformed.
//   - It reports a canceled read as a clean EOF: context.Cause tells the two apart.
//   - It sends Last-Event-ID after any frame with an id, which OpenCode ignores: a fresh
//     sse.Client per attempt never sends one, and every connection is followed by a resync.
//   - With a ResponseValidator set it neither checks the status nor closes the body of a
//     refused response: the validator does both. No connect or disconnect callback is set:
//     the library writes its Connected field from the read goroutine without a lock.

// errIdle is the cause of an attempt the read-idle watchdog canceled.
var errIdle = errors.New("nothing received within the idle timeout")

// errEnded is how an attempt ends when the server closes the stream cleanly.
var errEnded = errors.New("stream closed by the server")

// errUnauthorized is wrapped by the error of an attempt the server refused with 401 or 403: the
// password is wrong, which reconnecting will not fix.
var errUnauthorized = errors.New("check the OpenCode server password")

// attempt is how one connection attempt went.
type attempt struct {
	connected bool          // the server answered 200 with an event stream
	frames    int64         // frames received on it
	up        time.Duration // from the response headers to the end
	idle      bool          // the watchdog ended it
	err       error         // why it ended; never nil
}

// attempt makes one connection to /event, resyncs over REST once the response headers are in,
// and reads frames until the stream ends, fails, goes idle, or ctx ends.
func (c *Client) attempt(ctx context.Context) attempt {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Until the headers arrive the watchdog waits only headerWait; then IdleTimeout.
	wd := newWatchdog(c.headerWait, func() { cancel(errIdle) })
	defer wd.stop()

	rt := c.stream.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc := *c.stream
	hc.Transport = watchedTransport{rt: rt, wd: wd}
	sc := sse.NewClient(c.base+"/event", sse.ClientMaxBufferSize(c.maxEventBytes))
	sc.Connection = &hc
	sc.Headers = maps.Clone(c.headers)
	// A compressed stream would be buffered by the encoder; ask for it plain.
	sc.Headers["Accept-Encoding"] = "identity"
	sc.ReconnectStrategy = &backoff.StopBackOff{}

	var res attempt
	var connectedAt time.Time
	sc.ResponseValidator = func(_ *sse.Client, resp *http.Response) error {
		if err := checkStream(resp); err != nil {
			resp.Body.Close()
			return err
		}
		wd.setPeriod(c.idle)
		res.connected = true
		connectedAt = time.Now()
		c.stats.Connect()
		c.log.Info("connected")
		// Subscribe first, then read the state back, then read the frames the server sent
		// meanwhile (they wait in the connection): nothing falls between the two.
		wd.pause()
		if err := c.resync(actx); err != nil {
			resp.Body.Close()
			return fmt.Errorf("resync: %w", err)
		}
		wd.resume()
		return nil
	}

	// Frames are decoded here and handed, in order, to one goroutine that gives their events to
	// the Sink: decoding the next frame overlaps storing the last. It ends with the attempt,
	// after the events queued, so a resync (the next attempt's) never runs beside it.
	queue := make(chan queued, frameQueue)
	var sink sync.WaitGroup
	sink.Go(func() { c.drain(ctx, queue) })
	err := sc.SubscribeWithContext(actx, "", func(msg *sse.Event) {
		if actx.Err() != nil {
			// The library hands on the unfinished frame it holds when the connection ends;
			// after we ended it, drop whatever comes (the next resync covers it).
			return
		}
		wd.pause() // a frame being handled, or waiting for room in the queue, is no silence
		res.frames++
		if evs := c.frame(msg.Data); len(evs) > 0 {
			it := queued{evs: evs}
			if len(msg.Data) > bigFrame {
				it.done = make(chan struct{}) // waited for: the queue holds no more than one
			}
			select {
			case queue <- it:
				if it.done != nil {
					select {
					case <-it.done:
					case <-ctx.Done():
					}
				}
			case <-ctx.Done():
			}
		}
		wd.resume()
	})
	close(queue)
	sink.Wait()
	c.stats.Connected.Store(false)
	if res.connected {
		res.up = time.Since(connectedAt)
	}

	switch cause := context.Cause(actx); {
	case ctx.Err() != nil:
		res.err = ctx.Err()
	case errors.Is(cause, errIdle):
		res.idle = true
		res.err = errIdle
		c.stats.IdleTimeouts.Add(1)
	case errors.Is(err, bufio.ErrTooLong):
		c.stats.Oversized.Add(1)
		res.err = fmt.Errorf("a frame over MaxEventBytes (%d) was dropped; raise it", c.maxEventBytes)
	case err != nil:
		res.err = err
	default:
		res.err = errEnded
	}
	return res
}

// checkStream accepts a response only if it is a 200 event stream.
func checkStream(resp *http.Response) error {
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return fmt.Errorf("GET /event: %s (%w)", resp.Status, errUnauthorized)
		}
		return fmt.Errorf("GET /event: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return fmt.Errorf("GET /event: not an event stream (Content-Type %q)", ct)
	}
	return nil
}

// frameQueue is how many decoded frames wait for the Sink at most; the stream waits beyond.
// A frame over bigFrame is waited for until stored, so what waits stays under frameQueue ×
// bigFrame plus one frame of MaxEventBytes.
const (
	frameQueue = 64
	bigFrame   = 256 << 10
)

// queued is one decoded frame waiting for the Sink; done, when set, is closed once it is
// handed on.
type queued struct {
	evs  []adapters.Event
	done chan struct{}
}

// drain hands the queued frames' events to the Sink until the queue is closed. Once the Sink
// accepts events again after refusing some (the store was full, say), it resyncs, at most once
// per follow.RepairEvery, so what it refused is read back from the server without waiting for a
// reconnect.
func (c *Client) drain(ctx context.Context, queue <-chan queued) {
	var repaired time.Time
	for it := range queue {
		ok := c.consume(ctx, it.evs)
		if it.done != nil {
			close(it.done)
		}
		if !ok || !c.refused.Load() || time.Since(repaired) < follow.RepairEvery || ctx.Err() != nil {
			continue
		}
		// The frames already read came before the snapshot the resync takes: store them
		// first, so none of them lands after it.
		for more := true; more; {
			select {
			case it, open := <-queue:
				if !open {
					return
				}
				c.consume(ctx, it.evs)
				if it.done != nil {
					close(it.done)
				}
			default:
				more = false
			}
		}
		repaired = time.Now()
		c.log.Info("the sink takes events again: resyncing to read back what it refused")
		_ = c.resync(ctx) // a failure is counted; the next reconnect resyncs anyway
	}
}

// frame decodes one frame's data into its events. A malformed frame is counted, logged at
// growing intervals, and skipped.
func (c *Client) frame(data []byte) []adapters.Event {
	c.stats.Frames.Add(1)
	if len(data) == 0 {
		return nil
	}
	evs, err := DecodeFrame(data)
	if err != nil {
		c.stats.Skip(c.log, fmt.Sprintf("frame of %d bytes", len(data)), err)
		return nil
	}
	return evs
}

// watchdog calls fire once it has gone d without being fed: bytes arriving on the stream feed
// it, so a multi-MiB frame that takes a while to arrive keeps it quiet. It is paused while a
// frame is handled or a resync runs, so a slow Sink or REST call never counts as a silent
// server; resuming starts a full period again.
type watchdog struct {
	d    time.Duration
	mu   sync.Mutex
	busy bool
	t    *time.Timer
}

func newWatchdog(d time.Duration, fire func()) *watchdog {
	return &watchdog{d: d, t: time.AfterFunc(d, fire)}
}

// feed restarts the period, unless the watchdog is paused or stopped.
func (w *watchdog) feed() {
	w.mu.Lock()
	if !w.busy {
		w.t.Reset(w.d)
	}
	w.mu.Unlock()
}

func (w *watchdog) pause() {
	w.mu.Lock()
	w.busy = true
	w.t.Stop()
	w.mu.Unlock()
}

func (w *watchdog) resume() {
	w.mu.Lock()
	w.busy = false
	w.t.Reset(w.d)
	w.mu.Unlock()
}

// setPeriod changes the period from the next feed or resume on.
func (w *watchdog) setPeriod(d time.Duration) {
	w.mu.Lock()
	w.d = d
	w.mu.Unlock()
}

// stop stops it for good.
func (w *watchdog) stop() { w.pause() }

// watchedTransport feeds a watchdog with every read of a response body that returns bytes.
type watchedTransport struct {
	rt http.RoundTripper
	wd *watchdog
}

func (t watchedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = watchedBody{resp.Body, t.wd}
	return resp, nil
}

type watchedBody struct {
	io.ReadCloser
	wd *watchdog
}

func (b watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.wd.feed()
	}
	return n, err
}
