// Package cloudinitstatus parses the files in which cloud-init records a
// run: /run/cloud-init/status.json, /run/cloud-init/result.json and
// /var/lib/cloud/instance/boot-finished. Everything here is a pure
// function of bytes; an error is a problem.Problem without a file, since
// the caller knows which file it read.
package cloudinitstatus

import (
	"encoding/json"
	"sort"

	"github.com/guestcheck/guestcheck/internal/parse/jsonfield"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Stage names as cloud-init writes them into status.json, in boot order.
const (
	StageInitLocal     = "init-local"
	StageInit          = "init"
	StageModulesConfig = "modules-config"
	StageModulesFinal  = "modules-final"
)

// StageRank orders the known stages by boot order; ok is false for a
// stage name cloud-init did not have when this was written, which callers
// sort after the known ones.
func StageRank(name string) (rank int, ok bool) {
	switch name {
	case StageInitLocal:
		return 0, true
	case StageInit:
		return 1, true
	case StageModulesConfig:
		return 2, true
	case StageModulesFinal:
		return 3, true
	}
	return 0, false
}

// Timestamp is a stage start or finish time exactly as status.json holds
// it. cloud-init before 24.2 wrote epoch seconds; 24.2 and later write
// seconds since boot (util.uptime), see Encoding.
type Timestamp struct {
	// Raw is the number as written; 0 when unset.
	Raw float64
	// Set is false when the field was absent or null.
	Set bool
}

// epochThreshold separates the two encodings: no machine has been up for
// 1e9 s (31 years), and no cloud-init ran before 2001.
const epochThreshold = 1e9

// TimeEncoding says how a Timestamp is to be read.
type TimeEncoding string

// The two encodings cloud-init has used.
const (
	EncodingNone   TimeEncoding = ""                            // no timestamp at all
	EncodingUptime TimeEncoding = "seconds since boot (24.2+)"  // util.uptime()
	EncodingEpoch  TimeEncoding = "epoch seconds (before 24.2)" // time.time()
)

// Encoding reports how t was written.
func (t Timestamp) Encoding() TimeEncoding {
	switch {
	case !t.Set || t.Raw <= 0:
		return EncodingNone
	case t.Raw < epochThreshold:
		return EncodingUptime
	}
	return EncodingEpoch
}

// StageStatus is one stage's record in status.json.
type StageStatus struct {
	// Name is the key in v1 ("init-local", "modules-final", ...).
	Name string
	// Errors are the stage's unrecoverable errors, as strings.
	Errors []string
	// RecoverableErrors maps a log level (WARNING, DEPRECATED, ERROR,
	// CRITICAL) to the messages logged at it; absent before cloud-init 23.4.
	RecoverableErrors map[string][]string
	// Start and Finished are when the stage started and ended.
	Start, Finished Timestamp
}

// StatusFile is /run/cloud-init/status.json: just the fields `cloud-init
// status` uses.
type StatusFile struct {
	// Datasource is v1.datasource as written, e.g.
	// "DataSourceNoCloud [seed=/dev/vdb][dsmode=net]"; "" when null.
	Datasource string
	// Stage is the stage running now; "" when none (null).
	Stage string
	// Stages holds every object-valued key of v1, sorted by name: that is
	// the order in which cloud-init aggregates errors.
	Stages []StageStatus
}

// Lookup returns the named stage record, or nil.
func (sf *StatusFile) Lookup(name string) *StageStatus {
	for i := range sf.Stages {
		if sf.Stages[i].Name == name {
			return &sf.Stages[i]
		}
	}
	return nil
}

// ParseStatus parses status.json. Unknown keys are ignored, so that newer
// cloud-init releases still parse; a field guestcheck uses with the wrong
// type is a problem naming the field (e.g. `"v1.init.errors[0]" is a
// number, want a string`). A missing v1 is treated as empty, as
// cloud-init does. A result is returned only without an error.
func ParseStatus(b []byte) (*StatusFile, error) {
	v1, err := decodeV1(b)
	if err != nil {
		return nil, fail(err)
	}
	sf := &StatusFile{}
	if sf.Datasource, err = jsonfield.String(v1, "datasource", "v1.datasource"); err != nil {
		return nil, fail(err)
	}
	if sf.Stage, err = jsonfield.String(v1, "stage", "v1.stage"); err != nil {
		return nil, fail(err)
	}
	names := make([]string, 0, len(v1))
	for k, v := range v1 {
		// cloud-init treats every dict under v1 as a stage; mirror that.
		if jsonfield.Kind(v) == "an object" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		st, err := parseStage(v1[name], name)
		if err != nil {
			return nil, fail(err)
		}
		sf.Stages = append(sf.Stages, st)
	}
	return sf, nil
}

func parseStage(raw json.RawMessage, name string) (StageStatus, error) {
	path := "v1." + name
	st := StageStatus{Name: name}
	m, err := jsonfield.Object(raw, path)
	if err != nil {
		return st, err
	}
	if st.Errors, err = stringList(m, "errors", path+".errors"); err != nil {
		return st, err
	}
	rec, err := nonNullObject(m, "recoverable_errors", path+".recoverable_errors")
	if err != nil {
		return st, err
	}
	// Levels in order, so that of two bad levels the same one is named on
	// every run.
	levels := make([]string, 0, len(rec))
	for level := range rec {
		levels = append(levels, level)
	}
	sort.Strings(levels)
	for _, level := range levels {
		msgs, err := jsonfield.Strings(rec[level], path+".recoverable_errors."+level)
		if err != nil {
			return st, err
		}
		if st.RecoverableErrors == nil {
			st.RecoverableErrors = make(map[string][]string, len(rec))
		}
		st.RecoverableErrors[level] = msgs
	}
	for _, f := range []struct {
		key string
		ts  *Timestamp
	}{{"start", &st.Start}, {"finished", &st.Finished}} {
		raw, ok, err := jsonfield.Number(m, f.key, path+"."+f.key)
		if err != nil {
			return st, err
		}
		*f.ts = Timestamp{Raw: raw, Set: ok}
	}
	return st, nil
}

// ResultFile is /run/cloud-init/result.json, written once at the end of
// the final stage.
type ResultFile struct {
	// Datasource is v1.datasource as written; "" when null.
	Datasource string
	// Errors are all stages' errors.
	Errors []string
}

// ParseResult parses result.json with the same rules as ParseStatus.
func ParseResult(b []byte) (*ResultFile, error) {
	v1, err := decodeV1(b)
	if err != nil {
		return nil, fail(err)
	}
	rf := &ResultFile{}
	if rf.Datasource, err = jsonfield.String(v1, "datasource", "v1.datasource"); err != nil {
		return nil, fail(err)
	}
	if rf.Errors, err = stringList(v1, "errors", "v1.errors"); err != nil {
		return nil, fail(err)
	}
	return rf, nil
}

// decodeV1 returns the "v1" object of a status or result file; nil when
// absent, which cloud-init treats as empty: jsonfield's readers find
// nothing in a nil object, so callers need no case of their own.
func decodeV1(b []byte) (map[string]json.RawMessage, error) {
	top, err := jsonfield.Object(b, "top level")
	if err != nil {
		return nil, err
	}
	return nonNullObject(top, "v1", "v1")
}

// nonNullObject returns m[key] as an object; absent gives nil. Unlike
// jsonfield.OptObject, null is refused: `cloud-init status` walks v1 with
// .items(), so a null v1 stops it with a traceback, and a null
// recoverable_errors is no list of levels either.
func nonNullObject(m map[string]json.RawMessage, key, field string) (map[string]json.RawMessage, error) {
	raw, ok := m[key]
	if !ok {
		return nil, nil
	}
	return jsonfield.Object(raw, field)
}

// stringList returns m[key] as a list of strings; absent gives nil. null
// is refused: cloud-init itself would crash extending a list with it.
func stringList(m map[string]json.RawMessage, key, field string) ([]string, error) {
	raw, ok := m[key]
	if !ok {
		return nil, nil
	}
	return jsonfield.Strings(raw, field)
}

// fail wraps a field reader's error as the parsers' one problem type; the
// file is left to the caller, which knows which one it read.
func fail(err error) error {
	return problem.Problem{Msg: err.Error()}
}
