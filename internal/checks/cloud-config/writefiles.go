package cloudconfig

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	cc "github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// defaultPerms is cc_write_files.DEFAULT_PERMS.
const defaultPerms = 0o644

// wfReq is one write_files entry as cc_write_files reads it.
type wfReq struct {
	KeyPath   string
	File      string
	Content   []byte
	DecodeErr error
	User      string // "" leaves the owner unchanged
	Group     string
	Perms     uint32
	PermsNote string
	Append    bool
	Defer     bool
}

// writeFiles reads write_files: content decoded by encoding (b64, gzip,
// gz+b64), owner split at ':' (default root:root), permissions decoded as
// decode_perms does (an int is taken as is, a string as octal), append and
// defer as cloud-init booleans.
func writeFiles(cfg map[string]any) []wfReq {
	l, _ := cfg["write_files"].([]any)
	var out []wfReq
	for i, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		r := wfReq{KeyPath: cc.Index("write_files", i), Perms: defaultPerms}
		if p, ok := m["path"]; ok && cc.Truthy(p) {
			r.File = path.Clean("/" + cc.PyStr(p))
		}
		content := ""
		if c, ok := m["content"]; ok && c != nil {
			content = cc.PyStr(c)
		}
		r.Content, r.DecodeErr = decodeContent(content, cc.GetString(m, "encoding", ""))
		r.User, r.Group = usergroup(cc.GetString(m, "owner", "root:root"))
		if p, ok := m["permissions"]; ok && p != nil {
			r.Perms, r.PermsNote = decodePerms(p)
		}
		r.Append = cc.GetBool(m, "append", false)
		r.Defer = cc.GetBool(m, "defer", false)
		out = append(out, r)
	}
	return out
}

func decodeContent(s, enc string) ([]byte, error) {
	steps := []string{}
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "gz", "gzip":
		steps = []string{"gzip"}
	case "gz+base64", "gzip+base64", "gz+b64", "gzip+b64":
		steps = []string{"b64", "gzip"}
	case "b64", "base64":
		steps = []string{"b64"}
	}
	b := []byte(s)
	for _, st := range steps {
		switch st {
		case "b64":
			// Python's b64decode drops characters outside the alphabet.
			var clean []byte
			for _, c := range b {
				if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' {
					clean = append(clean, c)
				}
			}
			d, err := base64.StdEncoding.DecodeString(string(clean))
			if err != nil {
				return nil, fmt.Errorf("content is not valid base64")
			}
			b = d
		case "gzip":
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, fmt.Errorf("content is not gzip data")
			}
			d, err := io.ReadAll(io.LimitReader(zr, maxContent+1))
			if err != nil {
				return nil, fmt.Errorf("content does not decompress")
			}
			b = d
		}
	}
	return b, nil
}

// usergroup is util.extract_usergroup.
func usergroup(s string) (string, string) {
	u, g, _ := strings.Cut(s, ":")
	u, g = strings.TrimSpace(u), strings.TrimSpace(g)
	if u == "-1" || strings.EqualFold(u, "none") {
		u = ""
	}
	if g == "-1" || strings.EqualFold(g, "none") {
		g = ""
	}
	return u, g
}

// decodePerms is cc_write_files.decode_perms.
func decodePerms(v any) (uint32, string) {
	switch x := v.(type) {
	case int64:
		return uint32(x), fmt.Sprintf("the integer %d is taken as mode %04o", x, x)
	case float64:
		return uint32(int64(x)), ""
	case bool:
		if x {
			return 1, ""
		}
		return 0, ""
	}
	n, err := strconv.ParseUint(strings.TrimSpace(cc.PyStr(v)), 8, 32)
	if err != nil {
		return defaultPerms, "undecodable permissions, cloud-init used the default 0644"
	}
	return uint32(n), ""
}

