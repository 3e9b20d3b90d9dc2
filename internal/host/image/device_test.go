package image

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestChainReaderAgrees: the guest disk read through qemu-img, chunk by
// chunk, from a qcow2 on a raw backing file, is byte for byte the raw
// file, at random offsets and lengths and across chunk boundaries; past
// the end is io.EOF.
func TestChainReaderAgrees(t *testing.T) {
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	dir := t.TempDir()
	raw := filepath.Join(dir, "base.raw")
	data := make([]byte, 3<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.IntN(256))
	}
	if err := os.WriteFile(raw, data, 0o600); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(dir, "top.qcow2")
	if out, err := exec.Command(qemuImg, "create", "-q", "-f", "qcow2", "-F", "raw", "-b", raw, top).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	c, err := OpenChain(context.Background(), qemuImg, top, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cr := NewChainReader(context.Background(), qemuImg, c)
	if cr.Size() != int64(len(data)) {
		t.Fatalf("size %d", cr.Size())
	}
	for i := 0; i < 20; i++ {
		off := r.Int64N(int64(len(data)))
		n := 1 + r.IntN(300<<10)
		got := make([]byte, n)
		k, err := cr.ReadAt(got, off)
		want := data[off:min(off+int64(n), int64(len(data)))]
		if !bytes.Equal(got[:k], want) || (k < n && err != io.EOF) {
			t.Fatalf("ReadAt(%d bytes at %d): %d bytes, %v; differs from the raw file", n, off, k, err)
		}
	}
	if k, err := cr.ReadAt(make([]byte, 10), int64(len(data))); k != 0 || err != io.EOF {
		t.Errorf("past the end: %d %v", k, err)
	}
}
