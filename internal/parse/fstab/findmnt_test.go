package fstab

// Differential test of Parse against libmount, through the real
// findmnt. Both read the same files; for every file the lines libmount
// rejects must be the lines Parse rejects, and the entries must be
// the same, in the same order, field by field (source, target, fstype,
// options, freq, passno). findmnt prints no line numbers for entries, so
// entries are matched by order; with the bad lines equal, that pins them.
// findmnt prints absent and empty options alike, and so does the
// comparison (Parse tells them apart by Fields).
//
// Deliberate differences: none in what is an entry and what each field
// holds. Parse only tells more: Trailing keeps the text after the
// sixth field and CutAtNUL marks a last line read up to a NUL byte, both
// of which libmount drops silently; the fstab check warns about them. A
// relative mount point is an entry for both (findmnt --verify then
// reports an error on it, as the check does). The issue this test answers
// said a line of two fields is valid; libmount (2.38 and util-linux's main
// branch alike) rejects it, since the type is mandatory, and so does
// Parse. See docs/checks/fstab.md.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// fstabCase is one input file of the differential test.
type fstabCase struct {
	name string
	data []byte
}

// handFstabs are the shapes libmount treats in a particular way; each
// comment says how.
var handFstabs = map[string]string{
	"three-fields":      "/dev/vdb /data ext4\ntmpfs /tmp tmpfs\n", // options default, dump and pass 0
	"two-fields":        "/dev/vdb /data\nLABEL=x /y\n",            // the type is mandatory: error
	"one-field":         "garbage\n/dev/vdb\n",
	"four-five-six":     "a /b c d\na /b c d 1\na /b c d 1 2\n",
	"trailing-comment":  "a /b c d 0 0 # data disk\na /b c d 0 2 x-extra field\n", // ignored after the sixth field
	"comment-after-4":   "a /b c defaults # comment\n",                            // "#" is read as dump: error
	"comment-after-5":   "a /b c defaults 0 # comment\n",                          // "#" is read as pass: error
	"hash-mid-field":    "a /mnt#x c d#e 0 0\nLABEL=#1 /y z o\n",                  // '#' starts a comment only first on a line
	"comments":          "#\n# c\n  # indented\n\t#tab\n#a b c d 0 0\n",
	"blank":             "\n \n\t\n \t \n\n",
	"tabs":              "a\t/b\t\tc\t d \t 0\t2\n\ta /c b o\n",
	"leading-vtab":      "\va /b c d\n\fa /c c d\n", // only space and tab are blanks
	"crlf":              "a /b c d 0 0\r\na /c c d\r\na /d c d\r\r\n",
	"cr-in-number":      "a /b c d 0 0\r\r\n", // one CR is dropped, the other spoils pass
	"cr-alone":          "\r\n \r\n#\r\n",
	"escapes":           `LABEL=my\040data /srv/my\040data xfs defaults\011x 0 2` + "\n" + `a /b\134c t o\\` + "\n" + `a /b\04 t o\1` + "\n",
	"escape-high":       `a /m\777 t \101\102 0 0` + "\n" + `a /m\400x t o` + "\n" + `a /m\377 t o` + "\n",
	"escape-nul":        `\000 /m\000x ext4 o\000p 0 0` + "\n" + `x \000y z` + "\n" + `x y z \000` + "\n",
	"escape-in-number":  `a /b c d \060 1` + "\n",
	"nul-line":          "a /b\x00c ext4 d 0 0\n/ok /ok t o\n",
	"nul-comment":       "#co\x00mment\n\x00\n/ok /ok t o\n", // a NUL spoils even a comment
	"nul-last":          "/ok /ok t o\n/dev/k /v\x00w t o",   // no final newline: read up to the NUL
	"nul-last-entry":    "/ok /ok t o\n/dev/k /v t o 0 2\x00junk",
	"no-final-newline":  "a /b c d 0 1",
	"no-newline-cr":     "a /b c d 0 1\r",
	"numbers-signed":    "a /b c d -1 +2\na /c c d -0 -7\n",
	"numbers-strtol":    "a /b c d \v5 \f6\na /c c d 007 010\n",
	"numbers-bad":       "a /b c d x 0\na /c c d 0 y\na /d c d 1a\na /e c d 0 0x1\na /f c d + 0\na /g c d - 0\n",
	"numbers-big":       "a /b c d 4294967297 4294967298\na /c c d 2147483648 -2147483649\n",
	"numbers-overflow":  "a /b c d 0 99999999999999999999\na /c c d 99999999999999999999\na /d c d -99999999999999999999\n",
	"overflow-mid-line": "a /b c d 99999999999999999999 0\na /c c d 0 99999999999999999999 x\n",
	"quoted-options":    "tmpfs /tmp tmpfs mode=1777,context=\"system_u:object_r:tmp_t:s0,c1\" 0 0\na /b c \"unbalanced,x\n",
	"empty-options":     "a /b c ,\na /c c ,,x,\n",
	"swap":              "/dev/vdb none swap sw 0 0\nUUID=1 swap swap defaults\n/swapfile none swap\n",
	"relative":          "a relative ext4 defaults 0 2\n",
	"tags":              "UUID=\"a b\" /y t\nLABEL=\\040q swap swap\nPARTUUID='x' /p t\n",
	"non-utf8":          "/dev/\xff /m\xc3\xa9 t o\xfe\n",
	"long-line":         "/dev/vdb /" + strings.Repeat("x", 70000) + " ext4 " + strings.Repeat("o,", 30000) + "o 0 2\n",
	"long-comment":      "#" + strings.Repeat("c", 100000) + "\n/ok /ok t o\n",
	"empty":             "",
	"only-newline":      "\n",
	"mountinfo-like":    "1 2 3 4 5\n", // findmnt -s reads it as fstab, as mount does with /etc/fstab
	"many-lines":        strings.Repeat("a /b c d 0 0\nbad\n# c\n\n", 500),
}

