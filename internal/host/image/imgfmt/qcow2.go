package imgfmt

// qcow2 header extension types (docs/interop/qcow2.txt).
const (
	extEnd           = 0x00000000
	extBackingFormat = 0xe2792aca
	extCrypto        = 0x0537be77
	extDataFile      = 0x44415441
)

// Limits QEMU's qcow2 driver enforces when it opens an image.
const (
	qcow2MinClusterBits = 9
	qcow2MaxClusterBits = 21
	qcow2MaxL1Bytes     = 32 << 20
	qcow2MaxSnapshots   = 65536
	qcow2SnapshotHeader = 40
	qcow2MaxRefTable    = 8 << 20
	maxBackingName      = 1023
	autoclearDataRaw    = 1 << 1
)

// qcow dispatches on the version: 1 is the old qcow, 2 and 3 qcow2.
func (s *src) qcow() (Header, error) {
	b := s.head
	if len(b) < 8 {
		return Header{}, ferr(QCOW2, 0, "header truncated at %d bytes", len(b))
	}
	switch v := be.Uint32(b[4:]); v {
	case 1:
		return s.qcow1()
	case 2, 3:
		return s.qcow2(v)
	default:
		return Header{}, ferr(QCOW2, 4, "unsupported version %d", v)
	}
}

// qcow2 reads the fixed header, then the backing file name, then the
// header extensions, checking each as QEMU's qcow2_do_open does.
func (s *src) qcow2(version uint32) (Header, error) {
	b := s.head
	if len(b) < 72 {
		return Header{}, ferr(QCOW2, 0, "header truncated at %d bytes (version 2 needs 72)", len(b))
	}
	h := Header{
		Format:          QCOW2,
		Version:         version,
		ClusterBits:     be.Uint32(b[20:]),
		VirtualSize:     be.Uint64(b[24:]),
		CryptMethod:     be.Uint32(b[32:]),
		L1Size:          be.Uint32(b[36:]),
		L1Offset:        be.Uint64(b[40:]),
		Snapshots:       be.Uint32(b[60:]),
		SnapshotsOffset: be.Uint64(b[64:]),
	}
	if h.ClusterBits < qcow2MinClusterBits || h.ClusterBits > qcow2MaxClusterBits {
		return Header{}, ferr(QCOW2, 20, "cluster_bits %d out of range %d..%d", h.ClusterBits, qcow2MinClusterBits, qcow2MaxClusterBits)
	}
	cluster := uint64(1) << h.ClusterBits
	hdrLen, err := s.qcow2v3(&h, cluster)
	if err != nil {
		return Header{}, err
	}
	if h.CryptMethod > 2 {
		return Header{}, ferr(QCOW2, 32, "unknown crypt_method %d", h.CryptMethod)
	}
	h.Encrypted = h.CryptMethod != 0
	if err := qcow2Tables(&h, b, cluster); err != nil {
		return Header{}, err
	}
	backOff := be.Uint64(b[8:])
	if err := s.qcow2Backing(&h, backOff, uint64(be.Uint32(b[16:])), cluster); err != nil {
		return Header{}, err
	}
	end := cluster
	if backOff != 0 {
		end = backOff
	}
	if err := s.qcow2Extensions(&h, hdrLen, end); err != nil {
		return Header{}, err
	}
	return h, nil
}

// qcow2v3 reads the version 3 fields and returns the header length,
// where the header extensions start.
func (s *src) qcow2v3(h *Header, cluster uint64) (uint64, error) {
	if h.Version == 2 {
		return 72, nil
	}
	b := s.head
	if len(b) < 104 {
		return 0, ferr(QCOW2, 0, "header truncated at %d bytes (version 3 needs 104)", len(b))
	}
	h.IncompatibleFeatures = be.Uint64(b[72:])
	h.UnknownIncompatible = h.IncompatibleFeatures &^ IncompatKnown
	h.Dirty = h.IncompatibleFeatures&IncompatDirty != 0
	h.Corrupt = h.IncompatibleFeatures&IncompatCorrupt != 0
	h.ExternalData = h.IncompatibleFeatures&IncompatExternalData != 0
	h.DataFileRaw = be.Uint64(b[88:])&autoclearDataRaw != 0
	if order := be.Uint32(b[96:]); order > 6 {
		return 0, ferr(QCOW2, 96, "refcount_order %d above 6", order)
	}
	n := uint64(be.Uint32(b[100:]))
	switch {
	case n < 104:
		return 0, ferr(QCOW2, 100, "header_length %d below 104", n)
	case n%8 != 0:
		return 0, ferr(QCOW2, 100, "header_length %d not a multiple of 8", n)
	case n > cluster:
		return 0, ferr(QCOW2, 100, "header_length %d exceeds the cluster size %d", n, cluster)
	}
	if _, err := s.bytesAt(QCOW2, 0, n, "header"); err != nil {
		return 0, err
	}
	var ctype byte
	if n > 104 {
		ctype = b[104]
	}
	compressed := h.IncompatibleFeatures&IncompatCompression != 0
	switch {
	case ctype > 1:
		return 0, ferr(QCOW2, 104, "unknown compression_type %d", ctype)
	case compressed && ctype == 0:
		return 0, ferr(QCOW2, 72, "compression type bit set with compression_type zlib")
	case !compressed && ctype != 0:
		return 0, ferr(QCOW2, 104, "compression_type %d without the compression type bit", ctype)
	}
	return n, nil
}

