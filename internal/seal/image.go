package seal

import (
	"fmt"
	"io"
)

// ImageInfo is how an --image run reached the root: the image, how it was
// attached and what was mounted where. Reports carry it so that a pipeline
// log says which partition was sealed.
type ImageInfo struct {
	File   string `json:"file"`
	Format string `json:"format"`
	// Method is how the image was attached ("loop device on the raw
	// file", "qemu-storage-daemon FUSE export + loop device").
	Method string `json:"method"`
	// Backing is the qcow2 backing chain, which is only read.
	Backing []string     `json:"backing,omitempty"`
	Mounts  []ImageMount `json:"mounts"`
	// Notes say what was not mounted or done, and why.
	Notes []string `json:"notes,omitempty"`
	// Recovered is what killed earlier runs had left and this run undid.
	Recovered []string `json:"recovered,omitempty"`
	// Detached is set once everything was unmounted and detached; a
	// failure to detach is reported in DetachError.
	Detached    bool   `json:"detached"`
	DetachError string `json:"detach_error,omitempty"`
}

// ImageMount is one filesystem of the image mounted for the run.
type ImageMount struct {
	Path     string `json:"path"`   // the guest's mount point
	Dir      string `json:"dir"`    // where on the host
	Device   string `json:"device"` // the loop device
	Source   string `json:"source"` // "partition 2 (ext4)"
	How      string `json:"how"`    // why this partition
	ReadOnly bool   `json:"read_only"`
}

func writeImageText(w io.Writer, im *ImageInfo) {
	fmt.Fprintf(w, "image %s (%s), attached by %s\n", im.File, im.Format, im.Method)
	for _, b := range im.Backing {
		fmt.Fprintf(w, "  backing file (read only): %s\n", b)
	}
	for _, m := range im.Mounts {
		ro := ""
		if m.ReadOnly {
			ro = ", read-only"
		}
		fmt.Fprintf(w, "  mounted %-9s %s on %s (%s%s): %s\n", m.Path, m.Source, m.Device, m.Dir, ro, m.How)
	}
	for _, n := range im.Notes {
		wrap(w, "  note: ", "    ", n)
	}
	for _, r := range im.Recovered {
		wrap(w, "  recovered: ", "    ", r)
	}
	if im.DetachError != "" {
		wrap(w, "  DETACH FAILED: ", "    ", im.DetachError)
	} else if im.Detached {
		fmt.Fprintln(w, "  unmounted and detached")
	}
}
