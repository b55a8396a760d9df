package server

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

var ioModel = flag.String("io", "loop", "the I/O model every test server uses: loop or goroutines")

// TestMain runs the package's tests on one I/O model: `go test` checks the event loop,
// `go test -args -io=goroutines` (make test runs both) the goroutine per connection.
func TestMain(m *testing.M) {
	flag.Parse()
	switch *ioModel {
	case "loop":
	case "goroutines":
		testGoroutines = true
	default:
		fmt.Fprintf(os.Stderr, "-io must be loop or goroutines, not %q\n", *ioModel)
		os.Exit(2)
	}
	os.Exit(m.Run())
}
