module github.com/gomonty/monty

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/google/uuid v1.6.0
	github.com/peterh/liner v1.2.3
	go.opentelemetry.io/otel/trace v1.47.0
	go.uber.org/goleak v1.3.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

tool google.golang.org/protobuf/cmd/protoc-gen-go
