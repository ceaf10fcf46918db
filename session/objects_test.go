//go:build unix

package session

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// Host objects against the fake child: what the parent answers to object
// ids it did not hand out, and the routing of calls and lookups.

// scripted answers the n-th request after Configure with steps[n]; a step
// sees the request and returns the next event.
func scripted(steps ...func(req *message.ParentRequest) *message.ChildEvent) fakeHandler {
	n := 0
	return func(req *message.ParentRequest) fakeReply {
		if n >= len(steps) {
			return reply(violation("script exhausted"))
		}
		n++
		return reply(steps[n-1](req))
	}
}

func suspend(b message.Event) *message.ChildEvent {
	return stamp(ev(b), protocol.DefaultMaxSuspensions)
}

func objectCall(name string, id uint32, obj value.UUID, args ...int64) *message.ChildEvent {
	e := funcCall(name, id, args...)
	e.Body.(*message.FunctionCall).ObjectID = &obj
	return e
}

func objectLookup(name string, obj value.UUID) *message.ChildEvent {
	return suspend(&message.NameLookup{Name: name, ObjectID: &obj})
}

// sentInstance returns the class and instance uuids of the host instance
// answered to a NameLookup.
func sentInstance(t *testing.T, req *message.ParentRequest) (cls, inst value.UUID) {
	t.Helper()
	nl, ok := req.Body.(*message.ResumeNameLookup)
	if !ok || nl.Kind != message.LookupValue {
		t.Fatalf("expected a value answer, got %#v", req.Body)
	}
	n := nl.Values.Node(nl.Value)
	ci, ok := n.Ext().(*value.ClassInstance)
	if !ok {
		t.Fatalf("answer is %s, not an instance", n.Kind)
	}
	ty := nl.Values.Node(ci.Class).Ext().(*value.Type)
	if ty.Origin != value.OriginHost || ty.Name != "Widget" || ty.ID.IsZero() || ci.InstanceID.IsZero() {
		t.Fatalf("class %+v instance %+v", ty, ci)
	}
	return ty.ID, ci.InstanceID
}

func callAnswer(t *testing.T, req *message.ParentRequest) *message.ResumeCall {
	t.Helper()
	rc, ok := req.Body.(*message.ResumeCall)
	if !ok || rc.Result == nil {
		t.Fatalf("expected a ResumeCall, got %#v", req.Body)
	}
	return rc
}

func wantCallError(t *testing.T, req *message.ParentRequest, typ, msg string) {
	t.Helper()
	rc := callAnswer(t, req)
	if rc.Result.Kind != message.ResultError || rc.Result.Error.Type != typ || !strings.Contains(rc.Result.Error.Msg(), msg) {
		t.Fatalf("answer %+v %v, want %s containing %q", rc.Result, rc.Result.Error, typ, msg)
	}
}

