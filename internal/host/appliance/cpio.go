package appliance

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// cpioWriter writes a "newc" cpio archive, the initramfs format
// (Documentation/driver-api/early-userspace/buffer-format.rst): a
// 110-byte ASCII header of hex fields per entry, the name with its NUL,
// the data, each padded to 4 bytes, and a TRAILER!!! entry at the end.
// The kernel unpacks several archives laid end to end, which is how a
// run's job joins the cached initramfs.
type cpioWriter struct {
	w   io.Writer
	ino uint32
	err error
}

// cpio modes (stat.h's S_IFDIR and S_IFREG).
const (
	cpioDir  = 0o040000
	cpioFile = 0o100000
)

func (c *cpioWriter) entry(name string, mode uint32, data []byte) {
	c.entryFrom(name, mode, int64(len(data)), bytes.NewReader(data))
}

// entryFrom writes an entry of size bytes read from r.
func (c *cpioWriter) entryFrom(name string, mode uint32, size int64, r io.Reader) {
	if c.err != nil {
		return
	}
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\x00") {
		c.err = fmt.Errorf("cpio: bad name %q", name)
		return
	}
	if size < 0 || size > 0xffffffff {
		c.err = fmt.Errorf("cpio: %s: %d bytes do not fit newc's size field", name, size)
		return
	}
	c.ino++
	nlink := 1
	if mode&cpioDir != 0 {
		nlink = 2
	}
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	// devminor, rdevmajor, rdevminor, namesize, check. mtime 0 keeps the
	// archive the same for the same content (the cache key).
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(name)+1, 0)
	buf := make([]byte, 0, len(hdr)+len(name)+4)
	buf = append(buf, hdr...)
	buf = append(buf, name...)
	buf = append(buf, 0)
	buf = pad4(buf)
	if _, c.err = c.w.Write(buf); c.err != nil {
		return
	}
	n, err := io.Copy(c.w, io.LimitReader(r, size))
	if err == nil && n != size {
		err = fmt.Errorf("cpio: %s: %d bytes of %d", name, n, size)
	}
	if err != nil {
		c.err = err
		return
	}
	if pad := (4 - size%4) % 4; pad > 0 {
		_, c.err = c.w.Write(make([]byte, pad))
	}
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// Dir adds a directory (0755).
func (c *cpioWriter) Dir(name string) { c.entry(name, cpioDir|0o755, nil) }

// File adds a regular file with mode's permission bits.
func (c *cpioWriter) File(name string, perm uint32, data []byte) {
	c.entry(name, cpioFile|perm&0o7777, data)
}

// FileFrom adds a regular file of size bytes read from r.
func (c *cpioWriter) FileFrom(name string, perm uint32, size int64, r io.Reader) {
	c.entryFrom(name, cpioFile|perm&0o7777, size, r)
}

// Close writes the trailer and says whether every write went through.
func (c *cpioWriter) Close() error {
	if c.err != nil {
		return c.err
	}
	c.ino = 0
	c.entry("TRAILER!!!", 0, nil)
	return c.err
}
