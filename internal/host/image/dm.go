package image

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/parse/lvm2"
)

// The device mapper's control interface (linux/dm-ioctl.h): every ioctl
// takes a struct dm_ioctl of 312 bytes, followed by its data.
const (
	dmIoctlSize  = 312
	dmNameLen    = 128
	dmUUIDLen    = 129
	dmTargetSize = 40 // struct dm_target_spec
	// _IOWR(0xfd, nr, struct dm_ioctl)
	dmDevCreate  = 0xc0000000 | dmIoctlSize<<16 | 0xfd<<8 | 3
	dmDevRemove  = 0xc0000000 | dmIoctlSize<<16 | 0xfd<<8 | 4
	dmDevSuspend = 0xc0000000 | dmIoctlSize<<16 | 0xfd<<8 | 6
	dmTableLoad  = 0xc0000000 | dmIoctlSize<<16 | 0xfd<<8 | 9
	dmReadOnly   = 1 << 0
)

// dmIoctl builds a struct dm_ioctl for the device name, with data after
// it, and runs ioctl req on the control device; it returns the struct as
// the kernel left it.
func dmIoctl(ctl int, req uint, name string, flags uint32, targets int, data []byte) ([]byte, error) {
	buf := make([]byte, dmIoctlSize+len(data))
	le := binary.LittleEndian
	le.PutUint32(buf[0:], 4) // version 4.0.0
	le.PutUint32(buf[12:], uint32(len(buf)))
	le.PutUint32(buf[16:], dmIoctlSize)
	le.PutUint32(buf[20:], uint32(targets))
	le.PutUint32(buf[28:], flags)
	copy(buf[48:48+dmNameLen-1], name)
	copy(buf[dmIoctlSize:], data)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(ctl), uintptr(req), uintptr(unsafe.Pointer(&buf[0])))
	if errno != 0 {
		return nil, errno
	}
	return buf, nil
}

// dmTable is a table of linear targets over the device dev (major:minor).
func dmTable(targets []lvm2.Target, dev string, base int64) []byte {
	var out []byte
	le := binary.LittleEndian
	for i, t := range targets {
		params := fmt.Sprintf("%s %d", dev, base+t.Offset)
		n := dmTargetSize + len(params) + 1
		n = (n + 7) &^ 7
		spec := make([]byte, n)
		le.PutUint64(spec[0:], uint64(t.Start))
		le.PutUint64(spec[8:], uint64(t.Length))
		if i+1 < len(targets) {
			le.PutUint32(spec[20:], uint32(n))
		}
		copy(spec[24:40], "linear")
		copy(spec[dmTargetSize:], params)
		out = append(out, spec...)
	}
	return out
}

// dmCreate makes a device-mapper device name of linear targets over the
// block device disk (base: the PV's first sector on it) and returns its
// node, /dev/dm-N, which devtmpfs makes.
func dmCreate(name, disk string, base int64, targets []lvm2.Target, readOnly bool) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(disk, &st); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return "", fmt.Errorf("%s is not a block device", disk)
	}
	ctl, err := unix.Open("/dev/mapper/control", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("the device mapper: %w (is dm_mod loaded?)", err)
	}
	defer unix.Close(ctl)
	var flags uint32
	if readOnly {
		flags = dmReadOnly
	}
	res, err := dmIoctl(ctl, dmDevCreate, name, flags, 0, nil)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	devNum := binary.LittleEndian.Uint64(res[40:48])
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	if _, err := dmIoctl(ctl, dmTableLoad, name, flags, len(targets), dmTable(targets, dev, base)); err != nil {
		dmIoctl(ctl, dmDevRemove, name, 0, 0, nil)
		return "", fmt.Errorf("load %s's table: %w", name, err)
	}
	// DM_DEV_SUSPEND without the suspend flag resumes: the table goes live.
	if _, err := dmIoctl(ctl, dmDevSuspend, name, flags, 0, nil); err != nil {
		dmIoctl(ctl, dmDevRemove, name, 0, 0, nil)
		return "", fmt.Errorf("resume %s: %w", name, err)
	}
	node := fmt.Sprintf("/dev/dm-%d", unix.Minor(devNum))
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(node); err == nil {
			return node, nil
		}
		if time.Now().After(end) {
			return "", fmt.Errorf("%s did not appear", node)
		}
	}
}