func TestFakeHostUnknownObjectIDsNeverReachTheStore(t *testing.T) {
	w := &widget{Size: 3, Color: "red"}
	cls := MustClassOf[widget]("Widget", widgetPolicy())
	reg := NewRegistry().MustRegisterClass("Widget", cls)
	reg.SetValue("w", w)
	var took []*widget
	reg.MustRegister("take", func(x *widget) { took = append(took, x) })
	var sess *Session
	var cid, iid value.UUID
	forged := value.NewUUID()
	storeLen := func() int { return sess.objects().len() }
	nextID := uint32(4) // the worker numbers calls upwards within a feed
	forgedArg := func(origin value.TypeOrigin, classID, instID value.UUID) *message.ChildEvent {
		nextID++
		fc := &message.FunctionCall{FunctionName: "take", CallID: nextID}
		ty := fc.Values.Add(value.TypeNode(value.Type{Name: "Widget", ID: classID, Origin: origin}))
		fc.Args = []value.NodeID{fc.Values.Add(value.ClassInstanceNode(value.ClassInstance{Class: ty, InstanceID: instID, Attrs: []value.Pair{}}))}
		return suspend(fc)
	}
	s, _ := startFake(t, Config{}, scripted(
		func(*message.ParentRequest) *message.ChildEvent { return suspend(&message.NameLookup{Name: "w"}) },
		func(req *message.ParentRequest) *message.ChildEvent {
			cid, iid = sentInstance(t, req)
			if storeLen() != 1 {
				t.Errorf("store holds %d objects after one", storeLen())
			}
			return objectCall("grow", 1, forged, 1, 1) // a method on an id we never gave out
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			wantCallError(t, req, "AttributeError", fmt.Sprintf(unknownObject, "grow"))
			return objectLookup("color", forged)
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			if nl := req.Body.(*message.ResumeNameLookup); nl.Kind != message.LookupUndefined {
				t.Errorf("lookup on a forged id answered %v", nl.Kind)
			}
			return objectCall("__call__", 2, forged)
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			wantCallError(t, req, "AttributeError", fmt.Sprintf(unknownObject, "__call__"))
			return objectCall("grow", 3, cid, 1, 1) // a method name on the class uuid
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			wantCallError(t, req, "AttributeError", "type object 'Widget' has no attribute 'grow'")
			return funcCall("Widget.grow@000000000000", 4, 1, 1) // a made-up bound method
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			// Answered as a stale bound method (an object released by
			// Reset): no store entry is reached.
			wantCallError(t, req, "AttributeError", fmt.Sprintf(unknownObject, "grow"))
			return forgedArg(value.OriginSandbox, cid, iid) // our uuids on a sandbox class
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			wantCallError(t, req, "TypeError", "not a Widget object of this session")
			return forgedArg(value.OriginHost, value.NewUUID(), iid) // our instance uuid, another class
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			wantCallError(t, req, "TypeError", "not a Widget object of this session")
			return forgedArg(value.OriginHost, cid, forged) // our class, unknown instance
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			wantCallError(t, req, "TypeError", "not a Widget object of this session")
			return forgedArg(value.OriginHost, cid, iid) // the real thing
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			if rc := callAnswer(t, req); rc.Result.Kind != message.ResultReturn {
				t.Errorf("real instance answered %+v", rc.Result)
			}
			return objectCall("grow", nextID+1, iid, 2, 5)
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			rc := callAnswer(t, req)
			if rc.Result.Kind != message.ResultReturn || rc.Values.Node(rc.Result.Value).Int() != 10 {
				t.Errorf("grow answered %+v", rc.Result)
			}
			return completeInt(0)
		},
	))
	sess = s
	if _, err := s.Run(bg, "...", WithFunctions(reg)); err != nil {
		t.Fatal(err)
	}
	if storeLen() != 1 || w.Count != 10 || len(took) != 1 || took[0] != w {
		t.Fatalf("store %d, Count %d, took %v", storeLen(), w.Count, took)
	}
}

func TestFakeHostClassCallsConstruct(t *testing.T) {
	cls := MustClassOf[widget]("Widget", widgetPolicy())
	reg := NewRegistry().MustRegisterClass("Widget", cls)
	var insts []value.UUID
	instance := func(req *message.ParentRequest, size int64) {
		t.Helper()
		rc := callAnswer(t, req)
		if rc.Result.Kind != message.ResultReturn {
			t.Fatalf("construction answered %+v %v", rc.Result, rc.Result.Error)
		}
		ci := rc.Values.Node(rc.Result.Value).Ext().(*value.ClassInstance)
		ty := rc.Values.Node(ci.Class).Ext().(*value.Type)
		if ty.ID != cls.ID() || !ty.IsDataclass || len(ci.Attrs) != 1 ||
			rc.Values.Node(ci.Attrs[0].Key).Text() != "size" || rc.Values.Node(ci.Attrs[0].Value).Int() != size {
			t.Fatalf("instance %+v of %+v", ci, ty)
		}
		// The class carries its eager class attributes.
		if len(ty.Attrs) != 1 || rc.Values.Node(ty.Attrs[0].Key).Text() != "KIND" {
			t.Fatalf("class attrs %+v", ty.Attrs)
		}
		insts = append(insts, ci.InstanceID)
	}
	var s *Session
	s, _ = startFake(t, Config{}, scripted(
		func(*message.ParentRequest) *message.ChildEvent { return funcCall("Widget", 0, 4) },
		func(req *message.ParentRequest) *message.ChildEvent {
			instance(req, 4)
			return objectCall("__call__", 1, cls.ID(), 6)
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			instance(req, 6)
			return suspend(&message.NameLookup{Name: "Widget"})
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			nl := req.Body.(*message.ResumeNameLookup)
			if ty, ok := nl.Values.Node(nl.Value).Ext().(*value.Type); !ok || ty.ID != cls.ID() || ty.Origin != value.OriginHost {
				t.Fatalf("Widget looked up as %+v", nl.Values.Node(nl.Value))
			}
			return objectLookup("VERSION", cls.ID())
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			nl := req.Body.(*message.ResumeNameLookup)
			if nl.Kind != message.LookupValue || nl.Values.Node(nl.Value).Int() != 3 {
				t.Fatalf("lazy class attribute answered %+v", nl)
			}
			return objectLookup("forbidden", insts[0])
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			nl := req.Body.(*message.ResumeNameLookup)
			if nl.Kind != message.LookupError || nl.Error.Type != "PermissionError" {
				t.Fatalf("Getattr error answered %+v", nl)
			}
			return objectLookup("grow", insts[0])
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			nl := req.Body.(*message.ResumeNameLookup)
			fn, ok := nl.Values.Node(nl.Value).Ext().(*value.Function)
			if !ok || !strings.HasPrefix(fn.Name, "Widget.grow@") {
				t.Fatalf("method lookup answered %+v", nl.Values.Node(nl.Value))
			}
			// Calling the bound method value reaches the constructed instance.
			return funcCall(fn.Name, 2, 3, 3)
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			rc := callAnswer(t, req)
			if rc.Result.Kind != message.ResultReturn || rc.Values.Node(rc.Result.Value).Int() != 9 {
				t.Fatalf("bound call answered %+v", rc.Result)
			}
			return completeInt(0)
		},
	))
	if _, err := s.Run(bg, "...", WithFunctions(reg)); err != nil {
		t.Fatal(err)
	}
	if len(insts) != 2 || insts[0] == insts[1] {
		t.Fatalf("instances %v", insts)
	}
	st := s.objects()
	a, b := st.instance(insts[0]), st.instance(insts[1])
	if a == nil || b == nil || a.v.Interface().(*widget).Count != 9 || b.v.Interface().(*widget).Size != 6 {
		t.Fatalf("store %+v %+v", a, b)
	}
}

