package cloudinit

// InstanceData is the part of /run/cloud-init/instance-data.json that
// guestcheck reports: who the platform says this instance is.
type InstanceData struct {
	InstanceID       string // v1.instance_id
	LocalHostname    string // v1.local_hostname
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

// ParseInstanceData parses instance-data.json. Every field is optional
// (null or absent reads as ""), but one present with another type is an
// error naming it.
func ParseInstanceData(b []byte) (*InstanceData, error) {
	top, err := decodeObject(b)
	if err != nil {
		return nil, err
	}
	d := &InstanceData{}
	v1, err := optObject(top, "v1", "", false)
	if err != nil {
		return nil, err
	}
	if v1 != nil {
		for _, f := range []struct {
			key string
			dst *string
		}{
			{"instance_id", &d.InstanceID},
			{"local_hostname", &d.LocalHostname},
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
			if *f.dst, err = optString(v1, f.key, "v1"); err != nil {
				return nil, err
			}
		}
	}
	ds, err := optObject(top, "ds", "", true)
	if err != nil {
		return nil, err
	}
	if ds != nil {
		md, err := optObject(ds, "meta_data", "ds", true)
		if err != nil {
			return nil, err
		}
		if md != nil {
			if d.MetaLocalHostname, err = optString(md, "local-hostname", "ds.meta_data"); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}
