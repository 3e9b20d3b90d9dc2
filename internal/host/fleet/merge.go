package fleet

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// DefaultMaxSurveyFile bounds each survey file a merge reads: 50 VMs
// with real reports are about 1 MiB.
const DefaultMaxSurveyFile = 64 << 20

// MergeOptions shape a merge of many hosts' surveys.
type MergeOptions struct {
	// SharedNetworks are network names that are one network on every
	// host (a bridge on one VLAN): addresses on them are compared across
	// hosts. Any other network is its host's own.
	SharedNetworks []string
	// Names keeps the VMs whose name matches one of these patterns.
	Names []string
	// HostName names the merging host in the result; empty: its hostname.
	HostName string
	// MaxFileSize bounds each file; 0 is DefaultMaxSurveyFile.
	MaxFileSize int64
}

// hostFile is one survey file, decoded: only what a merge compares and
// counts, each VM's full report left on disk.
type hostFile struct {
	survey  HostSurvey
	vms     []VM
	srcErrs []SourceError
}

// Merge compares the surveys of many hosts (guestcheck fleet --format
// json of each) as one fleet: each VM is name@host, and every identity
// item is compared across all hosts through the same guestid.Collisions
// as one host's survey. A file that cannot be read, is not a fleet
// survey, or names a host another file names too is an error naming the
// file; the files are given in files, each once.
func Merge(files []string, o MergeOptions) (Result, error) {
	start := time.Now()
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxSurveyFile
	}
	if err := distinctFiles(files); err != nil {
		return Result{}, err
	}
	types := SurveyTypes()
	loaded, err := loadAll(files, func(p string) (hostFile, error) { return loadSurvey(p, o, types) })
	if err != nil {
		return Result{}, err
	}
	host := o.HostName
	if host == "" {
		host, _ = os.Hostname()
	}
	res := Result{SchemaVersion: SchemaVersion, Tool: "guestcheck fleet", Version: buildinfo.Version,
		Host: host, StartedAt: start.UTC(), merged: true}
	byHost, byVM := map[string]string{}, map[string]string{}
	var errs []error
	for i, hf := range loaded {
		if first, dup := byHost[hf.survey.Host]; dup {
			errs = append(errs, fmt.Errorf("%s and %s are both the survey of host %s: merge one survey per host", first, files[i], hf.survey.Host))
			continue
		}
		byHost[hf.survey.Host] = files[i]
		for _, vm := range hf.vms {
			// A merged survey merged again with one of its hosts.
			if first, dup := byVM[vm.ID()]; dup {
				errs = append(errs, fmt.Errorf("%s and %s both hold VM %s: merge one survey per host", first, files[i], oneLine(vm.ID(), 80)))
				break
			}
			byVM[vm.ID()] = files[i]
		}
		res.Hosts = append(res.Hosts, hf.survey)
		res.VMs = append(res.VMs, hf.vms...)
		res.SourceErrors = append(res.SourceErrors, hf.srcErrs...)
	}
	if len(errs) > 0 {
		return Result{}, errors.Join(errs...)
	}
	res.finish()
	res.DurationMS = time.Since(start).Milliseconds()
	return res, nil
}

// distinctFiles refuses a file given twice, under any name.
func distinctFiles(files []string) error {
	var seen []os.FileInfo
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%s: %v", p, pathErr(err))
		}
		for j, prev := range seen {
			if os.SameFile(fi, prev) {
				return fmt.Errorf("%s and %s are the same file: merge each host's survey once", files[j], p)
			}
		}
		seen = append(seen, fi)
	}
	return nil
}