func TestClassOfChecksThePolicy(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{Eager: []string{"nope"}}, `has no exported field "nope"`},
		{Policy{Eager: []string{"secret"}}, `has no exported field "secret"`},
		{Policy{Lazy: []string{"Size"}}, `has no exported field "Size"`}, // the tag renames it
		{Policy{Eager: []string{"size", "size"}}, "listed twice"},
		{Policy{Methods: []string{"wipe_all"}}, "has no exported method WipeAll"},
		{Policy{Methods: []string{"grow(n)"}}, "1 parameter names for 2 parameters"},
		{Policy{Methods: []string{"grow(n, n)"}}, "bad or repeated parameter name"},
		{Policy{Methods: []string{"grow(n, by"}}, "bad method spec"},
		{Policy{Methods: []string{"9x"}}, "not a valid identifier"},
		{Policy{Lazy: []string{"size"}, Methods: []string{"size=Grow"}}, "both a field and a method"},
		{Policy{Constructor: 5}, "is not a function"},
		{Policy{Constructor: func() int { return 1 }}, "must return"},
		{Policy{ConstructorParams: []string{"a"}}, "without a Constructor"},
		{Policy{ClassAttrs: []value.Attr{{Name: "a b"}}}, "not a valid identifier"},
	} {
		_, err := ClassOf[widget]("Widget", tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.want)
		}
	}
	if _, err := ClassOf[widget]("not valid", Policy{}); err == nil {
		t.Error("bad class name accepted")
	}
	if _, err := ClassOf[*widget]("Widget", Policy{Methods: []string{"grow=Grow(a, b)", "Clone"}}); err != nil {
		t.Error(err)
	}
	c := MustClassOf[*widget]("Widget", Policy{})
	if c.GoType() != reflect.TypeFor[widget]() || c.Name() != "Widget" || c.ID().IsZero() {
		t.Fatalf("class %v %q %v", c.GoType(), c.Name(), c.ID())
	}
	if MustClassOf[widget]("Widget", Policy{}).ID() == c.ID() {
		t.Fatal("two classes share a uuid")
	}
}

