// Package tools pins the developer tools of gomonty (buf, staticcheck) in a
// module of their own, so that their dependencies never reach the library's
// go.mod.
package tools
