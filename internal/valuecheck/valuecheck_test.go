package valuecheck_test

import (
	"errors"
	"testing"

	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/value"
)

// The checks reached through valuecheck are package value's: their errors
// are *value.InvalidError with the protocol's texts.
func TestChecksAreValues(t *testing.T) {
	bad := value.Node{Kind: value.KindDate}.WithExt(&value.Date{Year: 2020, Month: 13, Day: 1})
	cases := []struct {
		err  error
		want string
	}{
		{valuecheck.MissingField("Pair.key"), "missing required field Pair.key"},
		{valuecheck.InvalidValue("Print.stream", "unknown stream 9"), "invalid value for Print.stream: unknown stream 9"},
		{valuecheck.CheckLeaf(bad), "invalid value for Date.month: 13 is outside the range 1..=12"},
		{valuecheck.CheckType(&value.Type{Name: "int", Origin: value.OriginBuiltin}, false, true),
			"invalid value for Type: a builtin type must not carry attrs"},
	}
	for _, c := range cases {
		var ie *value.InvalidError
		if !errors.As(c.err, &ie) || c.err.Error() != c.want {
			t.Errorf("got %v (%T), want *value.InvalidError %q", c.err, c.err, c.want)
		}
	}
	ok := value.Int(1)
	if err := valuecheck.CheckLeaf(ok); err != nil {
		t.Errorf("CheckLeaf(int) = %v", err)
	}
}