// pathErr is an *os.PathError's cause, the file being named already.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loadAll loads the files a few at a time (one per CPU: decoding is
// the work, and each file's bytes are held only while it is decoded),
// keeping their order, and joins every file's error.
func loadAll(files []string, load func(string) (hostFile, error)) ([]hostFile, error) {
	out := make([]hostFile, len(files))
	errs := make([]error, len(files))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range files {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = load(p)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// loadSurvey reads, decodes and checks one survey file: the typed
// decode and SurveyTypes' rules are what schema/fleet-v1.schema.json
// (generated from them) asks.
func loadSurvey(p string, o MergeOptions, types reportv1.Types) (hostFile, error) {
	b, err := readBounded(p, o.MaxFileSize)
	if err != nil {
		return hostFile{}, err
	}
	d := vmDecoder{file: p, shared: o.SharedNetworks, types: types}
	head, vms, err := d.decode(b)
	if err != nil {
		return hostFile{}, err
	}
	host := oneLine(head.Host, 100)
	if host == "" {
		// A survey without its host's name is named by its file.
		host = strings.TrimSuffix(filepath.Base(p), ".json")
	}
	hf := hostFile{survey: HostSurvey{Host: host, File: p, Version: oneLine(head.Version, 40),
		StartedAt: head.StartedAt, Status: head.Status}}
	for _, e := range head.SourceErrors {
		hf.srcErrs = append(hf.srcErrs, SourceError{Source: oneLine(e.Source, 40) + "@" + host, Error: oneLine(e.Error, 300)})
	}
	seen := map[string]bool{}
	for _, vm := range vms {
		vm.Networks = d.networks(host, vm.Host, vm.Networks)
		if vm.Host == "" {
			vm.Host = host
		}
		vm.merged = true
		if seen[vm.ID()] {
			return hostFile{}, fmt.Errorf("%s: %s: VM %s is listed twice", p, lineCol(b, vm.at.off), oneLine(vm.ID(), 80))
		}
		seen[vm.ID()] = true
		if matchAny(o.Names, vm.Name) {
			hf.vms = append(hf.vms, vm)
		}
	}
	hf.survey.VMs = len(hf.vms)
	return hf, nil
}

// readBounded reads a regular file of at most max bytes.
func readBounded(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, pathErr(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, pathErr(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, pathErr(err))
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a fleet survey", p, max>>20)
	}
	return b, nil
}

// surveyHead is a survey's top level, its VMs checked one at a time
// apart; SchemaVersion is nil when the survey has none.
type surveyHead struct {
	Result
	SchemaVersion *int
}

// field is where the head keeps the value of key; a key the schema
// does not name is skipped, as additive changes within a schema
// version require.
func (h *surveyHead) field(key string) any {
	switch key {
	case "schema_version":
		return &h.SchemaVersion
	case "tool":
		return &h.Tool
	case "version":
		return &h.Version
	case "host":
		return &h.Host
	case "started_at":
		return &h.StartedAt
	case "duration_ms":
		return &h.DurationMS
	case "status":
		return &h.Status
	case "summary":
		return &h.Summary
	case "collisions":
		return &h.Collisions
	case "source_errors":
		return &h.SourceErrors
	case "hosts":
		return &h.Hosts
	}
	return &skipped{}
}

// check refuses what is not a fleet survey this guestcheck reads, before
// the schema says so at more length.
func (h surveyHead) check(p string) error {
	if h.Tool != "guestcheck fleet" || h.SchemaVersion == nil {
		return fmt.Errorf("%s: not a guestcheck fleet survey (tool %q): merge what guestcheck fleet --format json wrote on each host", p, oneLine(h.Tool, 40))
	}
	if *h.SchemaVersion != SchemaVersion {
		return fmt.Errorf("%s: a fleet survey of schema_version %d, and this guestcheck reads %d: survey with the same guestcheck on every host", p, *h.SchemaVersion, SchemaVersion)
	}
	return nil
}

// valid checks the head against SurveyTypes; the VMs were checked as
// they were read, and an empty list stands in for them.
func (h surveyHead) valid(p string, types reportv1.Types) error {
	res := h.Result
	res.SchemaVersion, res.VMs = *h.SchemaVersion, []VM{}
	if err := reportv1.Check(res, types); err != nil {
		return fmt.Errorf("%s: not a valid fleet survey: %v", p, err)
	}
	return nil
}

// skipped is a JSON value a decode steps over without keeping.
type skipped struct{}

// UnmarshalJSON keeps nothing.
func (*skipped) UnmarshalJSON([]byte) error { return nil }

// lineCol is the line and column of byte offset off.
func lineCol(b []byte, off int64) string {
	off = min(max(off, 0), int64(len(b)))
	pre := b[:off]
	line := bytes.Count(pre, []byte("\n")) + 1
	col := int64(len(pre)) - int64(bytes.LastIndexByte(pre, '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

// vmDecoder decodes one file: its head, and its VMs one at a time.
type vmDecoder struct {
	file   string
	shared []string
	types  reportv1.Types // SurveyTypes, built once per merge
}

// decode walks the document in one pass: the head's keys, and the
// "vms" array one VM at a time, noting where each VM's bytes are for
// its report to be read again.
func (d vmDecoder) decode(b []byte) (surveyHead, []VM, error) {
	var h surveyHead
	var typeErr error
	sawVMs := false
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h, nil, d.errAt(b, dec.InputOffset(), err, "a fleet survey is a JSON object")
	}
	var vms []VM
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return h, nil, d.errAt(b, dec.InputOffset(), err, "")
		}
		key, _ := t.(string)
		at := dec.InputOffset()
		if key == "vms" {
			sawVMs = true
			if vms, err = d.vms(dec, b); err != nil {
				return h, nil, err
			}
			continue
		}
		if err := dec.Decode(h.field(key)); err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				return h, nil, d.errAt(b, at, err, key)
			}
			// The stream goes on past a value of the wrong type; a
			// document that is no survey at all is told so first.
			typeErr = cmp.Or(typeErr, d.errAt(b, at, err, key))
		}
	}
	if _, err := dec.Token(); err != nil {
		return h, nil, d.errAt(b, dec.InputOffset(), err, "")
	}
	if err := h.check(d.file); err != nil {
		return h, nil, err
	}
	if typeErr != nil {
		return h, nil, typeErr
	}
	if !sawVMs {
		return h, nil, fmt.Errorf("%s: not a valid fleet survey: it has no vms", d.file)
	}
	return h, vms, h.valid(d.file, d.types)
}

