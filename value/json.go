package value

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// MarshalText renders the kind's protocol name, so JSON output reads
// "list" rather than 11.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// MarshalText renders the origin's name.
func (o TypeOrigin) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads the name MarshalText writes ("builtin", "sandbox",
// "host", "unspecified", or "origin(N)" for another N).
func (o *TypeOrigin) UnmarshalText(text []byte) error {
	s := string(text)
	for _, c := range []TypeOrigin{OriginUnspecified, OriginBuiltin, OriginSandbox, OriginHost} {
		if s == c.String() {
			*o = c
			return nil
		}
	}
	if digits, ok := strings.CutPrefix(s, "origin("); ok {
		if digits, ok = strings.CutSuffix(digits, ")"); ok {
			if n, err := strconv.ParseUint(digits, 10, 8); err == nil {
				*o = TypeOrigin(n)
				return nil
			}
		}
	}
	return errors.New("value: invalid type origin " + strconv.Quote(s))
}

// MarshalText renders the canonical uuid form.
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads what [ParseUUID] reads (MarshalText's form
// included), so a UUID round-trips through encoding/json.
func (u *UUID) UnmarshalText(text []byte) error {
	v, err := ParseUUID(string(text))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// MarshalJSON renders a node compactly for debugging tools: its kind and
// only the fields its kind uses.
func (n Node) MarshalJSON() ([]byte, error) {
	m := map[string]any{"kind": n.Kind}
	switch n.Kind {
	case KindBool:
		m["value"] = n.Num != 0
	case KindInt:
		m["value"] = int64(n.Num)
	case KindFloat:
		f := math.Float64frombits(n.Num)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			m["value"] = FloatRepr(f)
		} else {
			m["value"] = f
		}
	case KindStr, KindPath, KindBuiltinFunction, KindRepr:
		m["value"] = n.Text()
	case KindCycle:
		m["placeholder"] = n.Text()
		if n.Num != 0 {
			m["identity"] = n.Num
		}
	case KindBytes:
		m["value"] = n.Bytes()
	case KindBigInt:
		if b := n.BigInt(); b != nil {
			if checkIntDigits(b) == nil {
				m["value"] = b.String()
			} else {
				// Past CPython's digit limit the decimal form would take
				// quadratic time; hexadecimal is linear.
				m["hex"] = b.Text(16)
			}
		}
	case KindDict:
		m["pairs"] = n.Pairs()
	default:
		if xs := n.Ints(); xs != nil {
			m["ints"] = xs
		}
		if xs := n.Floats(); xs != nil {
			fs := make([]any, len(xs))
			for i, f := range xs {
				fs[i] = f
				if math.IsNaN(f) || math.IsInf(f, 0) {
					fs[i] = FloatRepr(f)
				}
			}
			m["floats"] = fs
		}
		if n.Refs() != nil {
			m["items"] = n.Refs()
		}
	}
	if n.Ext() != nil && n.Kind != KindBytes && n.Kind != KindBigInt {
		m["payload"] = n.Ext()
	}
	return json.Marshal(m)
}