// dmRemove removes the device-mapper devices named; errors are joined.
func dmRemove(names []string) error {
	if len(names) == 0 {
		return nil
	}
	ctl, err := unix.Open("/dev/mapper/control", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(ctl)
	var errs []error
	for i := len(names) - 1; i >= 0; i-- {
		if _, err := dmIoctl(ctl, dmDevRemove, names[i], 0, 0, nil); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", names[i], err))
		}
	}
	return errors.Join(errs...)
}

// pvOf is one LVM physical volume found on the disk.
type pvOf struct {
	part  int
	label lvm2.Label
	vg    lvm2.VG
}

// activateVolumes reads the LVM2 metadata of the disk's PV partitions
// (in Go) and maps each visible linear logical volume with the device
// mapper, read-only unless the session writes; each becomes a Part the
// root rules see, with the filesystem found on it. What cannot be
// activated (a volume group with a PV missing, a thin or RAID volume) is
// a note.
func (s *Session) activateVolumes(disk io.ReaderAt, parts []Part) []Part {
	var pvs []pvOf
	for i, p := range parts {
		if p.Container != "lvm" {
			continue
		}
		sr := io.NewSectionReader(disk, p.Offset, p.Size)
		head := make([]byte, 2048)
		if _, err := sr.ReadAt(head, 0); err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		l, err := lvm2.ParseLabel(head)
		if err == nil && len(l.Metadata) == 0 {
			err = errors.New("no metadata area on this PV")
		}
		var text []byte
		if err == nil {
			text, err = lvm2.ReadMetadata(sr, l.Metadata[0])
		}
		var vg lvm2.VG
		if err == nil {
			vg, err = lvm2.ParseVG(text)
		}
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: its LVM2 metadata cannot be read: %v", p, err))
			continue
		}
		pvs = append(pvs, pvOf{part: i, label: l, vg: vg})
	}
	var out []Part
	done := map[string]bool{}
	for _, pv := range pvs {
		if done[pv.vg.ID] {
			continue
		}
		done[pv.vg.ID] = true
		vg := pv.vg
		for _, o := range pvs { // the newest metadata of the VG
			if o.vg.ID == vg.ID && o.vg.Seqno > vg.Seqno {
				vg = o.vg
			}
		}
		out = append(out, s.activateVG(vg, pvs, parts)...)
	}
	return out
}

// activateVG maps the visible linear volumes of vg.
func (s *Session) activateVG(vg lvm2.VG, pvs []pvOf, parts []Part) []Part {
	var out []Part
	for _, lv := range vg.LVs {
		if !lv.Visible() {
			continue
		}
		name := "volume " + vg.Name + "/" + lv.Name
		ts, err := vg.Linear(lv)
		if err != nil {
			s.Notes = append(s.Notes, err.Error()+"; not activated")
			continue
		}
		// Every target on one PV of this disk (a VG over several PVs
		// is mapped target by target onto the disk's sectors).
		var abs []lvm2.Target
		for _, t := range ts {
			p, ok := pvPart(vg, t.PV, pvs, parts)
			if !ok {
				err = fmt.Errorf("logical volume %s/%s lies on %s, which is not on this image", vg.Name, lv.Name, t.PV)
				break
			}
			if (t.Offset+t.Length)*512 > p.Size {
				err = fmt.Errorf("logical volume %s/%s runs past the end of %s", vg.Name, lv.Name, p)
				break
			}
			abs = append(abs, lvm2.Target{Start: t.Start, Length: t.Length, PV: t.PV, Offset: p.Offset/512 + t.Offset})
		}
		if err != nil {
			s.Notes = append(s.Notes, err.Error()+"; not activated")
			continue
		}
		dmName := "sealprep-" + strings.ReplaceAll(vg.Name, "-", "--") + "-" + strings.ReplaceAll(lv.Name, "-", "--")
		node, err := dmCreate(dmName, s.disk, 0, abs, s.opts.ReadOnly)
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: not activated: %v", name, err))
			continue
		}
		s.dmNames = append(s.dmNames, dmName)
		size := ts[len(ts)-1].Start*512 + ts[len(ts)-1].Length*512
		p := Part{Device: node, Size: size, Volume: vg.Name + "/" + lv.Name}
		if f, err := os.Open(node); err == nil {
			probePart(f, &p)
			f.Close()
		}
		out = append(out, p)
	}
	return out
}

// pvPart is the partition holding the VG's PV named name.
func pvPart(vg lvm2.VG, name string, pvs []pvOf, parts []Part) (Part, bool) {
	id := strings.ReplaceAll(vg.PVs[name].ID, "-", "")
	for _, o := range pvs {
		if o.label.UUID == id && id != "" {
			return parts[o.part], true
		}
	}
	return Part{}, false
}
