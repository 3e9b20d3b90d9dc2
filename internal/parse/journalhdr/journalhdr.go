// Package journalhdr parses the fixed header of a systemd journal file:
// the machine-id it was written under and the span of time it covers,
// which is the journal's evidence of whether a machine-id predates an
// instance. Pure: bytes in, values out.
package journalhdr

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// MinSize is how much of a journal file Parse needs: the fixed header
// up to tail_entry_monotonic, which every journal format since systemd 187
// has.
const MinSize = 208

// Signature opens every systemd journal file (journal-def.h).
const Signature = "LPKSHHRH"

// State is the header's state byte.
type State uint8

// Header states, as journald writes them.
const (
	Offline  State = 0 // closed cleanly
	Online   State = 1 // open for writing, or left open by a crash
	Archived State = 2 // rotated
)

// String names the state as journalctl --header does.
func (s State) String() string {
	switch s {
	case Offline:
		return "offline"
	case Online:
		return "online"
	case Archived:
		return "archived"
	}
	return fmt.Sprintf("state-%d", uint8(s))
}

// Header holds the fixed header fields of a systemd journal file
// that tell which machine wrote it and which span of time it covers.
// Everything else in the file is left unread.
type Header struct {
	State State
	// MachineID is the machine-id the file was created under (32 lower-case
	// hex digits); TailBootID the boot of its last entry (of its last writer
	// before systemd 254).
	MachineID, TailBootID string
	HeaderSize            uint64
	Entries               uint64
	// HeadRealtime and TailRealtime are the wall-clock times of the first
	// and last entry; TailMonotonic is the last entry's time since its
	// boot. All are zero when the file has no entries.
	HeadRealtime, TailRealtime time.Time
	TailMonotonic              time.Duration
}

// ErrNotJournal is returned for data that does not start with the journal
// signature.
var ErrNotJournal = errors.New("not a systemd journal file (no LPKSHHRH signature)")

// Parse parses the fixed header at the start of a systemd journal
// file (systemd's journal-def.h, struct Header; all integers
// little-endian). b may be just the first MinSize bytes.
func Parse(b []byte) (Header, error) {
	var h Header
	if len(b) < len(Signature) || string(b[:8]) != Signature {
		return h, ErrNotJournal
	}
	if len(b) < MinSize {
		return h, fmt.Errorf("journal header truncated: %d of %d bytes", len(b), MinSize)
	}
	le := binary.LittleEndian
	h.State = State(b[16])
	h.MachineID = hex.EncodeToString(b[40:56])
	h.TailBootID = hex.EncodeToString(b[56:72])
	h.HeaderSize = le.Uint64(b[88:])
	if h.HeaderSize < MinSize {
		return h, fmt.Errorf("journal header_size %d is smaller than the %d-byte header of systemd 187", h.HeaderSize, MinSize)
	}
	h.Entries = le.Uint64(b[152:])
	if h.Entries == 0 {
		return h, nil
	}
	head, tail, mono := le.Uint64(b[184:]), le.Uint64(b[192:]), le.Uint64(b[200:])
	if head > tail {
		return h, fmt.Errorf("journal head_entry_realtime %d is after tail_entry_realtime %d", head, tail)
	}
	const maxUsec = 1 << 62 / 1000 // keeps the conversion to nanoseconds from overflowing
	if tail > maxUsec || mono > maxUsec {
		return h, fmt.Errorf("journal timestamps out of range: tail %d µs, monotonic %d µs", tail, mono)
	}
	h.HeadRealtime = time.UnixMicro(int64(head)).UTC()
	h.TailRealtime = time.UnixMicro(int64(tail)).UTC()
	h.TailMonotonic = time.Duration(mono) * time.Microsecond
	return h, nil
}

// TailBootStart is when the boot that wrote the last entry began, in the
// clock of that entry; zero when the file has no entries.
func (h Header) TailBootStart() time.Time {
	if h.Entries == 0 {
		return time.Time{}
	}
	return h.TailRealtime.Add(-h.TailMonotonic)
}
