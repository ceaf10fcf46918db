package codecv2

import (
	"strings"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// TestVectorReprPairs checks value.AppendRepr and value.AppendStr against
// the worker's own repr and str: the sessions of testdata/v2-more whose
// snippet ends with (x, repr(x)) or (x, str(x)) complete with a 2-tuple
// of the value as the worker sent it and the text the sandbox made of it.
func TestVectorReprPairs(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if v.Code == nil {
			continue
		}
		render := value.AppendRepr
		switch {
		case strings.HasSuffix(*v.Code, "(x, repr(x))"), strings.HasSuffix(*v.Code, "(v, repr(v))"):
		case strings.HasSuffix(*v.Code, "(x, str(x))"):
			render = value.AppendStr
		default:
			continue
		}
		var c *message.Complete
		for _, ev := range events(t, v) {
			if x, ok := ev.Body.(*message.Complete); ok {
				c = x
			}
		}
		if c == nil {
			continue // the snippet raised (a feature the worker lacks)
		}
		tup := c.Values.Node(c.Value)
		if tup.Kind != value.KindTuple || len(tup.Refs()) != 2 {
			t.Errorf("%s: the result is not a pair: %s", v.Name, value.AppendRepr(nil, &c.Values, c.Value))
			continue
		}
		want := c.Values.Node(tup.Refs()[1])
		if want.Kind != value.KindStr {
			t.Errorf("%s: the repr is not a str", v.Name)
			continue
		}
		n++
		got := string(render(nil, &c.Values, tup.Refs()[0]))
		if got != want.Text() {
			if why := reprDiffers[v.Name]; why != "" {
				continue
			}
			t.Errorf("%s:\n ours   %.600s\n worker %.600s", v.Name, got, want.Text())
		}
	}
	if n < 100 {
		t.Errorf("only %d sessions checked", n)
	}
}

// reprDiffers lists the sessions where value's repr follows CPython 3.14
// (value/repr.go: the language the worker implements) and the sandbox's
// own repr does not, and why.
var reprDiffers = map[string]string{
	// The sandbox prints PosixPath('it's'), which does not read back;
	// CPython picks double quotes, as value does.
	"repr_path_various": "the sandbox does not quote a path holding a quote",
	// The sandbox prints "<K object at 0x50>", the address being a heap
	// index of that run; the wire carries none (value prints "<K object>").
	"repr_plain_instance": "the sandbox adds a heap address the wire does not carry",
	// The sandbox prints a Path's NUL as it is; CPython escapes it.
	"presencex_path_with_nul": "the sandbox does not escape a path's control characters",
	// value prints a text file handle with encoding='utf-8' (value/repr.go);
	// the sandbox prints none.
	"widthx_filehandle_position_huge": "value adds the sandbox's one text encoding",
	// The sandbox prints a binary handle with its mode, <_io.BufferedReader
	// name='/f' mode='rb'>; CPython, and so value, print no mode there.
	"xhostret_filehandle_binary": "the sandbox adds the mode of a binary handle",
	"xinput_filehandle_binary":   "the sandbox adds the mode of a binary handle",
	// type is a builtin function in the sandbox; CPython's type is a class.
	"repr_types_various":         "the sandbox prints type as a builtin function",
	"xrepr_types_and_functions":  "the sandbox prints type as a builtin function",
	"xhostret_builtin_functions": "the sandbox prints zip and type as builtin functions",
	"xinput_builtin_functions":   "the sandbox prints zip and type as builtin functions",
	// CPython's repr of an exception uses the bare class name
	// (JSONDecodeError('m')), its type repr the qualified one
	// (<class 'pathlib.PosixPath'>); the sandbox prints the worker's names,
	// binascii.Error('m') and <class 'PosixPath'>.
	"xhostret_every_exception_type": "the sandbox prints an exception's module-qualified name",
	"xinput_every_exception_type":   "the sandbox prints an exception's module-qualified name",
	"xhostret_builtin_types":        "the sandbox prints PosixPath without its module",
	"xinput_builtin_types":          "the sandbox prints PosixPath without its module",
}
