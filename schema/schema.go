// Package schema holds the JSON schemas of guestcheck's documents:
// report-v1, finding-line-v1, fleet-v1 and prove-v1, each generated from
// the Go types of its document (internal/testenv/schemagen), and in
// junit/ the third-party JUnit XSDs, stored unmodified.
package schema

import "embed"

// Files are the *.schema.json files of this directory.
//
//go:embed *.schema.json
var Files embed.FS

// Base is the URL the files' $id values share, so that one file's
// "$ref": "report-v1.schema.json" finds the other.
const Base = "https://github.com/guestcheck/guestcheck/schema/"