// handCases returns handFstabs in a stable order.
func handCases() []fstabCase {
	var out []fstabCase
	for name, s := range handFstabs {
		out = append(out, fstabCase{"hand/" + name, []byte(s)})
	}
	slices.SortFunc(out, func(a, b fstabCase) int { return strings.Compare(a.name, b.name) })
	return out
}

// utilLinuxCases are util-linux's own fstab test files (see their README).
func utilLinuxCases(t *testing.T) []fstabCase {
	t.Helper()
	dir := filepath.Join("testdata", "fstab", "util-linux")
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []fstabCase
	for _, de := range des {
		if de.Name() == "README.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fstabCase{"util-linux/" + de.Name(), b})
	}
	if len(out) < 5 {
		t.Fatalf("only %d util-linux fstab files in %s", len(out), dir)
	}
	return out
}

// fuzzCases are FuzzParse's seeds and the corpus files under
// testdata/fuzz/FuzzParse.
func fuzzCases(t *testing.T) []fstabCase {
	t.Helper()
	var out []fstabCase
	for i, s := range fstabFuzzSeeds {
		out = append(out, fstabCase{fmt.Sprintf("fuzz-seed/%d", i), []byte(s)})
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	des, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		data, err := readFuzzCorpusFile(b)
		if err != nil {
			t.Fatalf("%s: %v", de.Name(), err)
		}
		out = append(out, fstabCase{"fuzz-corpus/" + de.Name(), data})
	}
	return out
}

// readFuzzCorpusFile decodes a "go test fuzz v1" file of one []byte value.
func readFuzzCorpusFile(b []byte) ([]byte, error) {
	header, body, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(header) != "go test fuzz v1" {
		return nil, fmt.Errorf("not a go test fuzz v1 file")
	}
	lit, ok := strings.CutPrefix(strings.TrimSpace(string(body)), "[]byte(")
	if !ok || !strings.HasSuffix(lit, ")") {
		return nil, fmt.Errorf("want one []byte value")
	}
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	return []byte(s), err
}

