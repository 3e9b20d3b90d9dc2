// Package schema holds the JSON schemas of guestcheck's documents,
// embedded so that guestcheck fleet checks the surveys it merges against
// the very schema it documents.
package schema

import "embed"

// Files are the *.schema.json files of this directory.
//
//go:embed *.schema.json
var Files embed.FS

// Base is the URL the files' $id values share, so that one file's
// "$ref": "report-v1.schema.json" finds the other.
const Base = "https://github.com/guestcheck/guestcheck/schema/"