// qcow2Tables checks the L1, refcount and snapshot tables' sizes and
// offsets against QEMU's limits: an image QEMU would refuse is not one
// to hand it.
func qcow2Tables(h *Header, b []byte, cluster uint64) error {
	if uint64(h.L1Size) > qcow2MaxL1Bytes/8 {
		return ferr(QCOW2, 36, "its L1 table claims %d entries, more than QEMU's %d", h.L1Size, qcow2MaxL1Bytes/8)
	}
	l2bits := uint64(h.ClusterBits - 3)
	if h.IncompatibleFeatures&IncompatExtendedL2 != 0 {
		l2bits = uint64(h.ClusterBits - 4)
	}
	shift := uint64(h.ClusterBits) + l2bits
	need := h.VirtualSize >> shift
	if h.VirtualSize&(1<<shift-1) != 0 {
		need++
	}
	if need > 1<<31-1 {
		return ferr(QCOW2, 24, "virtual size %d too big for the cluster size", h.VirtualSize)
	}
	if uint64(h.L1Size) < need {
		return ferr(QCOW2, 36, "its L1 table of %d entries is too small for a virtual size of %d bytes (needs %d)", h.L1Size, h.VirtualSize, need)
	}
	if h.L1Size > 0 && !tableOK(h.L1Offset, uint64(h.L1Size)*8, cluster) {
		return ferr(QCOW2, 40, "invalid L1 table offset %#x", h.L1Offset)
	}
	rtClusters := uint64(be.Uint32(b[56:]))
	if rtClusters > qcow2MaxRefTable>>h.ClusterBits {
		return ferr(QCOW2, 56, "refcount_table_clusters %d above QEMU's limit", rtClusters)
	}
	if !tableOK(be.Uint64(b[48:]), rtClusters<<h.ClusterBits, cluster) {
		return ferr(QCOW2, 48, "invalid refcount table offset %#x", be.Uint64(b[48:]))
	}
	if h.Snapshots > qcow2MaxSnapshots {
		return ferr(QCOW2, 60, "it claims %d internal snapshots, more than QEMU's %d", h.Snapshots, qcow2MaxSnapshots)
	}
	if !tableOK(h.SnapshotsOffset, uint64(h.Snapshots)*qcow2SnapshotHeader, cluster) {
		return ferr(QCOW2, 64, "invalid snapshot table offset %#x", h.SnapshotsOffset)
	}
	return nil
}

// tableOK is QEMU's validate_table_offset: cluster aligned, and the
// table's end within int64.
func tableOK(off, n, cluster uint64) bool {
	const maxInt64 = 1<<63 - 1
	return off%cluster == 0 && off <= maxInt64 && n <= maxInt64-off
}

// qcow2Backing reads the backing file name. QEMU requires it to lie in
// the first cluster and to be at most 1023 bytes.
func (s *src) qcow2Backing(h *Header, off, n, cluster uint64) error {
	if off == 0 {
		return nil
	}
	if off > cluster {
		return ferr(QCOW2, 8, "backing_file_offset %d beyond the first cluster (%d bytes)", off, cluster)
	}
	if n > maxBackingName || n > cluster-off {
		return ferr(QCOW2, 16, "backing_file_size %d too long (at most %d, within the first cluster)", n, maxBackingName)
	}
	b, err := s.bytesAt(QCOW2, off, n, "backing file name")
	if err != nil {
		return err
	}
	h.BackingFile, err = cstring(QCOW2, off, b, "backing file name")
	return err
}