func TestGoMethodNamesAndFields(t *testing.T) {
	for py, want := range map[string]string{"grow": "Grow", "add_item": "AddItem", "Grow": "Grow",
		"_private": "Private", "to_json": "ToJson", "é_x": "ÉX"} {
		if got := goMethodName(py); got != want {
			t.Errorf("goMethodName(%q) = %q, want %q", py, got, want)
		}
	}
	type inner struct {
		Deep int `monty:"deep"`
		Both int
	}
	type outer struct {
		inner
		Plain  int
		Tagged int `monty:"t,omitempty"`
		Skip   int `monty:"-"`
		Both   string
		hidden int
	}
	got := map[string]int{}
	for n, f := range structFields(reflect.TypeFor[outer]()) {
		got[n] = len(f.index)
	}
	want := map[string]int{"deep": 2, "Both": 1, "Plain": 1, "t": 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	_ = outer{}.hidden
}

func TestSignatureKeywords(t *testing.T) {
	sig, err := newSignature("f", reflect.TypeOf(func(a, b, c int) int { return a*100 + b*10 + c }), false, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	fn := reflect.ValueOf(func(a, b, c int) int { return a*100 + b*10 + c })
	call := func(args []int64, kw ...any) (any, error) {
		c := &Call{Name: "f", Values: &value.Graph{}}
		for _, a := range args {
			c.Args = append(c.Args, c.Values.Add(value.Int(a)))
		}
		for i := 0; i < len(kw); i += 2 {
			k := c.Values.Add(value.Str(kw[i].(string)))
			c.Kwargs = append(c.Kwargs, value.Pair{Key: k, Value: c.Values.Add(value.Int(int64(kw[i+1].(int))))})
		}
		return sig.call(bg, fn, reflect.Value{}, c)
	}
	if v, err := call([]int64{1}, "c", 3, "b", 2); err != nil || v != 123 {
		t.Fatalf("f(1, c=3, b=2) = %v, %v", v, err)
	}
	for _, tc := range []struct {
		args []int64
		kw   []any
		want string
	}{
		{[]int64{1}, nil, "f() missing 2 required positional arguments: 'b' and 'c'"},
		{nil, nil, "f() missing 3 required positional arguments: 'a', 'b', and 'c'"},
		{[]int64{1, 2}, []any{"b", 2, "c", 1}, "f() got multiple values for argument 'b'"},
		{[]int64{1, 2, 3}, []any{"d", 1}, "f() got an unexpected keyword argument 'd'"},
		{[]int64{1, 2, 3, 4}, nil, "f() takes 3 positional arguments but 4 were given"},
	} {
		_, err := call(tc.args, tc.kw...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want %q", tc.args, tc.kw, err, tc.want)
		}
	}
}

func TestHostObjectsNeedARun(t *testing.T) {
	cls := MustClassOf[widget]("Widget", Policy{Eager: []string{"size"}})
	var g value.Graph
	if _, err := value.FromGo(&g, Object(cls, &widget{})); err == nil || !strings.Contains(err.Error(), "Session.Run") {
		t.Fatalf("Object outside a run: %v", err)
	}
	if _, err := value.FromGo(&g, cls); err == nil || g.Len() != 0 {
		t.Fatalf("Class outside a run: %v (%d nodes)", err, g.Len())
	}
}

type node struct {
	Name string `monty:"name"`
	Next *node  `monty:"next"`
}

func TestHostObjectEncoding(t *testing.T) {
	cls := MustClassOf[node]("Node", Policy{Eager: []string{"name", "next"}})
	reg := NewRegistry().MustRegisterClass("Node", cls)
	s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(0)) })
	r := s.newRunner(bg, []RunOption{WithFunctions(reg)})
	defer r.finish()

	// Host objects nest through eager attributes, sharing the class node.
	a := &node{Name: "a", Next: &node{Name: "b"}}
	var g value.Graph
	root, _, err := r.encode(&g, a, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CheckInput(root); err != nil {
		t.Fatal(err)
	}
	types := 0
	for _, n := range g.Nodes {
		if n.Kind == value.KindType {
			types++
		}
	}
	if types != 1 || g.Repr(root) != "Node(name='a', next=Node(name='b', next=None))" {
		t.Fatalf("%d type nodes, repr %s", types, g.Repr(root))
	}
	// The same pointer twice is one node and one uuid; a T value is copied.
	g = value.Graph{}
	root, _, err = r.encode(&g, []any{Object(cls, a), Object(cls, a), Object(cls, *a), a}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	items := g.Node(root).Refs()
	if items[0] != items[1] || g.Node(items[2]).Ext().(*value.ClassInstance).InstanceID == g.Node(items[0]).Ext().(*value.ClassInstance).InstanceID {
		t.Fatalf("items %v", items)
	}
	// Only top-level values (and eager attributes) are recognised by type:
	// a plain *T nested in another value is a dict, as FromGo makes it.
	if k := g.Node(items[3]).Kind; k != value.KindDict {
		t.Fatalf("nested plain *node became %s", k)
	}
	// A cycle through eager attributes is an error, not a hang, and leaves
	// the graph as it was.
	loop := &node{Name: "loop"}
	loop.Next = loop
	g = value.Graph{}
	g.Add(value.Int(1))
	if _, _, err := r.encode(&g, loop, false, nil); err == nil || !strings.Contains(err.Error(), "reaches itself") || g.Len() != 1 {
		t.Fatalf("cycle: %v, %d nodes", err, g.Len())
	}
	// Object of the wrong type.
	g = value.Graph{}
	if _, _, err := r.encode(&g, Object(cls, 5), false, nil); err == nil || !strings.Contains(err.Error(), "holds *session.node values") {
		t.Fatalf("wrong type: %v", err)
	}
	if _, _, err := r.encode(&g, Object(cls, (*node)(nil)), false, nil); err == nil {
		t.Fatal("nil pointer accepted")
	}
}

// TestHostObjectStoreReleasedOnReset checks that Reset empties the
// session's store (the worker forgets the objects then), so the Go values
// it held can be collected.
func TestHostObjectStoreReleasedOnReset(t *testing.T) {
	fs := &fakeSpawner{bin: fakeBinary(t), version: 2, handler: func(int) fakeHandler {
		return withConfigure(func(req *message.ParentRequest) fakeReply {
			if _, ok := req.Body.(*message.Reset); ok {
				return reply(ev(&message.Ok{}))
			}
			if _, ok := req.Body.(*message.Dump); ok { // Detach's fence, after Reset
				return reply(violation("session has not been configured"))
			}
			return reply(completeInt(0))
		})
	}}
	s, err := Start(context.Background(), fs.launch(2), Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cls := MustClassOf[widget]("Widget", Policy{})
	reg := NewRegistry().MustRegisterClass("Widget", cls)
	w := &widget{}
	k := weak.Make(w)
	if _, err := s.Run(bg, "w", WithFunctions(reg), WithInputs(Input{"w", w})); err != nil {
		t.Fatal(err)
	}
	w = nil
	if s.objects().len() != 1 {
		t.Fatal("input not registered")
	}
	if err := s.Reset(bg); err != nil {
		t.Fatal(err)
	}
	if n := s.objects().len(); n != 0 {
		t.Fatalf("store holds %d objects after Reset", n)
	}
	for range 100 {
		runtime.GC()
		if k.Value() == nil {
			break
		}
	}
	if k.Value() != nil {
		t.Fatal("the Go value outlived the Reset")
	}
	// Going back to a pool (Detach) releases them too.
	if _, err := s.Run(bg, "w", WithFunctions(reg), WithInputs(Input{"w", &widget{}})); err != nil {
		t.Fatal(err)
	}
	if s.objects().len() != 1 {
		t.Fatal("input not registered")
	}
	p, err := s.Detach(bg)
	if err != nil {
		t.Fatal(err)
	}
	p.Kill() // the detached worker is ours now
	if n := s.objects().len(); n != 0 {
		t.Fatalf("store holds %d objects after Detach", n)
	}
}

type inner struct {
	X int
}

type outerTagged struct {
	inner
	Y  int `monty:"y"`
	X2 int `monty:"X"` // tagged: wins over the promoted X, as in FromGo
}

// TestClassOfUsesFromGoFieldNames checks that ClassOf accepts exactly the
// field names FromGo writes: one resolver serves both.
func TestClassOfUsesFromGoFieldNames(t *testing.T) {
	for _, v := range []any{inner{X: 1}, struct{ inner }{inner{X: 1}}, outerTagged{inner{1}, 2, 3}} {
		var g value.Graph
		root, err := value.FromGo(&g, v)
		if err != nil {
			t.Fatal(err)
		}
		n := g.Node(root)
		var names []string
		for i := 0; i < len(n.Refs()); i += 2 {
			names = append(names, g.Node(n.Refs()[i]).Text())
		}
		c, err := newClass("C", reflect.TypeOf(v), Policy{Eager: names})
		if err != nil {
			t.Fatalf("%T encodes as %s but ClassOf refuses Eager %q: %v", v, g.Repr(root), names, err)
		}
		p := reflect.New(reflect.TypeOf(v))
		p.Elem().Set(reflect.ValueOf(v))
		for i, f := range c.eager {
			got := f.read(p).Interface()
			want, _ := value.ToAny(&g, n.Refs()[2*i+1])
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%T field %s reads %v, FromGo sent %v", v, f.name, got, want)
			}
		}
	}
}

// TestHostObjectCap checks Config.MaxHostObjects: one instance past the cap
// is a typed error, and the session keeps working.
func TestHostObjectCap(t *testing.T) {
	cls := MustClassOf[widget]("Widget", Policy{})
	reg := NewRegistry().MustRegisterClass("Widget", cls)
	s, _ := startFake(t, Config{MaxHostObjects: 2}, scripted(
		func(*message.ParentRequest) *message.ChildEvent { return ev(&message.Complete{}) },
	))
	_, err := s.Run(bg, "x", WithFunctions(reg), WithInputs(
		Input{"a", &widget{}}, Input{"b", &widget{}}, Input{"c", &widget{}}))
	var le *HostObjectLimitError
	if !errors.As(err, &le) || le.Limit != 2 {
		t.Fatalf("err %v, want a *HostObjectLimitError with limit 2", err)
	}
	if !strings.Contains(err.Error(), "more than 2 live host objects") {
		t.Fatalf("message %q", err)
	}
}

// TestSignatureErrorsFollowCPython: what does not bind raises CPython's
// TypeError for the analogous def: keyword arguments are checked before
// the positional count, and a method counts self, as CPython does.
func TestSignatureErrorsFollowCPython(t *testing.T) {
	mk := func(fn any, recv bool, names ...string) func(args []int64, kw ...any) error {
		name := "f"
		if recv {
			name = "Widget.grow"
		}
		sig, err := newSignature(name, reflect.TypeOf(fn), recv, names)
		if err != nil {
			t.Fatal(err)
		}
		var rv reflect.Value
		if recv {
			rv = reflect.ValueOf(&widget{})
		}
		return func(args []int64, kw ...any) error {
			c := &Call{Name: name, Values: &value.Graph{}}
			for _, a := range args {
				c.Args = append(c.Args, c.Values.Add(value.Int(a)))
			}
			for i := 0; i < len(kw); i += 2 {
				k := c.Values.Add(value.Str(kw[i].(string)))
				c.Kwargs = append(c.Kwargs, value.Pair{Key: k, Value: c.Values.Add(value.Int(int64(kw[i+1].(int))))})
			}
			_, err := sig.call(bg, reflect.ValueOf(fn), rv, c)
			return err
		}
	}
	f := mk(func(a, b int) int { return a + b }, false, "a", "b")
	pos := mk(func(a, b int) int { return a + b }, false)
	m := mk((*widget).Grow, true, "n", "by")
	mpos := mk((*widget).Grow, true)
	mvar := mk(func(w *widget, a int, rest ...int) int { return a }, true)
	// The texts are CPython 3.11's for def f(a, b), def f(a, b, /) and
	// the method def grow(self, n, by) of a class Widget. Without Params
	// the parameters have no names, so too few positional arguments are
	// counted ("takes") where CPython names the missing one; a method
	// counts self there too.
	for _, tc := range []struct {
		call func([]int64, ...any) error
		args []int64
		kw   []any
		want string
	}{
		{f, []int64{1, 2, 3}, []any{"c", 4}, "f() got an unexpected keyword argument 'c'"},
		{f, []int64{1, 2, 3}, []any{"a", 4}, "f() got multiple values for argument 'a'"},
		{f, []int64{1, 2, 3}, nil, "f() takes 2 positional arguments but 3 were given"},
		{pos, []int64{1, 2, 3}, []any{"c", 4}, "f() got an unexpected keyword argument 'c'"},
		{m, []int64{1, 2, 3}, nil, "Widget.grow() takes 3 positional arguments but 4 were given"},
		{m, []int64{1}, nil, "Widget.grow() missing 1 required positional argument: 'by'"},
		{m, []int64{1, 2, 3}, []any{"x", 1}, "Widget.grow() got an unexpected keyword argument 'x'"},
		{mpos, []int64{1}, nil, "Widget.grow() takes 3 positional arguments but 2 were given"},
		{mvar, nil, nil, "Widget.grow() takes at least 2 positional arguments but 1 was given"},
	} {
		err := tc.call(tc.args, tc.kw...)
		var exc *message.RaisedException
		if !errors.As(err, &exc) || exc.Type != "TypeError" || exc.Msg() != tc.want {
			t.Errorf("%v %v: %v, want TypeError %q", tc.args, tc.kw, err, tc.want)
		}
	}
}
