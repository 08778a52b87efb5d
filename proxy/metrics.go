package proxy

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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

// metrics are the server's Prometheus collectors.
type metrics struct {
	upstream *prometheus.CounterVec // heirloom_upstream_requests_total{harness, outcome}
}

// newMetrics registers the server's collectors with reg. A collector already registered there
// (by another Server on the same registry) is shared.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	upstream := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "heirloom_upstream_requests_total",
		Help: "Hook calls forwarded to an upstream hook target, by harness and outcome (ok, unreachable, timeout, status, invalid, oversized). Every outcome but ok replied with heirloom's context alone.",
	}, []string{"harness", "outcome"})
	if err := reg.Register(upstream); err != nil {
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			return nil, err
		}
		existing, ok := already.ExistingCollector.(*prometheus.CounterVec)
		if !ok {
			return nil, err
		}
		upstream = existing
	}
	return &metrics{upstream: upstream}, nil
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
