package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestJUnitSchemasAsPublished holds the third-party XSDs in junit/ to
// the sha256 sums junit/README.md gives for the files as published:
// they are stored unmodified, and the JUnit tests' verdicts are only
// the published schemas' if they stay so.
func TestJUnitSchemasAsPublished(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("junit", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sums := regexp.MustCompile("`([A-Za-z0-9-]+\\.xsd)` ([0-9a-f]{64})").FindAllStringSubmatch(string(readme), -1)
	xsds, _ := filepath.Glob(filepath.Join("junit", "*.xsd"))
	if len(sums) == 0 || len(sums) != len(xsds) {
		t.Fatalf("junit/README.md gives %d sha256 sums for %d XSD files", len(sums), len(xsds))
	}
	for _, s := range sums {
		b, err := os.ReadFile(filepath.Join("junit", s[1]))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != s[2] {
			t.Errorf("junit/%s is not the file as published: its sha256 is %x, junit/README.md says %s", s[1], sum, s[2])
		}
	}
}
