// Package docgen writes the pages a user reads from what the product
// declares in Go: a command's man page and Markdown tables from its
// cli.Command, and guestcheck.yaml(5) and the shipped, all-comments
// /etc/guestcheck/guestcheck.yaml from the configuration's keys
// (config.Describe over the registry's sections). The generating tests
// (cmd/guestcheck's TestGenerated, cmd/sealprep's TestReferenceFiles)
// hold the committed copies to it; nothing in a binary needs it.
package docgen
