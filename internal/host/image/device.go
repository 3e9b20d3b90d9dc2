package image

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// OpenDevice is Open inside the sealing appliance: the image is the block
// device dev that the appliance's QEMU made of the vetted chain, so there
// is nothing to vet, lock or export; the root is found and mounted by the
// same rules (mountAll), on loop devices over dev as on the host, but by
// the appliance's own kernel. file names the image in messages.
func OpenDevice(ctx context.Context, dev, file string, o Options) (*Session, error) {
	s := &Session{File: file, opts: o, lockFD: -1, disk: dev, lvm: true,
		Method: "loop devices inside the sealing appliance"}
	if err := s.makeDir(); err != nil {
		return nil, err
	}
	// The disk is QEMU's: nothing to attach.
	return s.mount(ctx, func(context.Context) error { return nil })
}

// backing is the file a loop device for p reads: the disk, or the
// logical volume's own device.
func (p Part) backing(disk string) string {
	if p.Device != "" {
		return p.Device
	}
	return disk
}

// chunkSize is how much of the guest disk ChainReader fetches at once:
// one qemu-img run covers a partition table, or a partition's
// superblocks (btrfs's first is at 64 KiB).
const chunkSize = 256 << 10

// maxChunks bounds what ChainReader keeps (maxParts partitions' heads
// and the table).
const maxChunks = 2 * maxParts

// ChainReader reads the guest disk a vetted chain holds, through
// qemu-img (bounded as every qemu-img run is) for qcow2, or the raw
// file's own descriptor, so that the host can read the partition table
// and the superblocks' types in Go (ScanDisk) without attaching the image
// or handing its filesystems to the host's kernel.
type ChainReader struct {
	ctx     context.Context
	qemuImg string
	chain   *Chain
	mu      sync.Mutex
	chunks  map[int64][]byte
}

// NewChainReader reads c's disk.
func NewChainReader(ctx context.Context, qemuImg string, c *Chain) *ChainReader {
	return &ChainReader{ctx: ctx, qemuImg: qemuImg, chain: c, chunks: map[int64][]byte{}}
}

// Size is the guest disk's size.
func (r *ChainReader) Size() int64 { return r.chain.Top().VirtualSize }

// ReadAt reads the guest disk at off.
func (r *ChainReader) ReadAt(p []byte, off int64) (int, error) {
	if len(r.chain.Layers) == 1 && r.chain.Top().Format == "raw" {
		return r.chain.Top().File.ReadAt(p, off)
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos >= r.Size() {
			return n, io.EOF
		}
		c, err := r.chunk(pos / chunkSize)
		if err != nil {
			return n, err
		}
		if pos%chunkSize >= int64(len(c)) {
			return n, io.EOF
		}
		k := copy(p[n:], c[pos%chunkSize:])
		if k == 0 {
			return n, io.EOF
		}
		n += k
	}
	return n, nil
}

func (r *ChainReader) chunk(i int64) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.chunks[i]; ok {
		return c, nil
	}
	if len(r.chunks) >= maxChunks {
		return nil, fmt.Errorf("the image's partitions ask for more than %d reads of its disk", maxChunks)
	}
	c, err := readRange(r.ctx, r.qemuImg, r.chain, i*chunkSize, chunkSize)
	if err != nil {
		return nil, err
	}
	r.chunks[i] = c
	return c, nil
}

// readRange reads n bytes of the guest disk at off (both multiples of
// 512) through qemu-img dd, like ReadHead. qemu-img dd's count is where
// it stops, counted from the disk's start with the skipped blocks
// included, not how many it copies.
func readRange(ctx context.Context, qemuImg string, c *Chain, off, n int64) ([]byte, error) {
	return ddRaw(ctx, qemuImg, c, n, fmt.Sprintf("skip=%d", off/512), fmt.Sprintf("count=%d", (off+n)/512))
}

// ScanChain is ScanDisk on the session's vetted chain (Prepare), read in
// Go on the host: the partition table and what each partition's
// superblock says it is, so that the appliance's initramfs gets the
// modules of exactly these filesystem types. Nothing is attached or
// mounted.
func (s *Session) ScanChain(ctx context.Context) ([]Part, error) {
	qemuImg, err := s.opts.tool("qemu-img", "qemu-utils")
	if err != nil {
		return nil, refuse("cannot inspect the image: %v", err)
	}
	r := NewChainReader(ctx, qemuImg, s.Chain)
	parts, _, err := ScanDisk(r, r.Size())
	if err != nil {
		return nil, refuse("%v", err)
	}
	return parts, nil
}
