package value

import (
	"encoding/json"
	"math"
)

// MarshalText renders the kind's protocol name, so JSON output reads
// "list" rather than 11.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// MarshalText renders the origin's name.
func (o TypeOrigin) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// MarshalText renders the canonical uuid form.
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

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
