// Package lvm2 reads what LVM2 writes on a physical volume: the label
// (LABELONE, in one of the first four sectors), the PV header with its
// data and metadata areas, the metadata area's header and its circular
// buffer, and the volume group's metadata, a text in LVM2's config
// syntax (lvm2's lib/format_text: layout.h, import_vsn1.c). It is pure:
// bytes and readers in, values out, every size and count bounded,
// because the sealing appliance reads it from a hostile image.
package lvm2

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Area is a disk area of a PV: a data area, or a metadata area, in bytes
// from the PV's start.
type Area struct{ Offset, Size uint64 }

// Label is a PV's label and header.
type Label struct {
	// Sector is where the label was found (0 to 3).
	Sector int
	// UUID is the PV's id, 32 characters without dashes.
	UUID string
	// DeviceSize is the PV's size in bytes as recorded.
	DeviceSize     uint64
	Data, Metadata []Area
}

// ErrNoLabel is a device with no LVM2 label in its first four sectors.
var ErrNoLabel = errors.New("no LVM2 label in the first four sectors")

// maxAreas bounds each list of disk areas (lvm2 writes one or two).
const maxAreas = 16

// ParseLabel finds the LVM2 label in head, the first 2 KiB of a device.
func ParseLabel(head []byte) (Label, error) {
	for s := 0; s < 4; s++ {
		if len(head) < (s+1)*512 {
			break
		}
		sec := head[s*512 : (s+1)*512]
		if string(sec[:8]) != "LABELONE" {
			continue
		}
		// id[8], sector_xl u64, crc u32, offset_xl u32, type[8].
		if binary.LittleEndian.Uint64(sec[8:16]) != uint64(s) {
			return Label{}, fmt.Errorf("the LVM2 label in sector %d says it is in sector %d", s, binary.LittleEndian.Uint64(sec[8:16]))
		}
		if string(sec[24:32]) != "LVM2 001" {
			return Label{}, fmt.Errorf("an LVM label of type %q, not LVM2 001", bytes.TrimRight(sec[24:32], "\x00"))
		}
		off := binary.LittleEndian.Uint32(sec[20:24])
		if off < 32 || off > 512-40 {
			return Label{}, fmt.Errorf("the LVM2 label's header offset %d is outside its sector", off)
		}
		l := Label{Sector: s}
		p := sec[off:]
		l.UUID = string(p[:32])
		l.DeviceSize = binary.LittleEndian.Uint64(p[32:40])
		rest := p[40:]
		var err error
		if l.Data, rest, err = areas(rest); err != nil {
			return Label{}, fmt.Errorf("the PV's data areas: %w", err)
		}
		if l.Metadata, _, err = areas(rest); err != nil {
			return Label{}, fmt.Errorf("the PV's metadata areas: %w", err)
		}
		return l, nil
	}
	return Label{}, ErrNoLabel
}

// areas reads a list of (offset, size) pairs ended by a pair of zeros.
func areas(b []byte) ([]Area, []byte, error) {
	var out []Area
	for {
		if len(b) < 16 {
			return nil, nil, errors.New("the list runs past the label's sector")
		}
		a := Area{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:16])}
		b = b[16:]
		if a.Offset == 0 && a.Size == 0 {
			return out, b, nil
		}
		if len(out) == maxAreas {
			return nil, nil, fmt.Errorf("more than %d areas", maxAreas)
		}
		out = append(out, a)
	}
}

// mdaMagic is a metadata area header's magic.
const mdaMagic = " LVM2 x[5A%r0N*>"

// maxMetadata bounds the metadata text read (lvm2's default area is
// 1 MiB; a VG with thousands of LVs stays well under this).
const maxMetadata = 8 << 20

// ReadMetadata reads the current metadata text of the metadata area mda
// of the PV that r reads: its header's first raw location, which may
// wrap around the area's circular buffer (past its end, it goes on just
// after the 512-byte header).
func ReadMetadata(r io.ReaderAt, mda Area) ([]byte, error) {
	if mda.Size < 1024 || mda.Size > 1<<34 {
		return nil, fmt.Errorf("a metadata area of %d bytes", mda.Size)
	}
	h := make([]byte, 512)
	if _, err := r.ReadAt(h, int64(mda.Offset)); err != nil {
		return nil, fmt.Errorf("the metadata area's header: %w", err)
	}
	// checksum u32, magic[16], version u32, start u64, size u64, then
	// raw_locn {offset u64, size u64, checksum u32, flags u32}...
	if string(h[4:20]) != mdaMagic {
		return nil, errors.New("the metadata area has no LVM2 header")
	}
	if v := binary.LittleEndian.Uint32(h[20:24]); v != 1 {
		return nil, fmt.Errorf("metadata area version %d, not 1", v)
	}
	if start := binary.LittleEndian.Uint64(h[24:32]); start != mda.Offset {
		return nil, fmt.Errorf("the metadata area's header says it starts at %d, the PV header at %d", start, mda.Offset)
	}
	off := binary.LittleEndian.Uint64(h[40:48])
	size := binary.LittleEndian.Uint64(h[48:56])
	if off == 0 && size == 0 {
		return nil, errors.New("the metadata area holds no metadata")
	}
	if size > maxMetadata || size > mda.Size-512 || off < 512 || off >= mda.Size {
		return nil, fmt.Errorf("metadata of %d bytes at %d does not fit its %d-byte area", size, off, mda.Size)
	}
	out := make([]byte, size)
	first := min(size, mda.Size-off)
	if _, err := r.ReadAt(out[:first], int64(mda.Offset+off)); err != nil {
		return nil, err
	}
	if first < size {
		if _, err := r.ReadAt(out[first:], int64(mda.Offset+512)); err != nil {
			return nil, err
		}
	}
	if i := bytes.IndexByte(out, 0); i >= 0 {
		out = out[:i]
	}
	return out, nil
}
