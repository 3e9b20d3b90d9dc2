package imgfmt

import "encoding/binary"

// ext is one qcow2 header extension for the builder.
type ext struct {
	typ  uint32
	data []byte
}

// q2 describes a qcow2 header the tests build byte by byte: 512-byte
// clusters, 1 MiB virtual size, tables laid out after the header
// cluster. Zero fields take those defaults.
type q2 struct {
	version     uint32
	clusterBits uint32
	size        uint64
	backing     string
	backingOff  uint64 // where the name goes; 0 after the extensions
	backingLen  uint32 // 0: the name's length
	exts        []ext
	incompat    uint64
	autoclear   uint64
	crypt       uint32
	hdrLen      uint32 // 0: 104 (112 when ctype is set)
	ctype       byte
	l1Size      uint32 // 0: what size needs
	l1Off       uint64
	snapshots   uint32
	snapOff     uint64
	fileLen     int // 0: four clusters
	poke        func(b []byte)
}

func (q q2) build() []byte {
	if q.version == 0 {
		q.version = 3
	}
	if q.clusterBits == 0 {
		q.clusterBits = 9
	}
	if q.size == 0 {
		q.size = 1 << 20
	}
	cluster := 1 << q.clusterBits
	if q.fileLen == 0 {
		q.fileLen = 4 * cluster
	}
	if q.l1Size == 0 {
		shift := q.clusterBits + q.clusterBits - 3
		q.l1Size = uint32((q.size + 1<<shift - 1) >> shift)
	}
	if q.l1Off == 0 {
		q.l1Off = uint64(2 * cluster)
	}
	b := make([]byte, q.fileLen)
	be := binary.BigEndian
	copy(b, "QFI\xfb")
	be.PutUint32(b[4:], q.version)
	be.PutUint32(b[20:], q.clusterBits)
	be.PutUint64(b[24:], q.size)
	be.PutUint32(b[32:], q.crypt)
	be.PutUint32(b[36:], q.l1Size)
	be.PutUint64(b[40:], q.l1Off)
	be.PutUint64(b[48:], uint64(cluster))
	be.PutUint32(b[56:], 1)
	be.PutUint32(b[60:], q.snapshots)
	be.PutUint64(b[64:], q.snapOff)
	off := 72
	if q.version == 3 {
		if q.hdrLen == 0 {
			q.hdrLen = 104
			if q.ctype != 0 {
				q.hdrLen = 112
			}
		}
		be.PutUint64(b[72:], q.incompat)
		be.PutUint64(b[88:], q.autoclear)
		be.PutUint32(b[96:], 4)
		be.PutUint32(b[100:], q.hdrLen)
		if q.hdrLen > 104 && int(q.hdrLen) <= len(b) {
			b[104] = q.ctype
		}
		off = int(q.hdrLen)
	}
	for _, e := range q.exts {
		be.PutUint32(b[off:], e.typ)
		be.PutUint32(b[off+4:], uint32(len(e.data)))
		copy(b[off+8:], e.data)
		off += 8 + (len(e.data)+7)&^7
	}
	off += 8 // the end marker, zeros
	if q.backing != "" {
		if q.backingOff == 0 {
			q.backingOff = uint64(off)
		}
		if q.backingLen == 0 {
			q.backingLen = uint32(len(q.backing))
		}
		be.PutUint64(b[8:], q.backingOff)
		be.PutUint32(b[16:], q.backingLen)
		if int(q.backingOff) < len(b) {
			copy(b[q.backingOff:], q.backing)
		}
	}
	if q.poke != nil {
		q.poke(b)
	}
	return b
}

// put writes v big-endian at off, for pokes.
func put32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }
func put64(b []byte, off int, v uint64) { binary.BigEndian.PutUint64(b[off:], v) }
