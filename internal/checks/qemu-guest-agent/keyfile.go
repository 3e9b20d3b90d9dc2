package qemuguestagent

import (
	"fmt"

	"github.com/guestcheck/guestcheck/internal/parse/ini"
)

// KeyFile is qemu-ga.conf as qemu-ga holds it after loading: GKeyFile's
// groups, where duplicate groups merge and the last value of a key wins.
type KeyFile struct {
	f ini.File
}

// LoadKeyFile parses qemu-ga.conf (name is for messages) as a GLib key
// file. qemu-ga exits at start-up when GKeyFile refuses the file, which it
// does at the first bad line, so that line is the error.
func LoadKeyFile(name string, b []byte) (*KeyFile, error) {
	f, probs := ini.Parse(name, b, ini.GLib)
	if len(probs) > 0 {
		return nil, fmt.Errorf("line %d: %s", probs[0].Line, probs[0].Msg)
	}
	return &KeyFile{f: f}, nil
}

// Has reports whether group has key.
func (k *KeyFile) Has(group, key string) bool {
	_, ok := k.f.Get(group, key)
	return ok
}

// String returns the unescaped value of key, as g_key_file_get_string
// does. An invalid escape is an error, which makes qemu-ga exit.
func (k *KeyFile) String(group, key string) (string, error) {
	e, _ := k.f.Get(group, key)
	s, err := ini.Unescape(e.Value)
	if err != nil {
		return "", fmt.Errorf("key %s: %w", key, err)
	}
	return s, nil
}