func (d vmDecoder) vms(dec *json.Decoder, b []byte) ([]VM, error) {
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, d.errAt(b, dec.InputOffset(), err, "vms")
	}
	var out []VM
	for dec.More() {
		// The VM starts past the comma and white space before it.
		start := dec.InputOffset()
		start += int64(len(b[start:]) - len(bytes.TrimLeft(b[start:], " \t\r\n,")))
		var in VM
		if err := dec.Decode(&in); err != nil {
			return nil, d.errAt(b, start, err, "")
		}
		vm, err := d.vm(in, len(out), b, start, dec.InputOffset())
		if err != nil {
			return nil, err
		}
		out = append(out, vm)
	}
	if _, err := dec.Token(); err != nil {
		return nil, d.errAt(b, dec.InputOffset(), err, "")
	}
	return out, nil
}

// errAt says where the JSON breaks: a syntax error where it is, a value
// of the wrong type at off, as key's.
func (d vmDecoder) errAt(b []byte, off int64, err error, key string) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return fmt.Errorf("%s: %s: not a fleet survey: %s", d.file, lineCol(b, off), key)
	case errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		// The stream's offsets are its buffer's: a whole-document check
		// finds the byte (its Offset is just past it).
		if errors.As(json.Unmarshal(b, &skipped{}), &se) {
			return fmt.Errorf("%s: %s: not JSON: %s", d.file, lineCol(b, se.Offset-1), oneLine(se.Error(), 120))
		}
		return fmt.Errorf("%s: not JSON: %s", d.file, oneLine(err.Error(), 120))
	case errors.As(err, &te):
		field := joinNonEmpty(".", key, te.Field)
		off = max(off, 0)
		off += int64(len(b[off:]) - len(bytes.TrimLeft(b[off:], " \t\r\n:")))
		return fmt.Errorf("%s: %s: %s is a JSON %s, not a fleet survey's", d.file, lineCol(b, off), oneLine(field, 80), te.Value)
	}
	return fmt.Errorf("%s: %s: %s", d.file, lineCol(b, off), oneLine(err.Error(), 160))
}