// generatedFstabs makes n fstab files from a fixed seed: lines of every
// shape handFstabs names (valid and invalid), assembled with random blanks,
// escapes, CRs, NULs and trailing text, plus raw byte soup over the
// characters that matter to the parser.
func generatedFstabs(n int) []fstabCase {
	r := rand.New(rand.NewPCG(20261201, 1))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	sep := func() string {
		if r.IntN(4) > 0 {
			return " "
		}
		return pick("\t", "  ", " \t ", "\t\t", "    ")
	}
	mutate := func(s string) string {
		if r.IntN(5) > 0 || s == "" {
			return s
		}
		i := r.IntN(len(s) + 1)
		ins := pick(`\040`, `\011`, `\012`, `\134`, `\000`, `\400`, `\777`, `\1`, `\04`, `\`, "#", "\r", "\x00", "\v", "\f",
			"\xff", "\xc3\xa9", `"`, ",", "=", "'")
		return s[:i] + ins + s[i:]
	}
	number := func() string {
		return pick("0", "0", "1", "2", "-1", "+3", "007", "10", "4294967297", "2147483648", "99999999999999999999",
			"-99999999999999999999", "\v5", "0x1", "1a", "#", "x", "-", "+", "0\r", "９")
	}
	field := func(k int) string {
		switch k {
		case 0:
			return mutate(pick("UUID=0a1b2c3d-0000-4000-8000-000000000001", `LABEL=my\040data`, "LABEL=data", "/dev/vdb", "/dev/vdb1",
				"/dev/disk/by-id/virtio-x", "host:/export", "//srv/share", "tmpfs", "none", `PARTUUID="5d0c0ffe-01"`, "proc", "\\", "#x", "x"))
		case 1:
			return mutate(pick("/", "/data", "/srv/my\\040data", "none", "swap", "relative", "/x#y", "/mnt/a/", "/boot/efi", "\\134"))
		case 2:
			return mutate(pick("ext4", "xfs", "swap", "nfs4", "tmpfs", "auto", "vfat", "none", "btrfs", "9p"))
		case 3:
			return mutate(pick("defaults", "defaults,nofail", "sw", "ro,noatime", `context="a,b",ro`, "a,,b", ",", "o\\", "noauto,x-systemd.automount",
				`"open`, "comment=cloudconfig", "x-systemd.device-timeout=10s"))
		default:
			return mutate(number())
		}
	}
	line := func() string {
		switch r.IntN(20) {
		case 0:
			return pick("", " ", "\t", " \t ")
		case 1:
			return pick("#", "# comment", "  # indented", "\t#x a b c d 0 0", "#\x00nul")
		case 2:
			return mutate(pick("garbage", "a b", "/dev/vdb /data"))
		case 3:
			return strings.Repeat("y", 1000+r.IntN(9000)) + " /long t o"
		}
		nf := 3 + r.IntN(4)
		parts := make([]string, nf)
		for k := range parts {
			parts[k] = field(k)
		}
		s := pick("", "", "", " ", "\t", "\v") + strings.Join(parts, sep())
		if r.IntN(6) == 0 {
			s += sep() + pick("# comment", "extra", "0", "x y z", "#")
		}
		if r.IntN(8) == 0 {
			s += pick("\r", "\r\r", " \r", "\t")
		}
		return s
	}
	soup := []string{"a", "b", "/", " ", " ", "\t", "\n", "\n", "\r", "#", "\\", "0", "1", "4", "7", "9", "\x00", "\v", ",", "\"", "=", "-", "+", "\xff"}
	var out []fstabCase
	for i := range n {
		var b strings.Builder
		if i%5 == 4 {
			for range r.IntN(120) {
				b.WriteString(soup[r.IntN(len(soup))])
			}
		} else {
			nl := 1 + r.IntN(14)
			for k := range nl {
				b.WriteString(line())
				if k < nl-1 || r.IntN(4) > 0 {
					b.WriteString("\n")
				}
			}
		}
		out = append(out, fstabCase{fmt.Sprintf("generated/%04d", i), []byte(b.String())})
	}
	return out
}

// libmountEntry is an entry in the fields findmnt prints.
type libmountEntry struct {
	Source, Target, FSType, Options string
	Freq, PassNo                    int
}

// libmountResult is what libmount made of one file.
type libmountResult struct {
	entries  []libmountEntry
	errLines []int
}

// ours is what Parse makes of a file, in findmnt's terms: findmnt
// prints an absent options field and an empty one alike.
func ours(b []byte) libmountResult {
	entries, errs := Parse(b)
	var res libmountResult
	for _, e := range entries {
		res.entries = append(res.entries, libmountEntry{e.Spec, e.MountPoint, e.Type, strings.Join(e.Options, ","), e.Freq, e.PassNo})
	}
	for _, le := range errs {
		res.errLines = append(res.errLines, le.Line)
	}
	return res
}

const fstabSentinel = "guestcheck-sentinel /guestcheck-sentinel sentinel\n"

var (
	findmntRow = regexp.MustCompile(`^SOURCE="([^"]*)" TARGET="([^"]*)" FSTYPE="([^"]*)" OPTIONS="([^"]*)" FREQ="(-?[0-9]+)" PASSNO="(-?[0-9]+)"$`)
	findmntErr = regexp.MustCompile(`^findmnt: (.+): parse error at line ([0-9]+) -- ignored$`)
	hexEscape  = regexp.MustCompile(`\\x[0-9a-f]{2}`)
)

// findmntParse runs findmnt over the files, many per run: each file is
// followed by a sentinel file of one entry that marks where its entries
// end (findmnt prints no file name with an entry). findmnt reads each file
// through its own stream, so a missing final newline stays that file's.
func findmntParse(t *testing.T, findmnt string, cases []fstabCase) []libmountResult {
	t.Helper()
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "sentinel")
	if err := os.WriteFile(sentinel, []byte(fstabSentinel), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := make([]string, len(cases))
	index := map[string]int{}
	for i, c := range cases {
		paths[i] = filepath.Join(dir, fmt.Sprintf("f%05d", i))
		index[paths[i]] = i
		if err := os.WriteFile(paths[i], c.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	results := make([]libmountResult, len(cases))
	const batch = 200
	for lo := 0; lo < len(cases); lo += batch {
		hi := min(lo+batch, len(cases))
		args := []string{"--fstab", "--pairs", "--output", "SOURCE,TARGET,FSTYPE,OPTIONS,FREQ,PASSNO"}
		for _, p := range paths[lo:hi] {
			args = append(args, "--tab-file", p, "--tab-file", sentinel)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, findmnt, args...)
		cmd.Env = append(os.Environ(), "LC_ALL=C") // ASCII output with \xNN escapes, English messages
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("findmnt over files %d to %d: %v\n%s", lo, hi-1, err, stderr.String())
		}
		for _, l := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			m := findmntErr.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("unexpected findmnt message: %q", l)
			}
			i, ok := index[m[1]]
			if !ok {
				t.Fatalf("findmnt reports a parse error in %s, which is no input", m[1])
			}
			n, _ := strconv.Atoi(m[2])
			results[i].errLines = append(results[i].errLines, n)
		}
		cur := lo
		for _, l := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
			m := findmntRow.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("unexpected findmnt output line: %q", l)
			}
			e := libmountEntry{Source: unhex(m[1]), Target: unhex(m[2]), FSType: unhex(m[3]), Options: unhex(m[4])}
			e.Freq, _ = strconv.Atoi(m[5])
			e.PassNo, _ = strconv.Atoi(m[6])
			if e == (libmountEntry{"guestcheck-sentinel", "/guestcheck-sentinel", "sentinel", "", 0, 0}) {
				cur++
				continue
			}
			if cur >= hi {
				t.Fatalf("findmnt printed an entry after the last sentinel: %q", l)
			}
			results[cur].entries = append(results[cur].entries, e)
		}
		if cur != hi {
			t.Fatalf("findmnt printed %d sentinels for %d files", cur-lo, hi-lo)
		}
	}
	return results
}

