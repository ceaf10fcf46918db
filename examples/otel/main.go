// Command otel runs one sandboxed run with a host call on a pool worker,
// with OpenTelemetry's SDK recording everything, and prints what was
// recorded: first the run's span tree, then every span and metric as the
// stdout exporters render them (JSON):
//
//	go run ./examples/otel
//
// The span tree reads (the request's span, then gomonty's; one host span
// per call of price):
//
//	handle request
//	  monty.session
//	    monty.run outcome=ok
//	      monty.host kind=function_call
//	      monty.host kind=function_call
//
// In a service the providers would be the global ones (otel.SetTracerProvider,
// otel.SetMeterProvider) with a real exporter; gomonty needs no setting then.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
)

func main() { os.Exit(run(context.Background(), os.Stdout, os.Stderr)) }

func run(ctx context.Context, stdout, stderr io.Writer) int {
	if err := demo(ctx, stdout); err != nil {
		fmt.Fprintln(stderr, "otel:", err)
		return 1
	}
	return 0
}

func demo(ctx context.Context, out io.Writer) error {
	var spansJSON, metricsJSON strings.Builder
	spanExp, err := stdouttrace.New(stdouttrace.WithWriter(&spansJSON), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	metricExp, err := stdoutmetric.New(stdoutmetric.WithWriter(&metricsJSON), stdoutmetric.WithPrettyPrint())
	if err != nil {
		return err
	}
	tree := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spanExp), sdktrace.WithSpanProcessor(tree))
	reader := sdkmetric.NewPeriodicReader(metricExp) // flushed by Shutdown below
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	p, err := pool.New(ctx, pool.Config{
		MinWorkers: 1, MaxWorkers: 1, TracerProvider: tp, MeterProvider: mp,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return err
	}
	ctx, root := tp.Tracer("examples/otel").Start(ctx, "handle request")
	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		p.Close(ctx)
		return err
	}
	funcs := session.NewRegistry().MustRegister("price", func(item string) (float64, error) {
		return map[string]float64{"apple": 0.5, "pear": 0.75}[item], nil
	})
	res, err := s.Run(ctx, "print('pricing')\nprice('apple') + price('pear')", session.WithFunctions(funcs))
	s.Close()
	root.End()
	// Collect before the pool closes, while its worker gauges count its
	// workers (they read 0 once it is closed).
	merr := mp.Shutdown(ctx)
	p.Close(ctx)
	if err != nil {
		return err
	}
	if merr != nil {
		return merr
	}
	fmt.Fprintln(out, "result:", res.Value.Repr())
	fmt.Fprintln(out, "span tree:")
	printTree(out, tree.Ended())
	if err := tp.Shutdown(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "spans:")
	fmt.Fprint(out, spansJSON.String())
	fmt.Fprintln(out, "metrics:")
	fmt.Fprint(out, metricsJSON.String())
	return nil
}

// printTree prints spans indented under their parents, in start order,
// with their closed-set attributes.
func printTree(out io.Writer, spans []sdktrace.ReadOnlySpan) {
	kids := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	ids := map[trace.SpanID]bool{}
	for _, sp := range spans {
		ids[sp.SpanContext().SpanID()] = true
	}
	var roots []sdktrace.ReadOnlySpan
	for _, sp := range spans {
		if ids[sp.Parent().SpanID()] {
			kids[sp.Parent().SpanID()] = append(kids[sp.Parent().SpanID()], sp)
		} else {
			roots = append(roots, sp)
		}
	}
	var walk func(sps []sdktrace.ReadOnlySpan, depth int)
	walk = func(sps []sdktrace.ReadOnlySpan, depth int) {
		sort.Slice(sps, func(i, j int) bool { return sps[i].StartTime().Before(sps[j].StartTime()) })
		for _, sp := range sps {
			line := strings.Repeat("  ", depth) + sp.Name()
			for _, kv := range sp.Attributes() {
				switch kv.Key {
				case session.AttrOutcome:
					line += " outcome=" + kv.Value.String()
				case session.AttrHostKind:
					line += " kind=" + kv.Value.String()
				}
			}
			fmt.Fprintln(out, line)
			walk(kids[sp.SpanContext().SpanID()], depth+1)
		}
	}
	walk(roots, 0)
}
