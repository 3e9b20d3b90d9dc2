// Package appid derives application-specific IDs the way systemd's
// sd_id128_get_machine_app_specific(3) does, keyed with guestcheck's one
// application ID: the form every report, and sealprep's template record,
// give a machine ID in, so that the ID itself is never written and equal
// IDs still compare.
package appid

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// App is guestcheck's application ID, a fixed random 128-bit value, in
// the manner of systemd's sd_id128_get_machine_app_specific.
var App = [16]byte{0x32, 0x2e, 0x36, 0xd1, 0x0a, 0x80, 0x4d, 0x5d, 0x9f, 0x54, 0x68, 0xdf, 0x96, 0x22, 0xeb, 0x0f}

// Specific is sd_id128_get_machine_app_specific(3): HMAC-SHA256 keyed
// with key over app, its first 16 bytes marked as a version 4 UUID.
func Specific(key []byte, app [16]byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(app[:])
	sum := m.Sum(nil)[:16]
	sum[6] = sum[6]&0x0f | 0x40
	sum[8] = sum[8]&0x3f | 0x80
	return sum
}

// MachineIDHash is the application-specific ID of a machine-id (32 hex
// digits, as /etc/machine-id holds it), in hex. ok is false when id is
// not a machine ID.
func MachineIDHash(id string) (hash string, ok bool) {
	key, err := hex.DecodeString(strings.ToLower(strings.TrimSpace(id)))
	if err != nil || len(key) != 16 {
		return "", false
	}
	return hex.EncodeToString(Specific(key, App)), true
}

// UUIDShaped reports whether v is a UUID: 32 hex digits, bare or in the
// 8-4-4-4-12 form. Such a value may be the machine-id itself: KubeVirt
// makes the firmware UUID the NoCloud instance-id, and systemd on KVM
// makes the same UUID the machine-id when /etc/machine-id is empty.
func UUIDShaped(v string) bool {
	_, ok := uuidHex(v)
	return ok
}

// UUIDHash is the application-specific ID of a UUID-shaped value, as
// MachineIDHash gives it for the same 32 hex digits: an instance-id that
// is the firmware UUID, and the machine-id systemd made from that UUID,
// have one hash. ok is false when v is not UUID-shaped.
func UUIDHash(v string) (hash string, ok bool) {
	h, ok := uuidHex(v)
	if !ok {
		return "", false
	}
	return MachineIDHash(h)
}

// uuidHex is v's 32 hex digits, lower-case, when v is a UUID.
func uuidHex(v string) (string, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	if len(v) == 36 {
		for _, i := range []int{8, 13, 18, 23} {
			if v[i] != '-' {
				return "", false
			}
		}
		v = strings.ReplaceAll(v, "-", "")
	}
	if len(v) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(v); err != nil {
		return "", false
	}
	return v, true
}
