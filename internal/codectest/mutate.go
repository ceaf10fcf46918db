package codectest

import (
	"math/rand/v2"

	"google.golang.org/protobuf/encoding/protowire"
)

// field is one field of a frame parsed for structure-aware mutation: a
// length-delimited field whose payload parses as a message holds its
// fields in kids (a string may parse as one too; it is mutated as such).
type field struct {
	num  protowire.Number
	wt   protowire.Type
	raw  []byte // the value's bytes as on the wire (varint, fixed, or payload)
	kids []*field
	msg  bool
}

func parseFields(b []byte) ([]*field, bool) {
	var out []*field
	for len(b) > 0 {
		num, wt, k := protowire.ConsumeTag(b)
		if k < 0 {
			return nil, false
		}
		b = b[k:]
		f := &field{num: num, wt: wt}
		switch wt {
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, false
			}
			f.raw = v
			if len(v) > 0 {
				f.kids, f.msg = parseFields(v)
			}
			b = b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, wt, b)
			if m < 0 {
				return nil, false
			}
			f.raw = b[:m]
			b = b[m:]
		}
		out = append(out, f)
	}
	return out, true
}

func encodeFields(fs []*field) []byte {
	var b []byte
	for _, f := range fs {
		b = protowire.AppendTag(b, f.num, f.wt)
		if f.wt == protowire.BytesType {
			v := f.raw
			if f.msg {
				v = encodeFields(f.kids)
			}
			b = protowire.AppendBytes(b, v)
		} else {
			b = append(b, f.raw...)
		}
	}
	return b
}

// allFields lists every field of the tree with the slice holding it.
func allFields(fs *[]*field, out *[]struct {
	list *[]*field
	i    int
}) {
	for i, f := range *fs {
		*out = append(*out, struct {
			list *[]*field
			i    int
		}{fs, i})
		if f.msg {
			allFields(&f.kids, out)
		}
	}
}

var boundaries = []uint64{0, 1, 2, 127, 128, 255, 1<<31 - 1, 1 << 31, 1<<32 - 1, 1 << 32, 1<<63 - 1, 1 << 63, 1<<64 - 1}

// MutateFields returns frame with one structural change, for tests that
// hold a decoder to a reference on unusual frames: a field (at any depth of
// the messages the frame's payloads parse as) duplicated, dropped, moved to
// the end of its message, a varint set to a boundary value, or a payload
// emptied. A frame that does not parse comes back as it is.
func MutateFields(rng *rand.Rand, frame []byte) []byte {
	fs, ok := parseFields(frame)
	if !ok {
		return frame
	}
	var all []struct {
		list *[]*field
		i    int
	}
	allFields(&fs, &all)
	if len(all) == 0 {
		return frame
	}
	at := all[rng.IntN(len(all))]
	l, i := at.list, at.i
	f := (*l)[i]
	switch rng.IntN(5) {
	case 0: // duplicate
		c := *f
		*l = append((*l)[:i+1], append([]*field{&c}, (*l)[i+1:]...)...)
	case 1: // drop
		*l = append((*l)[:i], (*l)[i+1:]...)
	case 2: // move last
		*l = append(append((*l)[:i:i], (*l)[i+1:]...), f)
	case 3: // boundary varint
		if f.wt == protowire.VarintType {
			f.raw = protowire.AppendVarint(nil, boundaries[rng.IntN(len(boundaries))])
		}
	case 4: // empty payload
		if f.wt == protowire.BytesType {
			f.raw, f.kids, f.msg = nil, nil, false
		}
	}
	return encodeFields(fs)
}

// Mutate returns a copy of frame with one change, for the same tests: a
// byte changed, nudged by up to ±2, inserted or deleted, or one to three
// MutateFields changes.
func Mutate(rng *rand.Rand, frame []byte) []byte {
	f := append([]byte(nil), frame...)
	if len(f) == 0 {
		return f
	}
	i := rng.IntN(len(f))
	switch rng.IntN(5) {
	case 0:
		f[i] = byte(rng.IntN(256))
	case 1:
		f[i] += byte(rng.IntN(5)) - 2
	case 2:
		f = append(f[:i:i], append([]byte{byte(rng.IntN(256))}, f[i:]...)...)
	case 3:
		f = append(f[:i:i], f[i+1:]...)
	case 4:
		for range 1 + rng.IntN(3) {
			f = MutateFields(rng, f)
		}
	}
	return f
}
