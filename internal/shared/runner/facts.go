package runner

import "sync"

// Facts holds the probes several checks of one run share. The first check
// that asks makes the probe; every other check reads the same answer, so
// two checks never judge two different states of one thing and nothing is
// probed twice. Run gives every run its own Facts.
type Facts struct {
	mu sync.Mutex
	m  map[any]*fact
}

type fact struct {
	once sync.Once
	v    any
}

// NewFacts returns an empty store.
func NewFacts() *Facts { return &Facts{m: map[any]*fact{}} }

// Shared returns what probe answers for key in env's run, calling probe at
// most once per run; concurrent callers wait for the first. Without a store
// (a check called directly by a test) it calls probe every time. Keys
// should be values of an unexported type of the calling package so that
// two packages never collide. The value is shared between goroutines: it
// must not be modified after probe returns it.
func Shared[T any](env *Env, key any, probe func() T) T {
	if env.Facts == nil {
		return probe()
	}
	f := env.Facts
	f.mu.Lock()
	e, ok := f.m[key]
	if !ok {
		e = &fact{}
		f.m[key] = e
	}
	f.mu.Unlock()
	e.once.Do(func() { e.v = probe() })
	v, _ := e.v.(T)
	return v
}
