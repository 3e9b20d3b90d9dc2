package image

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// qemu-img dd's output has no name: ReadHead and the chain reader read
// the right bytes, and the temporary directory, watched all along, never
// holds a file of theirs, so a SIGKILL of sealprep can leave none.
func TestScratchReadsLeaveNoName(t *testing.T) {
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	raw := filepath.Join(dir, "disk.raw")
	data := bytes.Repeat([]byte("sealprep scratch "), 1<<16)
	if err := os.WriteFile(raw, data[:1<<20], 0o600); err != nil {
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
	seen := make(chan map[string]bool, 1)
	stop := make(chan struct{})
	go func() {
		names := map[string]bool{}
		for {
			select {
			case <-stop:
				seen <- names
				return
			default:
			}
			ents, _ := os.ReadDir(tmp)
			for _, e := range ents {
				names[e.Name()] = true
			}
		}
	}()
	head, herr := ReadHead(context.Background(), qemuImg, c, 8)
	got := make([]byte, 300<<10)
	k, rerr := NewChainReader(context.Background(), qemuImg, c).ReadAt(got, 4096)
	close(stop)
	if names := <-seen; len(names) > 0 {
		t.Errorf("named files in the temporary directory while qemu-img read: %v", names)
	}
	if herr != nil || !bytes.Equal(head, data[:8*512]) {
		t.Errorf("ReadHead: %v, or other bytes than the disk's", herr)
	}
	if rerr != nil || !bytes.Equal(got[:k], data[4096:4096+len(got)]) {
		t.Errorf("ChainReader: %d bytes, %v, or other bytes than the disk's", k, rerr)
	}
}