// unixPerm is a FileMode's permission and set-id bits as chmod sees them.
func unixPerm(m iofs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&iofs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&iofs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&iofs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

func (j *judge) writeFiles() {
	f := j.f
	reqs := writeFiles(f.UserData.Value)
	last := map[string]int{}
	for i, r := range reqs {
		if !r.Append {
			last[r.File] = i
		}
	}
	for i, r := range reqs {
		if r.File == "" {
			j.add(runner.Fail, codeFileMissing, r.KeyPath, r.KeyPath+" has no path, so cloud-init skipped it", "a path", "none",
				codeFileMissing.CaseFix("when the entry has no path", "key", r.KeyPath))
			continue
		}
		shown := f.Display(r.File)
		fl := f.Files[r.File]
		sem, semName := f.Semaphores["config_write_files"], "config_write_files"
		if r.Defer {
			sem, semName = f.Semaphores["config_write_files_deferred"], "config_write_files_deferred"
		}
		switch {
		case fl.Err != nil && !fl.Exists:
			j.add(runner.Error, codeUnreadable, r.KeyPath, fs.ErrorText(shown, fl.Err), "", "", readFix(f.IsRoot, shown, fl.Err))
			continue
		case !fl.Exists:
			msg := fmt.Sprintf("%s (%s) does not exist", shown, r.KeyPath)
			if r.Defer && sem.IsZero() {
				msg += "; it is deferred to the final stage, which has not run write_files_deferred"
			}
			j.add(runner.Fail, codeFileMissing, cc.Join(r.KeyPath, "path"), msg, r.File, "missing",
				codeFileMissing.Fixf("file", r.File))
			continue
		case !fl.Info.Mode.IsRegular():
			j.add(runner.Fail, codeFileMissing, cc.Join(r.KeyPath, "path"), fmt.Sprintf("%s (%s) is not a regular file", shown, r.KeyPath), "a regular file", fl.Info.Mode.Type().String(),
				codeFileMissing.CaseFix("when something else is at the path", "file", r.File))
			continue
		}
		bad := 0
		if got := unixPerm(fl.Info.Mode); got != r.Perms&0o7777 {
			bad++
			j.add(runner.Fail, codeFileMode, cc.Join(r.KeyPath, "permissions"), fmt.Sprintf("%s has mode %04o, not the requested %04o", shown, got, r.Perms&0o7777),
				fmt.Sprintf("%04o", r.Perms&0o7777), fmt.Sprintf("%04o", got), codeFileMode.FixOn(f.Live, "mode", fmt.Sprintf("%04o", r.Perms&0o7777), "file", r.File), "note", r.PermsNote)
		}
		if msg, asked, found := j.ownerMismatch(r, fl); msg != "" {
			bad++
			j.add(runner.Fail, codeFileOwner, cc.Join(r.KeyPath, "owner"), shown+" "+msg, asked, found, codeFileOwner.FixOn(f.Live, "owner", asked, "file", r.File))
		}
		if r.DecodeErr != nil {
			bad++
			j.add(runner.Fail, codeFileContent, cc.Join(r.KeyPath, "content"), fmt.Sprintf("%s: %v under its encoding, so cloud-init could not write it", r.KeyPath, r.DecodeErr),
				"", "", codeFileContent.CaseFix("when the content cannot be decoded", "key", r.KeyPath))
		} else if fl.Content != nil && (r.Append || last[r.File] == i) {
			same := bytes.Equal(fl.Content, r.Content)
			if r.Append {
				same = bytes.Contains(fl.Content, r.Content)
			}
			if !same {
				bad++
				sizes := fmt.Sprintf("%d bytes requested, %d bytes found (contents not shown)", len(r.Content), len(fl.Content))
				if !sem.IsZero() && fl.Info.ModTime.After(sem) {
					j.add(runner.Warn, codeFileChanged, cc.Join(r.KeyPath, "content"),
						fmt.Sprintf("%s was changed after cloud-init wrote it: modified %s, after %s ran at %s; %s", shown,
							fl.Info.ModTime.UTC().Format("2006-01-02T15:04:05Z"), semName, sem.UTC().Format("2006-01-02T15:04:05Z"), sizes),
						"the requested content", "other content", codeFileChanged.Fixf("file", r.File))
				} else {
					how := "does not equal"
					if r.Append {
						how = "does not contain"
					}
					j.add(runner.Fail, codeFileContent, cc.Join(r.KeyPath, "content"),
						fmt.Sprintf("%s %s the requested content (%s)", shown, how, sizes), "the requested content", "other content",
						codeFileContent.Fixf("file", r.File))
				}
			}
		}
		if bad == 0 {
			what := "content"
			if r.Append {
				what = "appended content"
			}
			if last[r.File] != i && !r.Append {
				what = "content (judged on the later entry for this path)"
			}
			j.add(runner.Pass, codeFileOK, r.KeyPath, fmt.Sprintf("%s exists with the requested owner, mode %04o and %s", shown, r.Perms&0o7777, what), "", "", "")
		}
	}
}

func (j *judge) ownerMismatch(r wfReq, fl File) (msg, asked, found string) {
	f := j.f
	owner := func(uid int) string {
		for _, u := range f.Accounts.Users {
			if u.UID == uid {
				return u.Name
			}
		}
		return strconv.Itoa(uid)
	}
	group := func(gid int) string {
		if g, ok := f.Accounts.GroupByID(gid); ok {
			return g.Name
		}
		return strconv.Itoa(gid)
	}
	found = owner(fl.Info.UID) + ":" + group(fl.Info.GID)
	asked = orStr(r.User, "(unchanged)") + ":" + orStr(r.Group, "(unchanged)")
	if r.User != "" {
		u, ok := f.Accounts.User(r.User)
		if !ok {
			return "is owned by " + found + ": the requested owner " + r.User + " does not exist, so cloud-init could not chown it", asked, found
		}
		if u.UID != fl.Info.UID {
			return "is owned by " + found + ", not " + asked, asked, found
		}
	}
	if r.Group != "" {
		g, ok := f.Accounts.Group(r.Group)
		if !ok {
			return "has group " + group(fl.Info.GID) + ": the requested group " + r.Group + " does not exist", asked, found
		}
		if g.GID != fl.Info.GID {
			return "is owned by " + found + ", not " + asked, asked, found
		}
	}
	return "", "", ""
}
