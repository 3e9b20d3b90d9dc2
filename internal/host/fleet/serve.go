package fleet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Server serves the last survey's metrics for Prometheus (--listen). One
// loop runs the surveys, one after the other, every Interval; a scrape
// never starts one, it reads the last finished survey. So however many
// scrapers there are, there is never more than one survey at a time, and
// a slow survey never makes a scrape slow.
type Server struct {
	// Survey runs one survey; the server bounds it with nothing more.
	Survey func(ctx context.Context) Result
	// Interval is the pause between the end of one survey and the start
	// of the next.
	Interval time.Duration
	// Done, when set, is called with each survey, from the loop.
	Done func(Result)
	// Append, when set, writes more series after the survey's on each
	// /metrics answer: series of something the survey does not do
	// (freeze-drill's last result, from its file), read at the scrape so
	// that they are as fresh as their source rather than as the survey.
	// It must be quick and bounded: it runs on every scrape.
	Append func(w io.Writer) error

	mu       sync.Mutex
	metrics  []byte
	last     time.Time // when the last survey finished
	started  time.Time // when the server started
	surveyed int
}

// Run surveys until ctx ends.
func (s *Server) Run(ctx context.Context) {
	s.mu.Lock()
	if s.started.IsZero() {
		s.started = time.Now()
	}
	s.mu.Unlock()
	for {
		r := s.Survey(ctx)
		if ctx.Err() != nil {
			return
		}
		// Done (the --output files) first: a scrape that sees this
		// survey finds its files written too.
		if s.Done != nil {
			s.Done(r)
		}
		var b bytes.Buffer
		WritePrometheus(&b, r)
		s.mu.Lock()
		s.metrics, s.last = b.Bytes(), time.Now()
		s.surveyed++
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.Interval):
		}
	}
}

// Surveys is how many surveys have finished.
func (s *Server) Surveys() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.surveyed
}

// Handler serves /metrics and /healthz.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "guestcheck fleet: /metrics (Prometheus), /healthz")
	})
	return mux
}

// serveMetrics answers with the last survey, or 503 before the first one
// has finished: Prometheus then records the scrape as failed (up 0)
// rather than a fleet with no VMs.
func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	m, started := s.metrics, s.started
	s.mu.Unlock()
	if m == nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "guestcheck fleet: the first survey has not finished yet (running for %s)\n", time.Since(started).Round(time.Second))
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(m)
	if s.Append != nil {
		s.Append(w)
	}
}

// serveHealth is 200 while surveys keep finishing, 503 once the last one
// is older than three intervals (the loop is stuck).
func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	last, started := s.last, s.started
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch {
	case last.IsZero():
		fmt.Fprintf(w, "ok: the first survey is running (for %s)\n", time.Since(started).Round(time.Second))
	case time.Since(last) > 3*s.Interval+time.Minute:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "stale: the last survey finished %s ago\n", time.Since(last).Round(time.Second))
	default:
		fmt.Fprintf(w, "ok: the last survey finished %s ago\n", time.Since(last).Round(time.Second))
	}
}
