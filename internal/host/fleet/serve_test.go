package fleet

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestServerOneSurveyAtATime: scrapes from many clients at once read
// the last survey and never start one; the first scrape, before the
// first survey ends, says so with a 503.
func TestServerOneSurveyAtATime(t *testing.T) {
	var running, most, started atomic.Int32
	srv := &Server{Interval: 20 * time.Millisecond, Survey: func(ctx context.Context) Result {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		started.Add(1)
		select {
		case <-time.After(150 * time.Millisecond):
		case <-ctx.Done():
		}
		r := Result{SchemaVersion: 1, Tool: "guestcheck fleet", Version: "1", VMs: []VM{{Name: "vm1", Source: "socket", Status: Warn}}}
		r.finish()
		return r
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(l)
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := func(p string) (int, string) {
		resp, err := http.Get("http://" + l.Addr().String() + p)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	go srv.Run(ctx)
	if code, body := get("/metrics"); code != http.StatusServiceUnavailable || !strings.Contains(body, "first survey has not finished") {
		t.Errorf("first scrape: %d %q", code, body)
	}
	if code, body := get("/healthz"); code != 200 || !strings.Contains(body, "first survey is running") {
		t.Errorf("/healthz before the first survey: %d %q", code, body)
	}
	begin := time.Now()
	var wg sync.WaitGroup
	var served atomic.Int32
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 15 {
				if code, body := get("/metrics"); code == 200 {
					served.Add(1)
					if !strings.Contains(body, `guestcheck_fleet_vm_status{domain="vm1",status="warn"} 1`) {
						t.Errorf("metrics:\n%s", body)
					}
				}
				time.Sleep(30 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	cancel()
	if most.Load() != 1 {
		t.Errorf("%d surveys ran at once", most.Load())
	}
	// 300 scrapes: the surveys are paced by their own length and the
	// interval alone (150 ms + 20 ms each), not by the scrapes.
	if n, most := started.Load(), int32(time.Since(begin)/(150*time.Millisecond))+2; n > most || served.Load() == 0 {
		t.Errorf("%d surveys for %d served scrapes", n, served.Load())
	}
	if code, body := get("/healthz"); code != 200 || !strings.Contains(body, "last survey finished") {
		t.Errorf("/healthz: %d %q", code, body)
	}
}
