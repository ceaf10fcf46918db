package value

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// The one field resolver: FromGo, ToGo and the session's host classes all
// name struct fields through StructFields.

// Field is one struct field as the conversions see it.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Field struct {
	// Name is the Python-side name: the dict key FromGo writes and ToGo
	// matches (the `monty` tag's name; without a `monty` tag, the `json`
	// tag's; else the Go name).
	Name string
	// GoName is the Go field name (used in error paths).
	GoName string
	// Index is the field's index sequence for reflect.Value.FieldByIndex;
	// promoted fields have more than one element.
	Index []int
	// Type is the field's Go type.
	Type reflect.Type
	// OmitEmpty and OmitZero are the tag's omitempty and omitzero options.
	OmitEmpty, OmitZero bool

	tagged bool
	zero   zeroCheck // how OmitZero tests a value
}

var fieldCache sync.Map // reflect.Type -> []Field

// StructFields returns the fields of struct type t that [FromGo] encodes
// and [ToGo] decodes, in field order: exported fields under their `monty`
// tag name (without a `monty` tag, their `json` tag name, unless
// encoding/json refuses that name, a backslash or a quote in it) or Go name, a
// tag "-" skipped, the fields of untagged embedded
// structs promoted with encoding/json's rules for conflicting names. Any
// other type has no fields. The result is cached per type and shared: do
// not modify it. It is safe for concurrent use.
func StructFields(t reflect.Type) []Field {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return cachedFields(t)
}

func cachedFields(t reflect.Type) []Field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]Field)
	}
	f, _ := fieldCache.LoadOrStore(t, typeFields(t))
	return f.([]Field)
}

// typeFields lists the encoded fields of a struct type, promoting the
// fields of untagged embedded structs, with encoding/json's rules: the
// shallowest field of a name wins, a tagged one breaks a tie, and a tie
// that remains drops the name.
func typeFields(t reflect.Type) []Field {
	type queued struct {
		typ   reflect.Type
		index []int
	}
	var fields []Field
	next := []queued{{typ: t}}
	visited := map[reflect.Type]bool{}
	// How many times each struct type is embedded at the level being
	// read, and at the next. A type embedded twice at one level is read
	// once, and each of its fields is listed twice, so that the names it
	// brings are ambiguous at that depth and dropped, as encoding/json
	// drops them.
	var count, nextCount map[reflect.Type]int
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, q := range current {
			if visited[q.typ] {
				continue
			}
			visited[q.typ] = true
			for i := range q.typ.NumField() {
				sf := q.typ.Field(i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if sf.Anonymous {
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag, ok := sf.Tag.Lookup("monty")
				if !ok {
					// A type written for encoding/json converts as it
					// marshals: its json tag names (and skips) fields.
					tag = sf.Tag.Get("json")
				}
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !ok && !validJSONName(name) {
					name = "" // as encoding/json ignores it
				}
				index := append(slices.Clone(q.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					if nextCount[ft]++; nextCount[ft] == 1 {
						next = append(next, queued{typ: ft, index: index})
					}
					continue
				}
				if !sf.IsExported() {
					continue // an unexported embedded struct promotes, never encodes itself
				}
				f := Field{Name: name, GoName: sf.Name, tagged: name != "", Index: index, Type: sf.Type}
				if f.Name == "" {
					f.Name = sf.Name
				}
				for o := range strings.SplitSeq(opts, ",") {
					switch o {
					case "omitempty":
						f.OmitEmpty = true
					case "omitzero":
						f.OmitZero = true
						f.zero = zeroCheckOf(sf.Type)
					}
				}
				fields = append(fields, f)
				if count[q.typ] > 1 {
					fields = append(fields, f)
				}
			}
		}
	}
	// Keep the dominant field of each name.
	slices.SortStableFunc(fields, func(a, b Field) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.Index), len(b.Index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return 0
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].Name == fields[i].Name {
			j++
		}
		group := fields[i:j]
		if len(group) == 1 || len(group[1].Index) > len(group[0].Index) || group[0].tagged && !group[1].tagged {
			out = append(out, group[0])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b Field) int { return slices.Compare(a.Index, b.Index) })
	return slices.Clip(out)
}

// validJSONName reports whether encoding/json takes name, from a json
// tag, as a key: letters, digits and punctuation other than a backslash
// or a quote.
func validJSONName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}
