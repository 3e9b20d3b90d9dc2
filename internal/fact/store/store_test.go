package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

type keyA struct{}
type keyB struct{ mode bool }

// TestMemoOncePerStore: concurrent callers of one store share one read;
// another key, or another store, reads again.
func TestMemoOncePerStore(t *testing.T) {
	var reads atomic.Int32
	read := func(context.Context) *int {
		reads.Add(1)
		v := 42
		return &v
	}
	s := New()
	var wg sync.WaitGroup
	got := make([]*int, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = Memo(context.Background(), s, keyA{}, read)
		}()
	}
	wg.Wait()
	for _, p := range got {
		if p != got[0] || *p != 42 {
			t.Fatalf("callers got different values: %p and %p", p, got[0])
		}
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("16 concurrent callers read %d times, want 1", n)
	}
	Memo(context.Background(), s, keyB{true}, read)
	Memo(context.Background(), s, keyB{false}, read)
	Memo(context.Background(), s, keyB{true}, read)
	if n := reads.Load(); n != 3 {
		t.Errorf("two more keys read %d times in all, want 3", n)
	}
	if p := Memo(context.Background(), New(), keyA{}, read); p == got[0] {
		t.Error("two stores (two runs) share a value")
	}
}

// TestMemoNilStore: without a store (a check called by a test) every call
// reads, with the caller's own context.
func TestMemoNilStore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reads := 0
	for range 2 {
		Memo(ctx, nil, keyA{}, func(c context.Context) int {
			reads++
			if c.Err() == nil {
				t.Error("a nil store's read does not see the caller's cancellation")
			}
			return 1
		})
	}
	if reads != 2 {
		t.Errorf("nil store read %d times, want 2", reads)
	}
}

// TestMemoNotCutByFirstCaller: the first caller's deadline does not end
// a read every caller shares.
func TestMemoNotCutByFirstCaller(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Memo(ctx, New(), keyA{}, func(c context.Context) error { return c.Err() })
	if err != nil {
		t.Errorf("the shared read saw the first caller's cancellation: %v", err)
	}
}

// TestMemoPanic: a read that panics panics in every caller, not only the
// first; nobody judges a zero value or waits forever.
func TestMemoPanic(t *testing.T) {
	s := New()
	for i := range 2 {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("caller %d did not panic", i)
				}
			}()
			Memo(context.Background(), s, keyA{}, func(context.Context) int { panic("boom") })
		}()
	}
}