// unhex decodes the \xNN escapes of findmnt --pairs.
func unhex(s string) string {
	return hexEscape.ReplaceAllStringFunc(s, func(x string) string {
		v, _ := strconv.ParseUint(x[2:], 16, 8)
		return string([]byte{byte(v)})
	})
}

func TestParseFstabMatchesFindmnt(t *testing.T) {
	findmnt := testenv.Tool(t, "findmnt", "util-linux")
	hand, ul, fuzz, gen := handCases(), utilLinuxCases(t), fuzzCases(t), generatedFstabs(3000)
	t.Logf("corpus: %d hand-written, %d util-linux, %d fuzz, %d generated files", len(hand), len(ul), len(fuzz), len(gen))
	cases := slices.Concat(hand, ul, fuzz, gen)
	theirs := findmntParse(t, findmnt, cases)
	bad, entries, errLines := 0, 0, 0
	for i, c := range cases {
		want, got := theirs[i], ours(c.data)
		entries += len(want.entries)
		errLines += len(want.errLines)
		if slices.Equal(got.errLines, want.errLines) && slices.Equal(got.entries, want.entries) {
			continue
		}
		if bad++; bad > 10 {
			continue
		}
		show := string(c.data)
		if len(show) > 400 {
			show = show[:400] + "…"
		}
		t.Errorf("%s: %q\nerror lines: libmount %v, Parse %v\nentries:\n libmount   %#v\n Parse %#v",
			c.name, show, want.errLines, got.errLines, want.entries, got.entries)
	}
	if bad > 0 {
		t.Errorf("%d of %d files differ", bad, len(cases))
	}
	t.Logf("compared %d entries and %d bad lines over %d files", entries, errLines, len(cases))
	// The corpus must exercise both sides, or agreement means nothing.
	if entries < 5000 || errLines < 3000 {
		t.Errorf("corpus too weak: %d entries, %d bad lines", entries, errLines)
	}
}

// TestFindmntVerifyReportsTheSameParseErrors checks that findmnt --verify,
// the command the issue names, reports parse errors on the same lines as
// the listing the differential test reads (both go through libmount's
// parser callback), for the hand-written and util-linux files.
func TestFindmntVerifyReportsTheSameParseErrors(t *testing.T) {
	findmnt := testenv.Tool(t, "findmnt", "util-linux")
	cases := slices.Concat(handCases(), utilLinuxCases(t))
	dir := t.TempDir()
	for i, c := range cases {
		p := filepath.Join(dir, fmt.Sprintf("f%03d", i))
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, findmnt, "--verify", "--tab-file", p)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run() // exits 1 when it finds anything, parse error or not
		cancel()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("findmnt --verify: %v", err)
		}
		var lines []int
		for _, l := range strings.Split(stderr.String(), "\n") {
			if m := findmntErr.FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[2])
				lines = append(lines, n)
			}
		}
		if got := ours(c.data).errLines; !slices.Equal(got, lines) {
			t.Errorf("%s: findmnt --verify reports parse errors on lines %v, Parse on %v", c.name, lines, got)
		}
	}
}
