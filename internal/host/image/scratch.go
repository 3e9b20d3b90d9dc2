package image

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// scratchFile is a file with no name for a helper's output: O_TMPFILE
// in the temporary directory, or, where its filesystem has none, a named
// file removed at once. A SIGKILL of sealprep then leaves nothing behind;
// the helper writes it as /proc/self/fd/N.
func scratchFile() (*os.File, error) {
	dir := os.TempDir()
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), filepath.Join(dir, "(sealprep scratch file)")), nil
	}
	f, err := os.CreateTemp("", "sealprep-scratch-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}

// ddRaw reads n bytes of the chain's guest disk through qemu-img dd
// (bounded, the layers as descriptors) with args (count, skip) into a
// scratch file, and returns them.
func ddRaw(ctx context.Context, qemuImg string, c *Chain, n int64, args ...string) ([]byte, error) {
	out, err := scratchFile()
	if err != nil {
		return nil, err
	}
	defer out.Close()
	var files []*os.File
	for _, l := range c.Layers {
		files = append(files, l.File)
	}
	files = append(files, out)
	full := append([]string{"dd", "-f", c.Top().Format, "-O", "raw", "bs=512"}, args...)
	full = append(full, "if="+chainSpec(c), fmt.Sprintf("of=/proc/self/fd/%d", 2+len(files)))
	if _, errs, err := runLimited(ctx, QemuImgLimits, qemuImg, full, files); err != nil {
		return nil, fmt.Errorf("qemu-img dd %s: %v: %s", c.Top().Path, err, firstLine(errs))
	}
	return io.ReadAll(io.NewSectionReader(out, 0, n))
}
