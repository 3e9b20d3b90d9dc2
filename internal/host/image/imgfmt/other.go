package imgfmt

import (
	"bytes"
	"strconv"
	"strings"
)

// qed reads a QED header, which can name a backing file.
func (s *src) qed() (Header, error) {
	b := s.head
	if len(b) < 64 {
		return Header{}, ferr(QED, 0, "header truncated at %d bytes (needs 64)", len(b))
	}
	h := Header{Format: QED, VirtualSize: le.Uint64(b[48:])}
	const backing, noProbe = 1 << 0, 1 << 2
	features := le.Uint64(b[16:])
	if features&backing == 0 {
		return h, nil
	}
	off, n := uint64(le.Uint32(b[56:])), uint64(le.Uint32(b[60:]))
	if n > maxBackingName {
		return Header{}, ferr(QED, 60, "backing_filename_size %d above %d", n, maxBackingName)
	}
	name, err := s.bytesAt(QED, off, n, "backing file name")
	if err != nil {
		return Header{}, err
	}
	if h.BackingFile, err = cstring(QED, off, name, "backing file name"); err != nil {
		return Header{}, err
	}
	if features&noProbe != 0 {
		h.BackingFormat = Raw
	}
	return h, nil
}

// vmdkSparse reads a VMDK sparse extent header and the descriptor
// embedded in it, which names the extents and any parent.
func (s *src) vmdkSparse() (Header, error) {
	b := s.head
	if len(b) < 44 {
		return Header{}, ferr(VMDK, 0, "sparse header truncated at %d bytes (needs 44)", len(b))
	}
	h := Header{Format: VMDK, Version: le.Uint32(b[4:])}
	capacity := le.Uint64(b[12:])
	descOff, descLen := le.Uint64(b[28:]), le.Uint64(b[36:])
	if descOff != 0 && descLen != 0 {
		if descOff > HeadBytes/512 || descLen > HeadBytes/512 {
			return Header{}, ferr(VMDK, 28, "embedded descriptor (sector %d, %d sectors) beyond the first %d bytes", descOff, descLen, HeadBytes)
		}
		d, err := s.bytesAt(VMDK, descOff*512, descLen*512, "embedded descriptor")
		if err != nil {
			return Header{}, err
		}
		parseDescriptor(&h, d)
	}
	h.VirtualSize = sectorsToBytes(capacity)
	return h, nil
}

// sectorsToBytes is n 512-byte sectors in bytes, saturating rather than
// wrapping to a small size.
func sectorsToBytes(n uint64) uint64 {
	if n > (1<<64-1)/512 {
		return 1<<64 - 1
	}
	return n * 512
}

// vmdkText reads a VMDK text descriptor file.
func (s *src) vmdkText(b []byte) Header {
	h := Header{Format: VMDK}
	parseDescriptor(&h, b)
	return h
}

// isVMDKText recognises a VMDK text descriptor: the "# Disk
// DescriptorFile" line in the first sector, or, as QEMU's probe does,
// comment and blank lines followed by a version= line.
func isVMDKText(b []byte) bool {
	b = b[:min(len(b), 2048)]
	pos := 0
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		t := bytes.TrimSpace(line)
		switch {
		case bytes.HasPrefix(t, []byte("# Disk DescriptorFile")):
			return pos < 512
		case len(t) == 0, t[0] == '#':
		default:
			return bytes.HasPrefix(t, []byte("version="))
		}
		pos += len(line) + 1
		b = rest
	}
	return false
}

// parseDescriptor fills Extents, VirtualSize (the extents' sectors)
// and BackingFile (parentFileNameHint) from descriptor text. Unreadable
// lines are skipped: the format, not the descriptor, is what a caller
// refuses.
func parseDescriptor(h *Header, d []byte) {
	if i := bytes.IndexByte(d, 0); i >= 0 {
		d = d[:i]
	}
	var sectors uint64
	for _, line := range strings.Split(string(d), "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "parentFileNameHint="); ok {
			h.BackingFile = strings.Trim(v, `"`)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || (f[0] != "RW" && f[0] != "RDONLY" && f[0] != "NOACCESS") {
			continue
		}
		n, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		sectors = min(sectors+n, 1<<63/512)
		if _, q, ok := strings.Cut(line, `"`); ok {
			name, _, _ := strings.Cut(q, `"`)
			h.Extents = append(h.Extents, name)
		}
	}
	if h.VirtualSize == 0 {
		h.VirtualSize = sectors * 512
	}
}

// vhd reads a VHD footer (at the end of the file, or its copy at the
// start of a dynamic disk) and sizes the disk as QEMU's vpc driver
// does: from the CHS geometry unless the creator is known to use the
// footer's current_size, or the geometry is at its maximum.
func (s *src) vhd(f []byte) Header {
	h := Header{Format: VHD}
	if len(f) < 64 {
		return h
	}
	h.Version = be.Uint32(f[12:])
	chs := uint64(be.Uint16(f[56:])) * uint64(f[58]) * uint64(f[59])
	creator := string(f[28:32])
	useSize := creator == "win " || creator == "qem2" || creator == "d2v " || creator == "CTXS" || creator == "tap\x00"
	if useSize || chs == 65535*16*255 {
		h.VirtualSize = be.Uint64(f[48:]) / 512 * 512
	} else {
		h.VirtualSize = chs * 512
	}
	return h
}

// vdi reads a VirtualBox header's version and disk size.
func (s *src) vdi() Header {
	h := Header{Format: VDI, Version: le.Uint32(s.head[0x44:])}
	if len(s.head) >= 0x178 {
		h.VirtualSize = le.Uint64(s.head[0x170:])
	}
	return h
}

// luks reads a LUKS header: version 1 says where the payload starts,
// and the disk is what follows.
func (s *src) luks() Header {
	h := Header{Format: LUKS, Encrypted: true}
	if len(s.head) < 108 {
		return h
	}
	h.Version = uint32(be.Uint16(s.head[6:]))
	if h.Version == 1 {
		if p := uint64(be.Uint32(s.head[104:])) * 512; p <= uint64(s.size) {
			h.VirtualSize = uint64(s.size) - p
		}
	}
	return h
}

// parallels reads a Parallels header's version and sector count.
func (s *src) parallels() Header {
	h := Header{Format: Parallels}
	if len(s.head) >= 44 {
		h.Version = le.Uint32(s.head[16:])
		h.VirtualSize = sectorsToBytes(le.Uint64(s.head[36:]))
	}
	return h
}
