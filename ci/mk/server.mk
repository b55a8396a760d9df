# The server's suite runs twice: `make test-go` (go test ./...) checks the event loop,
# the default on Linux; this runs the same suite on the goroutine model
# (serve --io goroutines, and every platform without epoll).
TEST_TARGETS += test-server-goroutines

.PHONY: test-server-goroutines
test-server-goroutines:
	SOUNDGATE_TEST_IO=goroutines $(GO) test -race -count=1 ./impl/server/
