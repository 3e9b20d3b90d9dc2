package seal

import (
	"fmt"
	"io"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// ImageInfo is how an --image run reached the root: the image, how it was
// attached and what was mounted where. Reports carry it so that a pipeline
// log says which partition was sealed.
type ImageInfo struct {
	File   string `json:"file"`
	Format string `json:"format"`
	// Method is how the image was attached ("a loop device on the raw
	// file", "qemu-storage-daemon's FUSE export and a loop device").
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
	// Appliance is set when the sealing appliance did the work: the
	// image's filesystems were mounted only by its kernel, inside QEMU.
	Appliance *ApplianceInfo `json:"appliance,omitempty"`
}

// ApplianceInfo says how the sealing appliance ran.
type ApplianceInfo struct {
	// Kernel is the appliance kernel's release, Accel QEMU's
	// accelerator (kvm or tcg).
	Kernel string `json:"kernel"`
	Accel  string `json:"accel"`
	// Seconds is from QEMU's start to its end, BootSeconds to the
	// appliance's first word (its kernel booted, its modules loaded).
	Seconds     float64 `json:"seconds"`
	BootSeconds float64 `json:"boot_seconds"`
}

// ImageMount is one filesystem of the image mounted for the run.
type ImageMount struct {
	Path     string `json:"path"`   // the guest's mount point
	Dir      string `json:"dir"`    // where on the host
	Device   string `json:"device"` // the loop device
	Source   string `json:"source"` // "partition 2 (ext4)"
	How      string `json:"how"`    // why this partition
	ReadOnly bool   `json:"read_only"`
	// Partition is its number (0: the whole disk); FSType, Label and UUID
	// are its filesystem's.
	Partition int `json:"partition"`
	// Volume is the LVM logical volume ("vg/lv") it is on, if any.
	Volume string `json:"volume,omitempty"`
	FSType string `json:"fstype"`
	Label  string `json:"label,omitempty"`
	UUID   string `json:"uuid,omitempty"`
}

// Name is the partition as a person finds it in the image: "partition 1
// (ext4, LABEL=rootfs)", or by UUID when the filesystem has no label.
func (m ImageMount) Name() string {
	name := "the whole disk"
	switch {
	case m.Volume != "":
		name = "logical volume " + m.Volume
	case m.Partition > 0:
		name = fmt.Sprintf("partition %d", m.Partition)
	}
	var in []string
	if m.FSType != "" {
		in = append(in, m.FSType)
	}
	switch {
	case m.Label != "":
		in = append(in, "LABEL="+m.Label)
	case m.UUID != "":
		in = append(in, "UUID="+m.UUID)
	}
	if len(in) == 0 {
		return name
	}
	return name + " (" + strings.Join(in, ", ") + ")"
}

// writeImageHeader names the image and its root partition once, in the
// report's first line, then how it was attached and what else was
// mounted, by guest path: the host directories of the session are the
// JSON's business, not a person's.
func writeImageHeader(w io.Writer, command string, im *ImageInfo) {
	if len(im.Mounts) == 0 {
		fmt.Fprintf(w, "sealprep %s: image %s\n", command, im.File)
	} else {
		fmt.Fprintf(w, "sealprep %s: image %s, %s\n", command, im.File, im.Mounts[0].Name())
		access := "read-write"
		if im.Mounts[0].ReadOnly {
			access = "read-only"
		}
		fmt.Fprintf(w, "  %s image, attached %s through %s\n", im.Format, access, im.Method)
		fmt.Fprintf(w, "  root: %s\n", im.Mounts[0].How)
		for _, m := range im.Mounts[1:] {
			fmt.Fprintf(w, "  %s: %s, %s\n", m.Path, m.Name(), m.How)
		}
	}
	if a := im.Appliance; a != nil {
		fmt.Fprintf(w, "  appliance: kernel %s under %s, %.1f s (%.1f s to boot); the image's filesystems were mounted only inside it\n", a.Kernel, a.Accel, a.Seconds, a.BootSeconds)
	}
	for _, b := range im.Backing {
		fmt.Fprintf(w, "  backing file (only read): %s\n", b)
	}
	for _, n := range im.Notes {
		fmt.Fprintf(w, "  note: %s\n", problem.OneLine(n))
	}
	for _, r := range im.Recovered {
		fmt.Fprintf(w, "  recovered: %s\n", problem.OneLine(r))
	}
	if im.DetachError != "" {
		fmt.Fprintf(w, "  DETACH FAILED: %s\n", problem.OneLine(im.DetachError))
	} else if im.Detached {
		fmt.Fprintln(w, "  unmounted and detached")
	}
}
