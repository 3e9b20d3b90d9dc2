// Package imgfmt reads disk image headers in Go, before qemu-img or QEMU
// ever opens the file: a downloaded image is hostile input, and its header
// can name other host files (a backing file, an external data file, a
// VMDK extent) or claim sizes that make qemu-img exhaust the host.
//
// Parse is pure: it reads a bounded number of bytes through an
// io.ReaderAt and decides nothing about policy. The policy (what sealprep
// refuses) lives in package image.
package imgfmt

import "strconv"

// Formats Parse recognises. Only Raw and QCOW2 are taken by sealprep; the
// others are recognised so that a refusal can say what the file is and
// how to convert it.
const (
	Raw       = "raw"
	QCOW2     = "qcow2"
	QCOW1     = "qcow" // QEMU's obsolete version-1 qcow
	QED       = "qed"  // QEMU Enhanced Disk
	VMDK      = "vmdk" // VMware: sparse extent or text descriptor
	VHD       = "vpc"  // Microsoft VHD, qemu-img's name "vpc"
	VHDX      = "vhdx" // Microsoft VHDX
	VDI       = "vdi"  // VirtualBox
	LUKS      = "luks" // a LUKS container
	ISO       = "iso"  // an ISO 9660 filesystem (qemu-img sees raw)
	Parallels = "parallels"
	DMG       = "dmg" // Apple disk image
)

// qcow2 incompatible feature bits (docs/interop/qcow2.txt).
const (
	IncompatDirty        = 1 << 0
	IncompatCorrupt      = 1 << 1
	IncompatExternalData = 1 << 2
	IncompatCompression  = 1 << 3
	IncompatExtendedL2   = 1 << 4
	// IncompatKnown are the bits this parser understands.
	IncompatKnown = IncompatDirty | IncompatCorrupt | IncompatExternalData | IncompatCompression | IncompatExtendedL2
)

// Header is what an image's header says about the image. Fields a
// format does not have are zero.
type Header struct {
	// Format is one of the constants above.
	Format string
	// Version is the qcow2 version (2 or 3), or the format's own.
	Version uint32
	// VirtualSize is the guest-visible size in bytes (a raw file's size).
	VirtualSize uint64
	// ClusterBits is qcow2's log2 of the cluster size.
	ClusterBits uint32

	// BackingFile is the backing file name exactly as the header stores
	// it (relative names are relative to the image's directory).
	BackingFile string
	// BackingFormat is the backing format header extension, "" when the
	// header does not state one.
	BackingFormat string

	// DataFile is the external data file header extension's name, ""
	// when there is none. ExternalData is the incompatible feature bit
	// that makes QEMU use one (a data file can be given at open time
	// even when the extension is absent). DataFileRaw is the autoclear
	// bit that says the data file is a raw image of the guest disk.
	DataFile     string
	ExternalData bool
	DataFileRaw  bool

	// CryptMethod is qcow2's crypt_method (0 none, 1 AES, 2 LUKS);
	// Encrypted is set for any encryption Parse saw (a qcow2
	// crypt_method, a full disk encryption header extension, LUKS).
	CryptMethod uint32
	Encrypted   bool

	// IncompatibleFeatures is the qcow2 v3 bit field; UnknownIncompatible
	// the bits of it that IncompatKnown does not cover.
	IncompatibleFeatures uint64
	UnknownIncompatible  uint64
	Dirty, Corrupt       bool

	// L1Size is the L1 table's entry count, L1Offset its file offset.
	L1Size   uint32
	L1Offset uint64
	// Snapshots is the internal snapshot count, SnapshotsOffset the
	// table's file offset.
	Snapshots       uint32
	SnapshotsOffset uint64

	// Extents are a VMDK descriptor's extent file names as written
	// (sparse VMDKs with an embedded descriptor, and text descriptors).
	Extents []string
}

// FormatError is a header that is not what its magic says: a
// field out of range, a name running past the end of the file. Offset
// is the byte offset the problem is at.
type FormatError struct {
	Format string
	Offset int64
	Reason string
}

func (e *FormatError) Error() string {
	return e.Format + " header at byte " + strconv.FormatInt(e.Offset, 10) + ": " + e.Reason
}