// vm is VM i of the file, checked and judged afresh: its report's own
// status and worst check (what it shared on its host is compared
// again). Of its report it keeps what a merge compares and counts,
// not the checks.
func (d vmDecoder) vm(vm VM, i int, b []byte, start, end int64) (VM, error) {
	if err := reportv1.Check(vm, d.types); err != nil {
		return VM{}, fmt.Errorf("%s: %s: not a valid fleet survey: vms[%d] (%s): %v", d.file, lineCol(b, start), i, oneLine(vm.Name, 80), err)
	}
	rep := vm.Report
	vm.Shares, vm.Report = nil, nil
	vm.Reason = oneLine(vm.Reason, 400)
	vm.at = &segment{path: d.file, off: start, n: end - start}
	if rep == nil {
		// Unknown on its host, and unknown here: what it shares is not
		// known.
		vm.Status = Unknown
		if vm.Reason == "" {
			vm.Reason = "no report in the survey"
		}
		return vm, nil
	}
	vm.Status, vm.Reason = Status(rep.Status), worstIn(rep.Checks)
	rep.Checks = nil
	vm.Report = rep
	vm.at.sum = sha256.Sum256(b[start:end])
	return vm, nil
}

// networks names each network with host unless the operator named it
// shared: libvirt's "default" on two hosts is two NAT networks. A VM of
// a merged survey (vmHost set) has its networks named already.
func (d vmDecoder) networks(host, vmHost string, nets map[string]string) map[string]string {
	if vmHost != "" || len(nets) == 0 {
		return nets
	}
	out := make(map[string]string, len(nets))
	for mac, n := range nets {
		if n != "" && !slices.Contains(d.shared, n) {
			n += "@" + host
		}
		out[strings.ToLower(mac)] = n
	}
	return out
}

// worstIn is worstCheck over a merged report's checks.
func worstIn(cs []runner.Result) string {
	var w *runner.Result
	for i := range cs {
		if w == nil || cs[i].Status.Worse(w.Status) {
			w = &cs[i]
		}
	}
	if w == nil || w.Status == runner.Pass || w.Status == runner.Skip {
		return ""
	}
	return oneLine(w.ID+": "+w.Summary, 200)
}

// matchAny reports whether name matches a pattern; no patterns match
// all.
func matchAny(patterns []string, name string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// segment is where a merged VM is in its survey file, and the hash of
// its bytes there: a file rewritten during the merge is refused rather
// than mixed.
type segment struct {
	path   string
	off, n int64
	sum    [32]byte
}

// full is vm with its whole report, read again from its file.
func (vm VM) full() (VM, error) {
	if vm.at == nil || vm.Report == nil {
		return vm, nil
	}
	s := vm.at
	f, err := os.Open(s.path)
	if err != nil {
		return vm, fmt.Errorf("%s: %v", s.path, pathErr(err))
	}
	defer f.Close()
	b := make([]byte, s.n)
	if _, err := f.ReadAt(b, s.off); err != nil || sha256.Sum256(b) != s.sum {
		return vm, fmt.Errorf("%s changed while it was merged: merge again", s.path)
	}
	var in struct {
		Report *GuestReport `json:"report"`
	}
	if err := json.Unmarshal(bytes.TrimLeft(b, " \t\r\n,"), &in); err != nil || in.Report == nil {
		return vm, fmt.Errorf("%s changed while it was merged: merge again", s.path)
	}
	vm.Report = in.Report
	return vm, nil
}
