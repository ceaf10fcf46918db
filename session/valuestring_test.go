package session

import (
	"fmt"
	"testing"
	"time"

	"github.com/gomonty/monty/value"
)

// TestValueFormatsAsRepr: fmt shows a Value, a Result and a *Result as the
// value's repr (before String, Println printed the struct: a graph pointer,
// a node id and a duration).
func TestValueFormatsAsRepr(t *testing.T) {
	var g value.Graph
	root, err := value.FromGo(&g, []any{1, "a"})
	if err != nil {
		t.Fatal(err)
	}
	v := Value{Graph: &g, Root: root}
	res := &Result{Value: v, TotalExecution: time.Millisecond}
	for _, c := range []struct {
		name, got string
	}{
		{"Sprint(Value)", fmt.Sprint(v)},
		{"Sprintf(%v, Value)", fmt.Sprintf("%v", v)},
		{"Sprint(Result)", fmt.Sprint(*res)},
		{"Sprintln(*Result)", fmt.Sprintln(res)},
	} {
		want := "[1, 'a']"
		if c.name == "Sprintln(*Result)" {
			want += "\n"
		}
		if c.got != want {
			t.Errorf("%s = %q, want %q", c.name, c.got, want)
		}
	}
	if got := fmt.Sprint(Value{}); got != "<no value>" {
		t.Errorf("Sprint(Value{}) = %q, want <no value>", got)
	}
}
