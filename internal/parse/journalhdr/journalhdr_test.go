package journalhdr

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// journalHeaderBytes builds a journal file header the way journald lays it
// out (journal-def.h), size bytes long.
func journalHeaderBytes(size int, state byte, machineID, bootID string, entries uint64, head, tail time.Time, mono time.Duration) []byte {
	b := make([]byte, size)
	copy(b, Signature)
	b[16] = state
	mid, _ := hex.DecodeString(machineID)
	copy(b[40:56], mid)
	bid, _ := hex.DecodeString(bootID)
	copy(b[56:72], bid)
	le := binary.LittleEndian
	if size >= 96 {
		le.PutUint64(b[88:], uint64(max(size, MinSize)))
	}
	if size >= MinSize {
		le.PutUint64(b[152:], entries)
		le.PutUint64(b[184:], uint64(head.UnixMicro()))
		le.PutUint64(b[192:], uint64(tail.UnixMicro()))
		le.PutUint64(b[200:], uint64(mono/time.Microsecond))
	}
	return b
}

func TestParse(t *testing.T) {
	mid := "0123456789abcdef0123456789abcdef"
	bid := "fedcba9876543210fedcba9876543210"
	head := time.Date(2026, 11, 30, 10, 0, 3, 123456000, time.UTC)
	tail := head.Add(95 * time.Second)
	full := journalHeaderBytes(272, 0, mid, bid, 812, head, tail, 99*time.Second)
	h, err := Parse(full)
	if err != nil {
		t.Fatal(err)
	}
	if h.MachineID != mid || h.TailBootID != bid || h.Entries != 812 || h.State != Offline || h.HeaderSize != 272 ||
		!h.HeadRealtime.Equal(head) || !h.TailRealtime.Equal(tail) || h.TailMonotonic != 99*time.Second {
		t.Errorf("got %+v", h)
	}
	if got, want := h.TailBootStart(), tail.Add(-99*time.Second); !got.Equal(want) {
		t.Errorf("TailBootStart %s, want %s", got, want)
	}
	// Only the fixed part of the oldest header format is needed.
	if _, err := Parse(full[:MinSize]); err != nil {
		t.Errorf("208-byte header: %v", err)
	}

	bad := func(f func(b []byte)) []byte {
		b := append([]byte{}, full...)
		f(b)
		return b
	}
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "not a systemd journal"},
		{"another file", []byte("#!/bin/sh\necho hello\n"), "not a systemd journal"},
		{"truncated", full[:100], "truncated: 100 of 208"},
		{"header_size too small", bad(func(b []byte) { binary.LittleEndian.PutUint64(b[88:], 64) }), "header_size 64"},
		{"head after tail", bad(func(b []byte) {
			binary.LittleEndian.PutUint64(b[184:], uint64(tail.UnixMicro()+1))
		}), "is after tail_entry_realtime"},
		{"timestamps out of range", bad(func(b []byte) {
			binary.LittleEndian.PutUint64(b[192:], 1<<63)
		}), "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte("LPKS")); !errors.Is(err, ErrNotJournal) {
		t.Errorf("short signature: %v", err)
	}

	// A file without entries has no times, whatever the fields hold.
	empty := journalHeaderBytes(272, 1, mid, bid, 0, head, tail, time.Second)
	h, err = Parse(empty)
	if err != nil || !h.HeadRealtime.IsZero() || !h.TailBootStart().IsZero() || h.State != Online {
		t.Errorf("empty file: %+v, %v", h, err)
	}
}

func FuzzParse(f *testing.F) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	f.Add(journalHeaderBytes(272, 0, "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210", 3, now, now.Add(time.Minute), time.Minute))
	f.Add(journalHeaderBytes(208, 2, "0123456789abcdef0123456789abcdef", "", 0, now, now, 0))
	f.Add([]byte("LPKSHHRH"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Parse(b)
		if err != nil {
			return
		}
		if len(b) < MinSize || len(h.MachineID) != 32 || len(h.TailBootID) != 32 {
			t.Fatalf("accepted %d bytes as %+v", len(b), h)
		}
		if h.Entries > 0 && h.HeadRealtime.After(h.TailRealtime) {
			t.Fatalf("head after tail: %+v", h)
		}
	})
}
