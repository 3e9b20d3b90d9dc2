package cloudconfig

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The tests here hold guestcheck's patch to the JSON Schema library
// (third_party/jsonschema/README.guestcheck.md): each draft's meta-schemas
// are compiled when a schema of that draft is first compiled, instead of all
// of them in init, and nothing else changes.

// compileDoc compiles one schema document with a compiler of its own.
func compileDoc(doc map[string]any) error {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		return err
	}
	_, err := c.Compile("mem://schema.json")
	return err
}

// firstCompileEnv names the test a child test binary runs (freshProcess).
const firstCompileEnv = "GUESTCHECK_TEST_JSONSCHEMA_FIRST_COMPILE"

func TestJSONSchemaFirstCompileFromManyGoroutines(t *testing.T) {
	if !freshProcess(t, t.Name()) {
		return
	}
	// Half the goroutines compile a schema that breaks its draft's
	// meta-schema ("type" must be a string or an array), half a good one,
	// over four drafts; all start together so that several race to load
	// each draft's meta-schemas, which also reads the drafts' vocabularies.
	drafts := []string{
		"http://json-schema.org/draft-04/schema#",
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"https://json-schema.org/draft/2020-12/schema",
	}
	start := make(chan struct{})
	errs := make([]error, 32)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			doc := map[string]any{"$schema": drafts[i/2%len(drafts)], "type": "object"}
			if i%2 == 1 {
				doc["type"] = 5.0
			}
			errs[i] = compileDoc(doc)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		var sve *jsonschema.SchemaValidationError
		switch {
		case i%2 == 0 && err != nil:
			t.Errorf("goroutine %d: good schema refused: %v", i, err)
		case i%2 == 1 && !errors.As(err, &sve):
			t.Errorf("goroutine %d: %s schema with \"type\": 5 not refused by the meta-schema: %v", i, drafts[i/2%len(drafts)], err)
		}
	}
}

// freshProcess runs test in a child process of this test binary, where no
// schema has been compiled yet, and reports whether this is that child.
func freshProcess(t *testing.T, test string) bool {
	if os.Getenv(firstCompileEnv) == test {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), firstCompileEnv+"="+test)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s in a fresh process: %v\n%s", test, err, out)
	}
	return false
}

func TestJSONSchemaDraft04CompilesOnlyItsOwnMetaSchema(t *testing.T) {
	if !freshProcess(t, t.Name()) {
		return
	}
	// cloud-init's schema is draft-04. Compiling every draft's meta-schema
	// allocates about 1.7 MB, draft-04's alone about 0.24 MB.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := compileDoc(map[string]any{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 800<<10 {
		t.Errorf("first draft-04 compile allocated %d bytes; the other drafts' meta-schemas were compiled too", n)
	}
}

func TestJSONSchemaMetaSchemaStillJudgesEachDraft(t *testing.T) {
	for _, draft := range []string{
		"http://json-schema.org/draft-04/schema#",
		"http://json-schema.org/draft-06/schema#",
		"http://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2019-09/schema",
		"https://json-schema.org/draft/2020-12/schema",
	} {
		if err := compileDoc(map[string]any{"$schema": draft, "minLength": -1.0}); err == nil {
			t.Errorf("%s: \"minLength\": -1 compiled; the meta-schema was not applied", draft)
		}
		if err := compileDoc(map[string]any{"$schema": draft, "minLength": 1.0}); err != nil {
			t.Errorf("%s: valid schema refused: %v", draft, err)
		}
	}
}

// inittraceLine is one line of GODEBUG=inittrace=1 output.
var inittraceLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

func TestJSONSchemaInitIsCheap(t *testing.T) {
	// Run this test binary with nothing to do and read what each package's
	// init allocated. Upstream's init compiles every draft's meta-schema:
	// about 1.7 MB in 21,000 allocations.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	const pkg = "github.com/santhosh-tekuri/jsonschema/v6"
	found := false
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		m := inittraceLine.FindStringSubmatch(sc.Text())
		if m == nil || m[1] != pkg {
			continue
		}
		found = true
		bytes, _ := strconv.Atoi(m[2])
		if bytes > 64<<10 {
			t.Errorf("%s init allocated %d bytes in %s allocations; the meta-schemas are compiled at start again", pkg, bytes, m[3])
		}
	}
	if !found {
		t.Fatalf("no inittrace line for %s in:\n%s", pkg, out)
	}
}
