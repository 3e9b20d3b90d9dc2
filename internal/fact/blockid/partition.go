package blockid

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"unicode/utf16"
)

// PartitionTable is the GPT or MBR of a disk, reduced to what identifies
// partitions: the values blkid reports as PTUUID, PTTYPE, PARTUUID and
// PARTLABEL.
type PartitionTable struct {
	// Type is "gpt" or "dos", as blkid's PTTYPE.
	Type string
	// DiskID is the GPT disk GUID or the MBR disk signature (8 hex digits).
	DiskID string
	// Partitions are in table order; Number is the kernel's partition
	// number (the GPT entry index + 1; 1-4 primary and 5+ logical for MBR).
	Partitions []PartitionEntry
}

// PartitionEntry is one partition.
type PartitionEntry struct {
	Number int
	// UUID is the PARTUUID: the GPT unique partition GUID, or
	// "<disk signature>-<number as 2 hex digits>" for MBR.
	UUID string
	// Name is the GPT partition name (PARTLABEL); MBR has none.
	Name string
	// Type is the GPT type GUID or the MBR type byte as "0x83".
	Type string
	// Start and Sectors are in logical sectors.
	Start, Sectors uint64
}

// ErrNoPartitionTable is returned when a disk has neither GPT nor MBR.
var ErrNoPartitionTable = errors.New("no GPT or MBR partition table")

// maxGPTEntries bounds the entry array read (the standard array is 128
// entries of 128 bytes; anything much larger is corrupt or hostile).
const maxGPTEntries = 1024

// ReadPartitionTable reads the partition table of a whole disk with the
// given logical sector size (512 or 4096). A protective MBR leads to the
// GPT; a disk whose first sector is a FAT boot sector is not an MBR disk,
// as in libblkid.
func ReadPartitionTable(r io.ReaderAt, sectorSize int) (*PartitionTable, error) {
	if sectorSize != 512 && sectorSize != 4096 {
		sectorSize = 512
	}
	mbr, err := readSpan(r, 0, 512)
	if err != nil {
		return nil, err
	}
	if mbr == nil || mbr[510] != 0x55 || mbr[511] != 0xAA {
		return nil, ErrNoPartitionTable
	}
	protective := false
	for i := 0; i < 4; i++ {
		if mbr[446+16*i+4] == 0xEE {
			protective = true
		}
	}
	if protective {
		return readGPT(r, int64(sectorSize))
	}
	if _, ok, err := probeVFAT(r); err != nil {
		return nil, err
	} else if ok {
		return nil, ErrNoPartitionTable
	}
	return readMBR(r, mbr, int64(sectorSize))
}

// FormatGUID formats a GPT GUID: the first three fields are stored
// little-endian, the last two as bytes.
func FormatGUID(b []byte) string {
	if len(b) != 16 {
		return ""
	}
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x", leBytes.Uint32(b[0:]), leBytes.Uint16(b[4:]), leBytes.Uint16(b[6:]), b[8:10], b[10:16])
}

func readGPT(r io.ReaderAt, ss int64) (*PartitionTable, error) {
	h, err := readSpan(r, ss, 512)
	if err != nil {
		return nil, err
	}
	if h == nil || string(h[0:8]) != "EFI PART" {
		return nil, fmt.Errorf("protective MBR without a GPT header: %w", ErrNoPartitionTable)
	}
	hsize := leBytes.Uint32(h[12:])
	if hsize < 92 || hsize > 512 {
		return nil, fmt.Errorf("GPT header size %d: %w", hsize, ErrNoPartitionTable)
	}
	hdr := append([]byte(nil), h[:hsize]...)
	want := leBytes.Uint32(hdr[16:])
	copy(hdr[16:20], []byte{0, 0, 0, 0})
	if crc32.ChecksumIEEE(hdr) != want {
		// blkid would try the backup header at the disk's end; a primary
		// header that fails its CRC is reported rather than guessed at.
		return nil, fmt.Errorf("GPT header checksum mismatch: %w", ErrNoPartitionTable)
	}
	entryLBA := leBytes.Uint64(h[72:])
	count := leBytes.Uint32(h[80:])
	esize := leBytes.Uint32(h[84:])
	if esize < 128 || esize > 4096 || esize%8 != 0 || count > maxGPTEntries || count*esize > 1<<20 || entryLBA > 1<<40 {
		return nil, fmt.Errorf("GPT entry array (%d entries of %d bytes): %w", count, esize, ErrNoPartitionTable)
	}
	arr, err := readSpan(r, int64(entryLBA)*ss, int(count*esize))
	if err != nil {
		return nil, err
	}
	if arr == nil || crc32.ChecksumIEEE(arr) != leBytes.Uint32(h[88:]) {
		return nil, fmt.Errorf("GPT entry array checksum mismatch: %w", ErrNoPartitionTable)
	}
	pt := &PartitionTable{Type: "gpt", DiskID: FormatGUID(h[56:72])}
	for i := uint32(0); i < count; i++ {
		e := arr[i*esize : (i+1)*esize]
		typ := FormatGUID(e[0:16])
		if typ == "00000000-0000-0000-0000-000000000000" {
			continue // unused entry; numbering still counts it
		}
		first, last := leBytes.Uint64(e[32:]), leBytes.Uint64(e[40:])
		var sectors uint64
		if last >= first {
			sectors = last - first + 1
		}
		pt.Partitions = append(pt.Partitions, PartitionEntry{Number: int(i) + 1, UUID: FormatGUID(e[16:32]),
			Name: gptName(e[56:128]), Type: typ, Start: first, Sectors: sectors})
	}
	return pt, nil
}

