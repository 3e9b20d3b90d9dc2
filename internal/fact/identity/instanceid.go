package identity

import "github.com/guestcheck/guestcheck/internal/fact/identity/appid"

// ShowInstanceID is a cloud-init instance-id (or its directory's name)
// as a message shows it: as it is, unless it is a UUID, which may be the
// machine-id itself (KubeVirt makes the firmware UUID the NoCloud
// instance-id, and systemd on KVM makes the same UUID the machine-id):
// that one is shown as "hash " and the first 8 digits of its
// application-specific hash, as fleet shows the machine-id's.
func ShowInstanceID(id string) string {
	if h, ok := appid.UUIDHash(id); ok {
		return "hash " + h[:8] + "..."
	}
	return id
}

// InstanceIDDetail puts an instance-id into d under key, or, when it is
// a UUID, its application-specific hash under key+"_hash" (the hash
// the report's machine_id_hash would have for the same digits). Nothing
// for an empty id.
func InstanceIDDetail(d map[string]string, key, id string) {
	if id == "" {
		return
	}
	if h, ok := appid.UUIDHash(id); ok {
		d[key+"_hash"] = h
		return
	}
	d[key] = id
}
