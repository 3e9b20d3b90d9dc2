package seal

import "strings"

// guestPath rewrites the host paths under dir, the directory an offline
// root is mounted on, in a message to the guest's own: the report names
// the root (or the image and partition) once, in its header, and every
// message then speaks of /etc/machine-id, not of a temporary mount.
func guestPath(dir, msg string) string {
	dir = strings.TrimRight(dir, "/")
	if dir == "" || !strings.Contains(msg, dir) {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, dir)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		rest := msg[i+len(dir):]
		switch {
		case strings.HasPrefix(rest, "/"):
			// dir/etc/x: the guest's /etc/x.
		case rest == "" || !pathByte(rest[0]):
			b.WriteString("/") // the root itself
		default:
			b.WriteString(dir) // a longer name that merely starts like dir
		}
		msg = rest
	}
}

// pathByte reports whether c can continue a file name in a message.
func pathByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c == '+' || c == '@' ||
		'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// guestPaths applies guestPath to every message of r.
func (r *Report) guestPaths(dir string) {
	for i := range r.Actions {
		r.Actions[i].Detail = guestPath(dir, r.Actions[i].Detail)
		r.Actions[i].Error = guestPath(dir, r.Actions[i].Error)
	}
	for i := range r.Notes {
		r.Notes[i].Message = guestPath(dir, r.Notes[i].Message)
	}
	for i := range r.Refusals {
		r.Refusals[i].Message = guestPath(dir, r.Refusals[i].Message)
		r.Refusals[i].Fix = guestPath(dir, r.Refusals[i].Fix)
	}
	for i := range r.Errors {
		r.Errors[i].Error = guestPath(dir, r.Errors[i].Error)
	}
	if r.SELinux != nil {
		r.SELinux.Message = guestPath(dir, r.SELinux.Message)
		for i := range r.SELinux.Labels {
			r.SELinux.Labels[i].Error = guestPath(dir, r.SELinux.Labels[i].Error)
		}
	}
}
