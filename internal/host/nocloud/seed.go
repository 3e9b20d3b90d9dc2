// Package nocloud builds cloud-init NoCloud seeds: an ISO 9660 volume
// labelled cidata holding meta-data, user-data and network-config, which
// cloud-init's NoCloud datasource finds by its label at first boot.
//
// The volume carries Rock Ridge and Joliet names, so that the guest's
// isofs shows the lower-case names with their hyphens whatever its mount
// options; the plain ISO 9660 names (META_DAT.;1) would not be found.
// It is written in Go (github.com/diskfs/go-diskfs), so that sealprep
// prove needs no genisoimage or xorriso on the build host.
package nocloud

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// Label is the volume label cloud-init's NoCloud datasource looks for.
const Label = "cidata"

// MaxData bounds user-data and network-config each: cloud-init reads
// them whole, and a seed is no place for a disk image.
const MaxData = 1 << 20

// Seed is one VM's NoCloud data.
type Seed struct {
	// InstanceID is meta-data's instance-id: a new one makes cloud-init
	// treat the VM as a new instance.
	InstanceID string
	// Hostname is meta-data's local-hostname.
	Hostname string
	// UserData is written as it is; empty becomes "#cloud-config\n" so
	// that cloud-init finds a valid, empty cloud-config.
	UserData []byte
	// NetworkConfig is written as it is; empty leaves the file out, and
	// cloud-init falls back to DHCP on the first NIC.
	NetworkConfig []byte
}

// word is what instance-id and local-hostname may hold here: enough for
// any real ID or hostname, and nothing YAML would read as more than a
// plain scalar.
var word = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$`)

// Validate says why a seed cannot be written, nil when it can.
func (s Seed) Validate() error {
	switch {
	case !word.MatchString(s.InstanceID):
		return fmt.Errorf("instance-id %q: use 1-63 letters, digits, dots and hyphens", s.InstanceID)
	case !word.MatchString(s.Hostname):
		return fmt.Errorf("local-hostname %q: use 1-63 letters, digits, dots and hyphens", s.Hostname)
	case len(s.UserData) > MaxData:
		return fmt.Errorf("user-data: %d bytes, more than %d", len(s.UserData), MaxData)
	case len(s.NetworkConfig) > MaxData:
		return fmt.Errorf("network-config: %d bytes, more than %d", len(s.NetworkConfig), MaxData)
	}
	return nil
}

// MetaData is the meta-data file: instance-id and local-hostname.
func (s Seed) MetaData() []byte {
	return fmt.Appendf(nil, "instance-id: %s\nlocal-hostname: %s\n", s.InstanceID, s.Hostname)
}

// Files are the seed's files by name, as they go on the volume.
func (s Seed) Files() map[string][]byte {
	ud := s.UserData
	if len(ud) == 0 {
		ud = []byte("#cloud-config\n")
	}
	out := map[string][]byte{"meta-data": s.MetaData(), "user-data": ud}
	if len(s.NetworkConfig) > 0 {
		out["network-config"] = s.NetworkConfig
	}
	return out
}

// Write writes the seed as an ISO 9660 volume labelled cidata to path,
// which must not exist. On error nothing is left at path.
func Write(path string, s Seed) (err error) {
	if err := s.Validate(); err != nil {
		return err
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s: %w", path, os.ErrExist)
	}
	files := s.Files()
	size := int64(1 << 20)
	for _, b := range files {
		size += int64(len(b)) + 2048
	}
	size = (size + 2047) &^ 2047
	work, err := os.MkdirTemp(filepath.Dir(path), ".seed-")
	if err != nil {
		return fmt.Errorf("seed work directory: %w", err)
	}
	defer os.RemoveAll(work)
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	b, err := file.CreateFromPath(path, size)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer func() {
		if cerr := b.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	fsys, err := iso9660.Create(b, size, 0, 2048, work)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, name := range []string{"meta-data", "user-data", "network-config"} {
		body, ok := files[name]
		if !ok {
			continue
		}
		if err := put(fsys, name, body); err != nil {
			return fmt.Errorf("%s: %s: %w", path, name, err)
		}
	}
	if err := fsys.Finalize(iso9660.FinalizeOptions{RockRidge: true, Joliet: true, VolumeIdentifier: Label}); err != nil {
		return fmt.Errorf("%s: write the volume: %w", path, err)
	}
	return nil
}

func put(fsys *iso9660.FileSystem, name string, body []byte) error {
	f, err := fsys.OpenFile("/"+name, os.O_CREATE|os.O_RDWR)
	if err != nil {
		return err
	}
	n, err := f.Write(body)
	if err == nil && n != len(body) {
		err = errors.New("short write")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
