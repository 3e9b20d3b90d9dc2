package config

import (
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Settings is a check's own section of the file, declared beside the
// check in the check's own type T: its name, its help, its keys and the
// rules that judge their values together. The decoder walks the file
// against it, guestcheck.yaml(5) and the shipped file are generated from
// it, and the check reads its values with Of, so that adding a setting
// touches only the check.
type Settings[T any] struct {
	// Name is the section's top-level key, such as "dns".
	Name string
	// Help is the section's paragraph in guestcheck.yaml(5).
	Help string
	// Default returns the values of an absent section; nil means T's
	// zero value.
	Default func() T
	// Keys are the section's keys, in the order the page describes them.
	Keys []Field[T]
	// Issues judges the decoded values together (a warning threshold
	// above the failure one); an Issue's Path is relative to the section.
	Issues func(T) []Issue
}

// Field is one key of a Settings section, made by one of the
// constructors (Duration, Bool, Count, Percent, Text, List, OneOf, Group),
// which decode its value strictly and say what is wrong in the user's
// words.
type Field[T any] struct {
	key    Key // Path relative to the section
	decode func(d *decoder, n *yaml.Node, shown string, into *T)
}

// Section is a Settings with its type forgotten, as the decoder and the
// registry hold it (runner.Check.Settings).
type Section struct {
	// Name is the section's top-level key.
	Name   string
	keys   []Key
	fresh  func() any          // a pointer to the section's defaults
	issues func(v any) []Issue // v is what fresh returned, decoded into
}

// defaults is T's value for an absent section.
func (s *Settings[T]) defaults() T {
	if s.Default == nil {
		var zero T
		return zero
	}
	return s.Default()
}

// Of returns the section's values in c, its defaults when c is nil or the
// file has no such section.
func (s *Settings[T]) Of(c *Config) T {
	if c != nil {
		if v, ok := c.sections[s.Name].(*T); ok {
			return *v
		}
	}
	return s.defaults()
}

// Set puts v in c as the section's values, as a file holding them would
// (without judging them: Issues is the loader's); for tests and callers
// that build a configuration in code.
func (s *Settings[T]) Set(c *Config, v T) {
	if c.sections == nil {
		c.sections = map[string]any{}
	}
	c.sections[s.Name] = &v
}

// Section forgets the section's type, for the registry.
func (s *Settings[T]) Section() Section {
	keys := []Key{{Path: s.Name, Help: s.Help}}
	for _, f := range s.Keys {
		k := f.key
		k.Path = s.Name + "." + k.Path
		if dec := f.decode; dec != nil {
			k.decode = func(d *decoder, n *yaml.Node, shown string, _ []string) {
				v, ok := d.c.sections[s.Name].(*T)
				if !ok {
					x := s.defaults()
					v = &x
					d.c.sections[s.Name] = v
				}
				dec(d, n, shown, v)
			}
		}
		keys = append(keys, k)
	}
	return Section{Name: s.Name, keys: keys,
		fresh: func() any { v := s.defaults(); return &v },
		issues: func(v any) []Issue {
			if s.Issues == nil {
				return nil
			}
			out := s.Issues(*v.(*T))
			for i := range out {
				out[i].prefix(s.Name)
			}
			return out
		}}
}

// prefix makes a section's relative key paths whole.
func (is *Issue) prefix(name string) {
	is.Path = name + "." + is.Path
	if is.at != "" {
		is.at = name + "." + is.at
	}
	if is.OrElse != nil {
		is.OrElse.prefix(name)
	}
}

// field makes a Field from a parser of its value and a setter.
func field[T, V any](name, typ, def, help string, parse parser[V], set func(*T, V)) Field[T] {
	return Field[T]{key: Key{Path: name, Type: typ, Default: def, Help: help},
		decode: func(d *decoder, n *yaml.Node, shown string, into *T) {
			if v, ok := parse(d, n, shown); ok {
				set(into, v)
			}
		}}
}

// Duration is a key holding a duration with a unit (5s, 2m); positive
// refuses 0, and a negative one is always refused. def is the default as
// the file would write it.
func Duration[T any](name, def, help string, positive bool, set func(*T, time.Duration)) Field[T] {
	return field(name, typeDuration, def, help, parseDuration(positive), set)
}

// Bool is a key holding true or false (yes and no too).
func Bool[T any](name, def, help string, set func(*T, bool)) Field[T] {
	return field(name, typeBool, def, help, parseBool, set)
}

// Count is a key holding a whole number, 0 or more.
func Count[T any](name, def, help string, set func(*T, int)) Field[T] {
	return field(name, typeCount, def, help, parseInt(0, 1<<20, typeCount), set)
}

// Percent is a key holding a whole number from 0 to 100.
func Percent[T any](name, def, help string, set func(*T, int)) Field[T] {
	return field(name, typePercent, def, help, parseInt(0, 100, typePercent), set)
}

// Text is a key holding one value; typ says in words what it is (a name,
// an interface name or MAC address).
func Text[T any](name, typ, def, help string, set func(*T, string)) Field[T] {
	return field(name, typ, def, help, parseText, set)
}

// List is a key holding a list of values; typ says in words what they
// are.
func List[T any](name, typ, def, help string, set func(*T, []string)) Field[T] {
	return field(name, typ, def, help, parseNames, func(t *T, v names) { set(t, v.vals) })
}

// OneOf is a key holding one of valid, or a non-empty list of them; a
// YAML boolean reads as yes or no.
func OneOf[T any](name, def, help string, valid []string, set func(*T, []string)) Field[T] {
	return field(name, oneOfType(valid), def, help, parseOneOf(valid), set)
}

// WithExample sets what the shipped, all-comments file writes for the
// key, where its default is words rather than a value.
func (f Field[T]) WithExample(v string) Field[T] {
	f.key.Example = v
	return f
}

// Group is a key that holds further keys of the section, named
// "group.key".
func Group[T any](name, help string) Field[T] {
	return Field[T]{key: Key{Path: name, Help: help}}
}
