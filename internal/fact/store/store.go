// Package store is a run's memory of guest facts. Several checks judge the
// same fact (the mount table, the resolver files, the block devices, the
// agent, the processes); reading it once per run means they judge one
// state of the guest, not two taken moments apart, and pay for it once.
//
// The fact packages own their entries: each keeps its values under a key
// of an unexported type of its own and exposes an accessor taking the
// Store (mounts.Table, netstate.Resolver, blockdev.Devices, agent.Detect,
// procs.List). A check only carries the Store from its Env to those
// accessors, so no check can choose how a shared fact is read, and no
// key is exported for a check to copy a reading closure under.
package store

import (
	"context"
	"sync"
)

// Store holds the facts of one run. Make one per run with New; the zero
// value is not usable, and a nil *Store remembers nothing (every accessor
// reads afresh), which is what a test calling a check directly gets.
type Store struct {
	mu sync.Mutex
	m  map[any]*entry
}

// entry is one fact: done closes when the first reader has finished, and
// failed says that it panicked instead of giving a value.
type entry struct {
	done   chan struct{}
	v      any
	failed bool
}

// New returns an empty store for one run.
func New() *Store { return &Store{m: map[any]*entry{}} }

// Memo returns what read gives for key in s's run, calling read at most
// once per store: the first caller reads, concurrent callers wait for it,
// later callers get the same value. The value is shared between
// goroutines and must not be modified after read returns it.
//
// key must be comparable and should be a value of an unexported type of
// the fact package calling Memo, holding everything the value depends on
// (the reader it was read through, a mode), so that two packages never
// collide and two different readings never pass for one. Options that
// change the value belong in the key or in the fact package, never in
// read alone: otherwise the first caller's options would silently win.
//
// read gets ctx's values but not its cancellation: a shared reading must
// not be cut short by the deadline of whichever check asked first, so it
// bounds itself (its own deadline, its own caps). Waiting callers wait for
// it; the runner abandons a check at the check's own deadline. With a nil
// s, read is simply called with ctx.
//
// When read panics, the first caller panics with it and every other
// caller panics too, rather than judging a zero value.
func Memo[T any](ctx context.Context, s *Store, key any, read func(context.Context) T) T {
	if s == nil {
		return read(ctx)
	}
	e, first := s.claim(key)
	if first {
		fill(ctx, e, read)
	} else {
		<-e.done
	}
	if e.failed {
		panic("store: reading this fact panicked in another check of the run")
	}
	v, _ := e.v.(T)
	return v
}

// claim returns key's entry, and whether the caller is the one to fill it.
func (s *Store) claim(key any) (*entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[key]; ok {
		return e, false
	}
	e := &entry{done: make(chan struct{})}
	s.m[key] = e
	return e, true
}

// fill runs read for e. failed is set before and cleared after, so that a
// panic leaves it set; done closes either way, so no waiter hangs.
func fill[T any](ctx context.Context, e *entry, read func(context.Context) T) {
	defer close(e.done)
	e.failed = true
	e.v = read(context.WithoutCancel(ctx))
	e.failed = false
}
