package leaf

import (
	"unicode/utf8"

	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/value"
)

// NodeBadText reports the first string of a value node that is not UTF-8.
// The check is package value's own (the one value.FromGo makes), reached
// through internal/valuecheck, so the encoders refuse what FromGo refuses.
// The encoders call it for every node they write, so the hot kinds are
// answered here, without the indirect call: a str whose text is UTF-8, and
// the scalars and containers, which hold no string.
func NodeBadText(n *value.Node) (string, bool) {
	switch n.Kind {
	case value.KindStr:
		if utf8.ValidString(n.Text()) {
			return "", false
		}
	case value.KindNone, value.KindBool, value.KindInt, value.KindBigInt, value.KindFloat, value.KindBytes,
		value.KindList, value.KindTuple, value.KindDict, value.KindSet, value.KindFrozenSet:
		return "", false
	}
	name := valuecheck.BadText(n)
	return name, name != ""
}
