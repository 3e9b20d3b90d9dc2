// Package instancedata is cloud-init's instance data
// (/run/cloud-init/instance-data.json): who the platform says this
// instance is, parsed once for every reader (the cloud-init and hostname
// checks, sealprep), so that the instance's name is decided in one place.
package instancedata

import (
	"encoding/json"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/jsonfield"
)

// Path is where cloud-init writes the instance data at every boot.
const Path = "/run/cloud-init/instance-data.json"

// Data is the part of instance-data.json guestcheck uses.
type Data struct {
	// HasV1 is false when the document has no "v1" object, which every
	// cloud-init since 18.4 writes.
	HasV1 bool

	InstanceID string // v1.instance_id
	// LocalHostname is the short name the datasource's meta-data asks
	// for: v1.local_hostname, or v1.local-hostname when only that older
	// spelling is present.
	LocalHostname string
	// LocalHostnameKey is the key LocalHostname was read from
	// ("v1.local_hostname" or "v1.local-hostname"), for messages.
	LocalHostnameKey string
	CloudName        string // v1.cloud_name, e.g. "nocloud", "openstack"
	Platform         string // v1.platform
	Subplatform      string // v1.subplatform, e.g. "seed-dir (/var/lib/cloud/seed/nocloud)"
	Region           string // v1.region
	AvailabilityZone string // v1.availability_zone
	Distro           string // v1.distro
	DistroVersion    string // v1.distro_version
	DistroRelease    string // v1.distro_release
	KernelRelease    string // v1.kernel_release
	Machine          string // v1.machine
	// MetaLocalHostname is ds.meta_data.local-hostname: what the datasource
	// asked for, before any user-data override.
	MetaLocalHostname string
}

// Parse parses instance-data.json. Every field is optional (null or
// absent reads as ""), but one present with another type is an error
// naming it; a result is returned only without an error.
func Parse(b []byte) (*Data, error) {
	top, err := jsonfield.Object(b, "top level")
	if err != nil {
		return nil, err
	}
	d := &Data{}
	if _, d.HasV1 = top["v1"]; d.HasV1 {
		if err := d.v1(top); err != nil {
			return nil, err
		}
	}
	ds, err := jsonfield.OptObject(top, "ds", "ds")
	if err != nil {
		return nil, err
	}
	md, err := jsonfield.OptObject(ds, "meta_data", "ds.meta_data")
	if err != nil {
		return nil, err
	}
	if d.MetaLocalHostname, err = jsonfield.String(md, "local-hostname", "ds.meta_data.local-hostname"); err != nil {
		return nil, err
	}
	return d, nil
}

// v1 reads the v1 object, cloud-init's stable keys.
func (d *Data) v1(top map[string]json.RawMessage) error {
	v1, err := jsonfield.Object(top["v1"], "v1")
	if err != nil {
		return err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"instance_id", &d.InstanceID},
		{"cloud_name", &d.CloudName},
		{"platform", &d.Platform},
		{"subplatform", &d.Subplatform},
		{"region", &d.Region},
		{"availability_zone", &d.AvailabilityZone},
		{"distro", &d.Distro},
		{"distro_version", &d.DistroVersion},
		{"distro_release", &d.DistroRelease},
		{"kernel_release", &d.KernelRelease},
		{"machine", &d.Machine},
	} {
		if *f.dst, err = jsonfield.String(v1, f.key, "v1."+f.key); err != nil {
			return err
		}
	}
	// cloud-init writes both spellings; older releases only the dashed
	// one. A present local_hostname wins, even when null.
	key := "local_hostname"
	if _, ok := v1[key]; !ok {
		if _, ok := v1["local-hostname"]; ok {
			key = "local-hostname"
		}
	}
	d.LocalHostnameKey = "v1." + key
	d.LocalHostname, err = jsonfield.String(v1, key, d.LocalHostnameKey)
	return err
}

// Read reads and parses Path through r: the one reader of the instance
// data, for the cloud-init and hostname checks. A read error is returned
// as it is (iofs.ErrNotExist when there is no instance data), apart from
// a parse error, so that callers decide what absence means.
func Read(r fs.Reader) (d *Data, readErr, parseErr error) {
	b, err := r.ReadFile(Path)
	if err != nil {
		return nil, err, nil
	}
	d, err = Parse(b)
	return d, nil, err
}
