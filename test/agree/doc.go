// Package agree holds the agreement test between the two binaries (issue
// 22, item 7): on generated and sealed guest roots, `sealprep verify
// --root` and `guestcheck --root` must agree about every identity item.
// A root that sealprep calls sealed for an item must draw no warning or
// failure from guestcheck for it. The package has no code of its own.
package agree