// gptName decodes the UTF-16LE partition name, which ends at the first NUL.
func gptName(b []byte) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		c := leBytes.Uint16(b[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return strings.TrimRight(string(utf16.Decode(u)), " ")
}

// maxLogical bounds the walk of the extended-partition chain.
const maxLogical = 128

func readMBR(r io.ReaderAt, mbr []byte, ss int64) (*PartitionTable, error) {
	sig := leBytes.Uint32(mbr[440:])
	pt := &PartitionTable{Type: "dos"}
	if sig != 0 {
		// blkid derives no PARTUUIDs from a zero disk signature.
		pt.DiskID = fmt.Sprintf("%08x", sig)
	}
	var ext []PartitionEntry
	for i := 0; i < 4; i++ {
		e := mbr[446+16*i : 446+16*(i+1)]
		if e[0] != 0 && e[0] != 0x80 {
			// The boot flag must be 0 or 0x80; otherwise this sector is
			// not an MBR (blkid's check).
			return nil, fmt.Errorf("invalid MBR boot flag 0x%02x: %w", e[0], ErrNoPartitionTable)
		}
		typ, start, n := e[4], leBytes.Uint32(e[8:]), leBytes.Uint32(e[12:])
		if typ == 0 || n == 0 {
			continue
		}
		p := PartitionEntry{Number: i + 1, UUID: mbrPartUUID(sig, i+1), Type: fmt.Sprintf("0x%x", typ),
			Start: uint64(start), Sectors: uint64(n)}
		pt.Partitions = append(pt.Partitions, p)
		if typ == 0x05 || typ == 0x0F || typ == 0x85 {
			ext = append(ext, p)
		}
	}
	if len(ext) > 0 {
		logical, err := readLogical(r, ext[0].Start, ss, sig)
		if err != nil {
			return nil, err
		}
		pt.Partitions = append(pt.Partitions, logical...)
	}
	return pt, nil
}

// readLogical walks the chain of extended boot records starting at base
// (the extended partition's first sector). Logical partitions are numbered
// from 5.
func readLogical(r io.ReaderAt, base uint64, ss int64, sig uint32) ([]PartitionEntry, error) {
	var out []PartitionEntry
	cur := base
	seen := map[uint64]bool{}
	for n := 5; len(seen) < maxLogical; {
		if seen[cur] {
			break // a loop in the chain
		}
		seen[cur] = true
		if cur > 1<<40 {
			break
		}
		ebr, err := readSpan(r, int64(cur)*ss, 512)
		if err != nil {
			return nil, err
		}
		if ebr == nil || ebr[510] != 0x55 || ebr[511] != 0xAA {
			break
		}
		var next uint64
		for i := 0; i < 2; i++ {
			e := ebr[446+16*i : 446+16*(i+1)]
			typ, start, cnt := e[4], leBytes.Uint32(e[8:]), leBytes.Uint32(e[12:])
			if typ == 0 || cnt == 0 {
				continue
			}
			if typ == 0x05 || typ == 0x0F || typ == 0x85 {
				next = base + uint64(start)
				continue
			}
			out = append(out, PartitionEntry{Number: n, UUID: mbrPartUUID(sig, n), Type: fmt.Sprintf("0x%x", typ),
				Start: cur + uint64(start), Sectors: uint64(cnt)})
			n++
		}
		if next == 0 {
			break
		}
		cur = next
	}
	return out, nil
}

// mbrPartUUID is blkid's PARTUUID for MBR partitions: "<signature>-<nn>".
func mbrPartUUID(sig uint32, n int) string {
	if sig == 0 {
		return ""
	}
	return fmt.Sprintf("%08x-%02x", sig, n)
}
