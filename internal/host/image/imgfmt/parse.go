package imgfmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// HeadBytes and TailBytes bound what Parse reads: the first HeadBytes
// of the file and its last TailBytes (where VHD and DMG keep a footer).
// No header field can make Parse read or allocate more.
const (
	HeadBytes = 1 << 20
	TailBytes = 512
)

var (
	be = binary.BigEndian
	le = binary.LittleEndian
)

// firstRead is how much of the head Parse reads before it knows the
// format: enough for every signature (ISO's is at 32 KiB) and for the
// fixed headers. More is read only where a header points.
const firstRead = 64 << 10

// src is the bytes Parse may look at: the head and the tail of the file.
type src struct {
	r    io.ReaderAt
	size int64
	head []byte // the first bytes, at most HeadBytes
	tail []byte // the last min(size, TailBytes) bytes
}

// Parse reads the header of the image r (size bytes long) and says what
// format it is and which other files it names, so that a caller can
// refuse an image before qemu-img opens it. A file with no recognised
// signature is Raw. The error is a *FormatError when the file has a
// format's signature but a header that format's reader (QEMU's) would
// reject or that Parse cannot check within its bounds; any other error
// is r's.
func Parse(r io.ReaderAt, size int64) (Header, error) {
	if size < 0 {
		return Header{}, fmt.Errorf("imgfmt: negative size %d", size)
	}
	s := &src{r: r, size: size}
	if err := s.grow(firstRead); err != nil {
		return Header{}, err
	}
	tl := min(size, TailBytes)
	s.tail = make([]byte, tl)
	if err := readFull(r, s.tail, size-tl); err != nil {
		return Header{}, err
	}
	return s.parse()
}

// grow reads the head up to n bytes (within the file and HeadBytes),
// at least doubling it so that a walk through a header reads little.
func (s *src) grow(n uint64) error {
	limit := uint64(min(s.size, HeadBytes))
	n = min(max(n, 2*uint64(len(s.head))), limit)
	have := uint64(len(s.head))
	if n <= have {
		return nil
	}
	b := make([]byte, n)
	copy(b, s.head)
	if err := readFull(s.r, b[have:], int64(have)); err != nil {
		return err
	}
	s.head = b
	return nil
}

// readFull fills b from offset off; the file ending early is an error,
// since the caller said how long it is.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	if len(b) == 0 {
		return nil
	}
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("imgfmt: reading %d bytes at %d: %w", len(b), off, err)
}

// parse dispatches on the signatures, those at the start first.
func (s *src) parse() (Header, error) {
	h := s.head
	switch {
	case bytes.HasPrefix(h, []byte("QFI\xfb")):
		return s.qcow()
	case bytes.HasPrefix(h, []byte("QED\x00")):
		return s.qed()
	case bytes.HasPrefix(h, []byte("KDMV")):
		return s.vmdkSparse()
	case bytes.HasPrefix(h, []byte("COWD")):
		return Header{Format: VMDK, Version: 3}, nil
	case bytes.HasPrefix(h, []byte("vhdxfile")):
		return Header{Format: VHDX}, nil
	case bytes.HasPrefix(h, []byte("conectix")):
		return s.vhd(h), nil
	case bytes.HasPrefix(h, []byte("LUKS\xba\xbe")):
		return s.luks(), nil
	case bytes.HasPrefix(h, []byte("WithoutFreeSpace")), bytes.HasPrefix(h, []byte("WithouFreSpacExt")):
		return s.parallels(), nil
	case len(h) >= 0x48 && le.Uint32(h[0x40:]) == 0xbeda107f:
		return s.vdi(), nil
	case bytes.HasPrefix(h, []byte("<<< ")):
		return Header{Format: VDI}, nil
	case isVMDKText(h):
		return s.vmdkText(h), nil
	case len(h) >= 0x8006 && string(h[0x8001:0x8006]) == "CD001":
		return Header{Format: ISO, VirtualSize: uint64(s.size)}, nil
	case bytes.HasPrefix(s.tail, []byte("conectix")) && len(s.tail) == TailBytes:
		return s.vhd(s.tail), nil
	case bytes.HasPrefix(s.tail, []byte("koly")) && len(s.tail) == TailBytes:
		return Header{Format: DMG, VirtualSize: sectorsToBytes(be.Uint64(s.tail[0x1ec:]))}, nil
	}
	return Header{Format: Raw, VirtualSize: uint64(s.size)}, nil
}

// bytesAt is n bytes at off, or a FormatError saying whether they lie
// past the end of the file or past what Parse reads.
func (s *src) bytesAt(format string, off, n uint64, what string) ([]byte, error) {
	end := off + n
	if end < off || end > uint64(s.size) {
		return nil, ferr(format, off, "%s (%d bytes) runs past the end of the file (%d bytes)", what, n, s.size)
	}
	if end > HeadBytes {
		return nil, ferr(format, off, "%s lies beyond the first %d bytes, which is all Parse reads", what, HeadBytes)
	}
	if err := s.grow(end); err != nil {
		return nil, err
	}
	return s.head[off:end], nil
}

// cstring is a name stored with a length: a NUL in it would make QEMU
// see a shorter name than we would, so it is refused.
func cstring(format string, off uint64, b []byte, what string) (string, error) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return "", ferr(format, off+uint64(i), "%s contains a NUL byte", what)
	}
	return string(b), nil
}

// ferr makes a FormatError at off; an offset past int64 reads as -1.
func ferr(format string, off uint64, f string, a ...any) *FormatError {
	o := int64(off)
	if o < 0 {
		o = -1
	}
	return &FormatError{Format: format, Offset: o, Reason: fmt.Sprintf(f, a...)}
}
