package value

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// Types for embedding one struct type more than once at one depth.
type embX struct{ X, Shared int }
type embViaValue struct{ embX }
type embViaPointer struct{ *embX }
type embTaggedX struct {
	X int `json:"x"`
}
type embTagged1 struct{ embTaggedX }
type embTagged2 struct{ embTaggedX }

type embTwiceAtDepth2 struct {
	embViaValue
	embViaPointer
	Own int
}

type embTwiceTagged struct {
	embTagged1
	embTagged2
}

// The name stays unambiguous when a shallower field takes it.
type embTwiceShadowed struct {
	embViaValue
	embViaPointer
	X int
}

// The same type at two different depths: the shallower one wins.
type embAtTwoDepths struct {
	embX
	embViaValue
}

// fill sets every exported field of the struct v, and of the structs it
// embeds by value, to a value that is not zero, so that encoding/json
// writes every key it knows. (An unexported embedded pointer stays nil:
// neither can set it.)
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() || f.Kind() == reflect.Struct {
				fill(f)
			}
		}
	case reflect.Int:
		v.SetInt(1)
	}
}

// A struct type embedded more than once at one depth brings its field
// names twice at that depth: encoding/json finds them ambiguous and drops
// them, unless a shallower field takes the name. StructFields promised
// encoding/json's rules but kept the first one, so FromGo wrote a key
// json.Marshal does not write, and ToGo set a field json.Unmarshal leaves.
func TestStructFieldsEmbeddedTwiceAtOneDepthAsEncodingJSON(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[embTwiceAtDepth2](),
		reflect.TypeFor[embTwiceTagged](),
		reflect.TypeFor[embTwiceShadowed](),
		reflect.TypeFor[embAtTwoDepths](),
	} {
		pv := reflect.New(typ)
		fill(pv.Elem())
		text, err := json.Marshal(pv.Interface())
		if err != nil {
			t.Fatal(err)
		}
		var jm map[string]any
		if err := json.Unmarshal(text, &jm); err != nil {
			t.Fatal(err)
		}
		want := slices.Sorted(maps.Keys(jm))
		var got []string
		for _, f := range StructFields(typ) {
			got = append(got, f.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%v: StructFields names %q, encoding/json writes %s", typ, got, text)
		}
		// FromGo writes the same keys.
		g := &Graph{}
		id, err := FromGo(g, pv.Interface())
		if err != nil {
			t.Fatal(err)
		}
		back, err := ToAny(g, id)
		if err != nil {
			t.Fatal(err)
		}
		if keys := slices.Sorted(maps.Keys(back.(map[string]any))); !slices.Equal(keys, want) {
			t.Errorf("%v: FromGo wrote keys %q, encoding/json %s", typ, keys, text)
		}
		// ToGo of the JSON's value sets what json.Unmarshal sets.
		jg := &Graph{}
		jid, err := FromJSON(jg, []byte(`{"X": 5, "x": 6, "Shared": 7, "Own": 8}`))
		if err != nil {
			t.Fatal(err)
		}
		viaToGo, viaJSON := reflect.New(typ), reflect.New(typ)
		if err := ToGo(jg, jid, viaToGo.Interface()); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(`{"X": 5, "x": 6, "Shared": 7, "Own": 8}`), viaJSON.Interface()); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(viaToGo.Interface(), viaJSON.Interface()) {
			t.Errorf("%v: ToGo set %+v, json.Unmarshal %+v", typ, viaToGo.Elem(), viaJSON.Elem())
		}
	}
}
