package prove

import (
	"context"
	"errors"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/image"
)

// OfflineTemplate reads the template's identity from the image itself,
// attached read-only through internal/host/image (root only), before any clone
// boots. stateDir is image.Options.StateDir ("" for the default).
func OfflineTemplate(stateDir string) TemplateReader {
	return func(ctx context.Context, file string) TemplateIdentity {
		s, err := image.Open(ctx, file, image.Options{ReadOnly: true, StateDir: stateDir})
		if err != nil {
			var ref *image.Refusal
			if errors.As(err, &ref) {
				return TemplateIdentity{NotRead: ref.Reason}
			}
			return TemplateIdentity{NotRead: cleanLine(err.Error())}
		}
		defer s.Close()
		root, err := fs.Open(s.Root)
		if err != nil {
			return TemplateIdentity{NotRead: cleanLine(err.Error())}
		}
		defer root.Close()
		return ReadTemplateRoot(root)
	}
}

// ReadTemplateRoot reads what clones must not keep from a template root,
// through the one identity reader guestcheck and fleet use (machine-id
// hashed, SSH host keys, DHCP client identity, MAC-pinned configuration,
// hostname, instance-id), and sealprep's template record, whose host keys
// are the template's own keys from before the seal.
func ReadTemplateRoot(r fs.Reader) TemplateIdentity {
	t := TemplateIdentity{Read: true}
	id := guestid.Read(r, false)
	rec := identity.ReadTemplate(r)
	if rec.Record != nil {
		t.Record, t.SealedAt = true, rec.Record.SealedAt.UTC().Format("2006-01-02T15:04:05Z")
		t.Operations = rec.Record.Operations
		t.Kept = rec.Record.KeptItems()
		t.record = *rec.Record
		for _, k := range rec.Record.HostKeys {
			if !containsKey(id.HostKeys, k.Fingerprint) {
				id.HostKeys = append(id.HostKeys, guestid.HostKey{Type: k.Type, Fingerprint: k.Fingerprint, Path: k.File + " (before the seal)"})
			}
		}
	}
	t.Identity = &id
	return t
}

func containsKey(ks []guestid.HostKey, fp string) bool {
	for _, k := range ks {
		if k.Fingerprint == fp {
			return true
		}
	}
	return false
}
