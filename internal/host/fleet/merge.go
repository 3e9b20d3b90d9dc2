package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
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
	types, seed := SurveyTypes(), maphash.MakeSeed()
	loaded, err := loadAll(files, func(p string) (hostFile, error) { return loadSurvey(p, o, types, seed) })
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
				errs = append(errs, fmt.Errorf("%s and %s both hold VM %s: merge one survey per host", first, files[i], OneLine(vm.ID(), 80)))
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
			return fmt.Errorf("%s: %v", p, PathErr(err))
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

// PathErr is an *os.PathError's cause, for a message that names the
// file already.
func PathErr(err error) error {
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

// loadSurvey reads, checks and decodes one survey file (vmDecoder).
func loadSurvey(p string, o MergeOptions, types reportv1.Types, seed maphash.Seed) (hostFile, error) {
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	b, _, err := ReadBounded(p, o.MaxFileSize, (*buf)[:0], "a fleet survey")
	if err != nil {
		return hostFile{}, err
	}
	*buf = b
	d := vmDecoder{file: p, shared: o.SharedNetworks, types: types, seed: seed}
	head, vms, err := d.decode(b)
	if err != nil {
		return hostFile{}, err
	}
	host := OneLine(head.Host, 100)
	if host == "" {
		// A survey without its host's name is named by its file.
		host = strings.TrimSuffix(filepath.Base(p), ".json")
	}
	hf := hostFile{survey: HostSurvey{Host: host, File: p, Version: OneLine(head.Version, 40),
		StartedAt: head.StartedAt, Status: head.Status}}
	for _, e := range head.SourceErrors {
		hf.srcErrs = append(hf.srcErrs, SourceError{Source: OneLine(e.Source, 40) + "@" + host, Error: OneLine(e.Error, 300)})
	}
	seen := map[string]bool{}
	for _, vm := range vms {
		vm.Networks = d.networks(host, vm.Host, vm.Networks)
		if vm.Host == "" {
			vm.Host = host
		}
		vm.merged = true
		if seen[vm.ID()] {
			return hostFile{}, fmt.Errorf("%s: %s: VM %s is listed twice", p, LineCol(b, vm.at.vm), OneLine(vm.ID(), 80))
		}
		seen[vm.ID()] = true
		if matchAny(o.Names, vm.Name) {
			hf.vms = append(hf.vms, vm)
		}
	}
	hf.survey.VMs = len(hf.vms)
	return hf, nil
}

// bufPool holds the buffers files are read into: one per file being
// decoded, about 1 MiB each, used again for the next file rather than
// handed back to the system and asked for again.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// ReadBounded reads a regular file of at most max bytes, into buf's
// space when it has enough, and returns what it opened's FileInfo. It
// opens without blocking, so that a FIFO put in the file's place hangs
// no reader, and judges what it opened, not what the name was before.
// Errors are one line naming the file; what names the document expected
// ("a fleet survey") in the one for a file too large.
func ReadBounded(p string, max int64, buf []byte, what string) ([]byte, os.FileInfo, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", p, PathErr(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", p, PathErr(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, fmt.Errorf("%s: not a regular file", p)
	}
	tooLarge := fmt.Errorf("%s: larger than %d MiB: not %s", p, max>>20, what)
	if fi.Size() > max {
		return nil, fi, tooLarge
	}
	if n := fi.Size() + 512; int64(cap(buf)) < n {
		buf = make([]byte, 0, n)
	}
	w := bytes.NewBuffer(buf)
	if _, err := w.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, fi, fmt.Errorf("%s: %v", p, PathErr(err))
	}
	if int64(w.Len()) > max {
		return nil, fi, tooLarge
	}
	return w.Bytes(), fi, nil
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

// segment is where a merged VM and its report are in its survey file,
// and the hash of the report's bytes there: a file rewritten during the merge is refused rather
// than mixed.
type segment struct {
	path string
	vm   int64 // where the VM starts
	// off and n are where its report is, sum the report's hash.
	off, n int64
	// sum is the report's hash under seed, a seed of this merge alone,
	// so that no file can be made to match another's hash.
	sum  uint64
	seed maphash.Seed
}

// reportJSON is vm's report as its survey file holds it, read again
// into buf's space: nil for a VM without one.
func (vm VM) reportJSON(buf []byte) ([]byte, error) {
	if vm.at == nil || vm.Report == nil {
		return nil, nil
	}
	s := vm.at
	f, err := os.Open(s.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", s.path, PathErr(err))
	}
	defer f.Close()
	b := slices.Grow(buf[:0], int(s.n))[:s.n]
	if _, err := f.ReadAt(b, s.off); err != nil || maphash.Bytes(s.seed, b) != s.sum {
		return nil, fmt.Errorf("%s changed while it was merged: merge again", s.path)
	}
	return b, nil
}

// full is vm with its whole report, read again from its file.
func (vm VM) full() (VM, error) {
	b, err := vm.reportJSON(nil)
	if err != nil || b == nil {
		return vm, err
	}
	var rep GuestReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return vm, fmt.Errorf("%s changed while it was merged: merge again", vm.at.path)
	}
	vm.Report = &rep
	return vm, nil
}
