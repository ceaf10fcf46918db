// Package valuecheck reaches the wire-level checks of package value that
// only the codecs and package message use: the constructors of the
// protocol's *value.InvalidError diagnostics ("missing required field …",
// "invalid value for …") and the checks of one decoded node or type
// payload. Package value registers them from its init, so they are not
// part of its public API; errors.Is and errors.As see the same
// *value.InvalidError either way.
//
// Every function here is safe for concurrent use once package value has
// initialised, which Go guarantees before any importer of value runs.
package valuecheck

var (
	missingField func(field string) error
	invalidValue func(field, reason string) error
	checkLeaf    any // func(value.Node) error
	checkType    any // func(*value.Type, hasID, hasAttrs bool) error
	badText      any // func(*value.Node) string
)

// Register is called once, by package value's init, with its node type N
// and type payload T.
func Register[N, T any](missing func(field string) error, invalid func(field, reason string) error,
	leaf func(N) error, typ func(t *T, hasID, hasAttrs bool) error, text func(*N) string) {
	missingField, invalidValue, checkLeaf, checkType, badText = missing, invalid, leaf, typ, text
}

// MissingField returns the error `missing required field {field}`.
func MissingField(field string) error { return missingField(field) }

// InvalidValue returns the error `invalid value for {field}: {reason}`.
func InvalidValue(field, reason string) error { return invalidValue(field, reason) }

// CheckLeaf validates the payload of one value.Node on its own (ranges,
// names, modes), without looking at its children. The node is passed by
// value, so that a decoder's node on the stack stays there.
func CheckLeaf[N any](n N) error { return checkLeaf.(func(N) error)(n) }

// CheckType validates a *value.Type payload as it arrived: hasID and
// hasAttrs say whether the id and attrs fields were present.
func CheckType[T any](t *T, hasID, hasAttrs bool) error {
	return checkType.(func(*T, bool, bool) error)(t, hasID, hasAttrs)
}

// BadText names the first string of a *value.Node's payload that is not
// valid UTF-8 ("text", "placeholder", or the payload field's name), or
// returns "" if every string is UTF-8. It is the check value.FromGo makes
// on the nodes it builds, so an encoder refuses exactly what FromGo does.
func BadText[N any](n *N) string { return badText.(func(*N) string)(n) }
