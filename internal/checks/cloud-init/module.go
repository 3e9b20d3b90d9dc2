package cloudinit

import (
	"regexp"
	"strings"
	"sync"
)

// moduleRes extract a config module's name from the error texts cloud-init
// records: "Running module write_files (<module
// 'cloudinit.config.cc_write_files' ...>) failed" (the log line, found
// among recoverable errors), "('scripts_user', RuntimeError(...))" (str()
// of the (name, exception) pair that lands in status.json), and any
// "cloudinit.config.cc_<name>" reference.
// Compiled on first use, not at every start nor at every call.
var moduleRes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)\brunning module ([a-z0-9_-]+) \(`),
		regexp.MustCompile(`^\(\s*'([a-z0-9_-]+)'\s*,`),
		regexp.MustCompile(`\bcloudinit\.config\.cc_([a-z0-9_]+)\b`),
	}
})

// ModuleName returns the cloud-init module an error message is about, or
// "" when it names none. The name is as cloud-init wrote it: 24.x and later
// write "write-files" where older releases wrote "write_files".
func ModuleName(msg string) string {
	for _, re := range moduleRes() {
		if m := re.FindStringSubmatch(msg); m != nil {
			return strings.ToLower(m[1])
		}
	}
	return ""
}
