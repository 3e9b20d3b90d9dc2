package runner

import (
	"testing"
)

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{"/mnt/image": "/mnt/image", "/mnt/my image": "'/mnt/my image'", "/mnt/it's": `'/mnt/it'\''s'`, "": "''", "/a;rm": "'/a;rm'"} {
		if got := ShellWord(in); got != want {
			t.Errorf("ShellWord(%q) = %s, want %s", in, got, want)
		}
	}
}
