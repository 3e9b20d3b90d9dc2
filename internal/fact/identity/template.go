package identity

import (
	"errors"
	iofs "io/fs"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
)

// Template is sealprep's template record as read from a guest.
type Template struct {
	// Raw is the file's content; Found is false when there is none.
	Raw   []byte
	Found bool
	// Record is the parsed record, nil when missing or invalid.
	Record *sealrecord.Record
	// ReadErr is why an existing record could not be read; ParseErr why
	// its content is not a record.
	ReadErr, ParseErr error
}

// Err is why the record cannot be used, nil when it can or is absent.
func (t Template) Err() error {
	if t.ReadErr != nil {
		return t.ReadErr
	}
	return t.ParseErr
}

// ReadTemplate reads sealrecord.Path. A missing record is no error.
func ReadTemplate(r fs.Reader) Template {
	var t Template
	b, err := r.ReadFile(sealrecord.Path)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return t
	case err != nil:
		t.ReadErr = err
		return t
	}
	t.Raw, t.Found = b, true
	rec, err := sealrecord.Parse(b)
	if err != nil {
		t.ParseErr = err
		return t
	}
	t.Record = &rec
	return t
}
