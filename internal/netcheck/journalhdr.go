package netcheck

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// JournalHeaderMinSize is how much of a journal file ParseJournalHeader
// needs: the fixed header up to tail_entry_monotonic, which every journal
// format since systemd 187 has.
const JournalHeaderMinSize = 208

// journalSignature opens every systemd journal file (journal-def.h).
const journalSignature = "LPKSHHRH"

// JournalState is the header's state byte.
type JournalState uint8

// Header states, as journald writes them.
const (
	JournalOffline  JournalState = 0 // closed cleanly
	JournalOnline   JournalState = 1 // open for writing, or left open by a crash
	JournalArchived JournalState = 2 // rotated
)

func (s JournalState) String() string {
	switch s {
	case JournalOffline:
		return "offline"
	case JournalOnline:
		return "online"
	case JournalArchived:
		return "archived"
	}
	return fmt.Sprintf("state-%d", uint8(s))
}

// JournalHeader holds the fixed header fields of a systemd journal file
// that tell which machine wrote it and which span of time it covers.
// Everything else in the file is left unread.
type JournalHeader struct {
	State JournalState
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

// ParseJournalHeader parses the fixed header at the start of a systemd
// journal file (systemd's journal-def.h, struct Header; all integers
// little-endian). b may be just the first JournalHeaderMinSize bytes.
func ParseJournalHeader(b []byte) (JournalHeader, error) {
	var h JournalHeader
	if len(b) < len(journalSignature) || string(b[:8]) != journalSignature {
		return h, ErrNotJournal
	}
	if len(b) < JournalHeaderMinSize {
		return h, fmt.Errorf("journal header truncated: %d of %d bytes", len(b), JournalHeaderMinSize)
	}
	le := binary.LittleEndian
	h.State = JournalState(b[16])
	h.MachineID = hex.EncodeToString(b[40:56])
	h.TailBootID = hex.EncodeToString(b[56:72])
	h.HeaderSize = le.Uint64(b[88:])
	if h.HeaderSize < JournalHeaderMinSize {
		return h, fmt.Errorf("journal header_size %d is smaller than the %d-byte header of systemd 187", h.HeaderSize, JournalHeaderMinSize)
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
func (h JournalHeader) TailBootStart() time.Time {
	if h.Entries == 0 {
		return time.Time{}
	}
	return h.TailRealtime.Add(-h.TailMonotonic)
}