// qcow2Extensions walks the header extensions from start to end (the
// backing file name, or the end of the first cluster) as QEMU's
// qcow2_read_extensions does. A known extension seen twice is refused:
// QEMU would take the last, a reader stopping early the first.
func (s *src) qcow2Extensions(h *Header, start, end uint64) error {
	seen := map[uint32]bool{}
	for off := start; off < end; {
		if end-off < 8 {
			return ferr(QCOW2, off, "header extension header runs past the end of the extension area (%d)", end)
		}
		if off >= uint64(s.size) {
			return nil // QEMU reads zeros past the end: an end marker
		}
		e, err := s.bytesAt(QCOW2, off, 8, "header extension")
		if err != nil {
			return err
		}
		typ, n := be.Uint32(e), uint64(be.Uint32(e[4:]))
		if n > end-off-8 {
			return ferr(QCOW2, off, "header extension %#x of %d bytes runs past the end of the extension area (%d)", typ, n, end)
		}
		if typ == extEnd {
			return nil
		}
		if seen[typ] && (typ == extBackingFormat || typ == extDataFile || typ == extCrypto) {
			return ferr(QCOW2, off, "header extension %#x appears twice", typ)
		}
		seen[typ] = true
		if err := s.qcow2Extension(h, typ, off+8, n); err != nil {
			return err
		}
		off += 8 + (n+7)&^7
	}
	return nil
}

// qcow2Extension reads one extension's data at off.
func (s *src) qcow2Extension(h *Header, typ uint32, off, n uint64) error {
	var err error
	switch typ {
	case extBackingFormat:
		if n >= 16 {
			return ferr(QCOW2, off-4, "backing format extension of %d bytes (QEMU allows 15)", n)
		}
		var b []byte
		if b, err = s.bytesAt(QCOW2, off, n, "backing format"); err == nil {
			h.BackingFormat, err = cstring(QCOW2, off, b, "backing format")
		}
	case extDataFile:
		var b []byte
		if b, err = s.bytesAt(QCOW2, off, n, "data file name"); err == nil {
			h.DataFile, err = cstring(QCOW2, off, b, "data file name")
		}
	case extCrypto:
		if h.CryptMethod != 2 {
			return ferr(QCOW2, off-8, "encryption header extension with crypt_method %d (only LUKS, 2, has one)", h.CryptMethod)
		}
		if n != 16 {
			return ferr(QCOW2, off-4, "encryption header extension of %d bytes (want 16)", n)
		}
		h.Encrypted = true
	}
	return err
}

// qcow1 reads QEMU's original qcow header (version 1), which can name
// a backing file too.
func (s *src) qcow1() (Header, error) {
	b := s.head
	if len(b) < 48 {
		return Header{}, ferr(QCOW1, 0, "header truncated at %d bytes (needs 48)", len(b))
	}
	h := Header{
		Format:      QCOW1,
		Version:     1,
		VirtualSize: be.Uint64(b[24:]),
		ClusterBits: uint32(b[32]),
		CryptMethod: be.Uint32(b[36:]),
		L1Offset:    be.Uint64(b[40:]),
	}
	switch {
	case h.VirtualSize <= 1:
		return Header{}, ferr(QCOW1, 24, "size %d", h.VirtualSize)
	case h.ClusterBits < 9 || h.ClusterBits > 16:
		return Header{}, ferr(QCOW1, 32, "cluster_bits %d out of range 9..16", h.ClusterBits)
	case b[33] < 6 || b[33] > 16:
		return Header{}, ferr(QCOW1, 33, "l2_bits %d out of range 6..16", b[33])
	case h.CryptMethod > 1:
		return Header{}, ferr(QCOW1, 36, "unknown crypt_method %d", h.CryptMethod)
	}
	h.Encrypted = h.CryptMethod != 0
	off, n := be.Uint64(b[8:]), uint64(be.Uint32(b[16:]))
	if off == 0 {
		return h, nil
	}
	if n > maxBackingName {
		return Header{}, ferr(QCOW1, 16, "backing_file_size %d above %d", n, maxBackingName)
	}
	name, err := s.bytesAt(QCOW1, off, n, "backing file name")
	if err != nil {
		return Header{}, err
	}
	h.BackingFile, err = cstring(QCOW1, off, name, "backing file name")
	return h, err
}
