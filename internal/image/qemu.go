package image

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Info is what qemu-img info says about an image and its backing chain.
type Info struct {
	Format      string
	VirtualSize int64
	Encrypted   bool
	// Backing is the backing chain below the image, nearest first.
	Backing []string
}

type qemuImgInfo struct {
	Filename        string `json:"filename"`
	Format          string `json:"format"`
	VirtualSize     int64  `json:"virtual-size"`
	Encrypted       bool   `json:"encrypted"`
	BackingFilename string `json:"full-backing-filename"`
}

// ParseInfo reads the JSON of `qemu-img info --output=json
// --backing-chain`: an array, the image first, then each backing file.
func ParseInfo(b []byte) (Info, error) {
	var chain []qemuImgInfo
	if err := json.Unmarshal(b, &chain); err != nil {
		return Info{}, fmt.Errorf("qemu-img info output: %w", err)
	}
	if len(chain) == 0 {
		return Info{}, errors.New("qemu-img info output: empty backing chain")
	}
	top := chain[0]
	if top.Format == "" || top.VirtualSize <= 0 {
		return Info{}, fmt.Errorf("qemu-img info output: no format or virtual size for %q", top.Filename)
	}
	in := Info{Format: top.Format, VirtualSize: top.VirtualSize, Encrypted: top.Encrypted}
	for _, c := range chain[1:] {
		in.Backing = append(in.Backing, c.Filename)
		in.Encrypted = in.Encrypted || c.Encrypted
	}
	return in, nil
}

// ErrInUse is a refusal: another process (a running QEMU) holds the
// image's lock.
var ErrInUse = errors.New("image in use")

// inspect runs qemu-img info. A lock held by another QEMU makes qemu-img
// fail with "Failed to get shared "write" lock": that is ErrInUse.
func inspect(ctx context.Context, qemuImg, file string) (Info, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	c := exec.CommandContext(ctx, qemuImg, "info", "--output=json", "--backing-chain", "--", file)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if strings.Contains(msg, "lock") {
			return Info{}, fmt.Errorf("%w: qemu-img info: %s", ErrInUse, firstLine(msg))
		}
		return Info{}, fmt.Errorf("qemu-img info %s: %v: %s", file, err, firstLine(msg))
	}
	return ParseInfo(out.Bytes())
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// qsdArgs are the qemu-storage-daemon arguments that export the image's
// format layer as a regular file at mountpoint through FUSE. Backing files
// are opened read-only by QEMU itself: writes land in the top layer only.
func qsdArgs(file, format, mountpoint string, readOnly bool) ([]string, error) {
	// discard=unmap passes --fstrim's discards down to the qcow2 (freed
	// clusters) and the file (holes), so the template shrinks.
	discard := "unmap"
	if readOnly {
		discard = "ignore"
	}
	fileNode, _ := json.Marshal(map[string]any{"driver": "file", "node-name": "sealprep-file", "filename": file,
		"read-only": readOnly, "locking": "on", "discard": discard})
	fmtNode, _ := json.Marshal(map[string]any{"driver": format, "node-name": "sealprep-fmt", "file": "sealprep-file",
		"read-only": readOnly, "discard": discard})
	export, _ := json.Marshal(map[string]any{"type": "fuse", "id": "sealprep-export", "node-name": "sealprep-fmt",
		"mountpoint": mountpoint, "writable": !readOnly, "growable": false})
	return []string{"--blockdev", string(fileNode), "--blockdev", string(fmtNode), "--export", string(export)}, nil
}

// Inspect runs qemu-img info on file: its format, size and backing chain,
// or ErrInUse when a running QEMU holds its write lock. sealprep prove
// uses it to refuse a template in use before it boots clones of it.
func Inspect(ctx context.Context, qemuImg, file string) (Info, error) {
	return inspect(ctx, qemuImg, file)
}
