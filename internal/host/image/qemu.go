package image

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrInUse is a refusal: another process (a running QEMU) holds the
// image's lock.
var ErrInUse = errors.New("image in use")

// OpenChain vets file and its backing chain (Vet), then asks qemu-img, bounded
// and told each format, what it sees in each layer on its own; a layer it
// reads differently from the Go inspector is refused. The chain's files
// stay open for the caller, who hands them to the tools that attach or
// boot the image, and closes them.
func OpenChain(ctx context.Context, qemuImg, file string, p Policy) (*Chain, error) {
	c, err := Vet(file, p)
	if err != nil {
		return nil, err
	}
	for _, l := range c.Layers {
		if err := agree(ctx, qemuImg, l); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// qemuImgInfo is the part of `qemu-img info --output=json` compared.
type qemuImgInfo struct {
	Format         string `json:"format"`
	VirtualSize    int64  `json:"virtual-size"`
	Encrypted      bool   `json:"encrypted"`
	BackingName    string `json:"backing-filename"`
	BackingFormat  string `json:"backing-filename-format"`
	FormatSpecific struct {
		Data struct {
			DataFile string `json:"data-file"`
		} `json:"data"`
	} `json:"format-specific"`
}

// parseInfo reads the JSON of `qemu-img info --output=json` on one layer.
func parseInfo(b []byte) (qemuImgInfo, error) {
	var in qemuImgInfo
	if err := json.Unmarshal(b, &in); err != nil {
		return qemuImgInfo{}, fmt.Errorf("qemu-img info output: %w", err)
	}
	if in.Format == "" || in.VirtualSize <= 0 {
		return qemuImgInfo{}, errors.New("qemu-img info output: no format or virtual size")
	}
	return in, nil
}

// layerSpec is the json: filename that opens one vetted layer through
// its fd, with the format given and, for qcow2, no backing file: qemu-img
// then reads this header alone and opens nothing it names.
func layerSpec(format string, fd int, readOnly bool) string {
	m := map[string]any{"driver": format,
		"file": map[string]any{"driver": "file", "filename": fmt.Sprintf("/proc/self/fd/%d", fd), "read-only": readOnly}}
	if format == "qcow2" {
		m["backing"] = nil
	}
	b, _ := json.Marshal(m)
	return "json:" + string(b)
}

// agree runs qemu-img info on one layer and compares it with the header
// the Go inspector read. A lock held by another QEMU makes qemu-img fail
// with "Failed to get shared "write" lock": that is ErrInUse.
func agree(ctx context.Context, qemuImg string, l Layer) error {
	out, errs, err := runLimited(ctx, QemuImgLimits, qemuImg,
		[]string{"info", "--output=json", "-f", l.Format, layerSpec(l.Format, 3, true)}, []*os.File{l.File})
	if err != nil {
		// QEMU says 'Failed to get shared "write" lock' (or '"write"
		// lock'); "block" alone is no lock.
		if strings.Contains(errs, "Failed to get") && strings.Contains(errs, "lock") {
			return fmt.Errorf("%w: qemu-img info: %s", ErrInUse, firstLine(errs))
		}
		if errs != "" {
			return refuse("%s: qemu-img cannot read it (%s); refused", l.Path, firstLine(errs))
		}
		return fmt.Errorf("qemu-img info %s: %v", l.Path, err)
	}
	in, err := parseInfo(out)
	if err != nil {
		return refuse("%s: %v; refused", l.Path, err)
	}
	h := l.hdr
	for _, d := range []struct {
		what         string
		inGo, inQEMU any
	}{
		{"format", h.Format, in.Format},
		{"virtual size", int64(h.VirtualSize), in.VirtualSize},
		{"backing file", h.BackingFile, in.BackingName},
		{"backing format", h.BackingFormat, in.BackingFormat},
		{"data file", h.DataFile, in.FormatSpecific.Data.DataFile},
		{"encryption", h.Encrypted, in.Encrypted},
	} {
		if d.inGo != d.inQEMU {
			return refuse("%s: qemu-img reads its %s as %v, its header as %v; a header two readers disagree on is refused", l.Path, d.what, d.inQEMU, d.inGo)
		}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// qsdArgs are the qemu-storage-daemon arguments that export the image's
// format layer as a regular file at mountpoint through FUSE. Every layer
// of the vetted chain is given by its fd (/proc/self/fd/3 and on, in
// chain order) with its format and its backing node spelled out, so the
// daemon never follows a name written in a header. Backing layers are
// always read-only: writes land in the top layer only.
func qsdArgs(c *Chain, mountpoint string, readOnly bool) []string {
	// discard=unmap passes --fstrim's discards down to the qcow2 (freed
	// clusters) and the file (holes), so the template shrinks.
	discard := "unmap"
	if readOnly {
		discard = "ignore"
	}
	var args []string
	for i := len(c.Layers) - 1; i >= 0; i-- {
		l := c.Layers[i]
		ro := readOnly || i > 0
		d := discard
		if i > 0 {
			d = "ignore"
		}
		file, _ := json.Marshal(map[string]any{"driver": "file", "node-name": fmt.Sprintf("sealprep-file%d", i),
			"filename": fmt.Sprintf("/proc/self/fd/%d", 3+i), "read-only": ro, "locking": "on", "discard": d})
		f := map[string]any{"driver": l.Format, "node-name": fmt.Sprintf("sealprep-fmt%d", i),
			"file": fmt.Sprintf("sealprep-file%d", i), "read-only": ro, "discard": d}
		if l.Format == "qcow2" {
			if i+1 < len(c.Layers) {
				f["backing"] = fmt.Sprintf("sealprep-fmt%d", i+1)
			} else {
				f["backing"] = nil
			}
		}
		fm, _ := json.Marshal(f)
		args = append(args, "--blockdev", string(file), "--blockdev", string(fm))
	}
	export, _ := json.Marshal(map[string]any{"type": "fuse", "id": "sealprep-export", "node-name": "sealprep-fmt0",
		"mountpoint": mountpoint, "writable": !readOnly, "growable": false})
	return append(args, "--export", string(export))
}

// chainSpec is the json: filename of the whole vetted chain, read-only:
// each layer through its fd (3 and on, in chain order) with its format,
// and each backing node spelled out, so qemu-img follows no header name.
func chainSpec(c *Chain) string {
	var node any
	for i := len(c.Layers) - 1; i >= 0; i-- {
		l := c.Layers[i]
		m := map[string]any{"driver": l.Format,
			"file": map[string]any{"driver": "file", "filename": fmt.Sprintf("/proc/self/fd/%d", 3+i), "read-only": true}}
		if l.Format == "qcow2" {
			m["backing"] = node
		}
		node = m
	}
	b, _ := json.Marshal(node)
	return "json:" + string(b)
}

// ReadHead reads the guest disk's first sectors (n of 512 bytes) through
// qemu-img, which knows qcow2's clusters and compression, into memory:
// the chain as vetted, bounded as every qemu-img run is.
func ReadHead(ctx context.Context, qemuImg string, c *Chain, sectors int) ([]byte, error) {
	return ddRaw(ctx, qemuImg, c, int64(sectors)*512, fmt.Sprintf("count=%d", sectors))
}
