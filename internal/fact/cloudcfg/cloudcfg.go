// Package cloudcfg is cloud-init's system configuration:
// /etc/cloud/cloud.cfg merged with its cloud.cfg.d/*.cfg drop-ins as
// util.read_conf_with_confd merges them (conf_d, and each file's own
// merge_how, included). The hostname check, the cloud-init intent check
// and sealprep's cloud-init and SSH host key operations all read it here,
// so that they see the same files, skip the same broken ones and agree on
// the merged value. Read does the I/O; Load is pure.
package cloudcfg

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
)

// Tree is the read access Read needs; every fs.Reader (fs.Root,
// fs.Confined) has it.
type Tree interface {
	ReadFile(p string) ([]byte, error)
	Stat(p string) (fs.Entry, error)
	ReadDir(p string) ([]fs.Entry, error)
}

var _ Tree = fs.Reader(nil)

// File is one file of the system configuration.
type File struct {
	// Path is the guest path; a parse error names it.
	Path string
	// Data is the content, nil when it could not be read.
	Data []byte
	// ReadErr is why the file could not be read. cloud-init warns and
	// goes on without such a file.
	ReadErr error
	// Doc is the loaded document; nil when the file was not read or
	// cloud-init could not load it (ParseErr, a *cloudconfig.Error).
	Doc      *cloudconfig.Doc
	ParseErr error
}

// Template reports whether the file is a Jinja template ("## template:
// jinja" on its first line), which cloud-init renders with the instance
// data before loading it.
func (f File) Template() bool { return IsTemplate(f.Data) }

// System is the system configuration as cloud-init reads it.
type System struct {
	// Files are cloud.cfg (when it exists) and then the drop-ins in name
	// order: from the lowest precedence to the highest.
	Files []File
	// Dir is the drop-in directory read: cloudconfig.SystemPath+".d", or
	// what cloud.cfg's conf_d names; "" when conf_d turns drop-ins off.
	Dir string
	// DirErr is why Dir could not be listed (it exists, but not as a
	// readable directory), or why conf_d could not be used.
	DirErr error
	// Merged is the merged configuration of the files that loaded.
	Merged map[string]any
}

// Base is cloud.cfg when it exists.
func (s System) Base() (File, bool) {
	if len(s.Files) > 0 && s.Files[0].Path == cloudconfig.SystemPath {
		return s.Files[0], true
	}
	return File{}, false
}

// DropIns are the drop-in files, in name order.
func (s System) DropIns() []File {
	if _, ok := s.Base(); ok {
		return s.Files[1:]
	}
	return s.Files
}

// Read reads the system configuration through t. It never fails: what
// cannot be read is recorded on its File (or in DirErr), as cloud-init
// logs it and goes on.
func Read(t Tree) System {
	var files []File
	if b, err := t.ReadFile(cloudconfig.SystemPath); !errors.Is(err, iofs.ErrNotExist) {
		files = append(files, File{Path: cloudconfig.SystemPath, Data: b, ReadErr: err})
	}
	s := System{Files: files}
	s.Files = load(s.Files)
	s.Dir, s.DirErr = confD(s)
	if s.Dir != "" && s.DirErr == nil {
		var names []string
		names, s.DirErr = listConfD(t, s.Dir)
		for _, p := range names {
			b, err := t.ReadFile(p)
			s.Files = append(s.Files, File{Path: p, Data: b, ReadErr: err})
		}
	}
	return Load(s)
}

// confD is the drop-in directory cloud.cfg asks for: its conf_d key when
// present (false, null or "" turn drop-ins off), else cloud.cfg.d.
func confD(s System) (string, error) {
	base, ok := s.Base()
	if !ok || base.Doc == nil {
		return cloudconfig.SystemPath + ".d", nil
	}
	v, set := base.Doc.Value["conf_d"]
	switch {
	case !set:
		return cloudconfig.SystemPath + ".d", nil
	case !cloudconfig.Truthy(v):
		return "", nil
	}
	d, ok := v.(string)
	if !ok {
		// cloud-init stops with a TypeError here.
		return "", fmt.Errorf("conf_d is %s, not a directory name", cloudconfig.TypeName(v))
	}
	return path.Clean(strings.TrimSpace(d)), nil
}

// listConfD lists the drop-ins of dir that cloud-init reads: names
// ending in ".cfg" that are regular files after following symlinks, in
// name order. A missing directory has none.
func listConfD(t Tree, dir string) ([]string, error) {
	if st, err := t.Stat(dir); err != nil || !st.IsDir() {
		// cloud-init reads drop-ins only from an existing directory.
		return nil, nil
	}
	ents, err := t.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name)
	}
	var out []string
	for _, p := range cloudconfig.ConfDNames(dir, names) {
		if st, err := t.Stat(p); err == nil && st.IsRegular() {
			out = append(out, p)
		}
	}
	return out, nil
}

// Load parses the files of s that were read and not yet loaded, and
// merges those that load: a later drop-in wins over an earlier one and
// every drop-in over cloud.cfg, dictionaries merging key by key (util.
// mergemanydict). A file cloud-init cannot load counts as empty, as
// cloud-init warns and goes on without it.
func Load(s System) System {
	s.Files = load(s.Files)
	srcs := make([]map[string]any, 0, len(s.Files))
	for i := len(s.Files) - 1; i >= 0; i-- {
		if d := s.Files[i].Doc; d != nil {
			srcs = append(srcs, d.Value)
		}
	}
	s.Merged = cloudconfig.MergeMany(srcs...)
	return s
}

// ReadFile reads and loads one cloud-config file through t by the rules
// of the system configuration's files: the other layers cloud-init puts
// over it (/run/cloud-init/cloud.cfg, vendor-data, user-data) are read so.
// A missing file has a ReadErr that is iofs.ErrNotExist.
func ReadFile(t Tree, p string) File {
	b, err := t.ReadFile(p)
	return load([]File{{Path: p, Data: b, ReadErr: err}})[0]
}

// load parses each read file that has no Doc yet, into a new slice.
func load(files []File) []File {
	out := append([]File(nil), files...)
	for i, f := range out {
		if f.ReadErr != nil || f.Doc != nil || f.ParseErr != nil {
			continue
		}
		d, err := cloudconfig.Parse(f.Path, f.Data)
		if err != nil {
			out[i].ParseErr = err
			continue
		}
		out[i].Doc = d
	}
	return out
}

var jinjaHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^##\s*template:\s*jinja\s*$`) })

// IsTemplate reports whether b starts with cloud-init's Jinja header.
func IsTemplate(b []byte) bool {
	first, _, _ := bytes.Cut(b, []byte("\n"))
	first = bytes.TrimSpace(first)
	// Only a "##" line can be the header: the others (every file, most
	// runs) skip compiling the regexp, which costs under emulation.
	return bytes.HasPrefix(first, []byte("##")) && jinjaHeader().Match(first)
}
