package guestid

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
)

// systemd-networkd's constants for the DUID it derives from the machine
// ID (src/libsystemd-network/sd-dhcp-duid.c, dhcp-identifier.c before
// systemd 255): its IANA private enterprise number and the fixed SipHash
// key it hashes the machine ID with. The DUID-EN is the same in every
// release since systemd 219.
const (
	duidTypeEN = 2
	systemdPEN = 43793
)

var networkdHashKey = [16]byte{0x80, 0x11, 0x8c, 0xc2, 0xfe, 0x4a, 0x03, 0xee, 0x3e, 0xd6, 0x0c, 0x6f, 0x36, 0x39, 0x14, 0x09}

// NetworkdDUID returns the DUID-EN systemd-networkd presents with its
// default DUIDType=vendor on a machine whose machine-id is id (32 hex
// digits): type 2, enterprise 43793, then the 64-bit SipHash-2-4 of the
// machine ID's 16 bytes under networkd's fixed key, little-endian. ok is
// false when id is not a machine ID.
func NetworkdDUID(id string) (duid []byte, ok bool) {
	key, err := hex.DecodeString(strings.ToLower(strings.TrimSpace(id)))
	if err != nil || len(key) != 16 {
		return nil, false
	}
	d := make([]byte, 14)
	binary.BigEndian.PutUint16(d[0:], duidTypeEN)
	binary.BigEndian.PutUint32(d[2:], systemdPEN)
	binary.LittleEndian.PutUint64(d[6:], siphash24(networkdHashKey, key))
	return d, true
}

// appSpecific is sd_id128_get_machine_app_specific(3) (appid.Specific).
func appSpecific(key []byte, app [16]byte) []byte { return appid.Specific(key, app) }

// siphash24 is SipHash-2-4 (Aumasson and Bernstein, 2012) of msg under
// key, the 64-bit hash systemd uses for its derived identifiers.
func siphash24(key [16]byte, msg []byte) uint64 {
	k0 := binary.LittleEndian.Uint64(key[0:])
	k1 := binary.LittleEndian.Uint64(key[8:])
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13) ^ v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16) ^ v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21) ^ v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17) ^ v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	n := len(msg)
	for ; len(msg) >= 8; msg = msg[8:] {
		m := binary.LittleEndian.Uint64(msg)
		v3 ^= m
		round()
		round()
		v0 ^= m
	}
	// The last block: the remaining bytes, and the length's low byte on top.
	var last [8]byte
	copy(last[:], msg)
	last[7] = byte(n)
	m := binary.LittleEndian.Uint64(last[:])
	v3 ^= m
	round()
	round()
	v0 ^= m
	v2 ^= 0xff
	round()
	round()
	round()
	round()
	return v0 ^ v1 ^ v2 ^ v3
}
